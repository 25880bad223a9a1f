"""oLMpics learning curves and edge-probing results already in the workspace: their charts and tables.

Reads only ``<workspace>/olmpics/*.parquet`` (written by ``workbench olmpics curves --out``) and the
folders under ``<workspace>/edge/`` holding a ``summary.parquet`` (and ``audit.parquet``, from
``workbench edge probe --out``); draws ``workbench.charts`` (``olmpics_curves``,
``language_sensitivity_bars``; ``edge_accuracy_bars``, ``mdl_bars``, ``memorisation_bars``) and the
results tables (``workbench.olmpics.results_table``; the edge summary and audit).
"""

from html import escape
from pathlib import Path

import altair as alt
import ipywidgets as w
import polars as pl

from widgets.dashboard import EMBED
from widgets.files import edge_result_folders, olmpics_curve_files
from widgets.render import readable_labels, table
from workbench import markup
from workbench.charts.accuracy import Chart
from workbench.charts.edge import edge_accuracy_bars, mdl_bars, memorisation_bars
from workbench.charts.offline import offline_charts
from workbench.charts.olmpics import language_sensitivity_bars, olmpics_curves
from workbench.io import read_parquet
from workbench.paths import workspace
from workbench.schema import model_label

NO_RESULTS = (
    "<i class='wb-no-probing'>No oLMpics or edge-probing results in the workspace yet: run "
    "<code>workbench olmpics curves --out $WORKBENCH_HOME/olmpics/NAME.parquet ...</code> or "
    "<code>workbench edge probe --out $WORKBENCH_HOME/edge/NAME ...</code>.</i>"
)

Views = tuple[dict[str, Chart], dict[str, pl.DataFrame]]


def olmpics_views(curves: pl.DataFrame) -> Views:
    """The charts (``curves``; ``sensitivity`` when the file has language controls) and the results table of oLMpics
    curves.

    >>> charts, tables = olmpics_views(pl.read_parquet(home / "olmpics/age.parquet"))  # doctest: +SKIP
    """
    # Imported here, not above: the package imports torch, which a dashboard kernel needs only for oLMpics curves.
    from workbench.olmpics import results_table

    curves = _short_names(curves, "model")
    tables = {
        "oLMpics results (percent: zero-shot, WS and MAX per setting, language sensitivity)": results_table(curves)
    }
    charts = {"curves": olmpics_curves(curves)}
    if (curves["control"] != "none").any() and (curves["n"] > 0).any():
        charts["sensitivity"] = language_sensitivity_bars(curves)
    return charts, tables


def edge_views(folder: Path) -> Views:
    """The charts (``accuracy``; ``mdl`` and ``memorisation`` when the run has them) and tables of an edge result
    folder.

    >>> charts, tables = edge_views(home / "edge" / "supersense")  # doctest: +SKIP
    """
    from workbench.edge.probes import SUMMARY_COLUMNS  # here, not above: the module imports torch

    summary = _short_names(read_parquet(folder / "summary.parquet"), "encoder")
    charts = {"accuracy": edge_accuracy_bars(summary)}
    if "compression" in summary.columns:
        charts["mdl"] = mdl_bars(summary)
    tables = {"per encoder and probe": summary.select(name for name in SUMMARY_COLUMNS if name in summary.columns)}
    if (folder / "audit.parquet").is_file():
        audit = read_parquet(folder / "audit.parquet")
        charts["memorisation"] = memorisation_bars(audit)
        tables["memorisation audit (percent of the test set; drop relative to the whole test set)"] = audit
    return charts, tables


def _short_names(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    """``frame`` with the model paths in ``column`` shortened for display (``model_label``)."""
    if column not in frame.columns:
        return frame
    return frame.with_columns(
        pl.col(column).replace_strict(
            {name: model_label(name) for name in frame[column].unique()}, return_dtype=pl.String
        )
    )


class ProbingResults:
    """Pick an oLMpics curves file or an edge result folder of the workspace: its charts and results tables.

    ``charts`` maps each drawn chart's name to its ``JupyterChart``; ``refresh()`` re-reads the workspace.

    >>> panel = ProbingResults(home=home); panel.result.value = str(home / "olmpics" / "age.parquet")
    """

    def __init__(self, home: Path | None = None) -> None:
        offline_charts()
        self.home = home or workspace()
        self.result = w.Dropdown(description="result", layout=w.Layout(width="60%"))
        self.message = w.HTML()
        self.plots = w.VBox()
        self.tables = w.HTML()
        self.charts: dict[str, alt.JupyterChart] = {}
        self.widget = w.VBox(
            [w.HTML("<h3>oLMpics and edge-probing results</h3>"), self.result, self.message, self.plots, self.tables],
            layout=w.Layout(width="100%"),
        )
        self.widget.add_class("wb-probing")
        readable_labels(self.widget)
        self.result.observe(self._draw, "value")
        self.refresh()

    def refresh(self, _=None) -> None:
        """Offer the result files and folders now in the workspace (the chosen one kept if still there)."""
        options = [(f"oLMpics: {path.relative_to(self.home)}", str(path)) for path in olmpics_curve_files(self.home)]
        options += [
            (f"edge: {folder.relative_to(self.home)}", str(folder)) for folder in edge_result_folders(self.home)
        ]
        chosen = self.result.value
        self.result.options = options
        if options and chosen not in {value for _, value in options}:
            self.result.value = options[0][1]
        self._draw()

    def _draw(self, _=None) -> None:
        for chart in self.charts.values():
            chart.close()
        self.charts, self.plots.children, self.tables.value = {}, (), ""
        if not self.result.value:
            self.message.value = NO_RESULTS
            return
        path = Path(self.result.value)
        try:
            charts, tables = edge_views(path) if path.is_dir() else olmpics_views(read_parquet(path))
        except Exception as err:  # a half-written or foreign file is reported, never raised into the page
            self.message.value = f"<span class='wb-wrong'>{escape(path.name)}: {escape(str(err))}</span>"
            return
        self.charts = {name: alt.JupyterChart(chart, embed_options=EMBED) for name, chart in charts.items()}
        self.plots.children = tuple(self.charts.values())
        kind = "edge probing" if path.is_dir() else "oLMpics learning curves"
        self.message.value = f"<span class='wb-probing-name'>{markup.text(path.name)}</span>: {escape(kind)}"
        self.tables.value = "".join(f"<p><b>{escape(title)}</b></p>{table(frame)}" for title, frame in tables.items())
