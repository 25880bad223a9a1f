"""Results dashboard: the hops x distractor heat map, cluster-accuracy bars, the drill-down table.

Several models side by side (one heat-map panel each). Clicking a heat-map cell (shift-click for more,
double-click to clear) filters the drill-down table to the questions behind it: the click travels
back to Python through altair's ``JupyterChart`` and ``metrics.drilldown`` does the filtering.
"""

from html import escape
from pathlib import Path

import altair as alt
import ipywidgets as w
import polars as pl

from workbench import charts, metrics
from workbench.io import write_text
from workbench.paths import cache_dir
from workbench.probes.select import select
from workbench.schema import PREDICTION_SCHEMA, conform
from widgets.render import short_model, table
from widgets.state import Session

EMBED = {"renderer": "svg", "actions": False}
_EMPTY = alt.Chart(alt.Data(values=[])).mark_point()  # what a chart shows before predictions arrive


def offline_charts() -> None:
    """Serve Vega's JavaScript from the kernel (vl-convert's bundle), never from a CDN.

    Bundling takes seconds, so the bundle is kept in the workspace cache, keyed by both versions.
    """
    import vl_convert

    if alt.JupyterChart._is_offline:
        return
    cached = cache_dir("widgets") / f"jupyterchart-{alt.__version__}-{vl_convert.__version__}.js"
    if cached.is_file():  # what enable_offline() would compute, read back (altair keeps it in _esm)
        alt.JupyterChart._esm, alt.JupyterChart._is_offline = cached.read_text(), True
        return
    alt.JupyterChart.enable_offline()
    write_text(alt.JupyterChart._esm, cached)


class ResultsDashboard:
    """Heat map, cluster bars and drill-down of ``session.predictions`` under ``session.where``.

    ``files``: prediction Parquet files to offer in a model picker (several at once: side by side).

    >>> board = ResultsDashboard(session); board.heat.selections.cell  # the clicked cells
    """

    def __init__(self, session: Session, files: list[Path] | None = None, n_boot: int = 50, max_rows: int = 30) -> None:
        offline_charts()
        self.session, self.n_boot, self.max_rows = session, n_boot, max_rows
        self.files = w.SelectMultiple(options=[(p.stem, str(p)) for p in files or []], description="models", rows=min(6, max(2, len(files or []))))
        self.message = w.HTML()
        self.heat = alt.JupyterChart(_EMPTY, embed_options=EMBED)
        self.bars = alt.JupyterChart(_EMPTY, embed_options=EMBED)
        for chart in (self.heat, self.bars):
            chart.layout.display = "none"  # until there are predictions to draw
        self.heat.add_class("wb-heatmap")
        self.bars.add_class("wb-cluster-bars")
        self.drill_title = w.HTML()
        self.drill = w.HTML()
        parts = [w.HTML("<h3>Results</h3>")]
        if files:
            parts.append(self.files)
        self.widget = w.VBox([*parts, self.message, self.heat, self.bars, self.drill_title, self.drill], layout=w.Layout(width="100%"))
        self.widget.add_class("wb-dashboard")
        if files and session.predictions is not None:
            self.files.value = (str(files[0]),)  # what the app loaded first
        self.files.observe(self._load, "value")
        session.observe(self.refresh, ["predictions", "where"])
        if files and session.predictions is None:
            self.files.value = (str(files[0]),)
        else:
            self.refresh()

    def _load(self, change) -> None:
        frames = [conform(pl.read_parquet(path), PREDICTION_SCHEMA, path) for path in change.new]
        self.session.predictions = pl.concat(frames) if frames else None

    def shown(self) -> pl.DataFrame | None:
        """The predictions the toggles keep (None when none are loaded)."""
        preds = self.session.predictions
        return None if preds is None else select(preds, self.session.where)

    def refresh(self, _=None) -> None:
        """Redraw every view for the current predictions and toggles."""
        preds = self.shown()
        if preds is None or preds.is_empty():
            self.message.value = (
                "<b class='wb-no-preds'>No predictions yet</b>: run <code>workbench score --model MODEL --scorer similarity "
                "--probes PROBES --out $WORKBENCH_HOME/predictions/NAME.parquet</code>"
                if preds is None else "<i>The toggles select no scored question.</i>"
            )
            self.drill.value = self.drill_title.value = ""
            self.heat.layout.display = self.bars.layout.display = "none"
            return
        models = metrics.model_labels(preds)["label"].to_list()
        self.message.value = f"<span class='wb-models'>{preds.height:,} scored questions · {escape(', '.join(map(short_model, models)))}</span>"
        self.heat.chart = charts.heatmap(preds, selection=charts.cell_selection())
        self.heat.selections.observe(self._drill, "cell")
        self.bars.chart = charts.cluster_bars(preds, n_boot=self.n_boot)
        self.heat.layout.display = self.bars.layout.display = None
        self._drill()

    def _drill(self, _=None) -> None:
        preds = self.shown()
        if preds is None or preds.is_empty():
            return
        cells = [(item["row"], item["column"]) for item in self.heat.selections.cell.value]
        frame = metrics.drilldown(preds)
        if cells:
            keep = pl.concat_str("row", "column", separator="\x1f").is_in([f"{r}\x1f{c}" for r, c in cells])
            frame = frame.filter(keep)
        where = "; ".join(f"{r} × {c}" for r, c in cells) or "all cells (click a heat-map cell to filter)"
        self.drill_title.value = (
            f"<b class='wb-drill-title'>{frame['id'].n_unique():,} questions in {escape(where)}</b>"
            f" <span class='wb-muted'>(first {self.max_rows}, most often wrong first)</span>"
        )
        shown = frame.head(self.max_rows).with_columns(pl.col("label").map_elements(short_model, return_dtype=pl.String))
        self.drill.value = table(shown, ["label", "row", "column", "question", "gold", "pick", "correct"])
