"""Taxonomy atlas panel: strict cluster accuracy over WordNet as an icicle; click a node to zoom in.

Clicking a node (the chart's ``node`` selection, back in Python through altair's ``JupyterChart``) re-roots the
icicle there and lists the concepts below it, the worst known first; picking a concept sets ``session.concept``,
so the cluster browser shows its cluster. The numbers come from ``workbench.analysis.atlas`` (per toggle setting, once),
the rectangles from ``workbench.views.taxonomy_layout``.
"""

import html

import altair as alt
import ipywidgets as w
import polars as pl

from widgets.dashboard import EMBED
from widgets.render import readable_labels
from widgets.state import Session
from workbench import charts, markup
from workbench.analysis import atlas
from workbench.charts.offline import offline_charts
from workbench.errors import WorkbenchError
from workbench.probes.select import select
from workbench.views import taxonomy_layout

_EMPTY = alt.Chart(alt.Data(values=[])).mark_point()


class TaxonomyAtlas:
    """The atlas of ``session.predictions`` under ``session.where`` (one icicle per model).

    ``min_clusters``: nodes with fewer clusters below them are folded into their parent; ``levels``: levels
    shown below the current root; ``n_boot``: bootstrap resamples of the tooltips' intervals; ``max_concepts``:
    concepts listed at most (the worst known).

    >>> panel = TaxonomyAtlas(session); panel.zoom("animal.n.01"); panel.concepts.options[:3]  # doctest: +SKIP
    """

    def __init__(
        self, session: Session, min_clusters: int = 2, levels: int = 7, n_boot: int = 200, max_concepts: int = 200
    ) -> None:
        offline_charts()
        self.session, self.min_clusters, self.levels, self.n_boot = session, min_clusters, levels, n_boot
        self.max_concepts = max_concepts
        self.root = atlas.ROOT
        self.table: pl.DataFrame | None = None  # atlas.taxonomy_accuracy of the shown predictions
        self._shown: pl.DataFrame | None = None
        self._graph = None
        self._memo: dict = {}  # toggles -> (shown predictions, table, clusters placed), for the current predictions
        self.message = w.HTML()
        self.path = w.HTML()
        self.up = w.Button(description="up to parent", icon="arrow-up", disabled=True)
        self.top = w.Button(description="back to top", icon="home", disabled=True)
        self.chart = alt.JupyterChart(_EMPTY, embed_options=EMBED)
        self.chart.add_class("wb-atlas")
        self.concepts = w.Select(options=[], rows=10, description="concepts", layout=w.Layout(width="95%"))
        self.concepts_note = w.HTML()
        self.up.on_click(lambda _: self.zoom(self._parent(self.root) or atlas.ROOT))
        self.top.on_click(lambda _: self.zoom(atlas.ROOT))
        self.concepts.observe(self._open, "value")
        self.widget = w.VBox(
            [
                w.HTML("<h3>Taxonomy atlas</h3>"),
                self.message,
                w.HBox([self.up, self.top, self.path]),
                self.chart,
                self.concepts_note,
                self.concepts,
            ],
            layout=w.Layout(width="100%"),
        )
        self.widget.add_class("wb-taxonomy-atlas")
        readable_labels(self.widget)
        session.observe(self.refresh, ["predictions", "where"])
        self.refresh()

    def refresh(self, change=None) -> None:
        """Recompute the atlas for the current predictions and toggles (once per toggle setting); keep the root
        when it is still drawn."""
        preds = self.session.predictions
        self.table = self._shown = None
        if change is not None and change.name == "predictions":
            self._memo.clear()
        if preds is None or preds.is_empty():
            self._blank("<b>No predictions yet</b>: load a prediction file to see which regions of WordNet it knows.")
            return
        where = self.session.where
        if where not in self._memo:
            shown = select(preds, where)
            try:
                if self._graph is None:
                    self._graph = atlas.wordnet_graph(self.session.graph)
                table = atlas.taxonomy_accuracy(shown, self._graph, min_clusters=self.min_clusters, n_boot=self.n_boot)
            except WorkbenchError as err:
                self._blank(f"<i>{html.escape(str(err))}</i>")
                return
            placed = atlas.wordnet_rows(shown, self._graph)["cluster_id"].n_unique()
            self._memo[where] = (shown, table, placed)
        shown, table, placed = self._memo[where]
        self.table, self._shown = table, shown
        total = shown["cluster_id"].n_unique()
        left = f"; {total - placed:,} without a WordNet concept (GCIDE senses) are left out" if placed < total else ""
        self.message.value = (
            f"<span class='wb-atlas-summary'>{placed:,} clusters placed in WordNet{html.escape(left)}. "
            "Width: clusters; "
            "colour: strict cluster accuracy. Click a node to zoom in.</span>"
        )
        self.zoom(self.root if self.root in table["node"] else atlas.ROOT)

    def zoom(self, node: str) -> None:
        """Re-root the icicle at ``node``, list the concepts below it."""
        if self.table is None:
            return
        self.root = node
        self.chart.chart = charts.taxonomy_atlas(taxonomy_layout(self.table, root=node, levels=self.levels))
        self.chart.selections.observe(self._clicked, "node")
        self.chart.layout.display = None
        trail, parent = [node], self._parent(node)
        while parent is not None:
            trail.insert(0, parent)
            parent = self._parent(parent)
        self.path.value = f"<span class='wb-atlas-path'>{' › '.join(markup.text(name) for name in trail)}</span>"
        self.up.disabled = self.top.disabled = node == atlas.ROOT
        below = atlas.concepts_under(self._shown, node, self._graph)
        self.concepts.options = [
            (f"{row['concept']} · {row['right']}/{row['clusters']} clusters right", row["concept"])
            for row in below.head(self.max_concepts).iter_rows(named=True)
        ]
        self.concepts.value = None
        shown = f"the {self.max_concepts} worst known" if below.height > self.max_concepts else "the worst known first"
        self.concepts_note.value = (
            f"<span class='wb-muted wb-atlas-concepts'>{below.height:,} concepts below {markup.text(node)}, "
            f"{html.escape(shown)} "
            "(pick one to open its cluster):</span>"
        )

    def _parent(self, node: str) -> str | None:
        parents = self.table.filter(pl.col("node") == node)["parent"] if self.table is not None else []
        return parents[0] if len(parents) else None

    def _clicked(self, change) -> None:
        picked = change.new.value
        if picked and picked[0]["node"] != self.root:
            self.zoom(picked[0]["node"])

    def _open(self, change) -> None:
        if change.new:
            self.session.concept = change.new

    def _blank(self, message: str) -> None:
        self.message.value, self.path.value, self.concepts_note.value, self.concepts.options = message, "", "", []
        self.chart.layout.display = "none"
        self.up.disabled = self.top.disabled = True
