"""Where long work runs: in this process, on a local process pool, or on Ray Tune. Inoculation trials and sweep
units share this layer: a *job* is a picklable callable ``job(item, threads=None, stop=None) -> dict`` that does
one item's work (writing its own files) and returns its row; a backend only executes items.

Every backend gets the items still to run and a ``record(row)`` callback, and calls ``record`` in the
calling process once per finished item: only that process writes the run's table (``trials.parquet``,
a sweep's summary) and moves checkpoints, so the output folder stays consistent whatever the workers do.

- ``local``, ``workers=1``: items run one after another in this process (``stop`` is passed to the job, which
  may stop between steps by raising ``Cancelled``);
- ``local``, ``workers>1``: a ``concurrent.futures`` process pool (spawned processes, each job given
  ``default_threads() // workers`` torch threads unless ``threads`` is set); ``stop`` cancels the items not
  started and waits for the running ones, which are recorded;
- ``ray``: Ray Tune runs each item as a function trainable with the resources of ``trial_resources``
  (``cpus``, default ``threads`` or 1, and ``gpus``, default 1 when the cluster has GPUs, else 0: one item
  per GPU), at most ``workers`` at once; ``address`` is passed to ``ray.init`` (None: a local Ray,
  ``"auto"``: the cluster this machine belongs to, ``"ray://head:10001"``: a remote cluster through Ray
  Client). Tune's own state goes to ``storage``; the output folder must be on storage every node sees (jobs
  write their files into it). What moves between nodes is the job (with what it carries: the plan's rows, the
  shared data) and each item's returned row; models and prediction files are read and written on the shared
  storage, never shipped. ``stop`` ends all items at once; unfinished ones rerun on resume.

>>> run_local(todo, TrialJob(data), record, workers=2)  # doctest: +SKIP
"""

import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from threading import Event
from typing import Any, Protocol

from workbench.errors import WorkbenchError
from workbench.inoculation.train import Cancelled
from workbench.inoculation.trial import Trial, TrialData, run_trial
from workbench.scoring.models import default_threads

BACKENDS = ("local", "ray")
Record = Callable[[dict], None]


class Job(Protocol):
    """One item's work, run by any backend: picklable, returns the item's row."""

    def __call__(self, item: Any, threads: int | None = None, stop: Event | None = None) -> dict: ...


@dataclass(frozen=True)
class TrialJob:
    """Inoculation's job: ``run_trial`` on the run's shared ``data`` (``threads`` fills in ``data.threads``)."""

    data: TrialData
    progress: bool = False

    def __call__(self, trial: Trial, threads: int | None = None, stop: Event | None = None) -> dict:
        data = replace(self.data, threads=self.data.threads or threads)
        return run_trial(trial, data, progress=self.progress, stop=stop)


def run_local(
    items: Sequence,
    job: Job,
    record: Record,
    workers: int = 1,
    stop: Event | None = None,
    threads: int | None = None,
) -> None:
    """Run ``job`` on each of ``items`` here (``workers=1``) or on a pool of ``workers`` processes, recording each
    row as it finishes."""
    if workers == 1:
        for item in items:
            if stop is not None and stop.is_set():
                return
            try:
                row = job(item, threads=threads, stop=stop)
            except Cancelled:
                return
            record(row)
        return
    threads = threads or max(1, default_threads() // workers)
    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker, initargs=(job,)
    )
    pending = {pool.submit(_pool_item, item, threads): item for item in items}
    finished = False
    try:
        while pending:
            done, _ = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in done:
                pending.pop(future)
                record(future.result())
            if stop is not None and stop.is_set():
                pending = {future: item for future, item in pending.items() if not future.cancel()}
        finished = True
    finally:
        pool.shutdown(wait=finished, cancel_futures=True)


_WORKER_JOB: Job | None = None


def _init_worker(job: Job) -> None:
    global _WORKER_JOB
    _WORKER_JOB = job


def _pool_item(item: Any, threads: int) -> dict:
    return _WORKER_JOB(item, threads=threads)


def run_ray(
    items: Sequence,
    job: Job,
    record: Record,
    storage: str,
    workers: int = 1,
    stop: Event | None = None,
    address: str | None = None,
    gpus: float | None = None,
    cpus: int | None = None,
    threads: int | None = None,
    device: str | None = None,
    log: Callable[[str], None] | None = None,
) -> None:
    """Run ``job`` on each of ``items`` as Ray Tune trials, recording each row in this process.

    Each item requests ``trial_resources(gpus, cpus, threads, cluster)``; ``log`` hears what was requested. Tune
    keeps its state under ``storage``. A Ray started here (no ``ray.init`` before, ``address`` None) keeps running
    for the next run; ``ray.shutdown()`` frees it."""
    if not items:
        return
    try:
        import ray
        from ray import tune
    except ImportError as err:
        raise WorkbenchError(
            'backend="ray" needs Ray Tune; install the extra with pip install "probe-workbench[ray]" '
            '(or pip install "ray[tune]")'
        ) from err

    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        except (ConnectionError, ValueError, RuntimeError) as err:
            raise WorkbenchError(
                f"cannot reach a Ray cluster at address={address!r} ({err}); "
                "start one with `ray start --head` or leave --address out for a local Ray"
            ) from err
    resources = trial_resources(gpus, cpus, threads, ray.cluster_resources())
    if resources["gpu"] == 0 and device not in (None, "auto", "cpu"):
        raise WorkbenchError(
            f"device={device!r} needs a GPU, but each Ray trial requests none; "
            "request some with trial_gpus (--trial-gpus 1) or use device='auto'"
        )
    if log is not None:
        log(f"ray: each trial requests {resources}, at most {workers} at once; cluster {ray.cluster_resources()}")
    token = f"{os.getpid()}-{time.monotonic_ns()}"
    _LIVE[token] = _Live(record, stop)  # Tune pickles its callbacks and stopper: they hold only this token
    tuner = tune.Tuner(
        tune.with_resources(
            tune.with_parameters(_tune_item, job=job, items=list(items), threads=threads or resources["cpu"]),
            resources,
        ),
        param_space={"item": tune.grid_search(list(range(len(items))))},
        tune_config=tune.TuneConfig(max_concurrent_trials=workers, reuse_actors=False),
        run_config=tune.RunConfig(
            name=f"tune-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}",
            storage_path=str(storage),
            callbacks=[_recorder_class(tune)(token)], stop=_stopper_class(tune)(token), verbose=0,
            failure_config=tune.FailureConfig(max_failures=0),
        ),
    )  # fmt: skip
    try:
        results = tuner.fit()
    finally:
        live = _LIVE.pop(token)
    if live.error is not None:
        raise live.error
    failed = [result.error for result in results if result.error is not None]
    if failed and not (stop is not None and stop.is_set()):
        raise WorkbenchError(
            f"{len(failed)} trial(s) failed on Ray; the first: {str(failed[0]).strip().splitlines()[-1]}"
        )


def trial_resources(gpus: float | None, cpus: int | None, threads: int | None, cluster: dict) -> dict:
    """What one Ray trial requests: ``{"cpu": c, "gpu": g}``.

    ``cpus`` (default: ``threads``, else 1) and ``gpus`` (default: 1 when ``cluster``, ``ray.cluster_resources()``,
    has a GPU, else 0; a fraction shares a GPU between trials). A request no node of the cluster can meet would
    leave Tune waiting for ever, so more than the cluster holds is a ``WorkbenchError``.
    """
    request = {"cpu": cpus or threads or 1, "gpu": gpus if gpus is not None else (1 if cluster.get("GPU", 0) else 0)}
    for name, key in (("cpu", "CPU"), ("gpu", "GPU")):
        have = cluster.get(key, 0)
        if request[name] > have:
            raise WorkbenchError(
                f"each Ray trial requests {request[name]} {name.upper()}(s), but the cluster has {have:g}; "
                f"ask for fewer (--trial-{name}s) or add nodes with {key}s"
            )
    return request


def _tune_item(config: dict, job: Job, items: list, threads: int) -> None:
    from ray import tune

    try:
        row = job(items[config["item"]], threads=threads)
    except OSError as err:  # a full disk on the shared storage: the driver raises it
        row = {"os_errno": err.errno, "os_error": str(err)}
    tune.report(row)


class _Live:
    """What Tune's callback and stopper reach through their token: the recorder, the caller's stop, the first error."""

    def __init__(self, record: Record, stop: Event | None) -> None:
        self.record, self.stop, self.error = record, stop, None

    def stopped(self) -> bool:
        return self.error is not None or (self.stop is not None and self.stop.is_set())


_LIVE: dict[str, _Live] = {}


def _recorder_class(tune):
    class Recorder(tune.Callback):
        """Records each trial's row in the driver as soon as Tune reports it; keeps the first error for the driver."""

        def __init__(self, token: str) -> None:
            self.token = token

        def on_trial_result(self, iteration, trials, trial, result, **info) -> None:
            live = _LIVE[self.token]
            if live.error is not None:
                return
            if "os_errno" in result:
                live.error = OSError(result["os_errno"], result["os_error"])
                return
            try:
                live.record(result)
            except BaseException as err:  # Tune would only log it
                live.error = err

    return Recorder


def _stopper_class(tune):
    class Stop(tune.stopper.Stopper):
        """Ends every trial once the caller's ``stop`` is set or recording failed."""

        def __init__(self, token: str) -> None:
            self.token = token

        def __call__(self, trial_id, result) -> bool:
            return False

        def stop_all(self) -> bool:
            return _LIVE[self.token].stopped()

    return Stop
