"""Random bytes, random JSON and random Parquet thrown at every command that takes a file: a one-line error or a
correct result, never a changed input file, never exit 0 with a damaged result (issue 28; docs/RELIABILITY.md).

The commands run in-process (``inprocess.workbench``); a probe file that happens to read is scored by a model
folder that does not exist, so no example loads a model."""

import hashlib
import json
import shutil
from enum import Enum
from pathlib import Path

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inprocess import workbench

from workbench.schema import PREDICTION_SCHEMA

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
DTYPES = {"int": (pl.Int64, st.integers(-3, 2**40)), "float": (pl.Float64, st.floats()),
          "text": (pl.String, st.text(max_size=6)), "bool": (pl.Boolean, st.booleans()),
          "list": (pl.List(pl.String), st.lists(st.text(max_size=4), max_size=5)),
          "scores": (pl.List(pl.Float64), st.lists(st.floats(), max_size=5))}  # fmt: skip


@st.composite
def parquet_frames(draw) -> pl.DataFrame:
    """A frame of up to 4 rows whose columns are drawn from the prediction schema's names (and one more), each of
    a random type: most lack columns or have the wrong types; some conform and hold nonsense values."""
    names = draw(st.sets(st.sampled_from([*PREDICTION_SCHEMA, "junk"]), min_size=1))
    if draw(st.booleans()):
        names |= set(PREDICTION_SCHEMA)  # every column: the values decide
    rows = draw(st.integers(0, 4))
    columns = {}
    for name in sorted(names):
        kind = draw(st.sampled_from(sorted(DTYPES)))
        dtype, values = DTYPES[kind]
        columns[name] = pl.Series(name, draw(st.lists(values | st.none(), min_size=rows, max_size=rows)), dtype=dtype)
    return pl.DataFrame(columns)


def contents(kind: str, draw_value, folder: Path, name: str) -> Path:
    path = folder / name
    if kind == "parquet":
        draw_value.write_parquet(path)
    elif kind == "json":
        path.write_text("\n".join(json.dumps(line) for line in draw_value), encoding="utf-8")
    else:
        path.write_bytes(draw_value)
    return path


INPUTS = st.one_of(
    st.tuples(st.just("bytes"), st.binary(max_size=300)),
    st.tuples(st.just("json"), st.lists(JSON, min_size=1, max_size=3)),
    st.tuples(st.just("parquet"), parquet_frames()),
)


def commands(path: Path, out: Path) -> list[tuple]:
    """Every command that reads ``path``: as predictions, as a probe set, as both."""
    return [
        ("report", path, "--n-boot", "10"),
        ("report", path, "--n-boot", "10", "--html", out / "r.html"),
        ("publish", path, "--out", out / "site", "--n-boot", "10"),
        ("compare", path, path, "--n-boot", "10"),
        ("population", "--predictions", path, "--out", out / "pop.parquet"),
        ("baselines", "--probes", path, "--n-boot", "10"),
        ("probes", "load", path),
        ("probes", "stats", path),
        ("score", "--model", out / "no-model", "--scorer", "similarity", "--probes", path, "--out", out / "p.parquet"),
    ]


@SETTINGS
@given(drawn=INPUTS, suffix=st.sampled_from([".parquet", ".jsonl"]))
def test_every_command_on_random_files_fails_in_one_line_or_succeeds_and_never_changes_the_input(
    tmp_path, drawn, suffix
):
    kind, value = drawn
    folder = tmp_path / hashlib.sha256(repr((drawn, suffix)).encode()).hexdigest()[:12]
    shutil.rmtree(folder, ignore_errors=True)  # hypothesis may replay an example
    folder.mkdir()
    path = contents(kind, value, folder, f"hypernymy_test{suffix}")
    before = path.read_bytes()
    for command in commands(path, folder):
        code, out, err = workbench(*command)
        lines = [line for line in err.splitlines() if line.strip() and not line.startswith("warning:")]
        if code != 0:
            assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (command, err)
            assert "unexpected error" not in err
        else:  # a success is a real result: what it read was a well-formed file
            assert command[0] in ("probes", "report", "compare", "population", "publish"), (command, err)
        assert path.read_bytes() == before, command
    shutil.rmtree(folder)


def _declared() -> list[tuple[str, object, dict]]:
    """Every command of the app with its ``declares`` declarations (``tests/test_outputs.py`` checks that every
    path option has one)."""
    from test_outputs import _commands

    return [(words, command, command.callback.declared) for words, command in _commands()
            if getattr(command.callback, "declared", None)]  # fmt: skip


def _arguments(command, declared: dict, tested: str, path: Path, folder: Path) -> list[str]:
    """The command line of ``command`` with ``path`` as the option ``tested`` and as every other input (so each is
    read as what it should be), fresh paths as its other outputs, and the first allowed value of other required
    options."""
    from workbench.cli.guard import Reads, Writes
    from workbench.io import OUTPUT_SUFFIXES

    words: list[str] = []
    for parameter in command.params:
        what = declared.get(parameter.name)
        if parameter.name == tested or isinstance(what, Reads):
            value = f"m={path}" if isinstance(what, Reads) and what.pairs else str(path)
        elif isinstance(what, Writes):
            value = str(folder / f"out-{parameter.name}{OUTPUT_SUFFIXES.get(what.kind, ('',))[0]}")
        elif parameter.required:
            annotation = parameter.type_descriptor.annotation
            value = next(iter(annotation)).value if isinstance(annotation, type) and issubclass(annotation, Enum) \
                else "1"  # fmt: skip
        else:
            continue
        if parameter.param_type_name == "argument":
            words.append(value)
        else:
            words += [parameter.opts[0], value]
    return words


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=INPUTS, suffix=st.sampled_from([".parquet", ".jsonl"]))
def test_every_path_option_of_every_command_on_random_files_fails_in_one_line_and_never_changes_them(
    tmp_path, drawn, suffix
):
    """Issue 42: the property test of every path option the guard knows, input or output, of every command."""
    from workbench.cli.guard import Writes
    from workbench.io import written_kind

    kind, value = drawn
    folder = tmp_path / hashlib.sha256(repr((drawn, suffix)).encode()).hexdigest()[:12]
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    path = contents(kind, value, folder, f"hypernymy_test{suffix}")
    before = path.read_bytes()
    for words, command, declared in _declared():
        for tested, what in declared.items():
            if not isinstance(what, Writes) and not any(p.name == tested for p in command.params):
                continue
            args = [*words.split(), *_arguments(command, declared, tested, path, folder)]
            code, out, err = workbench(*args)
            lines = [line for line in err.splitlines() if line.strip() and not line.startswith("warning:")]
            assert "unexpected error" not in err, (args, err)
            if code != 0:
                assert code == 2 and lines and lines[-1].startswith("error: "), (args, err)
            replaceable = isinstance(what, Writes) and (not before or written_kind(path) == what.kind)
            assert path.read_bytes() == before or replaceable, args
            if path.read_bytes() != before:
                path.write_bytes(before)
    shutil.rmtree(folder)


def test_a_pipe_or_device_given_as_any_input_is_refused_in_one_line_at_once(tmp_path: Path):
    """A FIFO waits for ever for a writer and ``/dev/zero`` never ends: every command refuses them before reading
    (issue 60's hostile pass: ``import lm-eval FIFO`` hung for good; ``report FIFO`` said there was no file)."""
    import os
    import signal

    from inprocess import refused

    fifo = tmp_path / "answers.parquet"
    os.mkfifo(fifo)
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("the command waited on the pipe")))
    try:
        for target in (fifo, Path("/dev/zero")):
            imported = ("import", "lm-eval", target, "--out", tmp_path / "i.parquet")
            for command in [*commands(target, tmp_path), imported]:
                signal.alarm(20)
                refused(workbench(*command), "is a device, socket or pipe")
                signal.alarm(0)
    finally:
        signal.alarm(0)
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["answers.parquet"]
