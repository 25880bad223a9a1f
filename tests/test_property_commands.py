"""Random bytes, random JSON and random Parquet thrown at every command that takes a file: a one-line error or a
correct result, never a changed input file, never exit 0 with a damaged result (issue 28; docs/RELIABILITY.md).

The commands run in-process (``inprocess.workbench``); a probe file that happens to read is scored by a model
folder that does not exist, so no example loads a model."""

import hashlib
import json
import shutil
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
