"""Charts of a prediction frame: take a frame, return a chart value.

The same charts serve the notebook, the Voilà app and the HTML report; none of them displays,
saves or reads anything. Several models stacked in one frame are drawn side by side (one facet
column each); a frame with an inoculation-stage column (``stage`` or ``k_examples``) gets one
heat-map panel per stage, as in the paper's Figure 3.

Interactivity is a value too: ``cell_selection()`` makes the click selection that ``heatmap``
exposes and ``drilldown_table`` filters on, and ``dashboard`` wires the two together.

    >>> sel = cell_selection()
    >>> heatmap(preds, selection=sel) & drilldown_table(metrics.drilldown(preds), selection=sel)
"""

import altair as alt
import polars as pl

from workbench import metrics
from workbench.views import cluster_bar_data, heatmap_data, reliability_points

SMALL_CELL_COLOUR = "#e4e4e4"

Chart = alt.Chart | alt.LayerChart | alt.FacetChart | alt.HConcatChart | alt.VConcatChart
"""What the chart functions return: a single or a composed altair chart."""

DRILLDOWN_COLUMNS = ("label", "row", "column", "question", "gold", "pick", "correct")
"""Columns of the drill-down text table, left to right (``label`` only with several models)."""


def cell_selection(name: str = "cell") -> alt.Parameter:
    """A click selection of heat-map cells, by their ``row`` and ``column`` labels.

    Click a cell to select it, shift-click to add cells, double-click to clear. An empty
    selection lets everything through, so a filtered table starts out unfiltered.

    >>> sel = cell_selection()
    >>> heatmap(preds, selection=sel) & drilldown_table(metrics.drilldown(preds), selection=sel)
    """
    return alt.selection_point(name=name, fields=["row", "column"], on="click", clear="dblclick", empty=True)


def cell_axes() -> alt.Chart:
    """The heat map's axes: distractor (family, depth k') across, probe and hops k down, sorted by fields of the
    data, so new rows redraw the same spec in order."""
    return alt.Chart().encode(
        x=alt.X(
            "column:N",
            sort=alt.EncodingSortField("column_order", op="min"),
            title="distractors (family, depth k')",
            axis=alt.Axis(labelAngle=-40),
        ),
        y=alt.Y("row:N", sort=alt.EncodingSortField("row_order", op="min"), title="probe, hops k"),
    )


def heatmap(preds: pl.DataFrame, selection: alt.Parameter | None = None) -> Chart:
    """Accuracy per cell, the paper's Figure 3: probe x hops k (rows) by distractors (columns).

    Columns are distractor family x depth k' ("random", "sister 1", "isa_down 2"); colour and
    text are accuracy; a cell of fewer than ``views.SMALL_CELL`` questions is grey and shows its n instead.
    With several models, a ``*`` marks a cell that differs significantly from the first model's
    (``views.significance_marks``: exact McNemar, Holm across cells); the tooltip gives its p-value.
    One panel per model (columns) and per inoculation stage when present.
    Clicking a cell updates ``selection`` (a fresh ``cell_selection()`` when not given).

    Parameters
    ----------
    preds : polars.DataFrame
        Predictions (``PREDICTION_SCHEMA``), one model or several, with an inoculation stage column or not.
    selection : altair.Parameter, optional
        The click selection to expose (``cell_selection()``), e.g. to filter a ``drilldown_table``.

    Returns
    -------
    altair chart
        Each cell's colour and text are its accuracy; its tooltip gives n.

    Examples
    --------
    >>> heatmap(one_model_preds).to_dict()["layer"][0]["mark"]["type"]
    'rect'
    """
    selection = selection if selection is not None else cell_selection()
    cells = heatmap_data(preds)
    base = cell_axes()
    rect = (
        base.mark_rect(stroke="white")
        .encode(
            color=alt.condition(  # a cell of a handful of questions is grey, not a bold 0% or 100%
                alt.datum.small,
                alt.value(SMALL_CELL_COLOUR),
                alt.Color(
                    "accuracy:Q",
                    scale=alt.Scale(domain=[0, 1], scheme="blues"),
                    legend=alt.Legend(format=".0%", title="accuracy"),
                ),
            ),
            opacity=alt.condition(selection, alt.value(1.0), alt.value(0.35)),
            tooltip=[
                alt.Tooltip("label:N", title="model"),
                alt.Tooltip("row:N", title="probe, hops"),
                alt.Tooltip("column:N", title="distractors"),
                alt.Tooltip("accuracy:Q", format=".1%"),
                alt.Tooltip("n:Q", title="questions"),
                alt.Tooltip("p_holm:Q", title="p vs first model (McNemar, Holm)", format=".2g"),
            ],
        )
        .add_params(selection)
        .properties(name="heatmap_cells")
    )
    text = base.mark_text(fontSize=10).encode(
        text=alt.Text("cell_text:N"),
        color=alt.condition((alt.datum.accuracy > 0.6) & ~alt.datum.small, alt.value("white"), alt.value("black")),
    )
    layer = alt.layer(rect, text, data=cells).properties(width=alt.Step(46), height=alt.Step(22))
    return _panels(layer, cells)


def cluster_bars(preds: pl.DataFrame, n_boot: int = 1000, seed: int = 0) -> Chart:
    """Instance vs strict cluster accuracy per probe, with bootstrap intervals (Table 8).

    One panel per model. The data holds one row per model x probe x ``measure`` ("instance",
    "strict cluster") with ``accuracy``, ``lo``, ``hi`` and ``n``.

    Parameters
    ----------
    preds : polars.DataFrame
        Predictions (``PREDICTION_SCHEMA``), one model or several.
    n_boot, seed
        Bootstrap resamples of the intervals (whole clusters for strict cluster accuracy) and their seed.

    Returns
    -------
    altair chart

    Examples
    --------
    >>> cluster_bars(two_model_preds).to_dict()["facet"]["column"]["field"]
    'panel'
    """
    bars = cluster_bar_data(preds, n_boot=n_boot, seed=seed)
    measures = ["instance", "strict cluster"]
    base = alt.Chart().encode(
        x=alt.X("probe:N", title="probe"),
        xOffset=alt.XOffset("measure:N", sort=measures),
    )
    bar = base.mark_bar().encode(
        y=alt.Y("accuracy:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format=".0%"), title="accuracy"),
        color=alt.Color("measure:N", sort=measures, title="accuracy"),
        tooltip=[
            alt.Tooltip("label:N", title="model"),
            "probe:N",
            "measure:N",
            alt.Tooltip("accuracy:Q", format=".1%"),
            alt.Tooltip("lo:Q", format=".1%"),
            alt.Tooltip("hi:Q", format=".1%"),
            alt.Tooltip("n:Q", title="questions / clusters"),
        ],
    )
    error = base.mark_rule().encode(y=alt.Y("lo:Q", title="accuracy"), y2="hi:Q")
    return _panels(alt.layer(bar, error, data=bars), bars)


def drilldown_table(frame: pl.DataFrame, selection: alt.Parameter | None = None, max_rows: int = 20) -> Chart:
    """The questions behind the heat map as a text table, filtered by a heat-map ``selection``.

    A chart rather than a frame, so that it lives in the same view as the heat map and reacts to
    clicks offline (HTML report, Voilà); in a notebook, display ``metrics.drilldown(...)`` itself
    for the full question-level table. ``frame`` is the output of ``metrics.drilldown``, in its
    order (the questions most models got wrong first). Shows at most ``max_rows`` rows; the data
    keeps only ``max_rows`` per cell, so an embedded page stays small.

    >>> drilldown_table(metrics.drilldown(preds, concept="dog.n.01"))
    """
    several = frame["label"].n_unique() > 1
    shown = [name for name in DRILLDOWN_COLUMNS if several or name != "label"]
    data = (
        frame.with_row_index("order")
        .filter(pl.int_range(pl.len()).over("row", "column") < max_rows)
        .with_columns(correct=pl.when("correct").then(pl.lit("✓")).otherwise(pl.lit("✗")))
        .select("order", *shown)
    )
    base = alt.Chart(data)
    if selection is not None:
        base = base.transform_filter(selection)
    base = base.transform_window(shown_row="row_number()", sort=[alt.SortField("order")]).transform_filter(
        alt.datum.shown_row <= max_rows
    )
    titles = {"label": "model", "row": "probe, hops", "column": "distractors", "correct": "right"}
    titles |= {name: name for name in ("question", "gold", "pick")}
    widths = {"label": 120, "row": 110, "column": 80, "question": 380, "gold": 200, "pick": 200, "correct": 40}
    columns = [
        base.mark_text(align="left", baseline="middle", limit=widths[name] - 6)
        .encode(x=alt.value(0), y=alt.Y("shown_row:O", axis=None), text=alt.Text(f"{name}:N"))
        .properties(title=alt.TitleParams(titles[name], align="left", anchor="start"), width=widths[name])
        for name in shown
    ]
    return alt.hconcat(*columns, spacing=4).resolve_scale(y="shared")


def dashboard(preds: pl.DataFrame) -> Chart:
    """Heat map above its drill-down table: click a cell to list its questions.

    >>> dashboard(preds)  # in a notebook; or report.html_report(preds) for a standalone page
    """
    selection = cell_selection()
    table = drilldown_table(metrics.drilldown(preds), selection=selection).properties(
        title="Questions in the selected cells (click a cell; double-click to clear)"
    )
    return alt.vconcat(heatmap(preds, selection=selection), table)


def _panels(chart: alt.LayerChart, data: pl.DataFrame) -> Chart:
    """Facet ``chart``: one column per model, or one column per stage and one row per model."""
    stage = next((key for key in metrics.STAGE_KEYS if key in data.columns), None)
    order = data["panel"].unique(maintain_order=True).to_list()
    if stage is not None:
        header = alt.Header(labelAngle=0, labelAlign="left")
        row = alt.Row("panel:N", title=None, sort=order, header=header) if len(order) > 1 else alt.Undefined
        return chart.facet(column=alt.Column(f"{stage}:O", title=stage), row=row)
    if len(order) > 1:
        return chart.facet(column=alt.Column("panel:N", title=None, sort=order))
    return chart


def reliability_diagram(preds: pl.DataFrame, bins: int = 10) -> Chart:
    """Accuracy against confidence (softmax of the choice scores), one point per confidence bin sized by its
    questions, beside the diagonal of a calibrated model; one panel per model.

    >>> reliability_diagram(preds).to_dict()["layer"][0]["mark"]["type"]  # doctest: +SKIP
    'rule'
    """
    points = reliability_points(preds, bins)
    axis = alt.Scale(domain=[0, 1])
    diagonal = alt.Chart().mark_rule(strokeDash=[4, 4], color="#888")  # one rule per row, all on one line
    diagonal = diagonal.encode(x=alt.datum(0.0), y=alt.datum(0.0), x2=alt.datum(1.0), y2=alt.datum(1.0))
    x = alt.X("confidence:Q", scale=axis, axis=alt.Axis(format=".0%"), title="confidence (softmax of the scores)")
    y = alt.Y("accuracy:Q", scale=axis, axis=alt.Axis(format=".0%"), title="accuracy")
    colour = alt.Color("label:N", title="model")
    line = alt.Chart().mark_line().encode(x=x, y=y, color=colour)
    dots = (
        alt.Chart()
        .mark_circle(opacity=0.9)
        .encode(
            x=x,
            y=y,
            color=colour,
            size=alt.Size("n:Q", title="questions", scale=alt.Scale(range=[30, 400])),
            tooltip=[
                alt.Tooltip("label:N", title="model"),
                alt.Tooltip("confidence:Q", format=".1%"),
                alt.Tooltip("accuracy:Q", format=".1%"),
                alt.Tooltip("n:Q", title="questions"),
            ],
        )
    )
    chart = alt.layer(diagonal, line, dots, data=points)
    return chart.properties(width=260, height=260, title="Reliability diagram")
