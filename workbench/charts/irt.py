"""Item response theory charts: the population's members on one ability scale, and questions' characteristic
curves (docs/IRT.md)."""

import altair as alt
import polars as pl


def ability_chart(members: pl.DataFrame) -> alt.LayerChart:
    """Each member's ability with its 95 % interval, strongest on top, on the fit's one scale.

    Parameters
    ----------
    members : polars.DataFrame
        ``IrtFit.members``: ``label``, ``theta``, ``theta_lo``, ``theta_hi``, ``accuracy``.

    Returns
    -------
    altair.LayerChart
        Intervals (rules) and abilities (points); the tooltip gives the member's plain accuracy too.

    Examples
    --------
    >>> ability_chart(fit.members)  # doctest: +SKIP
    """
    order = members.sort("theta", descending=True)["label"].to_list()
    y = alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=360))
    base = alt.Chart(members.select("label", "theta", "theta_lo", "theta_hi", "accuracy")).encode(y=y)
    tooltip = ["label:N", alt.Tooltip("theta:Q", format="+.2f", title="ability"),
               alt.Tooltip("accuracy:Q", format=".3f")]  # fmt: skip
    rules = base.mark_rule().encode(x=alt.X("theta_lo:Q", title="ability (population SD units)"), x2="theta_hi:Q")
    return rules + base.mark_point(filled=True, size=60).encode(x="theta:Q", tooltip=tooltip)


def characteristic_chart(curves: pl.DataFrame) -> alt.Chart:
    """Questions' item characteristic curves: P(right) against ability, one line per question.

    Parameters
    ----------
    curves : polars.DataFrame
        ``workbench.irt.fit.characteristic_curves`` of a few questions.

    Returns
    -------
    altair.Chart
        Lines coloured by question; a steep curve discriminates, a flat one does not.

    Examples
    --------
    >>> characteristic_chart(characteristic_curves(fit.items.head(3)))  # doctest: +SKIP
    """
    return alt.Chart(curves).mark_line().encode(
        x=alt.X("theta:Q", title="ability"), y=alt.Y("p:Q", title="P(right)", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("id:N", title="question"), tooltip=["question:N", "a:Q", "b:Q"],
    )  # fmt: skip
