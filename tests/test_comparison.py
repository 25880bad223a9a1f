"""Paired comparisons: exact McNemar, Holm across cells, cluster-level paired bootstrap, checked by hand."""

import json

import polars as pl
import pytest

from workbench.analysis.comparison import COMPARISON_SCHEMA, compare
from workbench.errors import WorkbenchError


def frame(model: str, outcomes: list[tuple[str, str, int, bool]]) -> pl.DataFrame:
    """Predictions of one model: (question id, cluster, hops, correct) in a hypernymy x random cell per hop count."""
    return pl.DataFrame(
        {
            "id": [q for q, *_ in outcomes], "cluster_id": [c for _, c, *_ in outcomes],
            "probe": "hypernymy", "hops": [h for _, _, h, _ in outcomes], "distractor_family": "random",
            "distractor_depth": 0, "correct": [ok for *_, ok in outcomes],
            "model": model, "scorer": "similarity", "rule": "cosine", "control": "none", "fingerprint": model,
        }
    )  # fmt: skip


def pairs(a_only: int, b_only: int, both: int, neither: int, hops: int = 1) -> tuple[list, list]:
    """Outcomes of A and B with these counts of question kinds, one question per cluster."""
    kinds = [(True, False)] * a_only + [(False, True)] * b_only + [(True, True)] * both + [(False, False)] * neither
    ids = [f"h{hops}q{i}" for i in range(len(kinds))]
    a = [(q, f"c-{q}", hops, x) for q, (x, _) in zip(ids, kinds)]
    b = [(q, f"c-{q}", hops, y) for q, (_, y) in zip(ids, kinds)]
    return a, b


def test_mcnemar_is_the_exact_binomial_test_of_the_discordant_questions():
    a, b = pairs(a_only=2, b_only=8, both=5, neither=5)
    table = compare(frame("A", a), frame("B", b), n_boot=200)
    assert table.schema == pl.Schema(COMPARISON_SCHEMA)
    overall = table.row(0, named=True)
    assert (overall["scope"], overall["n"], overall["a_only"], overall["b_only"]) == ("overall", 20, 2, 8)
    assert (
        overall["accuracy_a"] == 7 / 20 and overall["accuracy_b"] == 13 / 20 and overall["diff"] == pytest.approx(0.3)
    )
    assert overall["p_mcnemar"] == pytest.approx(112 / 1024)  # 2 * P(X <= 2), X ~ Binomial(10, 1/2)
    assert overall["diff_lo"] <= 0.3 <= overall["diff_hi"]


def test_cells_are_holm_adjusted_and_only_the_cells_are():
    a1, b1 = pairs(a_only=0, b_only=6, both=4, neither=0, hops=1)  # p = 2 / 64
    a2, b2 = pairs(a_only=2, b_only=8, both=0, neither=0, hops=2)  # p = 112 / 1024
    table = compare(frame("A", a1 + a2), frame("B", b1 + b2), n_boot=200)
    cells = table.filter(pl.col("scope") == "cell")
    assert cells["row"].to_list() == ["hypernymy k=1", "hypernymy k=2"]
    assert cells["p_mcnemar"].to_list() == pytest.approx([2 / 64, 112 / 1024])
    assert cells["p_holm"].to_list() == pytest.approx([2 * 2 / 64, 112 / 1024])  # sorted p x (m, m-1), monotone
    assert cells["significant"].to_list() == [False, False]
    overall = table.filter(pl.col("scope") == "overall").row(0, named=True)
    assert overall["p_holm"] == overall["p_mcnemar"]


def test_intervals_resample_clusters_and_strict_accuracy_needs_every_question():
    # two clusters of three questions: A gets all of x and none of y; B all of y and two of x
    a = [("q1", "x", 1, True), ("q2", "x", 1, True), ("q3", "x", 1, True)] + [
        (f"q{i}", "y", 1, False) for i in (4, 5, 6)
    ]
    b = [("q1", "x", 1, True), ("q2", "x", 1, True), ("q3", "x", 1, False)] + [
        (f"q{i}", "y", 1, True) for i in (4, 5, 6)
    ]
    overall = compare(frame("A", a), frame("B", b), n_boot=500, seed=1).row(0, named=True)
    assert (overall["n_clusters"], overall["cluster_accuracy_a"], overall["cluster_accuracy_b"]) == (2, 0.5, 0.5)
    # resampling whole clusters: a draw of two x clusters gives B - A = -1/3, of two y clusters +1
    assert overall["diff_lo"] == pytest.approx(-1 / 3) and overall["diff_hi"] == pytest.approx(1.0)
    same = compare(frame("A", a), frame("A2", a), n_boot=100).row(0, named=True)
    assert (same["diff"], same["diff_lo"], same["diff_hi"], same["p_mcnemar"]) == (0.0, 0.0, 0.0, 1.0)


def test_frames_of_several_models_or_no_shared_question_are_refused():
    a, b = pairs(1, 1, 1, 1)
    with pytest.raises(WorkbenchError, match="A holds 2 model identities"):
        compare(pl.concat([frame("A", a), frame("C", a)]), frame("B", b))
    other = [(f"z{i}", "c", 1, True) for i in range(3)]
    with pytest.raises(WorkbenchError, match="share no question"):
        compare(frame("A", a), frame("B", other))


def test_workbench_compare_prints_the_overall_and_cell_rows_and_json(tmp_path):
    import json

    from test_metrics import PATTERN, toy_predictions
    from typer.testing import CliRunner

    from workbench.cli import make_app

    flipped = [[not right for right in cluster] for cluster in PATTERN]
    toy_predictions(model="a").write_parquet(tmp_path / "a.parquet")
    toy_predictions(flipped, model="b").write_parquet(tmp_path / "b.parquet")
    runner, app = CliRunner(), make_app()
    text = runner.invoke(app, ["compare", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), "--n-boot", "50"])
    assert text.exit_code == 0, text.output
    assert "B = b.parquet minus A = a.parquet" in text.output and "| overall" in text.output
    rows = json.loads(runner.invoke(app, ["compare", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"),
                                          "--n-boot", "50", "--json"]).output)  # fmt: skip
    expected = compare(toy_predictions(model="a"), toy_predictions(flipped, model="b"), n_boot=50)
    assert [row["diff"] for row in rows] == pytest.approx(expected["diff"].to_list())
    assert rows[0]["a_only"] + rows[0]["b_only"] == rows[0]["n"]  # every question flipped: all discordant


def test_heat_map_marks_the_cells_where_a_later_model_differs_significantly_from_the_first():
    from test_metrics import PATTERN, toy_predictions

    from workbench.views import heatmap_data, significance_marks

    flipped = [[not right for right in cluster] for cluster in PATTERN]
    a, b = toy_predictions(model="a"), toy_predictions(flipped, model="b")
    expected = compare(a, b, n_boot=0).filter(pl.col("scope") == "cell")
    assert expected["diff_lo"].null_count() == expected.height  # no bootstrap asked, no interval
    marks = significance_marks(pl.concat([a, b]))
    assert marks["label"].unique().to_list() == ["b"] and marks["reference"].unique().to_list() == ["a"]
    assert marks.select("row", "column", "p_holm", "significant").equals(
        expected.select("row", "column", "p_holm", "significant")
    )
    cells = heatmap_data(pl.concat([a, b]))
    starred = cells.filter(pl.col("cell_text").str.ends_with("*"))
    assert set(starred["label"]) <= {"b"}
    assert set(zip(starred["row"], starred["column"])) == set(
        zip(*expected.filter("significant").select("row", "column"))
    )
    assert cells.filter(pl.col("label") == "a")["p_holm"].null_count() == cells.filter(pl.col("label") == "a").height
    assert significance_marks(a).is_empty()


def test_questions_pair_by_probe_and_id_since_released_files_reuse_ids_across_probes():
    from test_metrics import PATTERN, toy_predictions

    a, b = toy_predictions(model="a"), toy_predictions(model="b")
    other = "hyponymy" if a["probe"][0] != "hyponymy" else "hypernymy"  # the same ids in a second probe set
    a2, b2 = (frame.with_columns(probe=pl.lit(other)) for frame in (a, b))
    table = compare(pl.concat([a, a2]), pl.concat([b, b2]), n_boot=0)
    assert table["n"][0] == 2 * a.height == 2 * sum(len(cluster) for cluster in PATTERN)


def test_questions_pair_by_content_and_occurrence_since_released_files_repeat_ids(released_dir, tmp_path):
    from fake_scores import predictions_of
    from typer.testing import CliRunner

    from workbench.cli import make_app
    from workbench.probes.formats import read_probes
    from workbench.reports import _headline

    probes = read_probes(released_dir / "hypernymy_train.jsonl")
    assert probes["id"].n_unique() < probes.height  # the released file repeats ids
    a = predictions_of(probes, "minilm")
    a.write_parquet(tmp_path / "a.parquet")
    rows = json.loads(CliRunner().invoke(make_app(), ["compare", str(tmp_path / "a.parquet"),
                                                      str(tmp_path / "a.parquet"), "--n-boot", "20", "--json"]).output)
    overall = rows[0]  # a file against itself: every question once, no difference
    assert overall["n"] == probes.height and overall["diff"] == 0 and not any(row["significant"] for row in rows)
    b = predictions_of(probes, "random", seed=1, skill=0.2)
    table = compare(a, b.reverse(), n_boot=0)  # row order does not matter
    assert table["n"][0] == probes.height
    assert table["accuracy_a"][0] == pytest.approx(a["correct"].mean())
    assert table["accuracy_b"][0] == pytest.approx(b["correct"].mean())
    assert _headline(pl.concat([a, b])).startswith(f"{probes.height} questions")  # the report's header


def test_a_comparison_gives_the_same_intervals_every_time(tmp_path):
    """The cluster bootstrap indexes clusters: their order is fixed, so the same files give the same numbers."""
    import random

    from workbench.analysis.comparison import compare
    from workbench.schema import PREDICTION_SCHEMA, empty

    rng = random.Random(0)
    rows = []
    for cluster in range(60):
        for question in range(3):
            answer = rng.randrange(4)
            rows.append({"id": f"q{cluster}-{question}", "probe": "hypernymy", "cluster_id": f"hypernymy:c{cluster}",
                         "choices": ["a", "b", "c", "d"], "answer": answer, "hops": 1 + question % 2,
                         "distractor_family": "sister", "distractor_depth": 1, "question": f"q{cluster}-{question}"})
    base = pl.DataFrame(rows).with_columns(scores=pl.lit([0.0, 0.0, 0.0, 0.0]))
    frames = []
    for name, seed in (("a", 1), ("b", 2)):
        pick = random.Random(seed)
        preds = base.with_columns(pred=pl.Series([pick.randrange(4) for _ in rows]), model=pl.lit(name),
                                  fingerprint=pl.lit(name), scorer=pl.lit("similarity"), rule=pl.lit("cosine"),
                                  control=pl.lit("none"))  # fmt: skip
        preds = preds.with_columns(correct=pl.col("pred") == pl.col("answer"))
        frames.append(pl.concat([empty(PREDICTION_SCHEMA), preds], how="diagonal_relaxed"))
    first = compare(*frames)
    for _ in range(3):
        assert compare(*frames).equals(first)
