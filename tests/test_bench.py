"""The bench's runner (bench/harness.py, bench/run.py) and bench/README.md's tables: every case resolves to a
measurement, a run leaves a record naming its commit and machine, ratios are taken within a round, and the README
holds exactly what its records render."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DRY_RUN = ("make", "--no-print-directory", "-n")
"""make's dry run, without the lines a make above it (`make test`) adds about entering this folder."""
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

import harness  # noqa: E402
import render  # noqa: E402
from cases import CASES  # noqa: E402


def defined(module: str) -> dict[str, ast.FunctionDef]:
    tree = ast.parse((BENCH / f"{module}.py").read_text(encoding="utf-8"))
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


@pytest.mark.parametrize("case", CASES.values(), ids=lambda case: case.name)
def test_every_case_names_a_bench_function_that_takes_its_settings(case):
    module, _, name = case.measure.partition(":")
    function = defined(module).get(name)
    assert function is not None, f"{case.name}: bench/{module}.py defines no {name}"
    accepted = {arg.arg for arg in function.args.args + function.args.kwonlyargs}
    assert set(case.params) <= accepted, f"{case.name}: {sorted(set(case.params) - accepted)} not parameters of {name}"


def test_ratios_are_taken_within_each_round_then_the_medians():
    case = harness.Case("x", "x", "m:f", baseline="base", ratio_of=("seconds",))
    rounds = [harness.with_ratios([{"measure": "base", "seconds": base}, {"measure": "ours", "seconds": ours}], case)
              for base, ours in ((2.0, 1.0), (4.0, 1.0), (10.0, 8.0))]  # fmt: skip
    rows = harness.medians(rounds)
    assert rows[0] == {"measure": "base", "seconds": 4.0, "ratio": 1.0}
    assert rows[1]["seconds"] == 1.0 and rows[1]["ratio"] == 0.5  # the median of 0.5, 0.25, 0.8: not 1.0 / 4.0
    with pytest.raises(ValueError, match="no row 'missing'"):
        harness.with_ratios(rounds[0], harness.Case("x", "x", "m:f", baseline="missing"))


def test_a_run_leaves_one_record_with_its_commit_tree_machine_and_rounds(tmp_path, monkeypatch):
    (tmp_path / "tiny_case.py").write_text(
        "def measure(size=1):\n    return [{'measure': 'loop', 'seconds': 2.0 * size}, {'measure': 'fast', "
        "'seconds': 0.5 * size, 'ok': True}]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    case = harness.Case("tiny", "A tiny case", "tiny_case:measure", {"size": 1}, repeats=2, baseline="loop")
    harness.run(case, params={"size": 2}, records=tmp_path)
    harness.run(case, repeats=1, records=tmp_path)
    first, second = harness.read_records(tmp_path / "tiny.jsonl")
    assert first["params"] == {"size": 2} and first["repeats"] == 2 and len(first["rounds"]) == 2
    assert first["command"] == "python bench/run.py tiny --set size=2" and second["command"].endswith("--repeats 1")
    assert first["rows"][1] == {"measure": "fast", "seconds": 1.0, "ok": True, "ratio": 0.25}
    assert second["repeats"] == 1 and second["rows"][0]["seconds"] == 2.0
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    assert first["commit"] == head.stdout.strip() and isinstance(first["dirty"], list)
    machine = first["machine"]
    assert machine["cores"] >= 1 and machine["memory_gib"] > 0 and machine["cpu"] and machine["python"]
    assert len(machine["load_start"]) == 3 and len(first["load_end"]) == 3


def test_a_record_names_each_changed_tracked_file_whole_and_not_the_records(tmp_path, monkeypatch):
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *args], cwd=tmp_path, check=True,
                       capture_output=True)  # fmt: skip

    (tmp_path / "bench" / "records").mkdir(parents=True)
    for name in ("a.py", "b.py", "bench/records/x.jsonl"):
        (tmp_path / name).write_text("1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "x")
    monkeypatch.setattr(harness, "ROOT", tmp_path)
    assert harness.commit()["dirty"] == []
    for name in ("a.py", "bench/records/x.jsonl"):  # " M a.py": the status line starts with a space
        (tmp_path / name).write_text("2\n")
    found = harness.commit()
    assert found["dirty"] == ["a.py"] and len(found["commit"]) == 12


def test_a_section_renders_its_latest_record_and_says_which_it_is(tmp_path):
    name = next(iter(CASES))
    old = {"case": name, "started": "2026-01-01T00:00:00Z", "rows": [{"measure": "a", "seconds": 9.0}]}
    new = {**old, "started": "2026-02-02T00:00:00Z", "rows": [{"measure": "a", "seconds": 1234.5, "n": 3}]}
    machine = {"cpu": "A CPU", "cores": 2, "cores_present": 2, "memory_gib": 8.0, "gpu": None, "python": "3.11",
               "torch": "2", "load_start": [0.5, 0.4, 0.3]}  # fmt: skip
    common = {"command": "python bench/run.py x", "commit": "abc", "dirty": [], "seconds": 1.0, "load_end": [1, 1, 1],
              "repeats": 1, "baseline": None, "params": {}, "machine": machine}  # fmt: skip
    (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps({**r, **common}) + "\n" for r in (old, new)))
    awaiting = "<!-- bench:awaiting -->\n<!-- /bench:awaiting -->\n"
    text = f"prose\n<!-- bench:{name} -->\nstale\n<!-- /bench:{name} -->\nmore prose\n{awaiting}"
    drawn = render.render(text, tmp_path)
    assert drawn.startswith("prose\n") and "more prose" in drawn and "stale" not in drawn
    assert "| measure | seconds | n |" in drawn and "| a | 1,234 | 3 |" in drawn and "| a | 9" not in drawn
    assert f"Record `bench/records/{name}.jsonl` line 2, 2026-02-02T00:00:00Z" in drawn
    assert "commit abc (clean)" in drawn and "[0.5, 0.4, 0.3] at the start" in drawn
    other = list(CASES.values())[1]
    assert f"| {other.name} |" in drawn and f"`python bench/run.py {other.name}`" in drawn  # awaiting its record
    assert f"| {name} |" not in drawn.split("<!-- bench:awaiting -->")[1]
    with pytest.raises(SystemExit, match="no case"):
        render.render("<!-- bench:no-such-case -->\n<!-- /bench:no-such-case -->", tmp_path)
    suite = CASES["suite"]  # three clean runs: its latest three records, oldest first
    assert suite.shown == 3
    (tmp_path / "suite.jsonl").write_text("".join(
        json.dumps({**old, **common, "case": "suite", "rows": [{"measure": "run", "failed": n}]}) + "\n"
        for n in range(4)
    ))  # fmt: skip
    drawn = render.render("<!-- bench:suite -->\n<!-- /bench:suite -->\n", tmp_path)
    assert [int(n) for n in re.findall(r"\| run \| (\d) \|", drawn)] == [1, 2, 3]
    assert [int(n) for n in re.findall(r"suite.jsonl` line (\d)", drawn)] == [2, 3, 4]


def test_the_bench_readme_is_what_its_records_render():
    """bench/README.md's tables come from bench/records/ only: run ``python bench/render.py`` after a run."""
    text = render.README.read_text(encoding="utf-8")
    assert render.SECTION.search(text), "bench/README.md has no generated section"
    assert render.render(text) == text, "bench/README.md differs from its records: run python bench/render.py"


def test_every_case_has_its_section_in_the_bench_readme():
    named = {match.group("name") for match in render.SECTION.finditer(render.README.read_text(encoding="utf-8"))}
    assert set(CASES) - named == set(), "add a <!-- bench:CASE --> section to bench/README.md"


def test_every_record_belongs_to_a_declared_case_and_names_its_commit():
    for path in sorted(harness.RECORDS.glob("*.jsonl")):
        assert path.stem in CASES, f"{path.name} is the record of no case in bench/cases.py"
        for record in harness.read_records(path):
            assert record["case"] == path.stem and record["commit"] and record["rows"]


def test_the_fresh_clone_runs_nothing_of_this_checkout_and_each_step_alone(tmp_path, monkeypatch):
    """bench_explore's clone sees neither this checkout's venv, code nor workspace, and ``make -o`` of the earlier
    steps leaves each of make explore's targets its own command alone."""
    import bench_explore

    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin")
    env = bench_explore.clean_environment(tmp_path / "cache")
    assert not {"PYTHONPATH", "WORKBENCH_HOME", "VIRTUAL_ENV"} & set(env) and env["PATH"] == "/usr/bin"
    assert env["PIP_CACHE_DIR"] == str(tmp_path / "cache")
    assert "PIP_CACHE_DIR" not in bench_explore.clean_environment(None)  # this machine's cache
    done = ("explore-setup",)
    for _, target in bench_explore.STEPS:
        dry = subprocess.run([*DRY_RUN, *(f"-o{name}" for name in done), target], cwd=ROOT, capture_output=True,
                             text=True, check=True)  # fmt: skip
        assert len([line for line in dry.stdout.splitlines() if line.startswith(".venv/bin/workbench")]) == 1
        done += (target,)
    serve = subprocess.run([*DRY_RUN, *(f"-o{name}" for name in done), "explore"], cwd=ROOT, capture_output=True,
                           text=True, check=True)  # fmt: skip
    assert serve.stdout.split() == [".venv/bin/workbench", "serve", "explorer", "--port", "8866"]


def test_the_process_census_writes_a_line_at_exit_and_on_sigterm_and_counts_by_kind(tmp_path):
    """``suite-processes``: a process loading the census as its sitecustomize writes its test, CPU and costly imports
    when it exits and when a SIGTERM ends it (its exit status unchanged); the rows count them by kind."""
    import bench_suite

    plugins, out = tmp_path / "plugins", tmp_path / "census"
    plugins.mkdir(), out.mkdir()
    (plugins / "sitecustomize.py").write_text((BENCH / "process_census.py").read_text(encoding="utf-8"))
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(plugins), "SUITE_PROCESSES_OUT": str(out),
           "PYTEST_CURRENT_TEST": "tests/test_x.py::test_y (call)"}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", "import json, ipykernel"], env=env, timeout=60)
    assert done.returncode == 0
    with subprocess.Popen([sys.executable, "-c", "print('up', flush=True); import time; time.sleep(60)"], env=env,
                          stdout=subprocess.PIPE, text=True) as waiting:  # fmt: skip
        assert waiting.stdout.readline() == "up\n"
        waiting.terminate()
        assert waiting.wait(timeout=30) == -15
    lines = [json.loads(line) for path in sorted(out.glob("*.jsonl")) for line in path.open()]
    assert len(lines) == 2 and {line["test"] for line in lines} == {"tests/test_x.py::test_y"}
    assert sorted(line["imported"] for line in lines) == [[], ["ipykernel"]]
    rows = bench_suite.census_rows(
        [*lines, {"argv": ["/v/bin/workbench", "score"], "cpu": 9.0, "imported": ["torch"], "test": "t"},
         {"argv": ["-c"], "cpu": 99.0, "imported": ["pytest"], "test": ""}],
        {"command": 0.5, "model command": 4.0, "kernel": 0.5}, tests_cpu=100.0,
    )  # fmt: skip
    kinds = {row["measure"].rpartition(": ")[2]: row for row in rows if "processes" in row and "starts" not in row}
    assert kinds["workbench commands"]["processes"] == kinds["workbench commands"]["imported torch"] == 1
    assert kinds["other Python processes"]["processes"] == 2  # pytest itself is not one the tests started
    assert rows[-1]["processes"] == 3 and 100.0 - 4.0 - 2 * 0.5 <= rows[-1]["cpu seconds"] < 100.0 - 4.0
