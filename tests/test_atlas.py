"""The taxonomy atlas on real WordNet concepts and a prediction frame whose node aggregates are computed by hand.

The frame: one model's clusters (hypernymy unless said) and which of their questions are right.

    dog.n.01      3 of 3 right   (right)        definitions:dog.n.01  0 of 1 (wrong)
    puppy.n.01    1 of 2         (wrong)        wolf.n.01             2 of 2 (right)
    cat.n.01      3 of 4         (wrong)        run.v.01              2 of 2 (right)
    definitions:good.a.01 1 of 1 (right)        wordsense:neglect.u.5 (GCIDE) 0 of 2: never placed

In WordNet's tree (each synset under its parent closest to the top) dog.n.01 sits under domestic_animal.n.01,
puppy.n.01 under dog.n.01, wolf.n.01 and cat.n.01 under carnivore.n.01 (canine.n.02, feline.n.01), and all four
under animal.n.01.
"""

import polars as pl
import pytest

from workbench import charts, markup, metrics
from workbench.analysis import atlas
from workbench.errors import WorkbenchError
from workbench.knowledge.lookup import hypernym_paths
from workbench.schema import PREDICTION_SCHEMA, PROBE_SCHEMA, conform
from workbench.views import taxonomy_layout

pytestmark = pytest.mark.wordnet

CLUSTERS = [  # probe, concept, source, pos, right answers of each question
    ("hypernymy", "dog.n.01", "wordnet", "n", [True, True, True]),
    ("definitions", "dog.n.01", "wordnet", "n", [False]),
    ("hypernymy", "puppy.n.01", "wordnet", "n", [True, False]),
    ("hypernymy", "wolf.n.01", "wordnet", "n", [True, True]),
    ("hypernymy", "cat.n.01", "wordnet", "n", [True, False, True, True]),
    ("hypernymy", "run.v.01", "wordnet", "v", [True, True]),
    ("definitions", "good.a.01", "wordnet", "a", [True]),
    ("wordsense", "neglect.u.5", "gcide", "n", [False, False]),
]


def predictions(model: str = "m", flip: bool = False) -> pl.DataFrame:
    rows = [
        {
            "id": f"{probe}:{concept}:{index}", "probe": probe, "source": source, "split": "test",
            "cluster_id": f"{probe}:{concept}", "concept": concept, "pos": pos, "word": concept.split(".")[0],
            "context": "", "template": "t", "question": f"What is {concept}? ({index})", "choices": ["a", "b"],
            "answer": 0, "gold_concept": "g", "hops": 1, "chain": [concept], "distractor_family": "random",
            "distractor_depth": 0, "distractor_concepts": [], "n_random_fill": 0, "scores": [1.0, 0.0],
            "pred": 0 if right != flip else 1, "correct": right != flip, "model": model, "fingerprint": model,
            "scorer": "similarity", "rule": "cosine", "control": "none",
        }
        for probe, concept, source, pos, answers in CLUSTERS
        for index, right in enumerate(answers)
    ]  # fmt: skip
    return conform(pl.DataFrame(rows), PREDICTION_SCHEMA)


@pytest.fixture(scope="module")
def table(wordnet_graph) -> pl.DataFrame:
    return atlas.taxonomy_accuracy(predictions(), wordnet_graph, n_boot=50)


def row(table: pl.DataFrame, node: str) -> dict:
    return table.filter(pl.col("node") == node).row(0, named=True)


def test_a_concept_sits_on_its_shortest_hypernym_path_the_one_the_concept_picker_shows_first(wordnet_graph):
    paths = atlas.tree_paths(wordnet_graph, ["dog.n.01", "good.a.01", "no_such.n.01"])
    dog = paths.filter(pl.col("concept") == "dog.n.01")
    assert dog["node"].to_list() == ["all", "noun", *hypernym_paths(wordnet_graph, "dog.n.01")[0]]
    assert dog["node"][-2] == "domestic_animal.n.01" and dog["depth"].to_list() == list(range(dog.height))
    assert dog["parent"].to_list()[1:] == dog["node"].to_list()[:-1] and dog["parent"][0] is None
    assert paths.filter(pl.col("concept") == "good.a.01")["node"].to_list() == ["all", "adjective", "good.a.01"]
    assert "no_such.n.01" not in paths["concept"]


def test_node_aggregates_match_the_hand_counts(table):
    root = row(table, "all")  # 7 placed clusters, 4 right; 15 questions, 12 right; the GCIDE cluster left out
    assert (root["n_clusters"], root["n"], root["depth"], root["parent"]) == (7, 15, 0, None)
    assert root["cluster_accuracy"] == pytest.approx(4 / 7) and root["instance_accuracy"] == pytest.approx(12 / 15)
    animal = row(table, "animal.n.01")  # both dog clusters, puppy, wolf, cat: hypernymy dog and wolf right
    assert (animal["n_clusters"], animal["n"]) == (5, 12)
    assert animal["cluster_accuracy"] == pytest.approx(2 / 5) and animal["instance_accuracy"] == pytest.approx(9 / 12)
    dog = row(table, "dog.n.01")  # its own two clusters and puppy's below it
    assert (dog["n_clusters"], dog["cluster_accuracy"], dog["concepts"]) == (3, pytest.approx(1 / 3), ["dog.n.01"])
    assert row(table, "carnivore.n.01")["cluster_accuracy"] == pytest.approx(1 / 2)
    assert (row(table, "verb")["n_clusters"], row(table, "verb")["cluster_accuracy"]) == (1, 1.0)
    assert 0 <= root["cluster_lo"] <= root["cluster_accuracy"] <= root["cluster_hi"] <= 1
    assert "neglect.u.5" not in table["node"] and table["node"].is_unique().all()
    overall = metrics.cluster_accuracy(predictions().filter(pl.col("source") != "gcide"), by=(), n_boot=1)
    assert root["cluster_accuracy"] == overall["cluster_accuracy"].item()


def test_pruned_nodes_fold_their_concepts_into_the_nearest_kept_ancestor(wordnet_graph):
    pruned = atlas.taxonomy_accuracy(predictions(), wordnet_graph, min_clusters=2, n_boot=10)
    assert set(pruned.filter(pl.col("n_clusters") < 2)["node"]) == set()
    assert "canine.n.02" not in pruned["node"] and "verb" not in pruned["node"]
    assert row(pruned, "carnivore.n.01")["concepts"] == ["cat.n.01", "wolf.n.01"]
    assert row(pruned, "dog.n.01")["concepts"] == ["dog.n.01", "puppy.n.01"]
    assert row(pruned, "all")["concepts"] == ["good.a.01", "run.v.01"]  # verb and adjective hold one cluster each
    shallow = atlas.taxonomy_accuracy(predictions(), wordnet_graph, max_depth=1, n_boot=10)
    assert shallow["node"].to_list() == ["all", "noun", "adjective", "verb"]  # bigger first, then by name
    assert row(shallow, "noun")["concepts"] == ["cat.n.01", "dog.n.01", "puppy.n.01", "wolf.n.01"]


def test_each_model_and_probe_gets_its_own_tree(wordnet_graph):
    both = pl.concat([predictions(), predictions("flipped", flip=True)])
    table = atlas.taxonomy_accuracy(both, wordnet_graph, by="probe", max_depth=0, n_boot=10)
    got = {(r["model"], r["probe"]): (r["n_clusters"], r["cluster_accuracy"]) for r in table.iter_rows(named=True)}
    assert got == {
        ("m", "hypernymy"): (5, pytest.approx(3 / 5)),
        ("m", "definitions"): (2, pytest.approx(1 / 2)),
        ("flipped", "hypernymy"): (5, 0.0),
        ("flipped", "definitions"): (2, pytest.approx(1 / 2)),
    }


def test_predictions_without_wordnet_concepts_are_refused_with_the_fix(wordnet_graph):
    gcide = predictions().filter(pl.col("source") == "gcide")
    with pytest.raises(WorkbenchError, match="WordNet probe set"):
        atlas.taxonomy_accuracy(gcide, wordnet_graph)


def test_concepts_under_a_node_list_their_verdicts_worst_first(wordnet_graph):
    below = atlas.concepts_under(predictions(), "animal.n.01", wordnet_graph)
    assert below.rows() == [
        ("cat.n.01", 1, 0, 4, 3),
        ("puppy.n.01", 1, 0, 2, 1),
        ("dog.n.01", 2, 1, 4, 3),
        ("wolf.n.01", 1, 1, 2, 2),
    ]


def test_layout_widths_are_shares_of_the_parents_clusters(table):
    view = taxonomy_layout(table)
    at = {r["node"]: r for r in view.iter_rows(named=True)}
    assert (at["all"]["x0"], at["all"]["x1"], at["all"]["y0"], at["all"]["y1"]) == (0, 1, 0, 1)
    tops = [at[node] for node in ("noun", "adjective", "verb")]  # 5, 1 and 1 of 7 clusters, side by side
    assert [x for r in tops for x in (r["x0"], r["x1"])] == pytest.approx([0, 5 / 7, 5 / 7, 6 / 7, 6 / 7, 1])
    assert sum(r["x1"] - r["x0"] for r in tops) == pytest.approx(1)
    puppy, dog = at["puppy.n.01"], at["dog.n.01"]  # dog's own two clusters leave two thirds of it open below
    assert puppy["x1"] - puppy["x0"] == pytest.approx((dog["x1"] - dog["x0"]) / 3) and puppy["y0"] == dog["y1"]
    zoomed = taxonomy_layout(table, root="animal.n.01", levels=2)
    assert set(zoomed["node"]) == {"animal.n.01", "domestic_animal.n.01", "chordate.n.01"}
    shares = {r["node"]: (r["x0"], r["x1"], r["level"]) for r in zoomed.iter_rows(named=True)}
    assert shares == {
        "animal.n.01": (0, 1, 0),
        "domestic_animal.n.01": (0, pytest.approx(3 / 5), 1),
        "chordate.n.01": (pytest.approx(3 / 5), 1, 1),
    }
    with pytest.raises(WorkbenchError, match="not a node"):
        taxonomy_layout(table, root="canine.n.99")


def test_chart_colours_by_strict_accuracy_and_exposes_the_node_selection(table):
    spec = charts.taxonomy_atlas(taxonomy_layout(table, levels=4)).to_dict()
    assert spec["params"][0]["name"] == "node" and spec["params"][0]["select"]["fields"] == ["node"]
    rect = spec["layer"][0]
    assert rect["mark"]["type"] == "rect" and rect["encoding"]["color"]["field"] == "cluster_accuracy"
    assert rect["encoding"]["color"]["scale"]["domain"] == [0, 1]
    (rows,) = spec["datasets"].values()
    assert {r["node"] for r in rows} == set(taxonomy_layout(table, levels=4)["node"])


def test_panel_zooms_on_a_click_lists_the_concepts_and_opens_a_cluster(wordnet_graph):
    from widgets import ClusterBrowser, Session, TaxonomyAtlas

    preds = predictions()
    session = Session(graph=wordnet_graph, probes=conform(preds, PROBE_SCHEMA), predictions=preds)
    panel, browser = TaxonomyAtlas(session, min_clusters=1, n_boot=10), ClusterBrowser(session)
    assert "7 clusters placed in WordNet; 1 without a WordNet concept" in panel.message.value
    assert panel.root == "all" and panel.up.disabled
    panel.chart._vl_selections = {"node": {"value": {"vlPoint": {"or": [{"node": "animal.n.01"}]}}, "store": []}}
    assert panel.root == "animal.n.01" and "animal.n.01" in panel.path.value
    (rows,) = panel.chart.spec["datasets"].values()
    assert {r["node"] for r in rows if r["level"] == 0} == {"animal.n.01"}
    assert [value for _, value in panel.concepts.options] == ["cat.n.01", "puppy.n.01", "dog.n.01", "wolf.n.01"]
    panel.concepts.value = "wolf.n.01"
    assert session.concept == "wolf.n.01" and "2 questions" in browser.summary.value
    panel.up.click()
    assert panel.root == "organism.n.01"
    panel.top.click()
    assert panel.root == "all" and len(panel.concepts.options) == 6
    assert f"6 concepts below {markup.text('all')}" in panel.concepts_note.value
    panel.max_concepts = 2
    panel.zoom("animal.n.01")
    assert [value for _, value in panel.concepts.options] == ["cat.n.01", "puppy.n.01"]
    assert f"4 concepts below {markup.text('animal.n.01')}, the 2 worst known" in panel.concepts_note.value


def test_report_gives_the_top_nodes_per_model_and_probe_under_the_json_key_taxonomy(monkeypatch):
    from workbench import reports

    monkeypatch.setattr(reports, "TAXONOMY_MIN_CLUSTERS", 1)  # the hand frame is small
    rows = reports.json_report(predictions(), n_boot=20)["taxonomy"]
    roots = {r["probe"]: (r["n_clusters"], r["cluster_accuracy"]) for r in rows if r["node"] == "all"}
    assert roots == {"hypernymy": (5, pytest.approx(3 / 5)), "definitions": (2, pytest.approx(1 / 2))}
    assert max(r["depth"] for r in rows) == reports.TAXONOMY_DEPTH and {r["label"] for r in rows} == {"m"}
    assert "animal.n.01" not in {r["node"] for r in rows}  # depth 8
    text = reports.text_report(predictions(), n_boot=20)
    line = next(line for line in text.splitlines() if line.startswith("  m, hypernymy: worst "))
    assert "physical_entity.n.01 50.0 (4)" in line and "best travel_rapidly.v.01 100.0 (1)" in line
    assert reports.json_report(predictions().filter(pl.col("source") == "gcide"), n_boot=20)["taxonomy"] == []


@pytest.mark.browser
def test_a_click_on_a_node_or_its_name_sets_the_node_selection_on_a_static_page(table, browser, tmp_path):
    import json

    import altair as alt
    import vl_convert

    spec = charts.taxonomy_atlas(taxonomy_layout(table, root="animal.n.01")).to_dict()
    bundle = vl_convert.javascript_bundle(vl_version="_".join(alt.SCHEMA_VERSION.split(".")[:2]))
    bundle = bundle.replace("</script", "<\\/script")
    page = tmp_path / "atlas.html"
    page.write_text(
        f"<html><head><script>{bundle}</script></head><body><div id='atlas'>"
        f"</div><script>vegaEmbed('#atlas', {json.dumps(spec)}).then(r => {{ window.atlasView = r.view; }});"
        "</script></body></html>",
        encoding="utf-8",
    )
    tab = browser.new_page()
    tab.goto(page.as_uri())
    tab.wait_for_function("window.atlasView !== undefined", timeout=20_000)

    def selects(node: str) -> bool:  # waits for Vega's dataflow to take the click in
        tab.wait_for_function(f"(atlasView.signal('node').node || [])[0] === {json.dumps(node)}", timeout=5_000)
        return tab.evaluate("atlasView.signal('node').node") == [node]

    assert tab.evaluate("atlasView.signal('node').node") is None
    tab.locator("#atlas g.mark-rect path").nth(1).click()  # the second rectangle drawn
    assert selects(taxonomy_layout(table, root="animal.n.01")["node"][1])
    tab.locator("#atlas g.mark-text text", has_text="puppy").click(force=True)
    assert selects("puppy.n.01")
    tab.close()
