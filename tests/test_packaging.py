"""Packaging stays in step: conda and pip list the same packages; CI runs the README's test command."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


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
