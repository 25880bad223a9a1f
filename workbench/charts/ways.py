"""Ways of asking side by side: the paired difference of two ways of asking one model, per heat-map cell.

(Each way's own accuracy is the ``accuracy.heatmap`` of its rows: one panel per way, since their labels differ.)

    >>> way_difference_heatmap(way_difference(preds, "SmolLM2 · cloze/0-shot/plain", "SmolLM2 · letters/0-shot/plain"))
"""

import altair as alt
import polars as pl

from workbench.charts.accuracy import SMALL_CELL_COLOUR, Chart, cell_axes
from workbench.views import way_difference_points


def way_difference_heatmap(table: pl.DataFrame) -> Chart:
    """B − A per cell (probe x hops by distractors) from ``analysis.ways.way_difference``: red where B is worse,
    blue where better, in points; a ``*`` marks a cell whose Holm-adjusted McNemar p is below alpha; a cell of few
    questions is grey and shows its n. The tooltip gives both accuracies, the discordant counts and the p-value.

    >>> way_difference_heatmap(table).to_dict()["layer"][0]["mark"]["type"]  # doctest: +SKIP
    'rect'
    """
    cells = way_difference_points(table)
    a, b = (table[name][0] if name in table.columns and table.height else name.upper() for name in ("a", "b"))
    base = cell_axes()
    rect = base.mark_rect(stroke="white").encode(
        color=alt.condition(
            alt.datum.small,
            alt.value(SMALL_CELL_COLOUR),
            alt.Color(
                "diff:Q",
                scale=alt.Scale(domain=[-1, 1], scheme="redblue"),
                legend=alt.Legend(format="+.0%", title="B − A"),
            ),
        ),
        tooltip=[
            alt.Tooltip("row:N", title="probe, hops"),
            alt.Tooltip("column:N", title="distractors"),
            alt.Tooltip("accuracy_a:Q", title="A", format=".1%"),
            alt.Tooltip("accuracy_b:Q", title="B", format=".1%"),
            alt.Tooltip("diff:Q", title="B − A", format="+.1%"),
            alt.Tooltip("n:Q", title="questions"),
            alt.Tooltip("a_only:Q", title="A right, B wrong"),
            alt.Tooltip("b_only:Q", title="B right, A wrong"),
            alt.Tooltip("p_holm:Q", title="p (McNemar, Holm)", format=".2g"),
        ],
    )
    text = base.mark_text(fontSize=10).encode(text=alt.Text("cell_text:N"))
    title = alt.TitleParams(f"B − A, points: {b} minus {a}", subtitle="* McNemar, Holm-adjusted, p < 0.05")
    return alt.layer(rect, text, data=cells).properties(width=alt.Step(46), height=alt.Step(22), title=title)


def ways_against_control(
    table: pl.DataFrame, model: str = "SmolLM2", control: str = "random weights", alpha: float = 0.01
) -> Chart:
    """One model asked several ways beside its control, a panel per set: for each way (a row) the model's accuracy
    (a filled dot; dark where the paired McNemar ``p`` is below ``alpha``) and its control's (a ring), joined by a
    rule. ``table``: one row per ``set`` and ``way`` with the two accuracies in columns ``model`` and ``control``
    and ``p``, as ``bench/bench_ways_of_asking.py`` writes it (``ways.csv``).

    >>> ways_against_control(pl.read_csv("bench/ways/ways.csv")).to_dict()["facet"]["row"]["field"]  # doctest: +SKIP
    'set'
    """
    below, above = f"p < {alpha:g}", f"p ≥ {alpha:g}"
    significance = pl.when(pl.col("p") < alpha).then(pl.lit(below)).otherwise(pl.lit(above))
    points = table.select("set", "way", "p", model=pl.col(model), control=pl.col(control), significance=significance)
    x = alt.X("model:Q", title="accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    y = alt.Y("way:N", title=None, sort=None)
    tooltip = [
        alt.Tooltip("way:N"),
        alt.Tooltip("model:Q", title=model, format=".1%"),
        alt.Tooltip("control:Q", title=control, format=".1%"),
        alt.Tooltip("p:Q", title="p (McNemar)", format=".2g"),
    ]
    base = alt.Chart().encode(y=y, tooltip=tooltip)
    rule = base.mark_rule(color="#999").encode(x=x, x2="control:Q")
    ring = base.mark_point(color="#999", size=50).encode(x=alt.X("control:Q"))
    dot = base.mark_circle(size=70, opacity=1).encode(
        x=x,
        color=alt.Color(
            "significance:N",
            scale=alt.Scale(domain=[below, above], range=["#1f4e99", "#9ab6e0"]),
            title=f"{model} against {control}",
        ),
    )
    return (
        alt.layer(rule, ring, dot, data=points)
        .facet(
            row=alt.Row(
                "set:N",
                title=None,
                sort=points["set"].unique(maintain_order=True).to_list(),
                header=alt.Header(labelAngle=0, labelAlign="left"),
            )
        )
        .properties(title=alt.TitleParams(f"{model} (dot) against {control} (ring), each way of asking"))
    )
