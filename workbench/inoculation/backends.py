"""Where trials run: in this process, on a local process pool, or on Ray Tune, always through ``run_trial``.

Every backend gets the trials still to run and a ``record(row)`` callback, and calls ``record`` in the
calling process once per finished trial: only that process writes ``trials.parquet`` and moves
checkpoints, so the run folder stays consistent whatever the workers do.

- ``local``, ``workers=1``: trials run one after another in this process (``stop`` also interrupts
  training between steps);
- ``local``, ``workers>1``: a ``concurrent.futures`` process pool (spawned processes, each with
  ``cores // workers`` torch threads unless ``threads`` is set); ``stop`` cancels the trials not
  started and waits for the running ones, which are recorded;
- ``ray``: Ray Tune runs each trial as a function trainable with ``threads`` (default 1) CPUs, at most
  ``workers`` at once; ``address`` is passed to ``ray.init`` (None: a local Ray, ``"auto"``: the cluster
  this machine belongs to, ``"ray://head:10001"``: a remote cluster through Ray Client). Tune's own
  state goes to ``<run>/ray``; the run folder must be on storage every node sees (trials write their
  predictions and checkpoint into it). ``stop`` ends all trials at once; unfinished ones rerun on resume.

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


def run_local(trials: Sequence[Trial], data: TrialData, record: Record, workers: int = 1, stop: Event | None = None, progress: bool = True) -> None:
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
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker, initargs=(data,))
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
    trials: Sequence[Trial], data: TrialData, record: Record, workers: int = 1, stop: Event | None = None, address: str | None = None
) -> None:
    """Run ``trials`` as Ray Tune trials (same ``run_trial``), recording each row in this process."""
    try:
        import ray
        from ray import tune
    except ImportError as err:
        raise WorkbenchError('backend="ray" needs Ray Tune; install it with pip install "ray[tune]"') from err

    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        except (ConnectionError, ValueError, RuntimeError) as err:
            raise WorkbenchError(f"cannot reach a Ray cluster at address={address!r} ({err}); start one with `ray start --head` or leave --address out for a local Ray") from err
    cpus = data.threads or 1
    data = replace(data, threads=cpus)
    halt = Event()  # set when recording in this process fails: every trial stops
    recorder = _recorder_class(tune)(record, halt)
    tuner = tune.Tuner(
        tune.with_resources(tune.with_parameters(_tune_trial, data=data), {"cpu": cpus}),
        param_space={"trial": tune.grid_search([asdict(trial) for trial in trials])},
        tune_config=tune.TuneConfig(max_concurrent_trials=workers, reuse_actors=False),
        run_config=tune.RunConfig(
            name=f"tune-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}", storage_path=str(Path(data.out).resolve() / "ray"),
            callbacks=[recorder], stop=_stopper_class(tune)(stop, halt), verbose=0, failure_config=tune.FailureConfig(max_failures=0),
        ),
    )  # fmt: skip
    results = tuner.fit()
    if recorder.error is not None:
        raise recorder.error
    failed = [result.error for result in results if result.error is not None]
    if failed and not (stop is not None and stop.is_set()):
        raise WorkbenchError(f"{len(failed)} trial(s) failed on Ray; the first: {str(failed[0]).strip().splitlines()[-1]}")


def _tune_trial(config: dict, data: TrialData) -> None:
    from ray import tune

    try:
        row = run_trial(Trial(**config["trial"]), data, progress=False)
    except OSError as err:  # a full disk on the shared storage: the driver raises it
        row = {"os_errno": err.errno, "os_error": str(err)}
    tune.report(row)


def _recorder_class(tune):
    class Recorder(tune.Callback):
        """Records each trial's row in the driver as soon as Tune reports it."""

        def __init__(self, record: Record, halt: Event) -> None:
            self.record, self.halt, self.error = record, halt, None

        def on_trial_result(self, iteration, trials, trial, result, **info) -> None:
            if self.error is not None:
                return
            if "os_errno" in result:
                self.error = OSError(result["os_errno"], result["os_error"])
            else:
                try:
                    self.record(result)
                except BaseException as err:  # keep it for the driver: Tune would only log it
                    self.error = err
            if self.error is not None:
                self.halt.set()

    return Recorder


def _stopper_class(tune):
    class Stop(tune.stopper.Stopper):
        """Ends every trial once the caller's ``stop`` event or ``halt`` (a recording failed) is set."""

        def __init__(self, event: Event | None, halt: Event) -> None:
            self.event, self.halt = event, halt

        def __call__(self, trial_id, result) -> bool:
            return False

        def stop_all(self) -> bool:
            return self.halt.is_set() or (self.event is not None and self.event.is_set())

    return Stop
