"""The panels driven from Python on real WordNet probes and real MiniLM predictions.

Each test sets widget values as a visitor would and checks the shared session and the other panels.
"""

import json
import os
import subprocess
import sys
import time
from html import escape

import polars as pl
import pytest
from app_workspace import add_inoculation_inputs, make_app_workspace

from widgets import ClusterBrowser, ConceptPicker, ProbeControls, ResultsDashboard, Session
from widgets.files import load_probes, prediction_files
from workbench import markup, metrics
from workbench.inoculation import load_run
from workbench.probes.formats import read_probes
from workbench.probes.select import ProbeFilter, cluster_of, select

pytestmark = [pytest.mark.wordnet, pytest.mark.model]


@pytest.fixture(scope="module")
def home(tmp_path_factory, minilm_path):
    return make_app_workspace(tmp_path_factory.mktemp("panels-workspace"), minilm_path)


@pytest.fixture
def session(home, wordnet_graph) -> Session:
    preds = pl.read_parquet(prediction_files(home)[0])
    return Session(graph=wordnet_graph, probes=load_probes(home), predictions=preds)


def test_typing_a_word_picks_its_first_concept_and_shows_its_card_and_cluster(session):
    picker, browser = ConceptPicker(session), ClusterBrowser(session)
    controls = ProbeControls(session)
    controls.probe.value = "definitions"
    picker.search.value = "dog"
    assert session.concept == "dog.n.01"
    assert "a member of the genus Canis" in picker.card.value and "canine.n.02" in picker.card.value
    expected = cluster_of(select(session.probes, ProbeFilter(probe="definitions")), "dog.n.01")
    assert f"{expected.height} questions" in browser.summary.value
    assert expected["question"][0].replace("'", "&#x27;") in browser.body.value
    picker.pos.value = "v"
    picker.hits.value = picker.hits.options[0][1]
    assert session.concept.split(".")[1] == "v"
    assert "No question about" in browser.summary.value  # verbs are not in these probes


def test_cluster_browser_shows_each_pick_and_the_cluster_verdict_from_predictions(session):
    browser, controls = ClusterBrowser(session), ProbeControls(session)
    controls.probe.value = "hypernymy"
    session.concept = "dog.n.01"
    preds = cluster_of(session.predictions, "dog.n.01")
    right = int(preds["correct"].sum())
    verdict = "all right" if right == preds.height else "not all right"
    assert f"{right}/{preds.height} {verdict}" in browser.summary.value
    assert browser.body.value.count("◀") == preds.height  # one pick per question
    assert browser.body.value.count("wb-question") == preds.height


def test_a_question_people_flagged_says_so_in_the_cluster_browser(session, tmp_path):
    from workbench.annotation import (
        Vote,
        add_annotator,
        annotator,
        create_batch,
        read_votes,
        record_vote,
        todo,
        workspace_flags,
    )

    dog = cluster_of(select(session.probes, ProbeFilter(probe="hypernymy")), "dog.n.01")
    batch = create_batch(dog, tmp_path / "annotation" / "dog", dog.height, per_question=1, annotators=1)
    add_annotator(batch, "ana")
    task = todo(annotator(batch, "ana")).row(0, named=True)
    wrong = (
        task["order"][0]
        if task["order"][0] != dog.filter(pl.col("id") == task["id"])["answer"][0]
        else task["order"][1]
    )
    record_vote(batch, Vote("ana", task["id"], wrong, task["order"].index(wrong) + 1, task["order"], ["also-right"]))
    assert read_votes(batch).height == 1
    session.flags = workspace_flags(tmp_path)
    browser, controls = ClusterBrowser(session), ProbeControls(session)
    controls.probe.value = "hypernymy"
    session.concept = "dog.n.01"
    picked = dog.filter(pl.col("id") == task["id"])["choices"][0][wrong]
    assert browser.body.value.count("wb-flag") == 1
    assert f"people: another choice is also right (1 of 1 votes; picked {markup.text(picked)}" in browser.body.value


def test_moving_the_hop_slider_updates_the_counts_the_preview_and_the_dashboard(session):
    controls, board = ProbeControls(session), ResultsDashboard(session)
    controls.probe.value = "hypernymy"
    assert controls.hops.value == (1, 3)
    controls.hops.value = (2, 2)
    assert session.where.hops == (2, 2)
    chosen = select(session.probes, session.where)
    assert f"{chosen.height:,} questions" in controls.total.value
    assert (
        set(chosen["hops"]) == {2}
        and "(hops 2," in controls.examples.value
        and "(hops 1," not in controls.examples.value
    )
    assert {cell["row"] for cell in _heat_cells(board)} == {"hypernymy k=2"}


def test_clicking_heatmap_cells_filters_the_drilldown_to_their_questions(session):
    controls, board = ProbeControls(session), ResultsDashboard(session)
    controls.probe.value = "hypernymy"
    everything = metrics.drilldown(select(session.predictions, session.where))
    assert f"{everything['id'].n_unique():,} questions in all cells" in board.drill_title.value
    cell = _heat_cells(board)[0]
    board.heat._vl_selections = _clicked({"row": cell["row"], "column": cell["column"]})
    behind = everything.filter(pl.col("row") == cell["row"], pl.col("column") == cell["column"])
    assert f"{behind['id'].n_unique():,} questions in {cell['row']} × {cell['column']}" in board.drill_title.value
    assert board.drill.value.count("<tr>") == min(behind.height, board.max_rows) + 1
    board.heat._vl_selections = _clicked()
    assert "all cells" in board.drill_title.value


def test_dashboard_shows_several_models_side_by_side(session):
    other = session.predictions.with_columns(
        model=pl.lit("shuffled"), fingerprint=pl.lit("x"), correct=~pl.col("correct")
    )
    board = ResultsDashboard(session)
    session.predictions = pl.concat([session.predictions, other])
    spec = board.heat.spec
    assert spec["facet"]["column"]["field"] == "panel"
    assert "shuffled" in board.message.value


def test_dashboard_marks_significant_cells_and_shows_calibration(session):
    from workbench.analysis.calibration import calibration
    from workbench.analysis.comparison import compare

    first = session.predictions
    flipped = first.with_columns(model=pl.lit("flipped"), fingerprint=pl.lit("x"), correct=~pl.col("correct"))
    board = ResultsDashboard(session)
    session.predictions = pl.concat([first, flipped])
    cells = compare(first, flipped, n_boot=0).filter(pl.col("scope") == "cell", pl.col("significant"))
    starred = {(c["row"], c["column"]) for c in _heat_cells(board) if c["cell_text"].endswith("*")}
    assert starred == set(zip(cells["row"], cells["column"])) and starred
    assert f"{len(starred)} of" in board.marks.value and "McNemar" in board.marks.value
    ece = calibration(flipped, by=())["ece"][0]
    board.wait(timeout=120)  # calibration is computed on the background thread
    assert board.reliability.layout.display is None and "ece" in board.calibration.value
    assert f"{ece:.3f}" in board.calibration.value


def test_dashboard_shows_template_sensitivity_and_fits_the_difficulty_model_on_request(session):
    from workbench.analysis import difficulty
    from workbench.analysis.consistency import template_consistency

    board = ResultsDashboard(session)
    board.wait(timeout=120)
    assert "wb.rephrase" in board.consistency.value  # one phrasing per question: says how to get more
    first = session.predictions
    again = {"id": pl.col("id") + "~again", "template": pl.col("template") + "-again", "pred": pl.lit(0, pl.Int64)}
    other = first.with_columns(**again)
    session.predictions = pl.concat([first, other.with_columns(correct=pl.col("pred") == pl.col("answer"))])
    expected = template_consistency(session.predictions)["consistency"][0]
    board.wait(timeout=120)
    assert f"{expected:.3f}" in board.consistency.value
    session.predictions = first
    board.fit_difficulty().result(timeout=120)
    coefficients, why_not = difficulty.fit_models(first)
    if coefficients is None:
        assert escape(why_not) in board.difficulty_note.value and board.difficulty.layout.display == "none"
    else:
        assert board.difficulty.layout.display is None
        assert difficulty.reading(coefficients)[0] in board.difficulty_note.value


def test_a_toggle_redraws_the_heat_map_exactly_as_altair_builds_it_for_the_new_selection(session):
    from workbench import charts

    controls, board = ProbeControls(session), ResultsDashboard(session)
    controls.probe.value = "hypernymy"
    controls.hops.value = (2, 3)
    controls.families.value = ("sister",)
    fresh = charts.heatmap(select(session.predictions, session.where), selection=charts.cell_selection()).to_dict()
    assert _named_data(board.heat.spec) == _named_data(fresh)
    assert {cell["row"] for cell in _heat_cells(board)} == {"hypernymy k=2", "hypernymy k=3"}


def test_bars_show_point_estimates_at_once_and_their_bootstrap_intervals_when_ready(session):
    from workbench.views import cluster_bar_data

    controls = ProbeControls(session)
    controls.probe.value = "hypernymy"
    board = ResultsDashboard(session, n_boot=200, settle=0.5)
    board.wait()
    controls.hops.value = (1, 2)
    expected = cluster_bar_data(select(session.predictions, session.where), n_boot=200).to_dicts()
    drawn = _bar_rows(board)
    assert [row["accuracy"] for row in drawn] == pytest.approx([row["accuracy"] for row in expected])
    assert all(row["lo"] is None for row in drawn) and "under way" in board.intervals.value  # no whiskers yet
    board.wait(timeout=60)
    drawn = _bar_rows(board)
    assert [row[end] for row in drawn for end in ("lo", "hi")] == pytest.approx(
        [row[end] for row in expected for end in ("lo", "hi")]
    )
    assert "200 bootstrap resamples" in board.intervals.value


def test_drilldown_page_is_the_head_of_metrics_drilldown_with_several_models(session):
    from workbench.views import first_questions

    flipped = session.predictions.with_columns(
        model=pl.lit("flipped"), fingerprint=pl.lit("f"), correct=~pl.col("correct")
    )
    both = pl.concat([session.predictions, flipped.head(500)])
    chosen = both.filter(pl.col("hops") > 1)
    page = first_questions(chosen, 25, metrics.model_labels(both))
    assert page.equals(metrics.drilldown(both).filter(pl.col("hops") > 1).head(25))


def test_dashboard_app_draws_two_prediction_files_side_by_side(home, tmp_path):
    import shutil

    from widgets import apps

    shutil.copytree(home / "probes", tmp_path / "probes")
    (tmp_path / "predictions").mkdir()
    first = pl.read_parquet(prediction_files(home)[0])
    first.write_parquet(tmp_path / "predictions" / "a-minilm.parquet")
    wrong = (pl.col("answer") + 1) % pl.col("choices").list.len()  # a wrong pick where the first was right
    first.with_columns(
        model=pl.lit("flipped"), fingerprint=pl.lit("f"), pred=pl.when("correct").then(wrong).otherwise("answer")
    ).with_columns(correct=pl.col("pred") == pl.col("answer")).write_parquet(
        tmp_path / "predictions" / "b-flipped.parquet"
    )  # consistent: a file whose correct is not pred == answer is refused as damaged
    app = apps.dashboard(tmp_path)
    board = app.panels["dashboard"]
    assert "facet" not in board.heat.spec  # the app opens with the first file
    board.files.value = tuple(value for _, value in board.files.options)
    assert (
        board.heat.spec["facet"]["column"]["field"] == "panel"
        and board.bars.spec["facet"]["column"]["field"] == "panel"
    )
    panels = {row["panel"] for row in _heat_cells(board)}
    assert len(panels) == 2 and any("flipped" in panel for panel in panels)
    right = {row["panel"]: row["accuracy"] for row in _bar_rows(board) if row["measure"] == "instance"}
    assert sum(right.values()) == pytest.approx(1.0)  # the flipped model is right exactly where the first is wrong


def test_explorer_opens_on_the_probe_its_predictions_scored(home):
    from widgets import apps

    app = apps.explorer(home)  # the workspace has definitions and hypernymy probes, hypernymy predictions
    assert app.panels["controls"].probe.options[0] == "definitions"
    assert app.session.where.probe == "hypernymy"
    atlas = app.panels["atlas"]  # the predictions' taxonomy atlas, below; a concept picked there opens its cluster
    assert atlas.table is not None and atlas.table.filter(atlas.table["node"] == "all")["n_clusters"][0] > 0
    _, concept = atlas.concepts.options[0]  # (label, concept), the worst known first
    atlas.concepts.value = concept
    assert app.session.concept == concept


def test_write_button_saves_the_selection_inside_the_workspace(session, home, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(home))
    controls = ProbeControls(session)
    controls.probe.value = "hypernymy"
    controls.hops.value = (1, 1)
    controls.name.value = "../../escape attempt"
    controls.write.click()
    folder = home / "selections" / "escape-attempt"
    assert "wrote" in controls.status.value and folder.is_dir()
    assert read_probes(folder).sort("id").equals(select(session.probes, session.where).sort("id"))


def test_apps_explain_what_to_run_on_an_empty_workspace(tmp_path, monkeypatch):
    from widgets import apps

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path))
    assert "workbench probes build" in apps.explorer().children[1].value
    assert "No predictions yet" in apps.dashboard().children[1].children[1].value


def test_the_kept_vega_bundle_is_what_altair_bundles_and_spares_the_next_kernel_the_work(tmp_path, monkeypatch):
    import altair as alt

    from workbench.charts.offline import MODULE_ENV, chart_bundle, offline_charts

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path))
    monkeypatch.setattr(alt.JupyterChart, "_is_offline", False)  # a fresh kernel: altair's CDN loader
    monkeypatch.setattr(alt.JupyterChart, "_esm", alt.JupyterChart._esm)
    offline_charts()  # bundles with altair's enable_offline, and keeps the bundle
    (kept,) = (tmp_path / "vendor").glob("jupyterchart-altair*.js")
    bundled = alt.JupyterChart._esm
    assert alt.JupyterChart._is_offline and "https://esm.sh" not in bundled and kept.read_text() == bundled
    monkeypatch.setattr(alt.JupyterChart, "_is_offline", False)  # the next kernel
    monkeypatch.setattr(alt.JupyterChart, "enable_offline", None)  # must not be needed
    alt.JupyterChart._esm = "the CDN loader"
    offline_charts()
    assert alt.JupyterChart._is_offline and alt.JupyterChart._esm == bundled
    assert chart_bundle() == kept  # what workbench serve serves

    monkeypatch.setattr(alt.JupyterChart, "_is_offline", False)  # a kernel of a served app: a loader of it
    monkeypatch.setenv(MODULE_ENV, f"workbench/charts/{kept.name}")
    offline_charts()
    assert f'"workbench/charts/{kept.name}"' in alt.JupyterChart._esm and len(alt.JupyterChart._esm) < 1000


def test_an_app_kernel_builds_both_apps_without_the_heavy_imports_it_does_not_use(home):
    """A served app starts a kernel per visitor: torch (scoring), scipy.stats (significance marks, needed with two
    models) and rfc3987_syntax (an IRI grammar jsonschema builds at import) would each add a second or more."""
    code = (
        "import sys; from widgets import apps; apps.explorer(); apps.dashboard(); "
        "print(sorted(m for m in ('torch', 'transformers', 'scipy.stats', 'rfc3987_syntax') if sys.modules.get(m)))"
    )
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def _clicked(*cells: dict) -> dict:
    """What the browser sends when heat-map ``cells`` are clicked (none: double-click to clear)."""
    return {"cell": {"value": {"vlPoint": {"or": list(cells)}} if cells else None, "store": []}}


def _heat_cells(board: ResultsDashboard) -> list[dict]:
    """The heat map's cells as drawn: the rows of its inline data that carry an accuracy."""
    return [row for rows in board.heat.spec["datasets"].values() for row in rows if "row" in row and "accuracy" in row]


def _bar_rows(board: ResultsDashboard) -> list[dict]:
    """The cluster bars' inline data, in the order drawn."""
    return [row for rows in board.bars.spec["datasets"].values() for row in rows]


def _named_data(spec: dict) -> dict:
    """``spec`` with its inline dataset under a fixed name (altair names it by a hash of the rows)."""
    (rows,) = spec["datasets"].values()
    text = json.dumps({key: value for key, value in spec.items() if key != "datasets"}).replace(
        next(iter(spec["datasets"])), "rows"
    )
    return {**json.loads(text), "datasets": {"rows": rows}}


@pytest.fixture
def inoculation_home(home, tmp_path, minilm_path, mcqa_dir):
    """A workspace with a tiny multiple-choice BERT as source model and 60 real ARC-Easy dev questions."""
    import shutil

    shutil.copytree(home / "probes", tmp_path / "probes", symlinks=True)
    return add_inoculation_inputs(tmp_path, minilm_path, mcqa_dir)


def test_launcher_lists_each_probe_set_once_and_names_only_what_is_missing(inoculation_home):
    import shutil

    from widgets import InoculationLauncher

    full = InoculationLauncher(Session(), home=inoculation_home)
    values = [value for _, value in full.probe.options]
    sets = [path for path in (inoculation_home / "probes").iterdir() if not path.name.startswith(".")]  # not locks
    assert values == sorted(set(values)) and len(values) == len(sets) == 2
    assert not full.start.disabled and full.status.value == ""
    shutil.rmtree(inoculation_home / "runs")
    launcher = InoculationLauncher(Session(), home=inoculation_home)
    assert launcher.start.disabled and "a source model" in launcher.status.value
    assert "a probe set" not in launcher.status.value and "science QA" not in launcher.status.value
    labels = [c for c in (launcher.model, launcher.orig, launcher.add_some_data, launcher.max_eval) if c.description]
    assert {c.style.description_width for c in labels} == {f"{len('add-some from (held out)') * 0.6 + 1:.1f}em"}


def test_a_visitor_trains_a_source_model_from_the_app_and_the_launcher_offers_it(inoculation_home, mcqa_dir):
    from widgets import apps

    arc = inoculation_home / "mcqa" / "arc_easy"
    (arc / "train.jsonl").write_text("\n".join((mcqa_dir / "arc_easy" / "train.jsonl").read_text().splitlines()[:16]))
    app = apps.inoculation(inoculation_home)
    trainer, launcher = app.panels["source"], app.panels["inoculation"]
    before = len(launcher.model.options)
    trainer.model.value = str(inoculation_home / "runs" / "tiny-source" / "model")  # small: seconds on a CPU
    trainer.data.value, trainer.max_train.value, trainer.name.value = str(arc), 16, "my source"
    trainer.start.click()
    trainer.thread.join(timeout=240)
    assert "saved" in trainer.status.value, trainer.status.value
    assert trainer.progress.value == trainer.progress.max > 0  # the bar followed every step
    saved = inoculation_home / "runs" / "source" / "my-source"
    assert (saved / "model" / "config.json").is_file() and json.loads((saved / "metrics.json").read_text())["aggregate"]
    assert len(launcher.model.options) == before + 1 and str(saved) in {v for _, v in launcher.model.options}
    trainer.name.value = "cancelled"
    trainer.stop.set()  # Cancel before the first step: nothing is saved
    trainer._run(trainer.model.value, str(arc), inoculation_home / "runs" / "source" / "cancelled")
    assert "cancelled" in trainer.status.value
    assert not (inoculation_home / "runs" / "source" / "cancelled" / "model").exists()


def test_launcher_runs_in_the_background_draws_the_curve_and_cancels(inoculation_home, monkeypatch):
    from widgets import apps

    monkeypatch.setenv("WORKBENCH_HOME", str(inoculation_home))
    app = apps.inoculation(inoculation_home)
    launcher, curves = app.panels["inoculation"], app.panels["runs"]
    launcher.max_length, launcher.batch_size = 48, 8
    assert "No inoculation runs" in curves.message.value and "start one above" in curves.message.value
    launcher.probe.value = str(inoculation_home / "probes" / "hypernymy")
    launcher.ks.value, launcher.lrs.value, launcher.max_eval.value = "4,8,16", "1e-4", 12
    launcher.name.value = "tiny run"
    start_when_done = []  # Start's state when the page first reads the ending: a browser may check it right then
    launcher.status.observe(
        lambda change: start_when_done.append(launcher.start.disabled) if "wb-run-done" in change.new else None,
        "value",
    )
    launcher.start.click()
    assert launcher.thread.is_alive() and launcher.start.disabled  # the click returned while the run goes on
    deadline = time.time() + 240
    while launcher.progress.value < 2 and time.time() < deadline:
        time.sleep(0.2)
    launcher.cancel.click()
    launcher.thread.join(timeout=240)
    trials = load_run(inoculation_home / "runs" / "inoculation" / "tiny-run")
    assert 2 <= trials.height < 4  # baseline + at least one trial, stopped before the grid's end
    assert "cancelled" in launcher.status.value and start_when_done == [False]
    assert launcher.curve.spec is not None and "k4-lr" in launcher.trials.value
    assert launcher.progress.value == trials.height
    assert curves.run.value.endswith("tiny-run") and curves.chart.spec is not None  # the ended run joins the past runs
    assert f"{trials.height} trials on hypernymy" in curves.message.value


def test_past_runs_show_their_learning_curve_beside_a_control_run(inoculation_home):
    import shutil

    from widgets import RunCurves
    from workbench.inoculation import inoculate, learning_curve

    out = inoculation_home / "runs" / "inoculation" / "small"
    inoculate(inoculation_home / "runs" / "tiny-source", inoculation_home / "probes" / "hypernymy",
              inoculation_home / "mcqa" / "arc_easy", ks=(4, 8), lrs=(1e-4,), max_eval=12, max_length=48,
              batch_size=8, out=out, progress=False)  # fmt: skip
    shutil.copytree(out, out.with_name("small-control"))
    session = Session()
    curves = RunCurves(session, home=inoculation_home)
    curves.run.value = str(out)
    assert session.run_dir == str(out)
    points = [row for rows in curves.chart.spec["datasets"].values() for row in rows]
    expected = learning_curve(load_run(out))
    assert sorted({row["k"] for row in points if "k" in row}) == expected["k"].to_list() == [0, 4, 8]
    assert any(row.get("label") == "human 96.0%" for row in points)  # the hypernymy probe's human line
    assert "k8-lr" in curves.summary.value
    curves.control.value = str(out.with_name("small-control"))
    assert "control" in {row.get("series") for rows in curves.chart.spec["datasets"].values() for row in rows}


def test_launcher_refuses_typed_text_that_is_not_numbers(inoculation_home):
    from widgets import InoculationLauncher

    launcher = InoculationLauncher(Session(), home=inoculation_home)
    launcher.ks.value = "__import__('os').system('true')"
    launcher.start.click()
    assert launcher.thread is None and "is not a list of int numbers" in launcher.status.value


def test_a_dashboard_that_keeps_no_aggregates_still_draws_every_view(session):
    """``memo=0`` (what the bench's memo-off pass measures): the languages view read its aggregate back from a memo
    that had already dropped it, and the background stopped on unpacking None."""
    board = ResultsDashboard(session, memo=0, settle=0)
    controls = ProbeControls(session)
    controls.probe.value = "hypernymy"
    board.pending.result(timeout=120)  # raised in the background before
    assert "questions in all cells" in board.drill_title.value
