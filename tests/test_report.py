"""Text, JSON and standalone HTML reports, and the ``workbench report`` command."""

import json
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import typer
from test_metrics import toy_predictions
from typer.testing import CliRunner

from workbench import reports
from workbench.errors import WorkbenchError

HEADLINE = ("instance_accuracy", "cluster_accuracy", "n_questions", "n_clusters")


@pytest.fixture(scope="module")
def two_models() -> pl.DataFrame:
    return pl.concat([toy_predictions(model="a"), toy_predictions([[True] * 4, [False] * 4, [True] * 4], model="b")])


@pytest.fixture(scope="module")
def page(two_models: pl.DataFrame) -> str:
    return reports.html_report(two_models, n_boot=200)


def test_text_report_shows_instance_cluster_and_cell_accuracy():
    text = reports.text_report(toy_predictions(), n_boot=200)
    assert "12 questions in 3 clusters" in text
    summary = next(line for line in text.splitlines() if line.startswith("toy "))
    assert re.search(r"75\.0 \[[\d.]+, [\d.]+\]\s+3\s+33\.3 \[", summary)
    assert "-41.7 [" in summary  # gap = 33.3 - 75.0 points
    cells = next(line for line in text.splitlines() if line.startswith("hypernymy k=1 "))
    assert cells.split() == ["hypernymy", "k=1", "66.7", "(3)", "100.0", "(3)"]


def test_text_report_has_one_cell_table_per_model(two_models: pl.DataFrame):
    text = reports.text_report(two_models, n_boot=200)
    assert text.count("by probe x hops k and distractors") == 2
    assert [line.split()[0] for line in text.splitlines() if line.startswith(("a ", "b "))] == ["a", "b"] * 2


def test_json_report_holds_the_summary_and_the_breakdown(two_models: pl.DataFrame):
    document = json.loads(json.dumps(reports.json_report(two_models, n_boot=200), allow_nan=False))
    assert document["instance_accuracy"] == pytest.approx({"a": 0.75, "b": 8 / 12})
    assert document["cluster_accuracy"] == pytest.approx({"a": 1 / 3, "b": 2 / 3})
    assert document["n_questions"] == {"a": 12, "b": 12}
    assert len(document["breakdown"]) == 8
    assert {row["label"] for row in document["by_probe"]} == {"a", "b"}


def test_html_report_is_standalone_and_loads_nothing_from_the_network(page: str):
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script[^>]*\bsrc=", page)
    assert not re.search(r"<link[^>]*\bhref=", page)
    assert "vegaEmbed(" in page and len(page) > 500_000  # vega, vega-lite and vega-embed are inline
    assert page.count('<div id="chart-') == 2


def test_html_report_shows_the_accuracy_figures(page: str):
    for figure in ("75.0 [", "33.3 [", "66.7 [", "66.7 (3)"):
        assert figure in page


def test_html_report_escapes_question_text():
    preds = toy_predictions().with_columns(question=pl.lit("</script><b>is a <type> of</b>"))
    page = reports.html_report(preds, title="<Report>", n_boot=50)
    assert page.count("</script>") == page.count("<script")
    assert "<title>&lt;Report&gt;</title>" in page


def test_write_html_report_replaces_the_file_atomically(tmp_path: Path):
    target = tmp_path / "out" / "report.html"
    target.parent.mkdir()
    target.write_text("old")
    assert reports.write_html_report(toy_predictions(), target, n_boot=50) == target
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [path.name for path in target.parent.iterdir()] == ["report.html"]


def test_cli_prints_json_with_the_headline_keys_and_writes_html(cli: typer.Typer, two_models, tmp_path: Path):
    preds, html = tmp_path / "preds.parquet", tmp_path / "report.html"
    two_models.write_parquet(preds)
    result = CliRunner().invoke(cli, ["report", str(preds), "--json", "--html", str(html), "--n-boot", "100"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert set(HEADLINE) <= set(document)
    assert document["cluster_accuracy"]["b"] == pytest.approx(2 / 3)
    assert "75.0 [" in html.read_text(encoding="utf-8")


def test_cli_reports_several_prediction_files_side_by_side(cli: typer.Typer, two_models, tmp_path: Path):
    files = []
    for name in ("a", "b"):
        files.append(tmp_path / f"{name}.parquet")
        two_models.filter(pl.col("model") == name).write_parquet(files[-1])
    two_models.write_parquet(tmp_path / "both.parquet")
    separate = CliRunner().invoke(cli, ["report", *map(str, files), "--json", "--n-boot", "100"])
    stacked = CliRunner().invoke(cli, ["report", str(tmp_path / "both.parquet"), "--json", "--n-boot", "100"])
    assert separate.exit_code == 0, separate.output
    assert json.loads(separate.stdout) == json.loads(stacked.stdout)
    assert set(json.loads(separate.stdout)["cluster_accuracy"]) == {"a", "b"}


def test_cli_prints_the_text_report_by_default(cli: typer.Typer, tmp_path: Path):
    preds = tmp_path / "preds.parquet"
    toy_predictions().write_parquet(preds)
    result = CliRunner().invoke(cli, ["report", str(preds), "--n-boot", "100"])
    assert result.exit_code == 0
    assert result.stdout.startswith("Probe Workbench report: 12 questions")


def test_reporting_a_prediction_file_never_imports_torch(tmp_path: Path):
    preds = tmp_path / "preds.parquet"
    toy_predictions().write_parquet(preds)
    code = (
        "import sys; from workbench import reports; from workbench.io import read_predictions; "
        f"reports.text_report(read_predictions({str(preds)!r}), n_boot=20); print('torch' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split()[-1] == "False"


def test_cli_names_a_missing_file_or_a_wrong_schema(cli: typer.Typer, tmp_path: Path):
    missing = CliRunner().invoke(cli, ["report", str(tmp_path / "nope.parquet")])
    assert isinstance(missing.exception, WorkbenchError)
    assert "no prediction file" in str(missing.exception)
    wrong = tmp_path / "wrong.parquet"
    pl.DataFrame({"probe": ["hypernymy"], "correct": [True]}).write_parquet(wrong)
    result = CliRunner().invoke(cli, ["report", str(wrong)])
    assert isinstance(result.exception, WorkbenchError)
    assert "lacks the columns" in str(result.exception)


def test_workbench_report_command_keeps_stdout_pure_json(tmp_path: Path):
    preds = tmp_path / "preds.parquet"
    toy_predictions().write_parquet(preds)
    script = Path(sys.executable).parent / "workbench"
    run = subprocess.run(
        [script, "report", preds, "--json", "--n-boot", "50"], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["n_clusters"] == 3
    broken = subprocess.run([script, "report", tmp_path / "nope.parquet"], capture_output=True, text=True)
    assert broken.returncode == 2
    assert broken.stdout == "" and "no prediction file" in broken.stderr


@pytest.mark.browser
@pytest.mark.slow
def test_html_report_renders_offline_and_a_click_filters_the_question_table(page: str, tmp_path: Path):
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip("Debian's chromium is not installed")
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    requests, errors = [], []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        tab = browser.new_page()
        tab.route("http*://**", lambda route: (requests.append(route.request.url), route.abort()))
        tab.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        tab.goto(path.as_uri())
        tab.wait_for_selector("#chart-0 svg", timeout=20_000)
        tab.wait_for_selector("#chart-1 svg", timeout=20_000)

        def table_rows() -> list[str]:
            """The drill-down table's "probe, hops" column (axis labels hold only 2 entries)."""
            groups = tab.locator("#chart-0 g.mark-text")
            columns = [groups.nth(i).locator("text").all_text_contents() for i in range(groups.count())]
            return next(texts for texts in columns if len(texts) > 2 and texts[0].startswith("hypernymy k="))

        assert set(table_rows()) == {"hypernymy k=1", "hypernymy k=2"}
        tab.locator("#chart-0 g.mark-rect path").first.click()
        tab.wait_for_timeout(300)
        assert len(set(table_rows())) == 1
        browser.close()
    assert requests == [] and errors == []


def test_reports_of_an_empty_frame_say_so():
    for build in (reports.text_report, reports.json_report, reports.html_report):
        with pytest.raises(WorkbenchError, match="empty"):
            build(toy_predictions().head(0))


def test_wb_report_gives_each_format_and_names_a_wrong_one():
    import workbench as wb

    preds = toy_predictions()
    assert wb.report(preds, "json", n_boot=50) == reports.json_report(preds, n_boot=50)
    assert wb.report(preds, n_boot=50).startswith("Probe Workbench report")
    with pytest.raises(WorkbenchError, match=r"format='pdf' is not a report format; choose one of \['text'"):
        wb.report(preds, "pdf")
