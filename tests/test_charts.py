"""The charts hold the data and encodings they claim, and compile to a renderable Vega-Lite spec."""

import json
from pathlib import Path

import altair as alt
import polars as pl
import pytest
from test_metrics import longest_choice, released_hypernymy, toy_predictions

from workbench import charts, metrics


def data_of(spec: dict) -> list[dict]:
    """The rows of the (single) inline dataset of a chart spec."""
    (rows,) = spec["datasets"].values()
    return rows


def layer_encodings(spec: dict) -> list[dict]:
    layers = spec["spec"]["layer"] if "spec" in spec else spec["layer"]
    return [layer["encoding"] for layer in layers]


def test_heatmap_has_one_cell_per_row_and_column_with_its_accuracy():
    chart = charts.heatmap(toy_predictions())
    assert isinstance(chart, alt.LayerChart)
    spec = chart.to_dict()
    cells = {(row["row"], row["column"]): row["accuracy"] for row in data_of(spec)}
    assert cells == pytest.approx(
        {
            ("hypernymy k=1", "random"): 2 / 3,
            ("hypernymy k=1", "sister 1"): 1.0,
            ("hypernymy k=2", "random"): 2 / 3,
            ("hypernymy k=2", "sister 1"): 2 / 3,
        }
    )
    rect, text = layer_encodings(spec)
    assert (rect["x"]["field"], rect["y"]["field"], rect["color"]["field"]) == ("column", "row", "accuracy")
    assert rect["color"]["scale"]["domain"] == [0, 1]
    assert text["text"] == {"field": "cell_text", "type": "nominal"}
    assert rect["x"]["sort"] == {"field": "column_order", "op": "min"}
    assert rect["y"]["sort"] == {"field": "row_order", "op": "min"}
    (rows,) = spec["datasets"].values()
    assert {(row["row"], row["row_order"], row["column"], row["column_order"]) for row in rows} == {
        ("hypernymy k=1", 0, "random", 0),
        ("hypernymy k=1", 0, "sister 1", 1),
        ("hypernymy k=2", 1, "random", 0),
        ("hypernymy k=2", 1, "sister 1", 1),
    }


def test_heatmap_greys_cells_of_a_handful_of_questions_and_shows_their_n():
    from workbench.views import SMALL_CELL

    few = data_of(charts.heatmap(toy_predictions()).to_dict())  # three questions per cell
    assert {(row["small"], row["cell_text"]) for row in few} == {(True, "n=3")}
    many = data_of(charts.heatmap(pl.concat([toy_predictions()] * SMALL_CELL)).to_dict())
    texts = {(row["row"], row["column"]): (row["small"], row["cell_text"]) for row in many}
    assert texts[("hypernymy k=1", "sister 1")] == (False, "100%") and texts[("hypernymy k=1", "random")] == (
        False,
        "67%",
    )
    rect, _ = layer_encodings(charts.heatmap(toy_predictions()).to_dict())
    assert rect["color"]["condition"] == {"test": "datum.small", "value": "#e4e4e4"}


def test_heatmap_exposes_a_click_selection_on_cells():
    (param,) = charts.heatmap(toy_predictions(), selection=charts.cell_selection("picked")).to_dict()["params"]
    assert param["name"] == "picked"
    assert param["select"] == {"type": "point", "fields": ["row", "column"], "on": "click", "clear": "dblclick"}


def test_heatmap_of_the_released_set_has_a_cell_per_hops_and_distractor_kind(released_dir: Path):
    preds = longest_choice(released_hypernymy(released_dir / "hypernymy_test.jsonl"))
    rows = data_of(charts.heatmap(preds).to_dict())
    present = preds.select("hops", "distractor_family", "distractor_depth").unique()
    assert len(rows) == len(present) == len({(row["row"], row["column"]) for row in rows})
    assert sum(row["n"] for row in rows) == len(preds)
    assert {row["column"] for row in rows} == {
        "random",
        "sister 1",
        "sister 2",
        "isa_down 1",
        "isa_down 2",
        "isa_down 3",
        "isa_down 4",
    }


def test_several_models_get_one_heatmap_panel_each():
    frame = pl.concat([toy_predictions(model="a"), toy_predictions([[True] * 4] * 3, model="b")])
    chart = charts.heatmap(frame)
    assert isinstance(chart, alt.FacetChart)
    spec = chart.to_dict()
    assert spec["facet"]["column"]["field"] == "panel"
    rows = data_of(spec)
    assert len(rows) == 8
    assert {row["accuracy"] for row in rows if row["panel"] == "b"} == {1.0}


def test_inoculation_stages_get_one_heatmap_panel_each_and_models_one_row():
    stages = [
        toy_predictions(model=model).with_columns(k_examples=pl.lit(k)) for model in ("a", "b") for k in (0, 100, 3000)
    ]
    facet = charts.heatmap(pl.concat(stages)).to_dict()["facet"]
    assert facet["column"]["field"] == "k_examples"
    assert facet["row"]["field"] == "panel"


def test_cluster_bars_show_instance_and_strict_cluster_accuracy_per_probe():
    spec = charts.cluster_bars(toy_predictions(), n_boot=100).to_dict()
    bars = {row["measure"]: row for row in data_of(spec)}
    assert bars["instance"]["accuracy"] == pytest.approx(0.75)
    assert bars["strict cluster"]["accuracy"] == pytest.approx(1 / 3)
    assert bars["strict cluster"]["n"] == 3
    for row in bars.values():
        assert row["lo"] <= row["accuracy"] <= row["hi"]
    bar, error = layer_encodings(spec)
    assert (bar["x"]["field"], bar["xOffset"]["field"], bar["y"]["field"]) == ("probe", "measure", "accuracy")
    assert (error["y"]["field"], error["y2"]["field"]) == ("lo", "hi")


def test_drilldown_table_filters_on_the_selection_and_caps_rows_per_cell():
    frame = metrics.drilldown(pl.concat([toy_predictions(tag=str(i)) for i in range(3)]))
    selection = charts.cell_selection()
    spec = charts.drilldown_table(frame, selection=selection, max_rows=2).to_dict()
    rows = data_of(spec)
    assert len(rows) == 4 * 2  # 4 cells, at most 2 questions each
    assert rows[0]["correct"] == "✗"
    first = spec["hconcat"][0]
    assert first["transform"][0] == {"filter": {"param": "cell", "empty": True}}
    assert [column["encoding"]["text"]["field"] for column in spec["hconcat"]] == list(charts.DRILLDOWN_COLUMNS[1:])


def test_dashboard_compiles_to_a_renderable_vega_lite_spec():
    import vl_convert

    frame = pl.concat([toy_predictions(model="a"), toy_predictions([[True] * 4] * 3, model="b")])
    spec = charts.dashboard(frame).to_dict()
    assert [part.get("facet", {}).get("column", {}).get("field") for part in spec["vconcat"]] == ["panel", None]
    vl_version = "_".join(alt.SCHEMA_VERSION.split(".")[:2])  # vl-convert names "v6.4.1" "v6_4"
    svg = vl_convert.vegalite_to_svg(json.loads(json.dumps(spec)), vl_version=vl_version)
    assert svg.startswith("<svg") and "sister 1" in svg and "67%" in svg


def test_ways_against_control_draws_every_way_of_every_set_beside_its_control():
    """On the committed science run (bench/bench_ways_of_asking.py --out bench/ways): one point per set and way,
    the model's and the control's accuracies as measured, dark exactly where McNemar's p is below alpha."""
    table = pl.read_csv(Path(__file__).resolve().parents[1] / "bench" / "ways" / "ways.csv")
    spec = charts.ways_against_control(table, alpha=0.2).to_dict()
    rows = data_of(spec)
    assert len(rows) == table.height
    assert spec["facet"]["row"]["field"] == "set"
    drawn = {(row["set"], row["way"]): row for row in rows}
    for measured in table.iter_rows(named=True):
        row = drawn[measured["set"], measured["way"]]
        assert (row["model"], row["control"]) == (measured["SmolLM2"], measured["random weights"])
        assert row["significance"] == ("p < 0.2" if measured["p"] < 0.2 else "p ≥ 0.2")
    alt.FacetChart.from_dict(spec)  # a valid Vega-Lite spec
