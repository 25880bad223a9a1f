"""Charts of oLMpics learning curves (``workbench.olmpics.CURVE_SCHEMA``): take a frame, return a chart.

``olmpics_curves`` is the paper's Figure 2: accuracy against N (log scale), one colour per setting
(MLP, LINEAR), solid for the original statements and dashed for the language controls, the
zero-shot point at the left, one panel per probe. ``language_sensitivity_bars`` draws LANGSENSE.

>>> olmpics_curves(curves) | language_sensitivity_bars(curves)  # doctest: +SKIP
"""

import altair as alt
import polars as pl

from workbench.charts.accuracy import Chart
from workbench.views import language_sensitivity_points, olmpics_curve_points


def olmpics_curves(curves: pl.DataFrame) -> Chart:
    """Accuracy (mean over seeds, with the seeds' range) against N; dashed lines are the controls.

    >>> olmpics_curves(curves).to_dict()["facet"]["column"]["field"]  # doctest: +SKIP
    'probe'
    """
    points = olmpics_curve_points(curves)
    x = alt.X("n:Q", scale=alt.Scale(type="log"), title="training statements N")
    y = alt.Y("accuracy:Q", scale=alt.Scale(domain=[0, 1]), title="dev accuracy")
    dash = alt.StrokeDash("control:N", sort=["none", "perturbed-lang", "no-lang"], title="input")
    tooltip = ["model", "probe", "control", "setting", "n", alt.Tooltip("accuracy:Q", format=".3f"), "seeds"]
    line = (
        alt.Chart()
        .mark_line(point=True)
        .encode(x=x, y=y, color=alt.Color("setting:N", title="trained"), strokeDash=dash, tooltip=tooltip)
    )
    band = (
        alt.Chart()
        .mark_errorband(opacity=0.15)
        .encode(x=x, y=alt.Y("low:Q", title="dev accuracy"), y2="high:Q", color="setting:N", detail="control:N")
    )
    layers = [band, line]
    if points["zero_shot"].is_not_null().any():  # the zero-shot accuracy as a dotted rule across the panel
        rule = (
            alt.Chart()
            .mark_rule(color="black", strokeDash=[2, 2])
            .encode(
                y="zero_shot:Q",
                detail="control:N",
                tooltip=[alt.Tooltip("zero_shot:Q", format=".3f", title="zero-shot")],
            )
        )
        layers.append(rule)
    chart = alt.layer(*layers, data=points)
    return chart.properties(width=260, height=200).facet(
        column=alt.Column("probe:N", title=None), row=alt.Row("model:N", title=None)
    )


def language_sensitivity_bars(curves: pl.DataFrame, setting: str = "mlp") -> Chart:
    """LANGSENSE per probe and control (oLMpics Tables 2-9, in points): how much the curve drops without language."""
    sense = language_sensitivity_points(curves, setting)
    return (
        alt.Chart(sense)
        .mark_bar()
        .encode(
            x=alt.X("control:N", title=None),
            y=alt.Y("points:Q", title=f"language sensitivity ({setting.upper()}, points)"),
            color=alt.Color("control:N", legend=None),
            column=alt.Column("probe:N", title=None),
            tooltip=["model", "probe", "control", alt.Tooltip("points:Q", format=".1f")],
        )
        .properties(width=90, height=180)
    )
