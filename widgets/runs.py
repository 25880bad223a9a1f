"""Learning curves of the inoculation runs already in the workspace, with an optional control run beside them.

Reads only run folders under ``<workspace>/runs`` (``trials.parquet`` and ``config.json``); draws
``workbench.charts.curves.inoculation_curves`` (probe solid, original task dashed, the human line of the
run's probe when known) and the per-k summary (M*, its dev and test probe scores, the inoculation cost).
"""

import json
from html import escape
from pathlib import Path

import altair as alt
import ipywidgets as w

from widgets.dashboard import EMBED
from widgets.files import run_folders
from widgets.render import readable_labels, table
from widgets.state import Session
from workbench import markup
from workbench.charts.curves import HUMAN_ACCURACY, inoculation_curves
from workbench.charts.offline import offline_charts
from workbench.inoculation import learning_curve
from workbench.paths import workspace


def run_probe(folder: Path) -> str | None:
    """The probe a run was inoculated on (the name of its probe folder), when its config says."""
    try:
        probes = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("probes") or []
    except (OSError, ValueError):
        return None
    return Path(probes[0]).name if len(probes) == 1 else None


class RunCurves:
    """Pick a past run (and optionally a control run): its learning curve and per-k summary.

    Choosing a run also sets ``session.run_dir``; ``refresh()`` re-reads the workspace's run folders.
    ``launcher_above``: the page has an inoculation launcher above this panel (the empty state points to it).

    >>> curves = RunCurves(session); curves.run.value = str(home / "runs/inoculation/run-1")
    """

    def __init__(self, session: Session, home: Path | None = None, launcher_above: bool = False) -> None:
        offline_charts()
        self.session, self.home, self.launcher_above = session, home or workspace(), launcher_above
        self.run = w.Dropdown(description="run")
        self.control = w.Dropdown(description="control run")
        self.chart = alt.JupyterChart(alt.Chart(alt.Data(values=[])).mark_line(), embed_options=EMBED)
        self.chart.add_class("wb-run-curve")
        self.chart.layout.display = "none"
        self.message = w.HTML()
        self.summary = w.HTML()
        self.widget = w.VBox(
            [
                w.HTML("<h3>Learning curves of past runs</h3>"),
                w.HBox([self.run, self.control]),
                self.message,
                self.chart,
                self.summary,
            ],
            layout=w.Layout(width="100%"),
        )
        self.widget.add_class("wb-runs")
        readable_labels(self.widget)
        self.run.observe(self._draw, "value")
        self.control.observe(self._draw, "value")
        self.refresh()

    def refresh(self, _=None) -> None:
        """Offer the run folders now in the workspace (the newest kept chosen if still there)."""
        runs = [(str(folder.relative_to(self.home)), str(folder)) for folder in run_folders(self.home)]
        chosen = self.run.value
        self.run.options = runs
        self.control.options = [("none", "")] + runs
        if runs and chosen not in {value for _, value in runs}:
            self.run.value = runs[-1][1]
        self._draw()

    def _draw(self, _=None) -> None:
        if not self.run.value:
            self.message.value = (
                "<i class='wb-no-runs'>No inoculation runs in the workspace yet: "
                + (
                    "start one above"
                    if self.launcher_above
                    else "start one in the inoculation app (<code>workbench serve inoculation</code>)"
                )
                + " or with <code>workbench inoculate ... --out $WORKBENCH_HOME/runs/NAME</code>.</i>"
            )
            self.chart.layout.display, self.summary.value = "none", ""
            return
        from workbench.inoculation import load_run, summarize  # here, not above: they import torch, which a
        # dashboard kernel needs only once the workspace holds a run

        folder = Path(self.run.value)
        self.session.run_dir = str(folder)
        try:
            trials = load_run(folder)
            curve = learning_curve(trials)
            control = learning_curve(load_run(self.control.value)) if self.control.value else None
            summary = summarize(trials)
        except Exception as err:  # a half-written or foreign folder is reported, never raised into the page
            self.message.value = f"<span class='wb-wrong'>{escape(folder.name)}: {escape(str(err))}</span>"
            self.chart.layout.display, self.summary.value = "none", ""
            return
        probe = run_probe(folder)
        self.chart.chart = inoculation_curves(
            curve, control=control, human=HUMAN_ACCURACY.get(probe or ""), title=folder.name
        )
        self.chart.layout.display = None
        self.message.value = (
            f"<span class='wb-run-name'>{markup.text(folder.name)}</span>: {trials.height:,} trials"
            + (f" on {escape(probe)}" if probe else "")
        )
        self.summary.value = (
            "<b>per k: the trial M* selected on dev, its probe score on dev and test, and the inoculation cost "
            "(S_orig after − before: negative = the original task got worse)</b>" + table(summary)
        )
