"""Calibration from choice scores: softmax, expected calibration error and Brier score, checked by hand."""

import math

import polars as pl
import pytest

from workbench.analysis.calibration import calibration, probabilities, reliability


def predictions(margins: list[float], correct: list[bool]) -> pl.DataFrame:
    """Two-choice questions, gold first; the pick's score exceeds the other's by ``margin``."""
    rows = []
    for i, (margin, right) in enumerate(zip(margins, correct)):
        scores = [margin, 0.0] if right else [0.0, margin]
        rows.append({"id": f"q{i}", "probe": "hypernymy", "scores": scores, "answer": 0, "pred": 0 if right else 1,
                     "correct": right, "model": "m", "scorer": "mcqa", "rule": "cls", "control": "none",
                     "fingerprint": "f"})  # fmt: skip
    return pl.DataFrame(rows)


def test_probabilities_are_the_softmax_of_the_scores_and_brier_is_the_squared_distance_to_gold():
    frame = probabilities(predictions([math.log(4)], [False]))  # softmax: 0.2 on gold, 0.8 on the pick
    row = frame.row(0, named=True)
    assert row["probs"] == pytest.approx([0.2, 0.8]) and row["confidence"] == pytest.approx(0.8)
    assert row["brier"] == pytest.approx((0.2 - 1) ** 2 + 0.8**2)


def test_a_model_right_as_often_as_it_is_confident_has_no_calibration_error():
    margin = math.log(4)  # confidence 0.8 on every question
    calibrated = calibration(predictions([margin] * 10, [True] * 8 + [False] * 2)).row(0, named=True)
    assert calibrated["ece"] == pytest.approx(0.0, abs=1e-12) and calibrated["accuracy"] == 0.8
    assert calibrated["brier"] == pytest.approx(8 / 10 * 2 * 0.2**2 + 2 / 10 * (0.8**2 + 0.8**2))
    overconfident = calibration(predictions([math.log(9)] * 10, [True] * 5 + [False] * 5)).row(0, named=True)
    assert overconfident["ece"] == pytest.approx(0.9 - 0.5)  # confidence 0.9, accuracy 0.5


def test_the_reliability_diagram_bins_by_confidence():
    frame = predictions([math.log(4)] * 4 + [math.log(9)] * 2, [True, True, True, False, False, True])
    bins = reliability(frame, bins=10).select("bin", "n", "confidence", "accuracy").rows()
    assert bins == [(8, 4, pytest.approx(0.8), 0.75), (9, 2, pytest.approx(0.9), 0.5)]
    ece = calibration(frame).row(0, named=True)["ece"]
    assert ece == pytest.approx(4 / 6 * abs(0.75 - 0.8) + 2 / 6 * abs(0.5 - 0.9))


def test_the_report_and_the_reliability_diagram_show_the_same_bins():
    from test_metrics import toy_predictions

    from workbench import charts
    from workbench.reports import json_report

    preds = toy_predictions()
    rows = json_report(preds, n_boot=50)["calibration"]
    assert {row["probe"] for row in rows} == {"hypernymy"} and all(0 <= row["ece"] <= 1 for row in rows)
    spec = charts.reliability_diagram(preds).to_dict()
    drawn = [row for values in spec["datasets"].values() for row in values if "accuracy" in row]
    expected = reliability(preds)
    assert sorted(row["n"] for row in drawn) == sorted(expected["n"].to_list())
