"""Every report section copes with every probe: report, publish and the dashboard on predictions of the released
probe files, DictionaryQA included (its GCIDE concepts have no WordNet taxonomy: the atlas is skipped with a note)."""

import json
from pathlib import Path

import polars as pl
from fake_scores import predictions_of
from inprocess import workbench

from workbench.probes.formats import read_probes

RELEASED = ("definitions_train", "dictionary_qa_test", "hypernymy_test", "hyponymy_test", "synonymy_train")


def _reported(preds: Path, folder: Path, *report: str) -> tuple[str, str]:
    """``workbench report ...`` and ``workbench publish`` of ``preds``: the report printed and the site's page."""
    code, out, err = workbench("report", preds, "--n-boot", "10", *report)
    assert code == 0, err
    code, _, err = workbench("publish", preds, "--out", folder / "site", "--n-boot", "10")
    assert code == 0, err
    return out, (folder / "site" / "index.html").read_text(encoding="utf-8")


def test_report_publish_and_dashboard_on_predictions_of_every_released_probe(released_dir, tmp_path):
    # 19 of each: fewer than the difficulty model's 100 (its fit, 5 s a time, is tested in test_difficulty.py)
    probes = pl.concat([read_probes(released_dir / f"{name}.jsonl").head(19) for name in RELEASED])
    (tmp_path / "predictions").mkdir()
    preds = tmp_path / "predictions" / "p.parquet"
    predictions_of(probes, "minilm").write_parquet(preds)
    text, page = _reported(preds, tmp_path, "--html", tmp_path / "r.html")
    assert all(probe in text for probe in set(probes["probe"])) and "wb-atlas" in page
    assert "wordsense" in (tmp_path / "r.html").read_text(encoding="utf-8")
    from widgets import apps

    board = apps.dashboard(tmp_path).panels["dashboard"]
    assert next(iter(board.heat.spec["datasets"].values()))  # the heat map has cells


def test_a_dictionary_qa_report_skips_the_atlas_with_a_note(released_dir, tmp_path):
    preds = tmp_path / "p.parquet"
    predictions_of(read_probes(released_dir / "dictionary_qa_test.jsonl").head(300)).write_parquet(preds)
    out, page = _reported(preds, tmp_path, "--json")
    assert json.loads(out)["taxonomy"] == [] and "No taxonomy atlas" in page and "wb-atlas" not in page
