"""Where trials run: in this process, on a local process pool, or on Ray Tune, always through ``run_trial``.

Every backend gets the trials still to run and a ``record(row)`` callback, and calls ``record`` in the
calling process once per finished trial: only that process writes ``trials.parquet`` and moves
checkpoints, so the run folder stays consistent whatever the workers do.

- ``local``, ``workers=1``: trials run one after another in this process (``stop`` also interrupts
  training between steps);
- ``local``, ``workers>1``: a ``concurrent.futures`` process pool (spawned processes, each with
  ``cores // workers`` torch threads unless ``threads`` is set); ``stop`` cancels the trials not
  started and waits for the running ones, which are recorded;
- ``ray``: Ray Tune runs each trial as a function trainable with the resources of ``trial_resources``
  (``cpus``, default ``threads`` or 1, and ``gpus``, default 1 when the cluster has GPUs, else 0: one trial
  per GPU), at most ``workers`` at once; ``address`` is passed to ``ray.init`` (None: a local Ray,
  ``"auto"``: the cluster this machine belongs to, ``"ray://head:10001"``: a remote cluster through Ray
  Client). Tune's own state goes to ``<run>/ray``; the run folder must be on storage every node sees (trials
  write their predictions and checkpoint into it). ``stop`` ends all trials at once; unfinished ones rerun on
  resume.

>>> run_local(todo, data, record, workers=2)  # doctest: +SKIP
"""

import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, replace
from pathlib import Path
from threading import Event

from workbench.errors import WorkbenchError
from workbench.inoculation.train import Cancelled
from workbench.inoculation.trial import Trial, TrialData, run_trial

BACKENDS = ("local", "ray")
Record = Callable[[dict], None]


def run_local(
    trials: Sequence[Trial],
    data: TrialData,
    record: Record,
    workers: int = 1,
    stop: Event | None = None,
    progress: bool = True,
) -> None:
    """Run ``trials`` here (``workers=1``) or on a pool of ``workers`` processes, recording each row as it finishes."""
    if workers == 1:
        for trial in trials:
            if stop is not None and stop.is_set():
                return
            try:
                row = run_trial(trial, data, progress=progress, stop=stop)
            except Cancelled:
                return
            record(row)
        return
    cores = len(os.sched_getaffinity(0))
    data = replace(data, threads=data.threads or max(1, cores // workers))
    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker, initargs=(data,)
    )
    pending = {pool.submit(_pool_trial, trial): trial for trial in trials}
    finished = False
    try:
        while pending:
            done, _ = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in done:
                pending.pop(future)
                record(future.result())
            if stop is not None and stop.is_set():
                pending = {future: trial for future, trial in pending.items() if not future.cancel()}
        finished = True
    finally:
        pool.shutdown(wait=finished, cancel_futures=True)


_WORKER_DATA: TrialData | None = None


def _init_worker(data: TrialData) -> None:
    global _WORKER_DATA
    _WORKER_DATA = data


def _pool_trial(trial: Trial) -> dict:
    return run_trial(trial, _WORKER_DATA, progress=False)


def run_ray(
    trials: Sequence[Trial],
    data: TrialData,
    record: Record,
    workers: int = 1,
    stop: Event | None = None,
    address: str | None = None,
    gpus: float | None = None,
    cpus: int | None = None,
    log: Callable[[str], None] | None = None,
) -> None:
    """Run ``trials`` as Ray Tune trials (same ``run_trial``), recording each row in this process.

    Each trial requests ``trial_resources(gpus, cpus, data.threads, cluster)``; ``log`` hears what was requested.
    A Ray started here (no ``ray.init`` before, ``address`` None) keeps running for the next run;
    ``ray.shutdown()`` frees it."""
    if not trials:
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
    resources = trial_resources(gpus, cpus, data.threads, ray.cluster_resources())
    if resources["gpu"] == 0 and data.device != "auto" and data.device != "cpu":
        raise WorkbenchError(
            f"device={data.device!r} needs a GPU, but each Ray trial requests none; "
            "request some with trial_gpus (--trial-gpus 1) or use device='auto'"
        )
    if log is not None:
        log(f"ray: each trial requests {resources}, at most {workers} at once; cluster {ray.cluster_resources()}")
    data = replace(data, threads=data.threads or resources["cpu"])
    token = f"{os.getpid()}-{time.monotonic_ns()}"
    _LIVE[token] = _Live(record, stop)  # Tune pickles its callbacks and stopper: they hold only this token
    tuner = tune.Tuner(
        tune.with_resources(tune.with_parameters(_tune_trial, data=data), resources),
        param_space={"trial": tune.grid_search([asdict(trial) for trial in trials])},
        tune_config=tune.TuneConfig(max_concurrent_trials=workers, reuse_actors=False),
        run_config=tune.RunConfig(
            name=f"tune-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}",
            storage_path=str(Path(data.out).resolve() / "ray"),
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


def _tune_trial(config: dict, data: TrialData) -> None:
    from ray import tune

    try:
        row = run_trial(Trial(**config["trial"]), data, progress=False)
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
