"""WordNetQA and DictionaryQA probes checked against WordNet itself (through NLTK) and GCIDE."""

from collections import Counter
from dataclasses import replace

import polars as pl
import pytest

from workbench.errors import SpecError
from workbench.knowledge.wordnet import open_wordnet
from workbench.probes import ProbeSpec, build_probe_sets, build_probes

pytestmark = pytest.mark.wordnet
SAMPLE = 1500


@pytest.fixture(scope="module")
def wn():
    return open_wordnet()


@pytest.fixture(scope="module")
def built(wordnet_graph, gcide_graph):
    specs = {
        "hypernymy": ProbeSpec("hypernymy", max_hops=5, seed=1),
        "hyponymy": ProbeSpec("hyponymy", max_hops=5, seed=1),
        "definitions": ProbeSpec("definitions", seed=1),
        "synonymy": ProbeSpec("synonymy", seed=1),
        "wordsense": ProbeSpec("wordsense", seed=1),
    }
    return {
        name: build_probes(spec, gcide_graph if name == "wordsense" else wordnet_graph, progress=False)
        for name, spec in specs.items()
    }


def sample(frame: pl.DataFrame, n: int = SAMPLE) -> list[dict]:
    return frame.sample(n=min(n, frame.height), seed=7).to_dicts()


def up(synset):
    return synset.hypernyms() + synset.instance_hypernyms()


def down(synset):
    return synset.hyponyms() + synset.instance_hyponyms()


def class_up(synset):
    """ISA links the default build follows: no instance links, as the released data (R&S 2020)."""
    return synset.hypernyms()


def class_down(synset):
    return synset.hyponyms()


def shortest_distance(start, goal, step) -> int | None:
    frontier, seen, depth = [start], {start}, 0
    while frontier:
        if goal in frontier:
            return depth
        frontier = [nxt for node in frontier for nxt in step(node) if nxt not in seen]
        seen.update(frontier)
        depth += 1
    return None


def all_above(synset) -> set:
    return set(synset.closure(up))


def test_hypernymy_gold_is_exactly_k_hops_up(built, wn):
    for row in sample(built["hypernymy"]):
        concept, gold = wn.synset(row["concept"]), wn.synset(row["gold_concept"])
        assert shortest_distance(concept, gold, class_up) == row["hops"], row["id"]
        assert row["chain"][0] == row["concept"] and row["chain"][-1] == row["gold_concept"]
        assert len(row["chain"]) == row["hops"] + 1


def test_hypernymy_distractor_is_never_an_ancestor(built, wn):
    for row in sample(built["hypernymy"]):
        ancestors = all_above(wn.synset(row["concept"]))
        for name in row["distractor_concepts"]:
            assert wn.synset(name) not in ancestors, (row["id"], name)
            assert name != row["concept"]


def test_hyponymy_gold_is_exactly_k_hops_down_and_no_distractor_below(built, wn):
    for row in sample(built["hyponymy"], 800):
        concept = wn.synset(row["concept"])
        assert shortest_distance(concept, wn.synset(row["gold_concept"]), class_down) == row["hops"]
        for name in row["distractor_concepts"]:
            assert concept not in all_above(wn.synset(name)), (row["id"], name)


def test_hop_counts_cover_one_to_five(built):
    assert set(built["hypernymy"]["hops"].unique()) == {1, 2, 3, 4, 5}
    assert set(built["hyponymy"]["hops"].unique()) == {1, 2, 3, 4, 5}


def test_distractors_come_from_their_family_at_exactly_their_depth(built, wn):
    """SISTER_l (R&S 2020 §3.1) is HOPS_{l-1}(c~, down) of each sibling c~: exactly l levels below the shared
    parent, so sister-2 distractors are never plain siblings (the released data: 2 of 4,503); isa_down_k' lie
    exactly k' below the concept."""
    rows = built["hypernymy"].filter(pl.col("n_random_fill") == 0, pl.col("distractor_family") != "random")
    assert set(rows["distractor_depth"].unique()) == {1, 2, 3}
    for row in sample(rows, 600):
        concept = wn.synset(row["concept"])
        depth = row["distractor_depth"]
        siblings = {s for parent in class_up(concept) for s in class_down(parent)} - {concept}
        for name in row["distractor_concepts"]:
            other = wn.synset(name)
            if row["distractor_family"] == "isa_down":
                assert shortest_distance(concept, other, class_down) == depth
            else:
                below = [d for s in siblings if (d := shortest_distance(s, other, class_down)) is not None]
                assert min(below) == depth - 1, (row["id"], name, depth)


def test_hyponymy_asks_for_up_to_ten_hyponyms_at_each_hop(built, wn):
    """R&S 2020 Table 3 and the released hyponymy data: several gold hyponyms per (concept, hop), up to 10."""
    golds = built["hyponymy"].group_by("concept", "hops", maintain_order=True).agg(pl.col("gold_concept").unique())
    sizes = golds["gold_concept"].list.len()
    assert sizes.max() == 10 and (sizes >= 2).sum() > sizes.len() // 2
    for row in golds.sample(300, seed=3).to_dicts():  # the same 300 every run (the groups keep the build's order)
        concept = wn.synset(row["concept"])
        frontier, seen = {concept}, {concept}
        for _ in range(row["hops"]):  # breadth first: the nodes first reached at hop k are exactly k hops down
            frontier = {child for node in frontier for child in class_down(node)} - seen
            seen |= frontier
        exact = {s.name() for s in frontier}
        assert set(row["gold_concept"]) <= exact and len(row["gold_concept"]) == min(10, len(exact)), row["concept"]


def test_hyponymy_golds_per_hop_is_a_parameter(wordnet_graph):
    one = build_probes(ProbeSpec("hyponymy", concepts=("dog.n.01",), golds_per_hop=1), wordnet_graph, progress=False)
    assert (
        one.group_by("hops").agg(pl.col("gold_concept").n_unique())["gold_concept"].to_list()
        == [1] * one["hops"].n_unique()
    )


def test_instance_links_are_followed_only_when_asked(wn, wordnet_graph):
    """The released data never follow instance-hypernym links (165 of 10,195 hyponymy questions would differ)."""
    instances = {s.name() for s in wn.synset("city.n.01").instance_hyponyms()}
    spec = ProbeSpec("hyponymy", concepts=("city.n.01",), max_hops=1, golds_per_hop=1000)
    default = set(build_probes(spec, wordnet_graph, progress=False)["gold_concept"].unique())
    followed = set(
        build_probes(replace(spec, instance_links=True), wordnet_graph, progress=False)["gold_concept"].unique()
    )
    assert default == {s.name() for s in wn.synset("city.n.01").hyponyms()} and not default & instances
    assert followed == default | instances


@pytest.mark.parametrize("probe", ["hypernymy", "hyponymy", "definitions", "synonymy", "wordsense"])
def test_no_two_choices_are_equal_ignoring_case(built, probe):
    """A full synonymy build once offered both "cold war" and "Cold War" (SPEC §2: no duplicate choices)."""
    folded = built[probe]["choices"].list.eval(pl.element().str.strip_chars().str.to_lowercase().n_unique())
    assert (folded.list.first() == 5).all()


def test_definitions_gold_is_the_gloss_and_no_distractor_repeats_it(built, wn):
    for row in sample(built["definitions"]):
        gold = row["choices"][row["answer"]]
        assert gold == wn.synset(row["concept"]).definition()
        others = [c for i, c in enumerate(row["choices"]) if i != row["answer"]]
        assert gold.strip().lower() not in {c.strip().lower() for c in others}
        for name, text in zip(row["distractor_concepts"], others):
            assert wn.synset(name).definition() == text


def test_synonymy_distractors_share_no_lemma_with_the_concept(built, wn):
    for row in sample(built["synonymy"]):
        lemmas = {name.replace("_", " ").lower() for name in wn.synset(row["concept"]).lemma_names()}
        gold = {part.lower() for part in row["choices"][row["answer"]].split(", ")}
        assert gold == lemmas and len(lemmas) >= 2
        for name in row["distractor_concepts"]:
            theirs = {lemma.replace("_", " ").lower() for lemma in wn.synset(name).lemma_names()}
            assert not (theirs & lemmas), (row["id"], name)


@pytest.mark.parametrize("probe", ["hypernymy", "hyponymy", "definitions", "synonymy", "wordsense"])
def test_choices_are_distinct_five_and_positions_balanced(built, probe):
    frame = built[probe]
    assert (frame["choices"].list.len() == 5).all()
    assert (frame["choices"].list.n_unique() == 5).all()
    counts = Counter(frame["answer"].to_list())
    assert set(counts) == {0, 1, 2, 3, 4}
    assert max(counts.values()) - min(counts.values()) <= 1 + frame.height // 500  # balanced before dedup


@pytest.mark.parametrize("probe", ["hypernymy", "definitions", "wordsense"])
def test_splits_keep_clusters_whole_and_train_capped(built, probe):
    frame = built[probe]
    per_concept = frame.group_by("concept").agg(pl.col("split").n_unique())
    assert (per_concept["split"] == 1).all()
    sizes = dict(frame["split"].value_counts().iter_rows())
    assert 0 < sizes["train"] <= 3000 and sizes["dev"] > 0 and sizes["test"] > 0


def test_example_sentence_mentions_the_word(built):
    for probe in ("hypernymy", "definitions", "wordsense"):
        for row in sample(built[probe], 500):
            assert row["word"].lower() in row["context"].lower()
            assert row["context"] in row["question"]


def test_wordsense_distractors_are_other_senses_with_examples(built, gcide_graph):
    with_examples = set(gcide_graph.examples["id"].to_list())
    names = gcide_graph.concepts.filter(pl.col("id").is_in(list(with_examples)))["name"].to_list()
    allowed = set(names)
    frame = built["wordsense"]
    for row in sample(frame):
        word = row["concept"].rsplit(".", 2)[0].lower()
        own = [n for n in row["distractor_concepts"] if n.rsplit(".", 2)[0].lower() == word]
        assert len(own) == 4 - row["n_random_fill"]
        assert all(name in allowed for name in row["distractor_concepts"])
        gold = row["choices"][row["answer"]].strip().lower()
        assert all(c.strip().lower() != gold for i, c in enumerate(row["choices"]) if i != row["answer"])


def test_same_seed_same_probes_other_seed_other_probes(built, wordnet_graph):
    """On 300 concepts of the full build (test_cli checks the whole paper preset, file bytes and all)."""
    named = ",".join(built["hyponymy"]["concept"].unique(maintain_order=True).head(300))
    spec = ProbeSpec("hyponymy", max_hops=5, seed=3, concepts=named)
    first = build_probes(spec, wordnet_graph, progress=False)
    again = build_probes(spec, wordnet_graph, progress=False)
    other = build_probes(replace(spec, seed=4), wordnet_graph, progress=False)
    assert first.equals(again)
    assert not first.equals(other)


def test_family_filters_are_respected(wordnet_graph):
    frame = build_probes(
        ProbeSpec("hypernymy", max_hops=2, families=("sister",), max_depth=2, perturbations=None),
        wordnet_graph,
        progress=False,
    )
    assert set(frame["distractor_family"].unique()) == {"sister"}
    assert set(frame["distractor_depth"].unique()) <= {1, 2}
    assert set(frame["hops"].unique()) == {1, 2}


@pytest.mark.parametrize("probe", ["hypernymy", "wordsense"])
def test_a_concept_subset_gets_exactly_its_questions_of_the_full_build(built, wordnet_graph, gcide_graph, probe):
    full = built[probe]
    names = full["concept"].unique(maintain_order=True).head(3).to_list()
    spec = ProbeSpec(probe, max_hops=5 if probe == "hypernymy" else 3, seed=1, concepts=",".join(names))
    subset = build_probes(spec, gcide_graph if probe == "wordsense" else wordnet_graph, progress=False)

    def content(frame: pl.DataFrame) -> pl.DataFrame:  # everything but the answer's position and the split
        gold = pl.col("choices").list.get(pl.col("answer"))
        keys = ["concept", "question", "hops", "distractor_family", "distractor_depth"]
        return frame.select(*keys, gold.alias("gold"), pl.col("choices").list.sort()).sort(keys)

    assert content(subset).equals(content(full.filter(pl.col("concept").is_in(names))))


def test_a_concept_the_probe_cannot_ask_about_is_named(wordnet_graph):
    with pytest.raises(SpecError, match="'happy.a.01'"):  # adjectives have no ISA links
        build_probes(ProbeSpec("hypernymy", concepts=("dog.n.01", "happy.a.01")), wordnet_graph, progress=False)


def test_probe_sets_built_on_two_processes_are_those_built_in_one(wordnet_graph):
    named = "dog.n.01,car.n.01,oak.n.02"
    specs = [ProbeSpec(probe, concepts=named, seed=1) for probe in ("hypernymy", "definitions", "synonymy")]
    alone, pooled = build_probe_sets(specs, workers=1, progress=False), build_probe_sets(specs, workers=2)
    assert list(alone) == list(pooled) == ["hypernymy", "definitions", "synonymy"]
    assert all(alone[probe].equals(pooled[probe]) and not alone[probe].is_empty() for probe in alone)
    with pytest.raises(SpecError, match=r"concepts \['cat.n.01'\] cannot be asked about by the hypernymy probe"):
        build_probe_sets([ProbeSpec("hypernymy", concepts="cat.n.01"), specs[1]], workers=2, progress=False)
