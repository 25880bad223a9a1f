"""Ways of asking side by side: one model asked several ways (format, shots, chat template, scorer, rule), a heat
map each, and the paired difference between two of its ways.

Shown when the predictions hold a model asked more than one way (``analysis.ways.ways_of_asking``); the numbers
are ``analysis.ways.way_difference`` (``comparison.compare``: cluster bootstrap, McNemar, Holm), the charts
``charts.heatmap`` and ``charts.way_difference_heatmap``; this panel only wires them to the session's toggles.

    >>> WaysOfAsking(session).widget
"""

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from html import escape

import altair as alt
import ipywidgets as w
import polars as pl

from widgets.dashboard import EMBED, with_rows
from widgets.render import offer, readable_labels, table
from widgets.state import Session
from workbench import charts
from workbench.analysis.ways import way_difference, way_rows, ways_of_asking
from workbench.charts import Chart
from workbench.charts.offline import offline_charts
from workbench.probes.select import select
from workbench.schema import model_label
from workbench.views import heatmap_data, way_difference_points

_EMPTY = alt.Chart(alt.Data(values=[])).mark_point()
OVERALL = ["a", "b", "n", "accuracy_a", "accuracy_b", "diff", "diff_lo", "diff_hi", "cluster_diff", "p_mcnemar"]
"""The columns of the overall difference the panel lists under its chart."""


class WaysOfAsking:
    """The ways ``model`` was asked in ``session.predictions`` under ``session.where``: a heat map per way, and way
    B against way A per cell (B − A; ``n_boot`` paired cluster resamples for the intervals).

    The pickers answer at once; the charts and the comparison are computed on a background thread once the
    toggles have rested ``settle`` seconds (``panel.wait()`` blocks until drawn), each chart built by altair once
    per set of ways and fed new rows after, so that a toggle moved on the dashboard stays quick.

    >>> panel = WaysOfAsking(session); panel.a.value, panel.b.value = ways[0], ways[1]
    """

    def __init__(self, session: Session, n_boot: int = 1000, settle: float = 0.25) -> None:
        offline_charts()
        self.session, self.n_boot, self.settle = session, n_boot, settle
        self.model = w.Dropdown(description="model", options=[])
        self.a = w.Dropdown(description="way A", options=[], layout=w.Layout(width="95%"))
        self.b = w.Dropdown(description="way B", options=[], layout=w.Layout(width="95%"))
        self.note = w.HTML()
        self.heat = alt.JupyterChart(_EMPTY, embed_options=EMBED)
        self.difference = alt.JupyterChart(_EMPTY, embed_options=EMBED)
        self.heat.add_class("wb-ways-heatmap")
        self.difference.add_class("wb-ways-difference")
        self.overall = w.HTML()
        self.overall.add_class("wb-ways-overall")
        self.controls = w.VBox([self.model, self.a, self.b])
        self.widget = w.VBox(
            [w.HTML("<h3>Ways of asking</h3>"), self.note, self.controls, self.heat, self.difference, self.overall],
            layout=w.Layout(width="100%"),
        )
        self.widget.add_class("wb-ways")
        readable_labels(self.widget)
        self.ways: pl.DataFrame | None = None
        self._busy = [False]
        self._lock, self._generation = threading.Lock(), 0
        self._specs: dict[tuple, dict] = {}  # a chart's validated spec per set of ways drawn
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ways-of-asking")
        self.pending: Future | None = None
        session.observe(self._new_predictions, "predictions")
        session.observe(self.refresh, "where")
        self.model.observe(self._pick_model, "value")
        self.a.observe(self._compare, "value")
        self.b.observe(self._compare, "value")
        self.refresh()

    def _new_predictions(self, _=None) -> None:
        with self._lock:
            self._specs.clear()
        self.refresh()

    def shown(self) -> pl.DataFrame | None:
        """The predictions the toggles keep (None when none are loaded)."""
        preds = self.session.predictions
        return None if preds is None else select(preds, self.session.where)

    def refresh(self, _=None) -> None:
        """Offer the models asked several ways under the current toggles, keeping the picked model and ways."""
        preds = self.shown()
        self.ways = None if preds is None or preds.is_empty() else ways_of_asking(preds)
        if self.ways is None or self.ways.is_empty():
            self.note.value = (
                "<span class='wb-muted wb-ways-none'>Each model here was asked one way. Score one again another way "
                "(<code>workbench score ... --format letters --shots 5 --chat-template auto</code>, or the "
                "<code>generate</code> scorer) and load both files to see the ways side by side.</span>"
            )
            self._hide()
            return
        models = self.ways.select("model", "control").unique(maintain_order=True).iter_rows()
        options = [(model_label(m) + ("" if c == "none" else f" / {c}"), (m, c)) for m, c in models]
        kept = self.model.value if self.model.value in [value for _, value in options] else options[0][1]
        offer(self.model, options, kept, self._busy)
        self.controls.layout.display = None
        self._pick_model()

    def _pick_model(self, _=None) -> None:
        """Offer the picked model's ways as A and B (the first two unless those picked are still offered)."""
        if self._busy[0] or self.ways is None or self.model.value is None:
            return
        model, control = self.model.value
        mine = self.ways.filter((pl.col("model") == model) & (pl.col("control") == control))
        labels = mine["label"].to_list()
        a = self.a.value if self.a.value in labels else labels[0]
        b = self.b.value if self.b.value in labels and self.b.value != a else next(x for x in labels if x != a)
        offer(self.a, labels, a, self._busy)
        offer(self.b, labels, b, self._busy)
        counts = ", ".join(f"{label} ({n:,} questions)" for label, n in mine.select("label", "n").iter_rows())
        self.note.value = f"<span class='wb-ways-list'>{escape(counts)}</span>"
        self._compare()

    def _compare(self, _=None) -> None:
        """Draw the picked model's heat maps and way B against way A, on the background thread."""
        preds = self.shown()
        if self._busy[0] or preds is None or self.a.value is None or self.b.value is None:
            return
        with self._lock:
            self._generation += 1
            generation = self._generation
        self.overall.value = "<span class='wb-muted wb-ways-pending'>comparing the ways ...</span>"
        labels, a, b = list(self.a.options), self.a.value, self.b.value
        self.pending = self._pool.submit(self._draw, preds, labels, a, b, generation)

    def wait(self, timeout: float | None = None) -> None:
        """Block until the heat maps and the difference under way are drawn."""
        if self.pending is not None:
            self.pending.result(timeout)

    def _draw(self, preds: pl.DataFrame, labels: list[str], a: str, b: str, generation: int) -> None:
        """Background: a heat map per way, then B − A per cell and overall; drawn only if no newer pick came."""
        time.sleep(self.settle)  # a slider dragged across many values starts one computation, not many
        if generation != self._generation:
            return
        try:
            mine = pl.concat([way_rows(preds, label) for label in labels])
            cells = heatmap_data(mine)
            difference = way_difference(preds, a, b, n_boot=self.n_boot) if a != b else None
        except Exception as err:  # shown on the page, never raised into it
            self.overall.value = f"<span class='wb-wrong'>{escape(str(err))}</span>"
            return
        with self._lock:
            if generation != self._generation:
                return
            self._show(self.heat, ("heat", *labels), cells, lambda: charts.heatmap(mine))
            if difference is None:
                self.difference.layout.display = "none"
                self.overall.value = "<span class='wb-muted'>pick two different ways to compare</span>"
                return
            points = way_difference_points(difference)
            self._show(self.difference, ("difference", a, b), points, lambda: charts.way_difference_heatmap(difference))
            self.overall.value = (
                "<b>B − A overall</b> (paired on the questions both scored; 95% cluster-bootstrap interval; "
                "exact McNemar)" + table(difference.filter(pl.col("scope") == "overall"), OVERALL)
            )

    def _show(self, chart: alt.JupyterChart, key: tuple, rows: pl.DataFrame, build: Callable[[], Chart]) -> None:
        """Show ``rows`` in ``chart``, built by altair once per ``key`` (the ways drawn); later rows swap its data."""
        if key not in self._specs:
            chart.chart = build()
            self._specs[key] = chart.spec
        chart.spec = with_rows(self._specs[key], rows)
        chart.layout.display = None

    def _hide(self) -> None:
        with self._lock:
            self._generation += 1  # a drawing under way is for ways no longer shown
        self.controls.layout.display = self.heat.layout.display = self.difference.layout.display = "none"
        self.overall.value = ""
