"""The ``workbench`` command: help for every verb, probe building end to end, clear errors."""

import subprocess
import sys

import polars as pl
import pytest

from workbench.probes.formats import read_probes


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, timeout=600)


def verbs() -> list[list[str]]:
    import typer.main

    from workbench.cli import VERB_MODULES, make_app

    group = typer.main.get_command(make_app())
    found = []
    for name, command in group.commands.items():
        found.append([name])
        found.extend([name, sub] for sub in getattr(command, "commands", {}))
    assert {"data", "probes"} <= {path[0] for path in found}
    assert len(VERB_MODULES) >= 2
    return found


def test_the_command_has_help():
    """``python -m workbench --help`` in a process of its own: the entry point the console script runs."""
    result = run("--help")
    assert result.returncode == 0, result.stderr
    assert "Usage" in result.stdout


@pytest.mark.parametrize("path", verbs(), ids=" ".join)
def test_every_verb_has_help(path, cli):
    """Each verb's help, through typer's runner in this process (one Python start-up for all of them, not one each:
    about 0.5 s of CPU apiece)."""
    from typer.testing import CliRunner

    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


def test_the_command_does_not_build_jsonschemas_iri_grammar():
    """rfc3987_syntax (2 s at import, under altair's jsonschema) stays out of the ``workbench`` process."""
    code = ("import sys\nfrom workbench.cli import main\nsys.argv = ['workbench', 'report', '--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nimport altair, jsonschema\n"
            "print(sys.modules.get('rfc3987_syntax'), 'iri' in jsonschema.FormatChecker.checkers)")  # fmt: skip
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] == ["None", "False"]


@pytest.mark.wordnet
def test_probes_build_writes_splits_and_prints_table4(tmp_path, wordnet_graph):
    out = tmp_path / "hyponymy"
    result = run(
        "probes",
        "build",
        "--probe",
        "hyponymy",
        "--max-hops",
        "2",
        "--distractors",
        "sister",
        "--out",
        str(out),
        "--format",
        "jsonl",
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["dev.jsonl", "test.jsonl", "train.jsonl"]
    frame = read_probes(out)
    assert set(frame["distractor_family"].unique()) == {"sister"}
    assert "unique_questions" in result.stdout and str(frame.height) in result.stdout
    stats = run("probes", "stats", str(out))
    assert stats.returncode == 0 and "sister_1" in stats.stdout


@pytest.mark.wordnet
def test_same_seed_gives_byte_identical_files(tmp_path, wordnet_graph):
    """The paper preset (the default) with its size sample and train draw: the same seed, the same bytes."""
    for name in ("a", "b"):
        assert (
            run("probes", "build", "--probe", "hyponymy", "--seed", "5", "--out", str(tmp_path / name)).returncode == 0
        )
    for split in ("train", "dev", "test"):
        assert (tmp_path / "a" / f"{split}.parquet").read_bytes() == (tmp_path / "b" / f"{split}.parquet").read_bytes()
    assert pl.read_parquet(tmp_path / "a" / "train.parquet").height <= 3000


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--probe", "antonymy"], "probe='antonymy' is not allowed"),
        (["--probe", "hypernymy", "--max-hops", "9"], "max_hops=9 is out of range"),
        (["--probe", "hypernymy", "--distractors", "cousins"], "families='cousins' is not allowed"),
        (["--probe", "hypernymy", "--perturbations", "many"], "perturbations='many'"),
    ],
)
def test_bad_build_options_exit_2_with_one_clear_line_and_no_files(tmp_path, args, message):
    result = run("probes", "build", *args, "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_loading_a_missing_file_is_a_clear_error(tmp_path):
    result = run("probes", "load", str(tmp_path / "nope.jsonl"))
    assert result.returncode == 2 and "nope.jsonl" in result.stderr


def test_every_option_s_help_is_shown_whole():
    """Rich reads ``[...]`` in a help text as markup and drops it: '[default: 3000, ...]' once vanished from
    ``probes build --help``. Every option of every command shows its whole help (brackets written ``\\[``)."""
    import click
    from typer.main import get_command
    from typer.testing import CliRunner

    from workbench.cli import make_app

    app, runner = make_app(), CliRunner()

    def commands(group: click.Command, path: list[str]):
        yield path, group
        for name, command in getattr(group, "commands", {}).items():
            yield from commands(command, [*path, name])

    checked = 0
    for path, command in commands(get_command(app), []):
        shown = " ".join(runner.invoke(app, [*path, "--help"], env={"COLUMNS": "400"}).output.replace("│", " ").split())
        for param in command.params:
            if getattr(param, "help", None):
                words = " ".join(param.help.replace("\\[", "[").split())
                assert words[:60] in shown, f"workbench {' '.join(path)} --help hides the help of {param.name}"
                checked += 1
    assert checked > 100
