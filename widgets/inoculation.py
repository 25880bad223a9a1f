"""Inoculation launcher: choose a source model, a probe, the grid; start, watch the learning curve grow, cancel.

The run goes on in a background thread (``workbench.inoculation.inoculate`` with ``on_trial`` and
``stop``), so the page stays responsive; every finished trial redraws the curve and the table. The run
folder lands under ``<workspace>/runs/inoculation/<name>`` and resumes if started again.
"""

import threading
from html import escape
from pathlib import Path

import altair as alt
import ipywidgets as w
import polars as pl

from widgets.dashboard import EMBED
from widgets.files import mcqa_folders, model_folders, probe_folders, safe_child
from widgets.render import readable_labels, table
from widgets.state import Session
from workbench.charts.curves import inoculation_curves
from workbench.charts.offline import offline_charts
from workbench.errors import SpecError
from workbench.inoculation import inoculate, learning_curve, load_run
from workbench.paths import workspace


def parse_numbers(text: str, kind: type, name: str) -> tuple:
    """Comma-separated numbers typed in a box, read with ``int``/``float`` only (nothing is evaluated).

    >>> parse_numbers("100, 500", int, "k values")
    (100, 500)
    """
    try:
        values = tuple(kind(part) for part in text.replace(" ", "").split(",") if part)
    except ValueError:
        raise SpecError(
            f"{name}={text!r} is not a list of {kind.__name__} numbers; "
            f"write e.g. {'100,500' if kind is int else '1e-5,3e-5'}"
        ) from None
    if not values:
        raise SpecError(f"{name} is empty; give at least one number")
    return values


MISSING = {  # what the launcher needs, the dropdown that offers it, and how to get it
    "a source model (<code>workbench train-source ... --out $WORKBENCH_HOME/runs/NAME</code>)": "model",
    "a probe set (<code>workbench probes build ... --out $WORKBENCH_HOME/probes/NAME</code>)": "probe",
    "a science QA set (<code>$WORKBENCH_HOME/mcqa/NAME/dev.jsonl</code>)": "orig",
}


class InoculationLauncher:
    """Start an inoculation run from the workspace's models, probes and science QA sets; watch; cancel.

    >>> launcher = InoculationLauncher(session); launcher.start.click(); launcher.cancel.click()
    """

    def __init__(self, session: Session, home: Path | None = None, max_length: int = 128, batch_size: int = 16) -> None:
        offline_charts()
        self.session, self.home = session, home or workspace()
        self.max_length, self.batch_size = max_length, batch_size
        relative = lambda paths: [(str(p.relative_to(self.home)), str(p)) for p in paths]  # noqa: E731
        self.model = w.Dropdown(options=relative(model_folders(self.home)), description="source model")
        self.probe = w.Dropdown(options=relative(probe_folders(self.home)), description="probe")
        self.orig = w.Dropdown(options=relative(mcqa_folders(self.home)), description="original task")
        self.ks = w.Text("100,500", description="k values")
        self.lrs = w.Text("1e-5,3e-5", description="learning rates")
        self.epochs = w.Text("1", description="epochs")
        self.seeds = w.Text("0", description="seeds")
        self.add_some = w.Dropdown(options=[("none", ""), ("x1", "x1"), ("x2", "x2")], value="", description="add-some")
        self.add_some_data = w.Dropdown(
            options=[("(none)", "")] + relative(mcqa_folders(self.home)),
            value="",
            description="add-some from (held out)",
        )
        self.max_eval = w.BoundedIntText(200, min=1, max=100_000, description="dev questions")
        self.name = w.Text(fresh_name(self.home / "runs" / "inoculation"), description="run name")
        self.start = w.Button(description="Start", icon="play", button_style="primary")
        self.cancel = w.Button(description="Cancel", icon="stop", disabled=True)
        self.progress = w.IntProgress(value=0, min=0, max=1, description="trials")
        self.progress.add_class("wb-progress")
        self.status = w.HTML()
        self.curve = alt.JupyterChart(alt.Chart(alt.Data(values=[])).mark_line(), embed_options=EMBED)
        self.curve.add_class("wb-learning-curve")
        self.curve.layout.display = "none"  # until the first trial has a curve to draw
        self.trials = w.HTML()
        self.widget = w.VBox(
            [
                w.HTML("<h3>Inoculation</h3>"),
                w.HBox([w.VBox([self.model, self.probe, self.orig, self.add_some, self.add_some_data, self.name]),
                        w.VBox([self.ks, self.lrs, self.epochs, self.seeds, self.max_eval])]),
                w.HBox([self.start, self.cancel, self.progress]), self.status, self.curve, self.trials,
            ],
            layout=w.Layout(width="100%"),
        )  # fmt: skip
        self.widget.add_class("wb-inoculation")
        readable_labels(self.widget)
        self.thread: threading.Thread | None = None
        self.stop = threading.Event()
        self.start.on_click(self._start)
        self.cancel.on_click(self._cancel)
        self.refresh_inputs()

    def refresh_inputs(self, _=None) -> None:
        """Read the workspace's source models, probe sets and science QA sets again (e.g. after training one)."""
        relative = lambda paths: [(str(p.relative_to(self.home)), str(p)) for p in paths]  # noqa: E731
        for choice, found in ((self.model, model_folders), (self.probe, probe_folders), (self.orig, mcqa_folders)):
            chosen, choice.options = choice.value, relative(found(self.home))
            if chosen in {value for _, value in choice.options}:
                choice.value = chosen
        missing = [what for what, choice in MISSING.items() if not getattr(self, choice).options]
        running = self.thread is not None and self.thread.is_alive()
        self.start.disabled = bool(missing) or running
        if missing:
            self.status.value = (
                "<b class='wb-missing'>Missing</b>: " + "; ".join(escape(what) for what in missing) + "."
            )
        elif "wb-missing" in self.status.value:
            self.status.value = ""

    def _start(self, _=None) -> None:
        try:
            grid = {
                "ks": parse_numbers(self.ks.value, int, "k values"),
                "lrs": parse_numbers(self.lrs.value, float, "learning rates"),
                "epochs": parse_numbers(self.epochs.value, int, "epochs"),
                "seeds": parse_numbers(self.seeds.value, int, "seeds"),
            }  # fmt: skip
            out = safe_child(self.home / "runs" / "inoculation", self.name.value)
        except Exception as err:  # shown to the visitor
            self.status.value = f"<span class='wb-wrong'>{escape(str(err))}</span>"
            return
        self.out, self.stop = out, threading.Event()
        self.progress.max = 1 + len(grid["ks"]) * len(grid["lrs"]) * len(grid["epochs"]) * len(grid["seeds"])
        self.progress.value = 0
        self.start.disabled, self.cancel.disabled = True, False
        self.status.value = f"running into <code>{escape(str(out))}</code> ..."
        self.session.run_dir = str(out)
        args = (self.model.value, self.probe.value, self.orig.value)
        self.thread = threading.Thread(target=self._run, args=(args, grid), daemon=True, name="inoculation")
        self.thread.start()

    def _run(self, args: tuple, grid: dict) -> None:
        try:
            summary = inoculate(
                *args, **grid, add_some=self.add_some.value or None, add_some_dir=self.add_some_data.value or None,
                out=self.out, max_eval=self.max_eval.value,
                max_length=self.max_length, batch_size=self.batch_size, progress=False, on_trial=self._trial,
                stop=self.stop,
            )  # fmt: skip
            word = "cancelled (resumable)" if self.stop.is_set() else "finished"
            done = f"<span class='wb-run-done'>{escape(word)}</span>: <code>{escape(str(self.out))}</code>"
            said = done + table(summary)
        except Exception as err:  # a failed run is reported on the page, never raised into it
            said = f"<span class='wb-wrong'>the run stopped: {escape(str(err))}</span>"
        self.start.disabled, self.cancel.disabled = False, True
        self.name.value = fresh_name(self.home / "runs" / "inoculation")
        self.status.value = said  # last: whoever reads "finished" finds Start enabled again

    def _trial(self, row: dict) -> None:
        """Called by ``inoculate`` after each trial: advance the bar, redraw curve and table."""
        self.progress.value = min(self.progress.value + 1, self.progress.max)
        trials = load_run(self.out)
        self.trials.value = table(
            trials.select("trial", "k", "lr", "epochs", "seed", "S_new", "S_orig", "avg", "status")
        )
        if trials.filter(pl.col("status") == "ok").height:
            self.curve.chart = inoculation_curves(learning_curve(trials), title=self.name.value)
            self.curve.layout.display = None

    def _cancel(self, _=None) -> None:
        self.stop.set()
        self.cancel.disabled = True
        self.status.value = "stopping after the trial in progress ..."


def fresh_name(folder: Path, prefix: str = "run") -> str:
    """The first ``run-N`` that names no run folder yet, so a second run never lands in the first one's folder."""
    number = 1
    while (folder / f"{prefix}-{number}").exists():
        number += 1
    return f"{prefix}-{number}"
