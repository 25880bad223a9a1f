"""Results dashboard: the hops x distractor heat map, cluster-accuracy bars, calibration, the drill-down table, and
English against each other language where the predictions hold paired sets (``analysis.crosslingual``).

Several models side by side (one heat-map panel each); a ``*`` marks a cell where a model differs significantly
from the first one picked (``views.significance_marks``). Clicking a heat-map cell (shift-click for more,
double-click to clear) filters the drill-down table to the questions behind it: the click travels
back to Python through altair's ``JupyterChart`` and ``metrics.drilldown`` does the filtering.

Fast by design, so that a toggle redraws every view at once on a full probe set: each chart is built
and validated by altair once per set of models, later toggles only swap its aggregated rows into that
spec (``with_rows``); aggregates are memoised per filter; the bars show their point estimates at once
and get their bootstrap intervals from a background thread, which also computes calibration and template
sensitivity and drops work a newer toggle outdated; the difficulty model is fitted there on request.
"""

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from html import escape
from pathlib import Path

import altair as alt
import ipywidgets as w
import polars as pl

from widgets.render import readable_labels, table
from widgets.state import Session
from workbench import charts, markup, metrics
from workbench.analysis import difficulty
from workbench.analysis.calibration import calibration
from workbench.analysis.consistency import template_consistency
from workbench.analysis.crosslingual import language_report
from workbench.charts.crosslingual import language_chart
from workbench.charts.offline import offline_charts
from workbench.errors import WorkbenchError
from workbench.io import read_predictions
from workbench.irt.estimates import Estimate, estimate_html, estimates, refuse_mixed
from workbench.probes.select import select
from workbench.schema import population_line
from workbench.views import (
    cluster_bar_data,
    first_questions,
    heatmap_data,
    point_estimates,
    questions_in_cells,
    reliability_points,
)

EMBED = {"renderer": "svg", "actions": False}
_EMPTY = alt.Chart(alt.Data(values=[])).mark_point()  # what a chart shows before predictions arrive


def with_rows(spec: dict, rows: pl.DataFrame) -> dict:
    """``spec`` (a Vega-Lite dict with one inline dataset, as altair writes it) drawing ``rows`` instead.

    Only Vega-Lite's top-level ``datasets`` changes (the charts sort by fields of the data), so this costs
    what serialising ``rows`` costs, and the result equals the spec altair would build for ``rows``.

    >>> board.heat.spec = with_rows(board.heat.spec, heatmap_data(other_preds))  # doctest: +SKIP
    """
    (name,) = spec["datasets"]
    return {**spec, "datasets": {name: rows.to_dicts()}}


class ResultsDashboard:
    """Heat map, cluster bars and drill-down of ``session.predictions`` under ``session.where``.

    ``files``: prediction Parquet files to offer in a model picker (several at once: side by side).
    ``n_boot``: bootstrap resamples of the bars' 95% intervals, computed off the UI thread once the
    toggles have rested ``settle`` seconds (``board.wait()`` blocks until they are drawn).
    ``memo``: filters whose aggregates are kept.

    >>> board = ResultsDashboard(session); board.heat.selections.cell  # the clicked cells
    """

    def __init__(
        self,
        session: Session,
        files: list[Path] | None = None,
        n_boot: int = 1000,
        max_rows: int = 30,
        memo: int = 64,
        settle: float = 0.25,
    ) -> None:
        offline_charts()
        self.session, self.n_boot, self.max_rows, self.memo, self.settle = session, n_boot, max_rows, memo, settle
        self.files = w.SelectMultiple(
            options=[(p.stem, str(p)) for p in files or []], description="models", rows=min(6, max(2, len(files or [])))
        )
        self.message = w.HTML()
        self.heat = alt.JupyterChart(_EMPTY, embed_options=EMBED)
        self.bars = alt.JupyterChart(_EMPTY, embed_options=EMBED)
        self.reliability = alt.JupyterChart(_EMPTY, embed_options=EMBED)
        for chart in (self.heat, self.bars, self.reliability):
            chart.layout.display = "none"  # until there are predictions to draw
        self.heat.add_class("wb-heatmap")
        self.bars.add_class("wb-cluster-bars")
        self.reliability.add_class("wb-reliability")
        self.marks = w.HTML()
        self.intervals = w.HTML()
        self.calibration = w.HTML()
        self.consistency = w.HTML()
        self.languages = alt.JupyterChart(_EMPTY, embed_options=EMBED)
        self.languages.layout.display = "none"  # until predictions pair English with another language
        self.languages.add_class("wb-languages")
        self.languages_note = w.HTML()
        self.fit = w.Button(description="fit the difficulty model", icon="calculator")
        self.fit.on_click(lambda _: self.fit_difficulty())
        self.difficulty = alt.JupyterChart(_EMPTY, embed_options=EMBED)
        self.difficulty.layout.display = "none"
        self.difficulty.add_class("wb-difficulty")
        self.difficulty_note = w.HTML()
        self.drill_title = w.HTML()
        self.drill = w.HTML()
        self.drill.add_class("wb-drill")
        self._lock, self._generation = threading.Lock(), 0
        self._cache: OrderedDict[Hashable, pl.DataFrame] = OrderedDict()
        self._specs: dict[Hashable, dict] = {}  # validated chart specs per chart and set of models
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dashboard-intervals")
        self.pending: Future | None = None
        self.estimated: list[Estimate] = []  # adaptive runs loaded: shown as estimates, never drawn as measured
        parts = [w.HTML("<h3>Results</h3>")]
        if files:
            parts.append(self.files)
        self.widget = w.VBox(
            [
                *parts,
                self.message,
                self.heat,
                self.marks,
                self.bars,
                self.intervals,
                w.HBox([self.reliability, self.calibration]),
                self.consistency,
                self.languages_note,
                self.languages,
                w.HBox([self.fit, self.difficulty_note]),
                self.difficulty,
                self.drill_title,
                self.drill,
            ],
            layout=w.Layout(width="100%"),
        )
        self.widget.add_class("wb-dashboard")
        readable_labels(self.widget)
        if files and session.predictions is not None:
            self.files.value = (str(files[0]),)  # what the app loaded first
            self.estimated = estimates(self.files.value)
            if self.estimated:
                session.predictions = None
        self.files.observe(self._load, "value")
        session.observe(self._changed, ["predictions", "where"])
        if files and session.predictions is None:
            self.files.value = (str(files[0]),)
        else:
            self.refresh()

    def _load(self, change) -> None:
        try:
            found = estimates(change.new)
            refuse_mixed(change.new, found, "the dashboard")
            self.estimated = found
            self.session.predictions = read_predictions(*change.new) if change.new and not found else None
            if found:
                self.refresh()  # the predictions may have been None already
        except WorkbenchError as err:  # files that cannot be read together (one model's answers twice): say why
            self.message.value = f"<b class='wb-wrong'>not loaded</b>: {escape(str(err))}"

    def _changed(self, change) -> None:
        if change.name == "predictions":
            with self._lock:
                self._cache.clear()
                self._specs.clear()
                self._generation += 1  # intervals under way are for the old frame
        self.refresh()

    def shown(self) -> pl.DataFrame | None:
        """The predictions the toggles keep (None when none are loaded)."""
        preds = self.session.predictions
        return None if preds is None else select(preds, self.session.where)

    def wait(self, timeout: float | None = None) -> None:
        """Block until the bars' bootstrap intervals, calibration and template sensitivity are drawn."""
        if self.pending is not None:
            self.pending.result(timeout)

    def refresh(self, _=None) -> None:
        """Redraw every view for the current predictions and toggles (intervals follow from a thread)."""
        with self._lock:
            self._generation += 1
            generation = self._generation
        preds = self.shown()
        if preds is None or preds.is_empty():
            self.message.value = (
                estimate_html(self.estimated)
                if self.estimated and preds is None
                else "<b class='wb-no-preds'>No predictions yet</b>: run "
                "<code>workbench score --model MODEL --scorer similarity "
                "--probes PROBES --out $WORKBENCH_HOME/predictions/NAME.parquet</code>"
                if preds is None
                else "<i>The toggles select no scored question.</i>"
            )
            self.drill.value = self.drill_title.value = self.intervals.value = ""
            self.marks.value = self.calibration.value = self.consistency.value = self.difficulty_note.value = ""
            self.languages_note.value = ""
            self.difficulty.layout.display = self.languages.layout.display = "none"
            self.heat.layout.display = self.bars.layout.display = self.reliability.layout.display = "none"
            return
        where = self.session.where
        cells = self._memo(("heat", where), lambda: heatmap_data(preds))
        models = cells["label"].unique(maintain_order=True).to_list()
        names_html = ", ".join(markup.text(model) for model in models)  # each isolated: a bidi control stays inside
        self.message.value = (
            f"<span class='wb-models'>{preds.height:,} scored questions · {names_html}</span><br>"
            f"<span class='wb-population'>{escape(population_line(preds))}</span>"
        )
        # new cells: no old click applies, and a new chart starts with no selection
        clicked = getattr(self.heat.selections, "cell", None)  # none before the first chart
        fresh = clicked is not None and bool(clicked.value)
        self._draw(self.heat, cells, lambda: charts.heatmap(preds, selection=charts.cell_selection()), fresh)
        self.marks.value = _marks_note(cells)
        points = self._memo(("points", where), lambda: point_estimates(preds, cells))
        done = self._memo(("bars", where))
        self._draw(self.bars, done if done is not None else points, lambda: charts.cluster_bars(preds, n_boot=1))
        self.heat.layout.display = self.bars.layout.display = None
        extras = all(self._memo((name, where)) is not None for name in ("calibration", "consistency", "languages"))
        if extras:
            self._calibrate(preds, where)
            self._phrasing(preds, where)
            self._languages(preds, where)
        else:
            self.calibration.value = "<span class='wb-muted'>calibration and template sensitivity under way ...</span>"
        self.difficulty.layout.display = "none"  # a fit is for the toggles it was asked under
        self.difficulty_note.value = (
            "<span class='wb-muted'>what makes an item hard: a mixed-effects logistic model of correctness on the "
            "items' properties, the concept as a random effect (a few seconds)</span>"
        )
        if done is not None:
            self.intervals.value = self._interval_note()
        else:
            self.intervals.value = (
                "<span class='wb-muted wb-intervals-pending'>bars: point estimates; "
                f"{self.n_boot:,} bootstrap resamples under way ...</span>"
            )
        if done is None or not extras:
            self.pending = self._pool.submit(self._background, preds, where, generation, done is None, not extras)
        self._drill()

    def _background(self, preds: pl.DataFrame, where, generation: int, bars: bool, extras: bool) -> None:
        """Background: calibration and template sensitivity, then the bars' intervals; each drawn only if no newer
        toggle came meanwhile."""
        time.sleep(self.settle)  # a slider dragged across many values starts one computation, not many
        if generation != self._generation:
            return  # outdated before it began
        if extras:
            try:
                self._memo(("reliability", where), lambda: reliability_points(preds))
                self._memo(("calibration", where), lambda: calibration(preds, by=()))
            except WorkbenchError:
                pass  # _calibrate says why
            self._memo(("consistency", where), lambda: template_consistency(preds))
            self._memo(("languages", where), lambda: self._language_report(preds))
            if generation == self._generation:
                self._calibrate(preds, where)
                self._phrasing(preds, where)
                self._languages(preds, where)
        if bars:
            self._bootstrap(preds, where, generation)

    def _bootstrap(self, preds: pl.DataFrame, where, generation: int) -> None:
        """The bars' intervals; drawn only if no newer toggle came meanwhile."""
        if generation != self._generation:
            return
        try:
            bars = cluster_bar_data(preds, n_boot=self.n_boot)
        except Exception as err:  # shown on the page, never raised into it
            self.intervals.value = f"<span class='wb-wrong'>intervals failed: {escape(str(err))}</span>"
            return
        self._memo(("bars", where), lambda: bars)
        with self._lock:
            if generation == self._generation:
                self._draw(self.bars, bars, lambda: charts.cluster_bars(preds, n_boot=1))
                self.intervals.value = self._interval_note()

    def _calibrate(self, preds: pl.DataFrame, where) -> None:
        """The reliability diagram and each model's ECE and Brier score (none where the scorer gave no scores)."""
        try:
            points = self._memo(("reliability", where), lambda: reliability_points(preds))
            scores = self._memo(("calibration", where), lambda: calibration(preds, by=()))
        except WorkbenchError as err:
            self.reliability.layout.display = "none"
            self.calibration.value = f"<span class='wb-muted'>no calibration: {escape(str(err))}</span>"
            return
        self._draw(self.reliability, points, lambda: charts.reliability_diagram(preds))
        self.reliability.layout.display = None
        labels = self._memo("labels", lambda: metrics.model_labels(self.session.predictions))
        rows = scores.join(labels, on=metrics.identity_keys(preds), nulls_equal=True)
        self.calibration.value = "<b>Calibration</b> (softmax of the choice scores)" + table(
            rows, ["label", "n", "accuracy", "confidence", "ece", "brier"]
        )

    def _language_report(self, preds: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """``language_report`` of ``preds``; a failure (sets that were not paired) as a one-row ``error`` frame."""
        try:
            return language_report(preds, n_boot=self.n_boot)
        except WorkbenchError as err:
            return pl.DataFrame({"error": [str(err)]}), pl.DataFrame()

    def _languages(self, preds: pl.DataFrame, where) -> None:
        """English against each other language of the predictions (paired questions), when they hold such pairs."""
        summary, concepts = self._memo(("languages", where), lambda: self._language_report(preds))  # memo=0 kept none
        if "error" in summary.columns:
            self.languages.layout.display = "none"
            self.languages_note.value = (
                f"<span class='wb-muted'>no cross-lingual view: {escape(summary['error'][0])}</span>"
            )
            return
        if summary.is_empty():
            self.languages.layout.display, self.languages_note.value = "none", ""
            return
        self.languages.chart = language_chart(summary, concepts)
        self.languages.layout.display = None
        self.languages_note.value = "<b>English and the other languages</b> (paired questions)" + table(
            summary, ["pair", "questions", "concepts", "cluster_accuracy_a", "cluster_accuracy_b", "diff", "p_mcnemar"]
        )

    def _phrasing(self, preds: pl.DataFrame, where) -> None:
        """Template sensitivity: how often the pick survives a change of phrasing alone."""
        rows = self._memo(("consistency", where), lambda: template_consistency(preds))
        if rows.is_empty() or rows["n_groups"].sum() == 0:
            self.consistency.value = (
                "<span class='wb-muted wb-consistency'>Template sensitivity: no question is asked in two phrasings "
                "here (ask them in further templates with <code>wb.rephrase(probes)</code>, then score).</span>"
            )
            return
        labels = self._memo("labels", lambda: metrics.model_labels(self.session.predictions))
        shown = rows.join(labels, on=metrics.identity_keys(preds), nulls_equal=True)
        title = "<b class='wb-consistency'>Template sensitivity</b> (one pick in all phrasings of a question?)"
        columns = ["label", "probe", "n_groups", "n_questions", "consistency", "accuracy"]
        self.consistency.value = title + table(shown, columns)

    def fit_difficulty(self) -> Future:
        """Fit the difficulty model of the shown predictions on a background thread; draw its coefficients."""
        preds, generation = self.shown(), self._generation
        self.difficulty_note.value = "<span class='wb-muted'>fitting ...</span>"

        def fit() -> None:
            coefficients, why_not = difficulty.fit_models(preds)
            if generation != self._generation:
                return  # the toggles moved meanwhile
            if coefficients is None:
                self.difficulty_note.value = f"<span class='wb-muted wb-difficulty-note'>{escape(why_not)}</span>"
                return
            self.difficulty.chart = charts.coefficient_plot(coefficients)
            self.difficulty.layout.display = None
            readings_html = [
                f"<b>{markup.text(label)}</b>: " + "; ".join(escape(line) for line in difficulty.reading(part))
                for (label,), part in coefficients.group_by("label", maintain_order=True)
            ]
            self.difficulty_note.value = "<span class='wb-difficulty-note'>" + "<br>".join(readings_html) + "</span>"

        return self._pool.submit(fit)

    def _interval_note(self) -> str:
        return (
            "<span class='wb-muted wb-intervals-done'>bars: 95% percentile intervals from "
            f"{self.n_boot:,} bootstrap resamples of whole clusters</span>"
        )

    def _memo(self, key: Hashable, compute: Callable[[], pl.DataFrame] | None = None) -> pl.DataFrame | None:
        """The aggregate ``key`` of the current predictions, computed once (least recently used dropped)."""
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        if compute is None:
            return None
        value = compute()
        with self._lock:
            self._cache[key] = value
            while len(self._cache) > self.memo:
                self._cache.popitem(last=False)
        return value

    def _draw(
        self, chart: alt.JupyterChart, rows: pl.DataFrame, build: Callable[[], alt.TopLevelMixin], fresh: bool = False
    ) -> None:
        """Show ``rows`` in ``chart``: altair builds the chart once per set of model panels (and when ``fresh``:
        a new chart clears the heat map's clicks), later rows only replace its data."""
        key = (id(chart), tuple(rows["panel"].unique(maintain_order=True)))
        if fresh or key not in self._specs:
            chart.chart = build()
            if chart is self.heat:
                chart.selections.observe(self._drill, "cell")
            self._specs[key] = chart.spec
        chart.spec = with_rows(self._specs[key], rows)

    def _drill(self, _=None) -> None:
        preds = self.shown()
        if preds is None or preds.is_empty():
            return
        cells = [(item["row"], item["column"]) for item in self.heat.selections.cell.value]
        if cells:
            preds = questions_in_cells(preds, cells)
        labels = self._memo("labels", lambda: metrics.model_labels(self.session.predictions))
        where = "; ".join(f"{r} × {c}" for r, c in cells) or "all cells (click a heat-map cell to filter)"
        shown = first_questions(preds, self.max_rows, labels)
        self.drill.value = table(shown, ["label", "row", "column", "question", "gold", "pick", "correct"])
        self.drill_title.value = (  # after the table: a page that sees the new title sees its rows
            f"<b class='wb-drill-title'>{preds['id'].n_unique():,} questions in {escape(where)}</b>"
            f" <span class='wb-muted'>(first {self.max_rows:,}, most often wrong first)</span>"
        )


def _marks_note(cells: pl.DataFrame) -> str:
    """What the heat map's ``*`` means, when it compares models (empty with one model)."""
    compared = cells.filter(pl.col("p_holm").is_not_null())
    if compared.is_empty():
        return ""
    count = int(compared["significant"].sum())
    return (
        f"<span class='wb-muted wb-marks'>* differs from {markup.text(compared['reference'][0])} on the same questions "
        f"(exact McNemar per cell, Holm across cells, p &lt; 0.05): {count:,} of {compared.height:,} cells</span>"
    )
