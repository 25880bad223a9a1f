"""The difficulty model's coefficients (``analysis.difficulty.fit_difficulty``): one point and interval per term.

>>> coefficient_plot(fit_difficulty(item_properties(preds)))  # doctest: +SKIP
"""

import altair as alt
import polars as pl

from workbench.views import coefficient_points


def coefficient_plot(coefficients: pl.DataFrame) -> alt.LayerChart:
    """Each fixed effect's posterior mean (log-odds of a right answer, per SD of a continuous property or against
    the reference level) with its interval, beside a zero line; several models side by side in colour.

    Parameters
    ----------
    coefficients : polars.DataFrame
        ``workbench.analysis.difficulty.fit_difficulty``'s table, one model or several.

    Returns
    -------
    altair.LayerChart
        Intervals (rules), posterior means (points) and the zero line; left of zero, a property makes items harder.

    Examples
    --------
    >>> coefficient_plot(wb.fit_difficulty(wb.item_properties(preds)))  # doctest: +SKIP
    """
    points = coefficient_points(coefficients)
    terms = points["term_label"].unique(maintain_order=True).to_list()
    models = points["label"].unique(maintain_order=True).to_list()
    y = alt.Y("term_label:N", sort=terms, title=None, axis=alt.Axis(labelLimit=360))
    offset = alt.YOffset("label:N", sort=models) if len(models) > 1 else alt.Undefined
    colour = alt.Color("label:N", sort=models, title="model")
    tooltip = [
        alt.Tooltip("label:N", title="model"),
        alt.Tooltip("term_label:N", title="term"),
        alt.Tooltip("estimate:Q", format=".2f", title="log-odds"),
        alt.Tooltip("odds_ratio:Q", format=".2f", title="odds ratio"),
        alt.Tooltip("odds_lo:Q", format=".2f", title="odds ratio, low"),
        alt.Tooltip("odds_hi:Q", format=".2f", title="odds ratio, high"),
        alt.Tooltip("n:Q", title="questions"),
    ]
    base = alt.Chart(points).encode(y=y, yOffset=offset, color=colour, tooltip=tooltip)
    intervals = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("lo:Q", title="effect on the log-odds of a right answer (per SD, or vs the reference level)"),
        x2="hi:Q",
    )
    means = base.mark_point(filled=True, size=60).encode(x="estimate:Q")
    zero = alt.Chart(pl.DataFrame({"zero": [0.0]})).mark_rule(color="#888", strokeDash=[4, 4]).encode(x="zero:Q")
    return alt.layer(intervals, means, zero).properties(
        width=420, height=alt.Step(18 * max(len(models), 1)), title="What makes an item hard"
    )
