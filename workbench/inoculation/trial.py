"""One inoculation trial: the single function every backend runs (in-process, process pool, Ray Tune).

``run_trial(trial, data)`` trains a fresh copy of the source model on one grid cell's training set
(k probe examples, plus original examples for add-some), scores the probe and original dev sets, and
writes into the run folder (which every worker must see: a local disk, or shared storage on a cluster):

- ``trials/<trial>/probe.parquet`` and ``orig.parquet``: the dev predictions;
- ``trials/<trial>/model/``: the trained checkpoint (status ``ok`` only; none with ``keep_checkpoints="none"``).

It returns the trial's ``TRIALS_SCHEMA`` row and records nothing itself: the calling process
appends the row to ``trials.parquet`` and keeps the checkpoint only if the trial is the best so far
for its k (``workbench.inoculation.runs``), so a trial killed half-way leaves nothing that counts.
The cell ``k=0`` is the baseline: the source model scored without training.

>>> row = run_trial(Trial(k=100, lr=3e-5, epochs=1, seed=0), data)  # doctest: +SKIP
>>> row["S_new"], row["S_orig"]  # doctest: +SKIP
(0.41, 0.47)
"""

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from workbench.inoculation.train import (
    TrainingError,
    TrainSpec,
    accuracy,
    fit,
    load_for_training,
    save_model,
    score_frame,
)
from workbench.io import write_parquet
from workbench.scoring.models import check_device, torch_threads

ADD_SOME = {None: 0, "x1": 1, "x2": 2}
MAX_ADDED = 3000  # add-some never adds more than this many original examples (SPEC §6: "up to 3k")


@dataclass(frozen=True)
class Trial:
    """One grid cell: k probe examples (0: the baseline), learning rate, epochs, seed, add-some mode."""

    k: int
    lr: float = 0.0
    epochs: int = 0
    seed: int = 0
    add_some: str | None = None

    @property
    def name(self) -> str:
        """Stable across runs: ``k100-lr3e-05-ep1-s0-none`` (``baseline`` for k=0)."""
        return "baseline" if self.k == 0 else trial_id(self.k, self.lr, self.epochs, self.seed, self.add_some)

    @property
    def n_orig_added(self) -> int:
        return min(ADD_SOME[self.add_some] * self.k, MAX_ADDED)


@dataclass(frozen=True, eq=False)
class TrialData:
    """What every trial of a run shares: the model folder, the run folder, the seeded data pools and
    dev samples (fixed once per run by ``data_seed``), and the training settings that are not gridded
    (``device`` is resolved where the trial runs: ``auto`` on a Ray GPU worker is that worker's GPU)."""

    model: str
    out: str
    probe_pool: pl.DataFrame
    orig_pool: pl.DataFrame
    probe_eval: pl.DataFrame
    orig_eval: pl.DataFrame
    probe_test: pl.DataFrame
    batch_size: int = 16
    max_length: int = 128
    threads: int | None = None
    device: str = "auto"
    precision: str = "float32"
    accumulate: int = 1
    gradient_checkpointing: bool = False
    keep_checkpoints: str = "best"


def trial_id(k: int, lr: float, epochs: int, seed: int, add_some: str | None) -> str:
    """The name of one grid cell, stable across runs: ``k100-lr3e-05-ep1-s0-none``."""
    return f"k{k}-lr{lr:g}-ep{epochs}-s{seed}-{add_some or 'none'}"


def add_some_mix(probe_train: pl.DataFrame, orig_pool: pl.DataFrame, n_orig: int, seed: int = 0) -> pl.DataFrame:
    """The probe examples plus the first ``n_orig`` of ``orig_pool``, shuffled together (``seed``)."""
    from workbench.errors import WorkbenchError

    if n_orig == 0:
        return probe_train
    added = orig_pool.head(n_orig)
    if added.height < n_orig:
        raise WorkbenchError(f"add-some needs {n_orig} original training questions, only {added.height} are there")
    return pl.concat([probe_train, added.select(probe_train.columns)]).sample(fraction=1.0, seed=seed, shuffle=True)


def run_trial(trial: Trial, data: TrialData, progress: bool = False, stop: threading.Event | None = None) -> dict:
    """Train and evaluate one grid cell; write its predictions (and checkpoint) under ``data.out``; return its row.

    A diverged trial (non-finite loss) returns status ``diverged`` with no scores. ``stop`` (in-process
    runs only) abandons training with ``Cancelled``. ``OSError`` (a full disk) propagates to the caller.
    """
    folder = Path(data.out) / "trials" / trial.name
    row = {"trial": trial.name, "k": trial.k, "lr": trial.lr, "epochs": trial.epochs, "seed": trial.seed,
           "add_some": trial.add_some or "none", "n_orig_added": trial.n_orig_added if trial.k else 0}  # fmt: skip
    started = time.time()
    network, tokenizer = load_for_training(data.model, seed=trial.seed)
    network.to(check_device(data.device))  # the baseline is scored on the device too
    final_loss, status = None, "baseline"
    if trial.k:
        spec = TrainSpec(
            lr=trial.lr, epochs=trial.epochs, seed=trial.seed, batch_size=data.batch_size, max_length=data.max_length,
            threads=data.threads, device=data.device, precision=data.precision, accumulate=data.accumulate,
            gradient_checkpointing=data.gradient_checkpointing,
        )  # fmt: skip
        train = add_some_mix(data.probe_pool.head(trial.k), data.orig_pool, trial.n_orig_added, seed=trial.seed)
        try:
            history = fit(network, tokenizer, train, spec, progress=progress, desc=trial.name, stop=stop)
        except TrainingError as err:
            return {**row, "S_new": None, "S_new_test": None, "S_orig": None, "avg": None, "final_loss": None,
                    "seconds": time.time() - started, "status": "diverged", "message": str(err)}  # fmt: skip
        final_loss, status = history["loss"][-1], "ok"
    with torch_threads(data.threads):
        probe_pred = score_frame(network, tokenizer, data.probe_eval, data.max_length, trial.name, progress)
        orig_pred = score_frame(network, tokenizer, data.orig_eval, data.max_length, trial.name, progress)
        test_pred = (
            score_frame(network, tokenizer, data.probe_test, data.max_length, trial.name, progress)
            if data.probe_test.height
            else None
        )
    write_parquet(probe_pred, folder / "probe.parquet")
    if test_pred is not None:
        write_parquet(test_pred, folder / "probe_test.parquet")
    write_parquet(orig_pred, folder / "orig.parquet")
    if status == "ok" and data.keep_checkpoints != "none":
        save_model(network, tokenizer, folder / "model")
    s_new, s_orig = accuracy(probe_pred), accuracy(orig_pred)
    s_new_test = accuracy(test_pred) if test_pred is not None else None
    return {**row, "S_new": s_new, "S_new_test": s_new_test, "S_orig": s_orig, "avg": (s_new + s_orig) / 2,
            "final_loss": final_loss, "seconds": time.time() - started, "status": status}  # fmt: skip
