"""Knowledge sources: WordNet and GCIDE graphs, provisioning, caches and ISA walks."""

import warnings

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import DataSourceError
from workbench.knowledge import Taxonomy, triples, wordnet
from workbench.knowledge.cache import graph_dir, load_graph, read_graph
from workbench.knowledge.gcide import split_usage, surface


@pytest.mark.wordnet
def test_wordnet_graph_has_every_synset_and_the_spec_counts(wordnet_graph):
    assert wordnet_graph.version == "3.0"
    assert wordnet_graph.concepts.height == 117_659
    assert wordnet_graph.examples["id"].n_unique() == 32_923


@pytest.mark.wordnet
def test_isa_includes_instance_hypernyms(wordnet_graph):
    einstein = wordnet_graph.id_of("einstein.n.01")
    parents = {wordnet_graph.names[p] for p in wordnet_graph.taxonomy.parents[einstein]}
    assert "physicist.n.01" in parents
    assert wordnet_graph.isa.filter(pl.col("child") == einstein)["instance"].all()


@pytest.mark.wordnet
def test_triples_view_has_the_spec_relations(wordnet_graph):
    view = triples(wordnet_graph)
    assert set(view["relation"].unique()) == {"isa_up", "isa_down", "def", "ex", "lemma"}
    dog = view.filter(pl.col("concept") == "dog.n.01")
    assert {"canine.n.02", "domestic_animal.n.01"} <= set(dog.filter(pl.col("relation") == "isa_up")["target"])
    assert view.filter(pl.col("relation") == "isa_up").height == view.filter(pl.col("relation") == "isa_down").height


@pytest.mark.wordnet
def test_surface_form_is_the_inflected_word_in_the_example(wordnet_graph):
    squat = wordnet_graph.id_of("squat.v.01")
    rows = wordnet_graph.examples.filter(pl.col("id") == squat)
    assert "hunkered" in rows["surface"].to_list()


@pytest.mark.wordnet
def test_princeton_files_are_provisioned_with_lexnames(tmp_path, monkeypatch):
    source = wordnet._princeton_dir()
    if source is None:
        pytest.skip("no Princeton WordNet files on this machine")
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path))
    target = wordnet.provision_princeton(source)
    assert target == tmp_path / "nltk_data" / "corpora" / "wordnet"
    assert len((target / "lexnames").read_text().splitlines()) == 45
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    reader = WordNetCorpusReader(nltk.data.FileSystemPathPointer(str(target)), None)
    assert reader.synset("dog.n.01").lexname() == "noun.animal"


def test_missing_wordnet_says_what_to_install(tmp_path, monkeypatch):
    import nltk

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("WORDNET_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setattr(wordnet, "PRINCETON_DIRS", ())
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "empty")])
    with pytest.raises(DataSourceError, match="apt-get install wordnet-base"):
        wordnet.find_wordnet()


@pytest.mark.wordnet
def test_cache_loads_the_same_graph_and_corrupt_cache_is_rebuilt(wordnet_graph):
    folder = graph_dir("wordnet")
    again = read_graph(folder)
    assert again.concepts.equals(wordnet_graph.concepts) and again.isa.equals(wordnet_graph.isa)
    assert folder.name.startswith(f"wordnet-3.0-{wordnet_graph.checksum}-g")


def test_corrupt_gcide_cache_is_rebuilt_with_a_warning(gcide_graph):
    folder = graph_dir("gcide")
    (folder / "isa.parquet").write_bytes(b"not parquet")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rebuilt = load_graph("gcide")
    assert any("corrupt" in str(w.message) for w in caught)
    assert rebuilt.concepts.equals(gcide_graph.concepts)
    assert read_graph(folder).concepts.height == gcide_graph.concepts.height


def test_gcide_usage_examples_are_split_from_the_gloss():
    assert split_usage("Crooked; lame; as, a game leg.") == ("Crooked; lame", ["a game leg"])
    gloss, usages = split_usage("A contest; as, a game of chance; games of skill; field games, etc.")
    assert gloss == "A contest" and usages == ["a game of chance", "games of skill", "field games"]
    assert split_usage("Sport of any kind; jest, frolic.") == ("Sport of any kind; jest, frolic.", [])
    assert surface("games of skill", "game") == "games"
    assert surface("a tame animal", "game") == ""


def test_gcide_graph_has_senses_with_examples(gcide_graph):
    assert gcide_graph.concepts.height > 150_000
    assert gcide_graph.isa.is_empty()
    game = gcide_graph.concepts.filter(pl.col("name").str.starts_with("game.")).join(gcide_graph.examples, on="id")
    assert "a game leg" in game["example"].to_list()
    assert not gcide_graph.concepts["gloss"].str.contains("1913 Webster").any()


# ---- ISA walks: properties over random DAGs ---------------------------------------------------


@st.composite
def dags(draw):
    n = draw(st.integers(2, 25))
    edges = set()
    for child in range(1, n):
        for parent in draw(st.sets(st.integers(0, child - 1), min_size=0, max_size=3)):
            edges.add((child, parent))
    frame = pl.DataFrame(
        {"child": [c for c, _ in edges], "parent": [p for _, p in edges], "instance": [False] * len(edges)},
        schema={"child": pl.Int32, "parent": pl.Int32, "instance": pl.Boolean},
    )
    return n, edges, Taxonomy(frame, n)


def brute_distance(edges, start, goal, up=True):
    step = {}
    for child, parent in edges:
        a, b = (child, parent) if up else (parent, child)
        step.setdefault(a, set()).add(b)
    frontier, seen, depth = {start}, {start}, 0
    while frontier:
        if goal in frontier:
            return depth
        frontier = {n for node in frontier for n in step.get(node, ())} - seen
        seen |= frontier
        depth += 1
    return None


@settings(max_examples=60, deadline=None)
@given(dags(), st.integers(1, 5))
def test_hops_are_shortest_isa_distances(dag, max_hops):
    n, edges, taxonomy = dag
    for start in range(n):
        for direction, up in (("up", True), ("down", False)):
            found = taxonomy.hops(start, direction, max_hops)
            for goal in range(n):
                distance = brute_distance(edges, start, goal, up)
                expected = distance if distance is not None and 0 < distance <= max_hops else None
                assert found.get(goal) == expected


@settings(max_examples=60, deadline=None)
@given(dags(), st.integers(1, 3))
def test_sisters_are_exactly_depth_levels_below_the_shared_parent(dag, depth):
    """R&S 2020 §3.1: SISTER_l(c) = HOPS_{l-1}(c~, down) of each sibling c~, at that exact distance.

    The released data follow it: of 4,503 released sister-2/3 distractors only 2 are plain siblings.
    """
    n, edges, taxonomy = dag
    for concept in range(n):
        parents = {p for c, p in edges if c == concept}
        siblings = {c for c, p in edges if p in parents} - {concept}
        below = {}
        for sibling in siblings:
            for goal in range(n):
                d = 0 if goal == sibling else brute_distance(edges, sibling, goal, up=False)
                if d is not None:
                    below[goal] = min(d, below.get(goal, d))
        expected = {goal for goal, d in below.items() if d == depth - 1} - {concept}
        assert taxonomy.sisters(concept, depth) == expected


@settings(max_examples=60, deadline=None)
@given(dags(), st.integers(1, 3), st.integers(1, 5))
def test_counted_families_are_the_sizes_of_the_walked_ones(dag, depth, max_hops):
    """A build counts every concept's rows from ``sister_sizes`` and ``layer_sizes``; they must be the lengths of
    the families its drafting walks (``sister_levels``, ``hops``), or the sample would not be the same."""
    n, _, taxonomy = dag
    for concept in range(n):
        assert taxonomy.sister_sizes(concept, depth) == [len(level) for level in taxonomy.sister_levels(concept, depth)]
        for direction in ("up", "down"):
            found = list(taxonomy.hops(concept, direction, max_hops).values())
            assert taxonomy.layer_sizes(concept, direction, max_hops) == [
                found.count(k) for k in range(1, max_hops + 1)
            ]


@settings(max_examples=60, deadline=None)
@given(dags())
def test_paths_and_ancestors_agree(dag):
    n, edges, taxonomy = dag
    for concept in range(n):
        for ancestor in taxonomy.ancestors(concept):
            path = taxonomy.path(concept, ancestor, "up")
            assert path[0] == concept and path[-1] == ancestor
            assert all((a, b) in edges for a, b in zip(path, path[1:]))
            assert len(path) - 1 == brute_distance(edges, concept, ancestor)
            assert taxonomy.is_descendant(concept, ancestor)


@pytest.mark.wordnet
def test_loading_a_cached_graph_imports_no_nltk(wordnet_graph):
    import subprocess
    import sys

    code = "import sys; from workbench.knowledge import load_graph; load_graph('wordnet'); print('nltk' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_sense_counts_read_the_remembered_wordnet_files_without_nltk(wordnet_graph):
    import subprocess
    import sys

    code = (
        "import sys, polars as pl; from workbench.knowledge import load_graph; "
        "from workbench.knowledge.measures import concept_measures; "
        "row = concept_measures(load_graph('wordnet'), pl.DataFrame({'concept': ['dog.n.01'], 'word': ['dogs']})); "
        "print(row['sense_count'][0], 'nltk' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["42", "False"]  # Lemma('dog.n.01.dog').count() is 42


def test_a_changed_source_file_is_identified_again(gcide_graph, monkeypatch):
    import json

    from workbench.knowledge import cache

    record_path = graph_dir("gcide").parent / "gcide.source.json"
    remembered = json.loads(record_path.read_text())
    calls = []
    identify = cache._identify
    monkeypatch.setattr(cache, "_identify", lambda source: calls.append(source) or identify(source))
    graph_dir("gcide")
    assert calls == []  # files unchanged: the remembered identity serves, nothing is hashed
    changed = json.loads(json.dumps(remembered))
    changed["signature"][0][2] -= 1  # as if the first data file had been modified since
    record_path.write_text(json.dumps(changed))
    assert graph_dir("gcide").name.startswith(f"gcide-{gcide_graph.version}-{gcide_graph.checksum}-")
    assert calls == ["gcide"]
    assert json.loads(record_path.read_text())["signature"] == remembered["signature"]
