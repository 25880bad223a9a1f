"""The dashboard's oLMpics and edge-probing panel, on result files the library writes for a tiny random
masked LM and a tiny random encoder in a temporary workspace."""

import polars as pl
import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

from workbench.edge import EDGE_SCHEMA, EdgeSpec, audit_table, probe_task
from workbench.io import write_parquet
from workbench.olmpics import CurveSpec, OlmpicsSpec, build_olmpics, run_curves, with_controls
from workbench.representations import RepresentationCache, as_encoder
from workbench.schema import conform


@pytest.fixture(scope="module")
def home(tmp_path_factory, minilm_path):
    """A workspace with one oLMpics curves file and one edge result folder, written by the library."""
    home = tmp_path_factory.mktemp("probing-workspace")
    tokenizer = AutoTokenizer.from_pretrained(minilm_path)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
    )
    torch.manual_seed(0)
    mlm = BertForMaskedLM(config)
    mlm.save_pretrained(home / "tiny-mlm")
    tokenizer.save_pretrained(home / "tiny-mlm")
    frame = with_controls(build_olmpics(OlmpicsSpec("age-compare", n_train=70, n_dev=20)))
    spec = CurveSpec(ns=(31, 62), seeds=(0, 1), epochs=1, min_steps=3)
    write_parquet(
        run_curves(frame, home / "tiny-mlm", spec, cache=home / "r.sqlite", progress=False),
        home / "olmpics" / "age.parquet",
    )

    rows = [
        (split, f"the {word} ran .", label)
        for split, n in (("train", 30), ("test", 10))
        for word, label in [("dog", "animal"), ("car", "thing")] * (n // 2)
    ]
    edge = conform(pl.DataFrame(
        [{"id": str(i), "task": "toy", "split": split, "text": text, "span1_start": 1, "span1_end": 2,
          "span2_start": None, "span2_end": None, "label": label, "word": text.split(" ")[1]}
         for i, (split, text, label) in enumerate(rows)],
        schema_overrides=EDGE_SCHEMA,
    ), EDGE_SCHEMA)  # fmt: skip
    cache, results = RepresentationCache(home / "states"), []
    for control, seed in (("none", 0), ("random-weights", 1)):
        torch.manual_seed(seed)
        encoder = as_encoder(
            mlm.bert if control == "none" else BertForMaskedLM(config).bert, tokenizer, "tiny", control=control
        )
        results.append(
            probe_task(encoder, edge, EdgeSpec(probe="linear", epochs=2), mdl=True, cache=cache, progress=False)
        )
    predictions = pl.concat([result["predictions"] for result in results], how="diagonal_relaxed")
    write_parquet(
        pl.concat([result["summary"] for result in results], how="diagonal_relaxed"),
        home / "edge" / "toy" / "summary.parquet",
    )
    write_parquet(
        audit_table(edge.filter(pl.col("split") == "train"), predictions), home / "edge" / "toy" / "audit.parquet"
    )
    return home


def _rows(chart) -> list[dict]:
    """The inline data of a drawn chart."""
    return [row for rows in chart.spec["datasets"].values() for row in rows]


def _renders(chart) -> bool:
    """Vega compiles and draws the chart's spec as the page would (vl-convert raises on an invalid one)."""
    import vl_convert

    return "<svg" in vl_convert.vegalite_to_svg(chart.spec)


def test_dashboard_lists_the_workspace_results_below_the_learning_curves(home):
    from widgets import apps

    app = apps.dashboard(home)
    panel = app.panels["probing"]
    assert list(app.children).index(panel.widget) > list(app.children).index(app.panels["runs"].widget)
    assert [label for label, _ in panel.result.options] == ["oLMpics: olmpics/age.parquet", "edge: edge/toy"]


def test_picking_an_olmpics_file_draws_its_seed_means_per_size_and_its_results_table(home):
    from widgets import apps

    panel = apps.dashboard(home).panels["probing"]
    panel.result.value = str(home / "olmpics" / "age.parquet")
    curves = pl.read_parquet(home / "olmpics" / "age.parquet")
    means = curves.filter(pl.col("n") > 0).group_by("control", "setting", "n").agg(pl.col("accuracy").mean())
    expected = {(c, s, n): a for c, s, n, a in means.iter_rows()}
    drawn = {(row["control"], row["setting"], row["n"]): row["accuracy"] for row in _rows(panel.charts["curves"])}
    assert drawn.keys() == expected.keys() and len(drawn) == 3 * 2 * 2  # controls x settings x sizes
    assert all(drawn[key] == pytest.approx(value) for key, value in expected.items())
    assert {row["control"] for row in _rows(panel.charts["sensitivity"])} == {"no-lang", "perturbed-lang"}
    assert "mlp_WS" in panel.tables.value and "age-compare" in panel.tables.value
    assert panel.tables.value.count("<tr>") == 1 + 1  # header + one (model, probe) row
    assert all(_renders(chart) for chart in panel.charts.values())


def test_picking_an_edge_folder_draws_accuracy_compression_and_the_audit(home):
    from widgets import apps

    panel = apps.dashboard(home).panels["probing"]
    panel.result.value = str(home / "edge" / "toy")
    summary = pl.read_parquet(home / "edge" / "toy" / "summary.parquet")
    audit = pl.read_parquet(home / "edge" / "toy" / "audit.parquet")
    drawn = {
        row["encoder_kind"]: row["value"] for row in _rows(panel.charts["accuracy"]) if row["measure"] == "accuracy"
    }
    kinds = {"none": "pre-trained", "random-weights": "random"}
    assert drawn == {
        kinds[control]: accuracy for control, accuracy in summary.select("control", "accuracy").iter_rows()
    }
    assert sorted(row["compression"] for row in _rows(panel.charts["mdl"])) == sorted(summary["compression"])
    drops = {(row["encoder"], row["heuristic"]): row["drop"] for row in _rows(panel.charts["memorisation"])}
    assert len(drops) == audit.height == 2 * 3  # encoders x heuristics
    assert "selectivity" in panel.tables.value and "Mem-Uniform" in panel.tables.value
    assert "random-weights" in panel.tables.value
    assert all(_renders(chart) for chart in panel.charts.values())


def test_an_empty_workspace_says_what_to_run_and_a_foreign_file_is_reported(tmp_path):
    from widgets import apps

    panel = apps.dashboard(tmp_path).panels["probing"]
    assert "workbench olmpics curves --out $WORKBENCH_HOME/olmpics/NAME.parquet" in panel.message.value
    assert panel.charts == {} and panel.tables.value == ""
    write_parquet(pl.DataFrame({"x": [1]}), tmp_path / "olmpics" / "foreign.parquet")
    panel.refresh()
    assert "foreign.parquet" in panel.message.value and "wb-wrong" in panel.message.value and panel.charts == {}
