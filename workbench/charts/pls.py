"""Charts of a PLS path model fit (``workbench.analysis.PLSResult``): the path diagram with
coefficients and significance, loadings per block, bootstrap distributions.

    >>> path_diagram(result) & loading_bars(result.loadings) & bootstrap_histograms(result.draws)  # doctest: +SKIP
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import altair as alt
import polars as pl

from workbench.errors import WorkbenchError
from workbench.views import path_layout

if TYPE_CHECKING:
    from workbench.analysis import PLSResult

SIGNIFICANT, NOT_SIGNIFICANT = "#1f4e79", "#a0a0a0"


def path_diagram(result: PLSResult, width: int = 520, height: int = 360) -> alt.LayerChart:
    """Latents as labelled nodes (R² under endogenous ones), paths as arrows labelled with their
    coefficient; significant paths dark and solid, the others grey and dashed (p > alpha).

    >>> path_diagram(result).to_dict()["layer"][0]["mark"]["type"]  # doctest: +SKIP
    'rule'
    """
    nodes = path_layout(result)
    where = {row["latent"]: (row["x"], row["y"]) for row in nodes.iter_rows(named=True)}
    p_column = "p_value" if "p_value" in result.paths.columns else "p_ols"
    xs, ys = nodes["x"], nodes["y"]
    x_span, y_span = (xs.min() - 0.35, xs.max() + 0.35), (ys.min() - 0.6, ys.max() + 0.6)
    px, py = width / (x_span[1] - x_span[0]), height / (y_span[1] - y_span[0])  # screen pixels per data unit
    edges = []
    for row in result.paths.iter_rows(named=True):
        (x0, y0), (x1, y1) = where[row["source"]], where[row["target"]]
        dx, dy = x1 - x0, y1 - y0
        shrink = 36 / math.hypot(dx * px, dy * py)  # stop at the rim of the node circles
        sx, sy, tx, ty = x0 + dx * shrink, y0 + dy * shrink, x1 - dx * shrink, y1 - dy * shrink
        edges.append({
            "path": f"{row['source']} -> {row['target']}", "x": sx, "y": sy, "x2": tx, "y2": ty,
            "mx": sx + (tx - sx) * 0.3, "my": sy + (ty - sy) * 0.3,  # near the source, where edges fan out
            "angle": math.degrees(math.atan2(dx * px, dy * py)) % 360, "size": abs(row["coef"]),
            "coef": row["coef"], "p": row[p_column], "significant": bool(row["significant"]),
            "label": f"{row['coef']:+.2f}{'' if row['significant'] else ' (n.s.)'}",
        })  # fmt: skip
    edges = pl.DataFrame(edges)
    x = alt.X("x:Q", scale=alt.Scale(domain=list(x_span)), axis=None)
    y = alt.Y("y:Q", scale=alt.Scale(domain=list(y_span)), axis=None)
    colour = alt.Color(
        "significant:N",
        scale=alt.Scale(domain=[True, False], range=[SIGNIFICANT, NOT_SIGNIFICANT]),
        title=f"p <= {result.spec.alpha:g}",
    )
    tooltip = ["path:N", alt.Tooltip("coef:Q", format="+.3f"), alt.Tooltip("p:Q", format=".4f", title=p_column)]
    base = alt.Chart(edges)
    lines = base.mark_rule().encode(
        x=x, y=y, x2="x2:Q", y2="y2:Q", color=colour, tooltip=tooltip,
        strokeWidth=alt.StrokeWidth(
            "size:Q", scale=alt.Scale(type="sqrt", domain=[0, max(1.0, edges["size"].max())], range=[1, 5]), legend=None
        ),
        strokeDash=alt.StrokeDash(
            "significant:N", scale=alt.Scale(domain=[True, False], range=[[1, 0], [5, 4]]), legend=None
        ),
    )  # fmt: skip
    heads = base.mark_point(shape="triangle-up", filled=True, size=90, opacity=1).encode(
        x=alt.X("x2:Q", scale=alt.Scale(domain=list(x_span)), axis=None),
        y=alt.Y("y2:Q", scale=alt.Scale(domain=list(y_span)), axis=None),
        angle=alt.Angle("angle:Q", scale=None), color=colour, tooltip=tooltip,
    )  # fmt: skip
    labels = base.mark_text(fontSize=11, fontWeight="bold", dy=-7).encode(
        x=alt.X("mx:Q", scale=alt.Scale(domain=list(x_span)), axis=None),
        y=alt.Y("my:Q", scale=alt.Scale(domain=list(y_span)), axis=None),
        text="label:N", color=colour, tooltip=tooltip,
    )  # fmt: skip
    node_frame = nodes.with_columns(
        caption=pl.when(pl.col("r2").is_not_null())
        .then(pl.format("R² = {}", pl.col("r2").round(3)))
        .otherwise(pl.lit(""))
    )
    node_base = alt.Chart(node_frame).encode(x=x, y=y)
    circles = node_base.mark_circle(size=2600, color="#f3f6fa", stroke="#1f4e79", strokeWidth=1.5, opacity=1)
    names = node_base.mark_text(fontSize=12, fontWeight="bold").encode(text="latent:N")
    r2_text = node_base.mark_text(fontSize=11, dy=36).encode(text="caption:N")
    return alt.layer(lines, heads, labels, circles, names, r2_text).properties(
        width=width, height=height, title="PLS path model"
    )


def loading_bars(loadings: pl.DataFrame) -> alt.FacetChart:
    """Outer loadings per block: one bar per indicator, a panel per latent, 0.7 marked (the usual
    threshold of a reflective indicator); a ``ci_low``/``ci_high`` bootstrap interval when present.

    >>> loading_bars(result.loadings).to_dict()["facet"]["row"]["field"]  # doctest: +SKIP
    'latent'
    """
    frame = loadings.with_columns(weak=pl.col("loading") < 0.7)
    base = alt.Chart().encode(y=alt.Y("indicator:N", sort=None, title=None))
    bars = base.mark_bar().encode(
        x=alt.X("loading:Q", scale=alt.Scale(domain=[min(-0.2, frame["loading"].min()), 1.05]), title="loading"),
        color=alt.Color(
            "weak:N", scale=alt.Scale(domain=[False, True], range=[SIGNIFICANT, NOT_SIGNIFICANT]), title="loading < 0.7"
        ),
        tooltip=["latent:N", "indicator:N", alt.Tooltip("loading:Q", format=".3f")],
    )  # fmt: skip
    rule = alt.Chart().mark_rule(strokeDash=[4, 3], color="#c0392b").encode(x=alt.datum(0.7))
    layers = [bars, rule]
    if "ci_low" in frame.columns:
        layers.append(base.mark_rule(color="black").encode(x="ci_low:Q", x2="ci_high:Q"))
    return (
        alt.layer(*layers, data=frame)
        .facet(row=alt.Row("latent:N", sort=None, title=None, header=alt.Header(labelAngle=0, labelAlign="left")))
        .resolve_scale(y="independent")
        .properties(title="Outer loadings per block")
    )


def bootstrap_histograms(draws: pl.DataFrame, kind: str = "paths", columns: int = 4) -> alt.FacetChart:
    """Histograms of the bootstrap replicates of one ``kind`` (paths, loadings, weights, r2, gof),
    one panel per term, with a rule at 0.

    >>> bootstrap_histograms(result.draws).to_dict()["facet"]["field"]  # doctest: +SKIP
    'term'
    """
    frame = draws.filter(pl.col("kind") == kind)
    if frame.is_empty():
        raise WorkbenchError(
            f"the draws hold no replicates of kind {kind!r}; kinds: {draws['kind'].unique().sort().to_list()}"
        )
    bars = alt.Chart().mark_bar(color=SIGNIFICANT, opacity=0.8).encode(
        x=alt.X("value:Q", bin=alt.Bin(maxbins=30), title="bootstrap replicate"),
        y=alt.Y("count():Q", title="resamples"),
    )  # fmt: skip
    zero = alt.Chart().mark_rule(color="#c0392b").encode(x=alt.datum(0))
    return (
        alt.layer(bars, zero, data=frame)
        .properties(width=180, height=110)
        .facet(facet=alt.Facet("term:N", sort=None, title=None), columns=columns)
        .resolve_scale(x="independent")
        .properties(title=f"Bootstrap distributions ({kind})")
    )
