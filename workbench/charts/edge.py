"""Charts of edge-probing results (``workbench.edge``): take a frame, return a chart.

- ``edge_accuracy_bars``: task vs control-task accuracy (selectivity is the gap), pre-trained vs random encoder;
- ``mdl_bars``: online codelength (bits) and compression per encoder;
- ``memorisation_bars``: the audit's relative drop per heuristic, pre-trained vs random (Tables 3-4).

>>> edge_accuracy_bars(summary) | mdl_bars(summary)  # doctest: +SKIP
"""

import altair as alt
import polars as pl

from workbench.charts.accuracy import Chart


def _encoder(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        encoder_kind=pl.when(pl.col("control") == "random-weights")
        .then(pl.lit("random"))
        .otherwise(pl.lit("pre-trained"))
    )


def edge_accuracy_bars(summary: pl.DataFrame) -> Chart:
    """Accuracy on the task and on its control task per encoder and probe (``probe_task`` summaries stacked)."""
    long = _encoder(summary).unpivot(
        index=["encoder_kind", "task", "probe", "layer"],
        on=[c for c in ("accuracy", "control_accuracy") if c in summary.columns],
        variable_name="measure",
        value_name="value",
    )
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X("measure:N", title=None, sort=["accuracy", "control_accuracy"]),
            y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title="test accuracy"),
            color=alt.Color("measure:N", title=None),
            column=alt.Column("encoder_kind:N", title=None, sort=["pre-trained", "random"]),
            row=alt.Row("probe:N", title=None),
            tooltip=["task", "probe", "layer", "encoder_kind", "measure", alt.Tooltip("value:Q", format=".3f")],
        )
        .properties(width=120, height=160)
    )


def mdl_bars(summary: pl.DataFrame) -> Chart:
    """Compression (uniform codelength / online codelength) per encoder and probe; tooltips give the bits."""
    if "compression" not in summary.columns:
        raise ValueError("the summary has no MDL columns; run probe_task with mdl=True")
    return (
        alt.Chart(_encoder(summary))
        .mark_bar()
        .encode(
            x=alt.X("encoder_kind:N", title=None, sort=["pre-trained", "random"]),
            y=alt.Y("compression:Q", title="compression (uniform / online bits)"),
            color=alt.Color("encoder_kind:N", legend=None),
            column=alt.Column("probe:N", title=None),
            tooltip=[
                "task",
                "probe",
                alt.Tooltip("codelength_bits:Q", format=",.0f"),
                alt.Tooltip("uniform_bits:Q", format=",.0f"),
                alt.Tooltip("compression:Q", format=".2f"),
            ],
        )
        .properties(width=110, height=180)
    )


def memorisation_bars(audit: pl.DataFrame) -> Chart:
    """Relative accuracy drop (%) when each heuristic's rows leave the test set, pre-trained vs random encoder."""
    return (
        alt.Chart(audit)
        .mark_bar()
        .encode(
            x=alt.X("encoder:N", title=None, sort=["pre-trained", "random"]),
            y=alt.Y("drop:Q", title="accuracy drop on the filtered test set (%)"),
            color=alt.Color("encoder:N", sort=["pre-trained", "random"]),
            column=alt.Column("heuristic:N", title=None),
            row=alt.Row("probe:N", title=None),
            tooltip=[
                "heuristic",
                "probe",
                "encoder",
                alt.Tooltip("share:Q", format=".1f"),
                alt.Tooltip("accuracy:Q", format=".1f"),
                alt.Tooltip("filtered_accuracy:Q", format=".1f"),
                alt.Tooltip("drop:Q", format=".1f"),
            ],  # fmt: skip
        )
        .properties(width=90, height=150)
    )
