"""The suite on a clean clone, as CI runs it: ``git clone`` of this commit into a temporary folder (``../shared``
linked beside it, as beside this checkout), then ``CI=true bash .ci/run`` (the README's test command: the set-up,
ruff, ``workbench data setup``, then pytest on ``make test``'s workers) with every test's duration printed.

Rows: the whole command and its pytest part (wall seconds, and the tests passed, skipped and failed: the counts say
nothing was dropped), the share of the machine's CPU time that was busy while it ran (from ``/proc/stat``: a share
near 1 means the cores, not waits, bound the run), the README blocks its README test ran, then each test module's
summed durations (setup, call and teardown), longest first: where the time goes. With ``cpu`` (case ``suite-cpu``)
the modules are ranked by the CPU seconds their tests took instead (``suite_cpu.py``: in the worker and in the
commands, kernels, servers and browsers the test started and reaped), with the total: on 2 cores the run is bound by
CPU, so these say what a shorter run must cut. With ``processes`` (case ``suite-processes``, implies ``cpu``) a census
of the Python processes the tests started (``process_census.py``: kernels, ``workbench`` commands, servers, others;
their CPU and how many imported torch), beside the CPU of a bare start of each kind measured in the same run: what the
tests would take if no process paid its start. Run it on a quiet machine (the figures are the run's wall time on the
cores it had): ``python bench/run.py suite``; the run's whole output is left in ``$TMPDIR/bench-suite.log``.
"""

import json
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from bench_explore import clean_environment, clone

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = re.compile(r"=+ (?P<counts>.*?) in (?P<seconds>[0-9.]+)s")
DURATION = re.compile(r"^(?P<seconds>[0-9.]+)s (?:call|setup|teardown)\s+(?P<module>tests/\S+?\.py)::", re.M)
README_BLOCK = re.compile(r"^```bash\n", re.M)
LOG = Path(tempfile.gettempdir()) / "bench-suite.log"
STARTS = {
    "command": "import workbench.cli, polars",
    "model command": "import workbench.cli, polars, accelerate; from transformers import AutoModel, AutoTokenizer",
    "kernel": "from workbench.startup import skip_iri_grammar; skip_iri_grammar(); "
    "import ipykernel.kernelapp, ipywidgets, altair",
}
"""What a bare process of each kind imports before its work (``python -c CODE`` in the clone's environment)."""


def clean_clone(top: int = 25, cpu: bool = False, processes: bool = False) -> list[dict]:
    """One clean-clone run of ``.ci/run``: its totals, then the ``top`` longest test modules. ``cpu``: each test's
    CPU seconds too (``suite_cpu.py``), and the modules ranked by them. ``processes``: the census of the tests'
    Python processes as well (``process_census.py``), after the modules."""
    cpu = cpu or processes
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as scratch:
        folder = clone(Path(scratch) / "clone")
        if (ROOT.parent / "shared").is_dir():  # the released data and science QA sets, beside the clone as here
            (Path(scratch) / "shared").symlink_to(ROOT.parent / "shared", target_is_directory=True)
        env = {**clean_environment(None), "CI": "true", "PYTEST_ADDOPTS": "--durations=0"}
        if cpu:  # the plugin alone on the path (bench/'s other modules would shadow names the tests import)
            plugins, lines = Path(scratch) / "plugins", Path(scratch) / "cpu"
            plugins.mkdir(), lines.mkdir()
            shutil.copy(Path(__file__).with_name("suite_cpu.py"), plugins)
            env.update(PYTHONPATH=str(plugins), SUITE_CPU_OUT=str(lines), PYTEST_ADDOPTS="--durations=0 -p suite_cpu")
        if processes:  # every Python process of the run loads it at start
            census = Path(scratch) / "census"
            census.mkdir()
            shutil.copy(Path(__file__).with_name("process_census.py"), plugins / "sitecustomize.py")
            env["SUITE_PROCESSES_OUT"] = str(census)
        before, started = _cpu(), time.perf_counter()
        done = subprocess.run(["bash", ".ci/run"], cwd=folder, env=env, capture_output=True, text=True)
        seconds, after = time.perf_counter() - started, _cpu()
        blocks = len(README_BLOCK.findall((folder / "README.md").read_text(encoding="utf-8")))
        tests = [json.loads(line) for path in (lines.glob("*.jsonl") if cpu else ()) for line in path.open()]
        if processes:
            started_by_tests = [json.loads(line) for path in census.glob("*.jsonl") for line in path.open()]
            starts = {kind: _start_cpu(folder / ".venv" / "bin" / "python", code) for kind, code in STARTS.items()}
    LOG.write_text(done.stdout + done.stderr, encoding="utf-8")  # every test's duration, to read past the top rows
    summary = SUMMARY.findall(done.stdout)
    if not summary:
        raise RuntimeError(f".ci/run printed no pytest summary (exit {done.returncode}): {done.stdout[-3000:]}"
                           f"{done.stderr[-3000:]}")  # fmt: skip
    counts_text, pytest_s = summary[-1]
    counts = {name: int(n) for n, name in re.findall(r"(\d+) (passed|failed|skipped|errors?)", counts_text)}
    busy = [b - a for a, b in zip(before, after)]
    modules = Counter()
    for match in DURATION.finditer(done.stdout):
        modules[match["module"]] += float(match["seconds"])
    rows = [
        {"measure": "CI=true bash .ci/run (set-up, ruff, data setup, pytest)", "seconds": seconds,
         "exit": done.returncode, "cpu busy": 1 - (busy[3] + busy[4]) / sum(busy)},
        {"measure": "pytest (make test's workers)", "seconds": float(pytest_s), "passed": counts.get("passed", 0),
         "skipped": counts.get("skipped", 0), "failed": counts.get("failed", 0) + counts.get("errors", 0)
         + counts.get("error", 0), "README blocks": blocks, "test seconds": sum(modules.values())},
    ]  # fmt: skip
    if not cpu:
        return rows + [{"measure": module, "test seconds": value} for module, value in modules.most_common(top)]
    own, reaped = Counter(), Counter()  # each module's CPU seconds in the worker, and in what its tests reaped
    for test in tests:
        own[test["id"].split("::")[0]] += test["self"]
        reaped[test["id"].split("::")[0]] += test["children"]
    by_module = Counter({module: own[module] + reaped[module] for module in own})
    rows.append({"measure": "CPU seconds of the tests (in the workers, in what they started and reaped)",
                 "seconds": sum(by_module.values()), "in the workers": sum(own.values()),
                 "in their children": sum(reaped.values()), "tests": len(tests)})  # fmt: skip
    rows += [{"measure": module, "cpu seconds": value, "in the worker": own[module],
              "in children": reaped[module], "test seconds": modules[module]}
             for module, value in by_module.most_common(top)]  # fmt: skip
    if processes:
        rows += census_rows(started_by_tests, starts, rows[2]["seconds"])
    return rows


def _start_cpu(python: Path, code: str, repeats: int = 3) -> float:
    """The median CPU seconds of ``python -c code``: a start of that kind, its imports and nothing else."""
    spent = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([str(python), "-c", code], check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(spent)


def process_kind(line: dict) -> str:
    """A census line's kind: a kernel, a ``workbench`` command, a server (Voilà, llama.cpp, JupyterLab, Ray) or
    another Python process a test started."""
    command = " ".join(line["argv"])
    if "ipykernel" in command:
        return "kernels"
    if any(name in command for name in ("voila", "llama_cpp", "jupyter", "/ray/")):
        return "servers"
    if line["argv"] and line["argv"][0].endswith(("/workbench", "workbench/__main__.py")):
        return "workbench commands"
    return "other Python processes"


def census_rows(lines: list[dict], starts: dict[str, float], tests_cpu: float) -> list[dict]:
    """The census of the Python processes the tests started, by kind, then their starts: each process charged a
    bare start of its kind (a kernel that imported torch, the kernel's and what torch and transformers add to a
    command's; at most its own CPU), and the tests' CPU without them."""
    kinds, start_cpu = defaultdict(lambda: {"processes": 0, "cpu seconds": 0.0, "imported torch": 0}), 0.0
    for line in lines:
        if not line["test"]:  # pytest itself (counted as the workers) and the set-up before it
            continue
        kind = kinds[process_kind(line)]
        kind["processes"] += 1
        kind["cpu seconds"] += line["cpu"]
        torch = "torch" in line["imported"]
        kind["imported torch"] += torch
        if "ipykernel" in line["imported"]:
            bare = starts["kernel"] + (starts["model command"] - starts["command"] if torch else 0.0)
        else:
            bare = starts["model command"] if torch else starts["command"]
        start_cpu += min(bare, line["cpu"])
    rows = [{"measure": f"Python processes the tests started: {name}", **kind}
            for name, kind in sorted(kinds.items(), key=lambda item: -item[1]["cpu seconds"])]  # fmt: skip
    rows += [{"measure": f"a bare start, {kind}: python -c \"{STARTS[kind]}\" (median of 3)", "cpu seconds": value}
             for kind, value in starts.items()]  # fmt: skip
    rows.append({"measure": "the tests' CPU seconds less a bare start for each of their processes",
                 "cpu seconds": tests_cpu - start_cpu, "starts": start_cpu,
                 "processes": sum(kind["processes"] for kind in kinds.values())})  # fmt: skip
    return rows


def _cpu() -> list[int]:
    """The machine's CPU time so far by kind (user, nice, system, idle, iowait, ...), from ``/proc/stat``."""
    with open("/proc/stat", encoding="ascii") as stat:
        return [int(value) for value in stat.readline().split()[1:]]
