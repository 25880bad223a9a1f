"""The bench's one runner: a case is data (what to call, with which settings, against which baseline), a run calls
it ``repeats`` times, and each run becomes one record, a JSON line in ``bench/records/<case>.jsonl`` holding the
machine, the commit and whether the tree was dirty, every round's rows and their medians. ``render.py`` draws
bench/README.md's tables from these records only.

A measurement is a function returning rows: ``[{"measure": "label", "seconds": 1.2, ...}, ...]``, one round. Where a
case names a ``baseline`` row, each round's rows get a ``ratio`` (their ``ratio_of`` figure over the baseline's in
that same round) before the medians are taken, so a ratio never mixes rounds run under different loads.
"""

import dataclasses
import datetime
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RECORDS = BENCH / "records"
SHARED = ROOT.parent / "shared"
COSTS = ("seconds", "minutes", "hours")


@dataclasses.dataclass(frozen=True)
class Case:
    """One measurement declared as data. ``measure`` is ``"module:function"`` of a bench/ module; ``params`` are its
    keyword arguments; ``cost`` says how long a run takes here (``hours`` cases are not run on a shared machine);
    ``device`` is ``"gpu"`` where the figures mean something only on a GPU; ``needs`` names what a machine must have
    (``"chromium"``, ``"lm-eval"``, ``"minicons"``, ``"llama-server"``, ``"inspect-ai"``, ``"released data"``);
    ``shown``: how many of its latest records bench/README.md draws, newest last (the suite's three clean runs)."""

    name: str
    title: str
    measure: str
    params: dict = dataclasses.field(default_factory=dict)
    repeats: int = 1
    baseline: str | None = None
    ratio_of: tuple[str, ...] = ("seconds",)
    cost: str = "minutes"
    device: str = "cpu"
    needs: tuple[str, ...] = ()
    shown: int = 1

    def __post_init__(self) -> None:
        if ":" not in self.measure:
            raise ValueError(f"case {self.name}: measure={self.measure!r} is not 'module:function'")
        if self.cost not in COSTS:
            raise ValueError(f"case {self.name}: cost={self.cost!r} is not one of {COSTS}")
        if self.device not in ("cpu", "gpu"):
            raise ValueError(f"case {self.name}: device={self.device!r} is not 'cpu' or 'gpu'")
        if self.repeats < 1:
            raise ValueError(f"case {self.name}: repeats={self.repeats} is below 1")

    def command(self) -> str:
        """The command that makes this case's record."""
        return f"python bench/run.py {self.name}"


def function(reference: str) -> Callable:
    """The function ``"module:function"`` names, its module imported from bench/."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def in_child(reference: str, *args: str, tree: Path = ROOT) -> dict:
    """Call ``reference`` with string ``args`` in a fresh interpreter (nothing warm in it), importing the workbench of
    ``tree`` (this one, or a checkout of another commit); its JSON result, with ``process_s``, the child's wall time,
    interpreter start included."""
    env = {**os.environ, "BENCH_TREE": str(tree), "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, str(BENCH / "run.py"), "--child", reference, *args], capture_output=True,
                          text=True, cwd=tree, env=env)  # fmt: skip
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"child {reference} {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return {**report, "process_s": wall} if isinstance(report, dict) else report


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (the platform's name elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def gpu() -> str | None:
    """The GPUs ``nvidia-smi`` lists (name and memory), or None without one."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    return "; ".join(done.stdout.strip().splitlines()) if done.returncode == 0 and done.stdout.strip() else None


def machine() -> dict:
    """The machine a run ran on: cores (usable and present), memory, CPU model, GPU, Python and library versions,
    the load average at the start (the machine may be shared: the load says how much) and the run's niceness."""
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return {
        "cpu": cpu_model(),
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cores_present": os.cpu_count(),
        "memory_gib": round(pages / 2**30, 1),
        "gpu": gpu(),
        "python": platform.python_version(),
        "torch": version("torch"),
        "transformers": version("transformers"),
        "polars": version("polars"),
        "load_start": [round(value, 2) for value in os.getloadavg()],
        "nice": os.nice(0),  # a run under `nice -n 10` yields the shared cores to others: its figures are upper bounds
    }


def commit() -> dict:
    """The commit the run measured and the tracked files that differed from it (records and README aside)."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT)
        return done.stdout if done.returncode == 0 else ""

    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/records", ":!bench/README.md")
    dirty = sorted(line[3:] for line in changed.splitlines())  # "XY path": two status letters, a space, the path
    return {"commit": git("rev-parse", "--short=12", "HEAD").strip() or None, "dirty": dirty}


def with_ratios(rows: list[dict], case: Case) -> list[dict]:
    """One round's rows, each with its ratio to the case's baseline row of the same round, for each ``ratio_of``."""
    if case.baseline is None:
        return rows
    base = next((row for row in rows if row.get("measure") == case.baseline), None)
    out = [dict(row) for row in rows]
    for name in case.ratio_of:
        if base is None or not base.get(name):
            raise ValueError(f"case {case.name}: no row {case.baseline!r} with a {name!r} to divide by")
        column = "ratio" if len(case.ratio_of) == 1 else f"{name} ratio"
        for row in out:
            if isinstance(row.get(name), (int, float)):
                row[column] = row[name] / base[name]
    return out


def medians(rounds: list[list[dict]]) -> list[dict]:
    """The rows of the first round, each number the median of that row's numbers over the rounds (rows matched by
    position and ``measure``); anything not a number is the first round's."""
    out = []
    for index, first in enumerate(rounds[0]):
        same = [run[index] for run in rounds if index < len(run) and run[index].get("measure") == first.get("measure")]
        row = {}
        for key, value in first.items():
            numbers = [other[key] for other in same if isinstance(other.get(key), (int, float))
                       and not isinstance(other.get(key), bool)]  # fmt: skip
            row[key] = statistics.median(numbers) if numbers and not isinstance(value, bool) else value
        out.append(row)
    return out


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run(case: Case, repeats: int | None = None, params: dict | None = None, records: Path = RECORDS) -> dict:
    """Run ``case`` (``repeats`` rounds, ``params`` over its own) and append its record to ``records``."""
    settings = {**case.params, **(params or {})}
    options = ([f"--repeats {repeats}"] if repeats else []) + [f"--set {key}={json.dumps(value)}"
                                                               for key, value in (params or {}).items()]  # fmt: skip
    record = {"case": case.name, "started": now(), "command": " ".join([case.command(), *options]), **commit(),
              "machine": machine(), "params": settings}  # fmt: skip
    measure = function(case.measure)
    rounds = []
    start = time.perf_counter()
    for _ in range(repeats or case.repeats):
        rounds.append(with_ratios(measure(**settings), case))
    record.update(seconds=round(time.perf_counter() - start, 1), load_end=[round(v, 2) for v in os.getloadavg()],
                  repeats=len(rounds), baseline=case.baseline, rows=medians(rounds), rounds=rounds)  # fmt: skip
    append(record, records / f"{case.name}.jsonl")
    return record


def append(record: dict, path: Path) -> None:
    """Add one line to a records file, the whole file replaced in one rename (a crash leaves the old one)."""
    sys.path.insert(0, str(ROOT))
    from workbench.io import write_text

    old = path.read_text(encoding="utf-8") if path.exists() else ""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(old + json.dumps(record, default=str) + "\n", path)


def read_records(path: Path) -> list[dict]:
    """Every record of one case's file, oldest first."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
