"""The taxonomy atlas: strict cluster accuracy drawn over the WordNet hierarchy as an icicle.

Takes the rows of ``views.taxonomy_layout`` (one rectangle per node, its width the node's share of the
clusters, its row the depth below the root) and encodes them; computes nothing. A click selects a node
(the point selection ``node``), which a panel reads to zoom and a page can filter on.

    >>> view = views.taxonomy_layout(atlas.taxonomy_accuracy(preds, min_clusters=5), levels=6)
    >>> taxonomy_atlas(view)
"""

import altair as alt
import polars as pl

LEVEL_HEIGHT = 26
"""Pixels per level of the icicle."""


def node_selection(name: str = "node") -> alt.Parameter:
    """A click selection of one atlas node by its ``node`` name (double-click clears it)."""
    return alt.selection_point(name=name, fields=["node"], on="click", clear="dblclick", empty=True)


def taxonomy_atlas(view: pl.DataFrame, selection: alt.Parameter | None = None, width: int = 640):
    """Which regions of WordNet the model knows: an icicle of nodes coloured by strict cluster accuracy.

    Parameters
    ----------
    view : polars.DataFrame
        ``views.taxonomy_layout`` rows: ``node``, ``x0``, ``x1``, ``y0``, ``y1``, ``xm``, ``ym``, ``text``,
        ``cluster_accuracy`` and the tooltip's columns; several models are drawn one below the other.
    selection : altair.Parameter, optional
        The click selection to expose (default ``node_selection()``: the parameter ``node``).
    width : int
        Pixels across (the root's width).

    Returns
    -------
    altair chart
        Rectangles sized by clusters and coloured by strict cluster accuracy (0 to 1), each named when wide enough.

    Examples
    --------
    >>> taxonomy_atlas(view).to_dict()["params"][0]["name"]  # doctest: +SKIP
    'node'
    """
    selection = selection if selection is not None else node_selection()
    x = alt.X("x0:Q", axis=None, scale=alt.Scale(domain=[0, 1], nice=False, zero=False))
    y = alt.Y("y0:Q", axis=None, scale=alt.Scale(reverse=True, nice=False, zero=True))
    rect = (
        alt.Chart()
        .mark_rect(stroke="white", strokeWidth=1, cursor="pointer")
        .encode(
            x=x,
            x2="x1:Q",
            y=y,
            y2="y1:Q",
            color=alt.Color(
                "cluster_accuracy:Q",
                scale=alt.Scale(domain=[0, 1], scheme="viridis"),  # 0% is dark: never mistaken for a gap
                legend=alt.Legend(format=".0%", title="strict cluster accuracy"),
            ),
            opacity=alt.condition(selection, alt.value(1.0), alt.value(0.45)),
            tooltip=[
                alt.Tooltip("node:N", title="node"),
                alt.Tooltip("n_clusters:Q", title="clusters"),
                alt.Tooltip("cluster_accuracy:Q", title="strict cluster accuracy", format=".1%"),
                alt.Tooltip("cluster_lo:Q", title="95% interval from", format=".1%"),
                alt.Tooltip("cluster_hi:Q", title="95% interval to", format=".1%"),
                alt.Tooltip("instance_accuracy:Q", title="instance accuracy", format=".1%"),
                alt.Tooltip("n:Q", title="questions"),
                alt.Tooltip("examples:N", title="concepts drawn here"),
            ],
        )
        .add_params(selection)
        .properties(name="atlas_nodes")
    )
    text = (
        alt.Chart()
        .mark_text(fontSize=10, limit=int(width * 0.08) + 20)
        .encode(
            x=alt.X("xm:Q", axis=None, scale=alt.Scale(domain=[0, 1], nice=False, zero=False)),
            y=alt.Y("ym:Q", axis=None, scale=alt.Scale(reverse=True, nice=False, zero=True)),
            text="text:N",
            color=alt.condition(alt.datum.cluster_accuracy < 0.55, alt.value("white"), alt.value("black")),
        )
    )  # a click on a name selects its node too: the selection reads the clicked item's ``node``
    levels = int(view["y1"].max()) if view.height else 1
    layer = alt.layer(rect, text, data=view).properties(width=width, height=LEVEL_HEIGHT * levels)
    labels = view["label"].unique(maintain_order=True).to_list() if "label" in view.columns else []
    if len(labels) > 1:
        return layer.facet(row=alt.Row("label:N", title=None, sort=labels, header=alt.Header(labelAngle=0)))
    return layer
