"""Inoculation by fine-tuning (SPEC §6; Liu et al. 2019): runs that never lose work.

``inoculate`` continues training a source model on k probe examples for every configuration of a
grid (learning rate, epochs, seed), optionally mixing in original-task examples (add-some), and
scores each trained model on the probe dev set (``S_new``), the probe test set (``S_new_test``) and the
original task's aggregate dev set (``S_orig``: the union of the science dev sets given, made 5-way with
empty answers, R&S 2020 §4.2). Per k it selects ``M* = argmax AVG(S_new, S_orig)`` on dev and reports its
dev and test probe scores (Table 7's "Dev / Test") and the inoculation cost with the paper's sign,
``S_orig(M*) − S_orig(before)``: negative when the original task got worse (Table 7 prints −5.10).
Add-some mixes in original-task questions from a set held out from training and evaluation (the paper
reserves MCQL for it), never from the source model's training data.

A run is a folder, written only through ``workbench.io`` (atomic):

- ``config.json``: the resolved settings (``precision``, ``accumulate`` and, under ``machine``, ``device``,
  ``gradient_checkpointing``, ``keep_checkpoints``); a rerun with other fixed settings is refused, and a rerun
  that leaves a recorded setting out takes it from here;
- ``trials.parquet``: one row per finished trial (``TRIALS_SCHEMA``), rewritten after each trial;
  the row ``k=0`` (status ``baseline``) is the source model before inoculation;
- ``trials/<trial>/{probe,orig}.parquet``: that trial's dev predictions;
- ``best/k<k>/``: the checkpoint of the best trial so far for k (``trial.json`` names it); with
  ``keep_checkpoints="all"`` the others stay in ``trials/<trial>/model/``, with ``"none"`` no checkpoint is kept;
- ``log.txt``: what happened, including which trials a resumed run skipped;
- ``ray/``: Ray Tune's own state, with ``backend="ray"`` only.

Trials run through one function, ``workbench.inoculation.trial.run_trial``, in this process, on a
local process pool or on Ray Tune (``workbench.inoculation.backends``); only the calling process
writes ``trials.parquet`` and moves checkpoints. A killed run resumes where it stopped: finished
trials are read back and skipped; a full disk raises ``DiskFullError`` and loses nothing finished. Choices that are
made once for the whole run (which k probe examples, which original examples, which dev questions)
use ``data_seed``, so trial k=100 sees the first 100 of the same permutation that k=500 extends.

>>> plan = plan_inoculation("runs/src", "probes/hypernymy", "mcqa/arc_easy", ks=(100, 500), out="runs/inoc")
>>> run_inoculation(plan.filter(pl.col("k") == 100))  # doctest: +SKIP
"""

import contextlib
import dataclasses
import errno
import json
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.inoculation.backends import BACKENDS, TrialJob, run_local, run_ray
from workbench.inoculation.data import aggregate_dev, five_way, read_mcqa_dir
from workbench.inoculation.source import _Log
from workbench.inoculation.train import TrainSpec, check_multiple_choice, swap_in, training_device
from workbench.inoculation.trial import ADD_SOME, MAX_ADDED, Trial, TrialData, add_some_mix, trial_id
from workbench.io import check_output, exclusive, read_parquet, write_parquet, write_text
from workbench.probes.formats import read_probes
from workbench.probes.select import sample_clusters
from workbench.progress import ProgressBar
from workbench.scoring.gguf import dequantised, gguf_file
from workbench.specs import resolve_spec

__all__ = [
    "ADD_SOME",
    "MAX_ADDED",
    "TRIALS_SCHEMA",
    "DiskFullError",
    "add_some_mix",
    "InoculationPlan",
    "InoculationSpec",
    "best_trials",
    "inoculate",
    "load_run",
    "plan_inoculation",
    "run_inoculation",
    "summarize",
    "trial_id",
]
TRIALS_SCHEMA: dict[str, pl.DataType] = {
    "trial": pl.String(),  # k100-lr3e-05-ep1-s0-x1
    "k": pl.Int64(),  # probe training examples (0: the source model, not trained here)
    "lr": pl.Float64(),
    "epochs": pl.Int64(),
    "seed": pl.Int64(),
    "add_some": pl.String(),  # none, x1, x2
    "n_orig_added": pl.Int64(),  # original-task examples mixed in
    "S_new": pl.Float64(),  # probe dev accuracy
    "S_new_test": pl.Float64(),  # probe test accuracy (null when the probes have no test split)
    "S_orig": pl.Float64(),  # original-task aggregate dev accuracy
    "avg": pl.Float64(),  # (S_new + S_orig) / 2, what selection maximises
    "final_loss": pl.Float64(),
    "seconds": pl.Float64(),
    "status": pl.String(),  # baseline, ok, diverged
}
SUMMARY_SCHEMA: dict[str, pl.DataType] = {
    **{name: TRIALS_SCHEMA[name] for name in ("k", "trial", "lr", "epochs", "seed", "add_some", "S_new", "S_new_test",
                                              "S_orig", "avg")},
    "S_new_before": pl.Float64(), "S_new_test_before": pl.Float64(), "S_orig_before": pl.Float64(),
    "inoculation_cost": pl.Float64(),  # S_orig(M*) - S_orig(before), the paper's sign: negative = forgot
}  # fmt: skip


KEEP_CHECKPOINTS = ("best", "all", "none")
RECORDED_DEFAULTS = {"device": "auto", "precision": "float32", "accumulate": 1, "gradient_checkpointing": False,
                     "keep_checkpoints": "best"}  # fmt: skip
FIXED = ("precision", "accumulate")  # what is trained: a resume with other values is refused
MACHINE = ("device", "gradient_checkpointing", "keep_checkpoints")  # how and where: may change on resume
TRAINING = ("device", "precision", "accumulate", "gradient_checkpointing")  # passed on to TrainSpec


@dataclass(frozen=True)
class InoculationSpec:
    """The settings of an inoculation run: the grid, add-some, evaluation size, batching and backend.

    ``ks``, ``lrs``, ``epochs``, ``seeds``: the grid (a single number is a grid of one). ``add_some``: mix in
    ``x1`` or ``x2`` times k held-out original-task questions from ``add_some_dir`` (never an evaluation set).
    ``max_eval``: score at most this many questions of each evaluation set, sampled as whole clusters.
    ``data_seed``: which k probe examples, which original examples and which dev questions, fixed once per run.
    ``backend``, ``address``, ``workers``: see ``workbench.inoculation.backends`` (``"local"`` with 1 worker
    runs in this process; ``"ray"`` on Ray Tune); ``trial_gpus``, ``trial_cpus``: what each Ray trial requests
    (default: 1 GPU when the cluster has GPUs, else none; ``threads`` or 1 CPUs).

    Recorded in the run folder, and taken from it on resume when left as None (else the default in
    ``RECORDED_DEFAULTS``): ``device`` (``auto``: a GPU when there is one), ``precision`` (``float32``,
    ``bfloat16``, ``float16``), ``accumulate`` (micro-batches per optimizer step), ``gradient_checkpointing``,
    ``keep_checkpoints`` (``best``: only M* of each k, under ``best/k<k>/``; ``all``: also every other trial's, in
    ``trials/<trial>/model/``; ``none``). ``precision`` and ``accumulate`` change what is trained, so resuming with
    other values is refused; the other three say how and where, and may change on resume.

    >>> InoculationSpec(ks=(100, 500), lrs=3e-5, epochs=1).ks
    (100, 500)
    """

    ks: tuple[int, ...] = (100, 500, 1000, 3000)
    lrs: tuple[float, ...] = (1e-5, 3e-5)
    epochs: tuple[int, ...] = (1, 3)
    seeds: tuple[int, ...] = (0,)
    add_some: str | None = None
    add_some_dir: str | Path | None = None
    max_eval: int | None = None
    batch_size: int = 16
    max_length: int = 128
    data_seed: int = 0
    threads: int | None = None
    backend: str = "local"
    address: str | None = None
    workers: int = 1
    device: str | None = None
    precision: str | None = None
    accumulate: int | None = None
    gradient_checkpointing: bool | None = None
    keep_checkpoints: str | None = None
    trial_gpus: float | None = None
    trial_cpus: int | None = None

    def __post_init__(self) -> None:
        if self.add_some not in ADD_SOME:
            raise SpecError(f"add_some={self.add_some!r} is not allowed; choose one of {list(ADD_SOME)}")
        if self.backend not in BACKENDS:
            raise SpecError(f"backend={self.backend!r} is not allowed; choose one of {list(BACKENDS)}")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise SpecError(f"workers={self.workers!r} is out of range; use a whole number >= 1")
        for name in ("address", "trial_gpus", "trial_cpus"):
            if getattr(self, name) is not None and self.backend != "ray":
                raise SpecError(
                    f"{name}={getattr(self, name)!r} is only for backend='ray'; leave it out or choose backend='ray'"
                )
        gpus, cpus = self.trial_gpus, self.trial_cpus
        if gpus is not None and (isinstance(gpus, bool) or not isinstance(gpus, (int, float)) or gpus < 0):
            raise SpecError(f"trial_gpus={gpus!r} is out of range; use a number >= 0 (0.5: two trials per GPU)")
        if cpus is not None and (isinstance(cpus, bool) or not isinstance(cpus, int) or cpus < 1):
            raise SpecError(f"trial_cpus={cpus!r} is out of range; use a whole number >= 1")
        if self.keep_checkpoints not in (None, *KEEP_CHECKPOINTS):
            raise SpecError(
                f"keep_checkpoints={self.keep_checkpoints!r} is not allowed; choose one of {list(KEEP_CHECKPOINTS)}"
            )
        for name, kind in (("ks", int), ("lrs", float), ("epochs", int), ("seeds", int)):
            object.__setattr__(self, name, _grid(name, getattr(self, name), kind))
        if any(k < 1 for k in self.ks):
            raise SpecError(f"ks={list(self.ks)} must all be at least 1")
        training = {name: getattr(self, name) for name in TRAINING if getattr(self, name) is not None}
        for lr in self.lrs:  # every grid setting is validated before anything is written or loaded
            for epoch in self.epochs:
                TrainSpec(
                    lr=lr, epochs=epoch, batch_size=self.batch_size, max_length=self.max_length, threads=self.threads,
                    **training,
                )  # fmt: skip
        max_eval = self.max_eval
        if max_eval is not None and (isinstance(max_eval, bool) or not isinstance(max_eval, int) or max_eval < 1):
            raise SpecError(f"max_eval={max_eval!r} is out of range; use a whole number >= 1, or leave it out for all")

    def grid(self) -> list[Trial]:
        """The baseline (k=0) and every cell of the grid, in run order."""
        cells = [Trial(k, lr, ep, seed, self.add_some) for k in self.ks for lr in self.lrs for ep in self.epochs
                 for seed in self.seeds]  # fmt: skip
        return [Trial(0, add_some=self.add_some), *cells]


PLAN_SCHEMA: dict[str, pl.DataType] = {
    **{name: TRIALS_SCHEMA[name] for name in ("trial", "k", "lr", "epochs", "seed", "add_some")},
    "done": pl.Boolean(),  # finished in an earlier run of this folder: skipped
}


@dataclass(frozen=True, eq=False)
class InoculationPlan:
    """What ``run_inoculation`` will do: the run folder, its settings, the data every trial shares, and
    ``trials`` (``PLAN_SCHEMA``: one row per grid cell, ``done`` for those an earlier run finished).

    ``plan.filter(pl.col("k") <= 500)`` keeps some cells (the baseline always stays); the run folder
    stays resumable, so a later run of the full plan adds the rest.
    """

    out: Path
    spec: InoculationSpec
    config: dict
    data: TrialData
    trials: pl.DataFrame

    def filter(self, *predicates: pl.Expr) -> "InoculationPlan":
        """The plan with only the grid cells matching ``predicates`` (polars expressions over ``trials``)."""
        kept = self.trials.filter(pl.any_horizontal(pl.col("k") == 0, pl.all_horizontal(*predicates)))
        return dataclasses.replace(self, trials=kept)


def plan_inoculation(
    model_run: str | Path,
    probes: str | Path | Sequence[str | Path],
    orig: str | Path | Sequence[str | Path],
    spec: InoculationSpec | None = None,
    *,
    out: str | Path = "inoculation-run",
    **overrides,
) -> InoculationPlan:
    """Check every setting and input, read the data, and list the trials of an inoculation run into ``out``.

    Nothing is written and no model is loaded; ``run_inoculation(plan)`` runs it.

    Parameters
    ----------
    model_run, probes, orig, spec, out, **overrides
        As for ``inoculate``.

    Returns
    -------
    InoculationPlan
        ``plan.trials`` lists the grid (``PLAN_SCHEMA``); ``plan.filter(...)`` keeps some of it.

    Examples
    --------
    >>> plan = plan_inoculation("runs/src", "probes/hypernymy", "mcqa/arc_easy", ks=(100, 500), out="runs/inoc")
    >>> plan.trials.filter(~pl.col("done")).height  # doctest: +SKIP
    """
    spec = resolve_spec(InoculationSpec, spec, overrides)
    model = check_multiple_choice(_model_folder(model_run)).resolve()
    paths = [probes] if isinstance(probes, (str, Path)) else list(probes)
    frame = pl.concat([read_probes(p) for p in paths])
    probe_train, probe_dev = frame.filter(pl.col("split") == "train"), frame.filter(pl.col("split") == "dev")
    if probe_dev.is_empty():
        raise WorkbenchError(
            f"the probes {[str(p) for p in paths]} have no dev split; S_new is measured on it "
            "(split the probes with workbench probes)"
        )
    if max(spec.ks) > probe_train.height:
        raise WorkbenchError(
            f"k={max(spec.ks)} is larger than the probe train split ({probe_train.height} questions); "
            f"use k up to {probe_train.height} or give more probe training data"
        )
    probe_test = frame.filter(pl.col("split") == "test")
    orig_dirs = [orig] if isinstance(orig, (str, Path)) else list(orig)
    orig_dev = aggregate_dev(orig_dirs)
    orig_train = (
        _held_out(spec.add_some_dir, orig_dirs, _trained_on(model_run)) if spec.add_some else probe_train.clear()
    )
    needed = min(ADD_SOME[spec.add_some] * max(spec.ks), MAX_ADDED)
    if needed > orig_train.height:
        raise WorkbenchError(
            f"add_some={spec.add_some} needs {needed} held-out original questions for k={max(spec.ks)}, "
            f"but {spec.add_some_dir} has {orig_train.height}"
        )
    out = check_output(out, folder=True).resolve()
    spec = _settle(spec, out)
    config = {
        "model": str(model), "probes": sorted(str(p) for p in paths), "orig": sorted(str(p) for p in orig_dirs),
        "add_some": spec.add_some, "add_some_dir": None if spec.add_some_dir is None else str(spec.add_some_dir),
        "max_eval": spec.max_eval, "batch_size": spec.batch_size, "max_length": spec.max_length,
        "data_seed": spec.data_seed, **{name: getattr(spec, name) for name in FIXED},
        "grid": {"ks": list(spec.ks), "lrs": list(spec.lrs), "epochs": list(spec.epochs), "seeds": list(spec.seeds)},
        "machine": {name: getattr(spec, name) for name in MACHINE},
    }  # fmt: skip
    _check_config(out, config)
    seed, max_eval = spec.data_seed, spec.max_eval
    data = TrialData(
        model=str(model), out=str(out),
        probe_pool=probe_train.sample(fraction=1.0, seed=seed, shuffle=True),
        orig_pool=orig_train.sample(fraction=1.0, seed=seed, shuffle=True),
        probe_eval=sample_clusters(probe_dev, max_eval, seed), orig_eval=sample_clusters(orig_dev, max_eval, seed),
        probe_test=sample_clusters(probe_test, max_eval, seed),
        batch_size=spec.batch_size, max_length=spec.max_length, threads=spec.threads,
        keep_checkpoints=spec.keep_checkpoints, **{name: getattr(spec, name) for name in TRAINING},
    )  # fmt: skip
    done = set(load_run(out)["trial"]) if (out / "trials.parquet").is_file() else set()
    rows = [{"trial": t.name, "k": t.k, "lr": t.lr, "epochs": t.epochs, "seed": t.seed,
             "add_some": t.add_some or "none", "done": t.name in done} for t in spec.grid()]  # fmt: skip
    return InoculationPlan(out, spec, config, data, pl.DataFrame(rows, schema=PLAN_SCHEMA))


def run_inoculation(
    plan: InoculationPlan,
    *,
    progress: bool = True,
    on_trial: Callable[[dict], None] | None = None,
    stop: threading.Event | None = None,
) -> pl.DataFrame:
    """Run (or resume) the trials of ``plan`` into its folder; return the per-k summary (``summarize``).

    Parameters
    ----------
    plan : InoculationPlan
        From ``plan_inoculation`` (filtered or not).
    progress : bool
        Show a progress bar of trials.
    on_trial : callable, optional
        Called here with each recorded trial's row (the baseline too), e.g. to redraw a curve.
    stop : threading.Event, optional
        Once set, the run stops after the trial in progress (or sooner), stays resumable and returns the
        summary of what finished.

    Returns
    -------
    polars.DataFrame
        The per-k summary (``SUMMARY_SCHEMA``), as ``inoculate`` returns it.

    Examples
    --------
    >>> run_inoculation(plan.filter(pl.col("k") == 100))  # doctest: +SKIP
    """
    out, spec, data = plan.out, plan.spec, plan.data
    with exclusive(out):  # a second process writing this run folder would lose rows of trials.parquet
        _check_config(out, plan.config)
        trials = load_run(out) if (out / "trials.parquet").is_file() else pl.DataFrame(schema=TRIALS_SCHEMA)
        with _disk_full_is_clear(out, lambda: trials.height):
            write_text(json.dumps(plan.config, indent=2) + "\n", out / "config.json")
            log = _Log(out / "log.txt")
            done = set(trials["trial"].to_list())
            _remove_leftovers(out, done)
            grid = [Trial(row["k"], row["lr"], row["epochs"], row["seed"], spec.add_some)
                    for row in plan.trials.iter_rows(named=True)]  # fmt: skip
            todo = [trial for trial in grid if trial.name not in done]
            skipped = len([trial for trial in grid[1:] if trial.name in done])
            log(f"inoculate: {len(grid) - 1} trials in the plan, {skipped} already finished (skipped), "
                f"{len(grid) - 1 - skipped} to run ({spec.backend}, {spec.workers} worker(s)); "
                f"probe eval {data.probe_eval.height}, orig eval {data.orig_eval.height} questions; "
                + ", ".join(f"{name}={getattr(spec, name)}" for name in (*FIXED, *MACHINE)))  # fmt: skip
            if progress and skipped:
                ProgressBar.write(f"resuming {out}: skipping {skipped} finished trials")

            with ProgressBar(total=len(todo), desc="trials", unit="trial", disable=not progress) as bar:

                def record(result: dict) -> None:
                    nonlocal trials
                    row = {name: result.get(name) for name in TRIALS_SCHEMA}
                    _retain_checkpoint(out, row, trials, spec.keep_checkpoints)
                    trials = pl.concat([trials, pl.DataFrame([row], schema=TRIALS_SCHEMA)])
                    write_parquet(trials, out / "trials.parquet")
                    if row["status"] == "diverged":
                        log(f"{row['trial']}: {result.get('message', 'diverged')}")
                    else:
                        log(f"{row['trial']}: S_new={row['S_new']:.4f} S_orig={row['S_orig']:.4f} "
                            f"avg={row['avg']:.4f} ({row['seconds']:.0f}s)")  # fmt: skip
                    bar.update(1)
                    if on_trial is not None:
                        on_trial(row)

                if spec.backend == "ray":
                    run_ray(todo, TrialJob(data), record, str(out.resolve() / "ray"), workers=spec.workers,
                            stop=stop, address=spec.address, gpus=spec.trial_gpus, cpus=spec.trial_cpus,
                            threads=data.threads, device=data.device, log=log)  # fmt: skip
                else:
                    job = TrialJob(data, progress=progress and spec.workers == 1)
                    run_local(todo, job, record, workers=spec.workers, stop=stop)
            left = len([trial for trial in grid if trial.name not in set(trials["trial"].to_list())])
            if left:
                log(f"stopped by the caller with {left} trial(s) left; rerun the same command to resume")
        if trials.filter(pl.col("status") == "baseline").is_empty():
            return pl.DataFrame(schema=SUMMARY_SCHEMA)
        return summarize(trials)


def inoculate(
    model_run: str | Path,
    probes: str | Path | Sequence[str | Path],
    orig: str | Path | Sequence[str | Path],
    spec: InoculationSpec | None = None,
    *,
    out: str | Path = "inoculation-run",
    progress: bool = True,
    on_trial: Callable[[dict], None] | None = None,
    stop: threading.Event | None = None,
    **overrides,
) -> pl.DataFrame:
    """Inoculate a source model: fine-tune it on k probe examples over a grid, resumably, into ``out``.

    ``run_inoculation(plan_inoculation(...))``: plan first to inspect or filter the trials.

    Parameters
    ----------
    model_run : str or Path
        A ``train-source`` run folder (its ``model/``) or a model folder with a multiple-choice head.
    probes : path or list of paths
        Probe file(s) or folder(s) read by ``read_probes``, with train and dev splits (and test).
    orig : path or list of paths
        The original task's folder(s); S_orig is measured on the union of their ``dev.jsonl``, 5-way.
    spec : InoculationSpec, optional
        The grid and settings; ``overrides`` replace single fields (``ks=(100, 500)``, ``seeds=(0, 1)``, ...).
    out : str or Path
        The run folder; a rerun with the same settings resumes it, with other fixed settings is refused.
    progress, on_trial, stop
        See ``run_inoculation``.

    Returns
    -------
    polars.DataFrame
        Per k: the selected trial M* (best AVG(S_new, S_orig) on dev), its S_new on dev and test, S_orig, the
        same before inoculation, and ``inoculation_cost`` = S_orig(M*) − S_orig(before) (``SUMMARY_SCHEMA``).

    Examples
    --------
    >>> summary = inoculate("runs/src", "probes/hypernymy", "mcqa/arc_easy", ks=(100, 500), out="runs/inoc")
    >>> learning_curve(load_run("runs/inoc"))  # doctest: +SKIP
    """
    plan = plan_inoculation(model_run, probes, orig, spec, out=out, **overrides)
    return run_inoculation(plan, progress=progress, on_trial=on_trial, stop=stop)


def _trained_on(model_run: str | Path) -> list[str]:
    """The science QA folders a train-source run trained its model on (its config.json's ``data``; none for a bare
    model folder, whose training the workbench cannot know)."""
    config = Path(model_run) / "config.json"
    if not (Path(model_run) / "model" / "config.json").is_file() or not config.is_file():
        return []
    return list(_recorded(Path(model_run)).get("data", []))


def _held_out(folder: str | Path | None, orig_dirs: list[str | Path], trained_on: list[str]) -> pl.DataFrame:
    """Add-some's pool: every question of ``folder``, 5-way; never an evaluation folder nor one the source model
    was trained on (``trained_on``, from the source run's config)."""
    if folder is None:
        raise SpecError(
            "add-some mixes in original-task questions held out from training and evaluation (R&S 2020 §4.2 reserve "
            "MCQL for it); pass add_some_dir=FOLDER (--add-some-data FOLDER), "
            "a science QA set the source model never saw"
        )
    if Path(folder).resolve() in {Path(p).resolve() for p in orig_dirs}:
        raise SpecError(
            f"add_some_dir={str(folder)!r} is also an evaluation set (orig); hold out a different science QA folder"
        )
    if Path(folder).resolve() in {Path(p).resolve() for p in trained_on}:
        raise SpecError(
            f"add_some_dir={str(folder)!r} is data the source model was trained on (its run's config.json lists it); "
            "add-some needs original-task questions the model never saw: hold out a different science QA folder"
        )
    return five_way(read_mcqa_dir(folder))


class DiskFullError(WorkbenchError):
    """The disk holding a run filled up; finished trials are kept and the run resumes once there is space."""


@contextlib.contextmanager
def _disk_full_is_clear(out: Path, finished: Callable[[], int]) -> Iterator[None]:
    try:
        yield
    except OSError as err:
        if err.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise DiskFullError(
            f"the disk holding {out} is full ({err.strerror or err}); the {finished()} finished trial(s) are safe in "
            f"{out / 'trials.parquet'}; free some space and rerun the same command to resume"
        ) from err


def _retain_checkpoint(out: Path, row: dict, trials: pl.DataFrame, keep: str = "best") -> None:
    """Keep a finished trial's checkpoint as ``keep`` says, before its row is recorded (``trials``: those before it).

    ``best``: move it to ``best/k<k>`` if it beats the best AVG so far for its k (the one it displaces is deleted),
    else delete it; ``all``: the same, but a displaced or beaten checkpoint stays in ``trials/<trial>/model``;
    ``none``: delete it (``run_trial`` writes none then). Every move is a rename, so a run killed in between keeps
    either checkpoint, and a resume compares against ``trials.parquet``, never against what is on disk.
    """
    checkpoint = out / "trials" / row["trial"] / "model"
    if row["status"] != "ok" or not checkpoint.is_dir():
        return
    if keep == "none":
        shutil.rmtree(checkpoint, ignore_errors=True)
        return
    chosen = {
        name: row[name]
        for name in ("trial", "k", "lr", "epochs", "seed", "add_some", "n_orig_added", "S_new", "S_orig", "avg")
    }
    write_text(json.dumps(chosen, indent=2) + "\n", checkpoint / "trial.json")
    best = trials.filter((pl.col("k") == row["k"]) & (pl.col("status") == "ok"))["avg"].max()
    if best is not None and row["avg"] <= best:
        if keep == "best":
            shutil.rmtree(checkpoint, ignore_errors=True)
        return
    target = out / "best" / f"k{row['k']}"
    if keep == "all" and (target / "trial.json").is_file():
        displaced = json.loads((target / "trial.json").read_text(encoding="utf-8"))["trial"]
        home = out / "trials" / displaced / "model"
        if not home.exists():
            target.rename(home)  # back to its own trial folder; the new best takes its place below
    swap_in(checkpoint, target)


def _remove_leftovers(out: Path, done: set[str]) -> None:
    """Checkpoints of trials that were never recorded (a killed run) and half-written temporary folders."""
    for folder in (out / "trials").glob("*/model"):
        if folder.parent.name not in done:
            shutil.rmtree(folder, ignore_errors=True)
    for folder in [*(out / "trials").glob("*/.model.*-*"), *(out / "best").glob(".k*.*-*")]:
        shutil.rmtree(folder, ignore_errors=True)


def load_run(path: str | Path) -> pl.DataFrame:
    """The tidy results of an inoculation run: one row per finished trial.

    Parameters
    ----------
    path : str or Path
        The run folder (``inoculate``'s ``out``).

    Returns
    -------
    polars.DataFrame
        ``TRIALS_SCHEMA``: trial, k, lr, epochs, seed, add_some, S_new, S_new_test, S_orig, avg, status, ...

    Examples
    --------
    >>> summarize(load_run("runs/inoc"))  # doctest: +SKIP
    """
    path = Path(path)
    file = path / "trials.parquet"
    if not file.is_file():
        raise WorkbenchError(
            f"{path} is not an inoculation run (no trials.parquet); give the --out folder of `workbench inoculate`"
        )
    frame = read_parquet(file)  # a running job rewrites it: one read of its bytes
    if "S_new_test" not in frame.columns:  # a run folder from before test scores were recorded
        frame = frame.with_columns(S_new_test=pl.lit(None, pl.Float64))
    missing = [c for c in TRIALS_SCHEMA if c not in frame.columns]
    if missing:
        raise WorkbenchError(f"{file} lacks the columns {missing}; it was not written by this version of inoculate")
    return frame.select(pl.col(c).cast(t) for c, t in TRIALS_SCHEMA.items())


def best_trials(trials: pl.DataFrame) -> pl.DataFrame:
    """Per k > 0, the trial M* with the highest AVG(S_new, S_orig) among finished (status ok) ones.

    Ties go to the smaller learning rate, then fewer epochs, then the smaller seed.
    """
    ok = trials.filter(pl.col("status") == "ok")
    return (
        ok.sort(["k", "avg", "lr", "epochs", "seed"], descending=[False, True, False, False, False])
        .group_by("k", maintain_order=True)
        .first()
    )


def summarize(trials: pl.DataFrame) -> pl.DataFrame:
    """Per k: M* (selected on dev), its S_new on dev and test, S_orig, and the inoculation cost.

    ``inoculation_cost`` = S_orig(M*) − S_orig(before), R&S 2020 Table 7's sign: negative when inoculation
    made the original task worse.
    """
    base = trials.filter(pl.col("status") == "baseline")
    if base.is_empty():
        raise WorkbenchError("the run has no baseline row (k=0); rerun inoculate to measure the source model first")
    before = base.row(0, named=True)
    return best_trials(trials).select(
        "k", "trial", "lr", "epochs", "seed", "add_some", "S_new", "S_new_test", "S_orig", "avg",
        S_new_before=pl.lit(before["S_new"]), S_new_test_before=pl.lit(before["S_new_test"], pl.Float64),
        S_orig_before=pl.lit(before["S_orig"]), inoculation_cost=pl.col("S_orig") - pl.lit(before["S_orig"]),
    )  # fmt: skip


def stage_predictions(path: str | Path, which: str = "probe") -> pl.DataFrame:
    """The dev predictions of a run per inoculation stage, for the Figure 3 heat map (one panel per stage).

    Stage k = 0 is the source model; each k > 0 is its selected trial M*. ``which``: ``probe`` (S_new's
    questions) or ``orig`` (the original task's). Rows carry ``k_examples``, which the charts and
    metrics treat as the stage.

    >>> charts.heatmap(stage_predictions("runs/inoc"))  # doctest: +SKIP
    """
    from workbench.io import read_predictions

    if which not in ("probe", "orig"):
        raise SpecError(f"which={which!r} is not allowed; choose 'probe' or 'orig'")
    path = Path(path)
    trials = load_run(path)
    stages = pl.concat(
        [trials.filter(pl.col("status") == "baseline").select("k", "trial"), best_trials(trials).select("k", "trial")]
    )
    return pl.concat(
        read_predictions(path / "trials" / trial / f"{which}.parquet").with_columns(k_examples=pl.lit(k, pl.Int64))
        for k, trial in stages.iter_rows()
    )


def _grid(name: str, values: Sequence, kind: type) -> tuple:
    values = tuple(values) if not isinstance(values, (int, float)) else (values,)
    if not values:
        raise SpecError(f"{name} is empty; give at least one value")
    bad = [
        v
        for v in values
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (kind is int and int(v) != v) or v < 0
    ]
    if bad:
        raise SpecError(f"{name} has values {bad} that are not {'whole ' if kind is int else ''}non-negative numbers")
    return tuple(dict.fromkeys(kind(v) for v in values))


def _model_folder(model_run: str | Path) -> Path:
    path = Path(model_run)
    if gguf_file(path) is not None:  # a causal LM as a .gguf file: its weights dequantised once in the workspace
        return dequantised(gguf_file(path))
    if (path / "model" / "config.json").is_file():
        return path / "model"
    if (path / "config.json").is_file() and not (path / "trials.parquet").is_file():
        return path
    raise WorkbenchError(
        f"{path} is neither a train-source run (with model/) nor a model folder; run `workbench train-source` first"
    )


def _recorded(out: Path) -> dict:
    """The settings ``out``'s config.json records (empty for a new folder)."""
    file = out / "config.json"
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}


def _settle(spec: InoculationSpec, out: Path) -> InoculationSpec:
    """``spec`` with every recorded setting left as None taken from ``out`` (a resume), else its default.

    Run folders from before a setting was recorded resume with its default. With the local backend the device
    and precision are checked here, before anything is written; a Ray trial checks them on its worker.
    """
    old = _recorded(out)
    recorded = {**{name: old[name] for name in FIXED if name in old}, **old.get("machine", {})}
    settled = {
        name: recorded.get(name, default) for name, default in RECORDED_DEFAULTS.items() if getattr(spec, name) is None
    }
    spec = dataclasses.replace(spec, **settled)
    if spec.backend == "local":
        try:
            training_device(TrainSpec(device=spec.device, precision=spec.precision))
        except SpecError as err:
            if "device" not in settled or not old:
                raise
            raise SpecError(
                f"{out} was run with device={spec.device!r}, which this machine lacks ({err}); "
                "pass device= (--device) to resume it here"
            ) from err
    return spec


def _check_config(out: Path, config: dict) -> None:
    """Refuse to resume ``out`` with different fixed settings (the grid may grow; the machine settings may change).

    A setting the folder does not record (written before it existed) counts as its default."""
    file = out / "config.json"
    if not file.is_file():
        return
    old = {**{name: RECORDED_DEFAULTS[name] for name in FIXED}, **json.loads(file.read_text(encoding="utf-8"))}
    changed = [key for key in config if key not in ("grid", "machine") and old.get(key) != config[key]]
    if changed:
        raise WorkbenchError(
            f"{out} holds a run with other settings "
            f"({', '.join(f'{k}: {old.get(k)!r} -> {config[k]!r}' for k in changed)}); "
            "give a new --out folder, or the same settings to resume"
        )
