"""Malformed input of every kind: readers either succeed or raise a WorkbenchError naming the problem; never
another exception (a traceback) and never a partial file (docs/RELIABILITY.md)."""

import json
import warnings
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.errors import WorkbenchError
from workbench.probes import ProbeSpec
from workbench.probes.formats import CustomProbeWarning, read_probes
from workbench.probes.templates import load_templates

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
CHOICE = st.fixed_dictionaries({"text": st.text(max_size=6), "label": st.sampled_from("ABCDE")})
RECORD = st.fixed_dictionaries(
    {"question": st.fixed_dictionaries({"stem": st.text(max_size=10), "choices": st.lists(CHOICE, max_size=5)}),
     "answerKey": st.sampled_from("ABCDEZ")},
    optional={"id": st.text(max_size=5) | st.integers(), "notes": JSON},
)  # fmt: skip


def _read(path: Path) -> None:
    try:
        frame = read_probes(path)
    except WorkbenchError as err:
        assert str(err).strip() and "\n" not in str(err).strip()
        return
    assert isinstance(frame, pl.DataFrame) and frame.height > 0


@SETTINGS
@given(lines=st.lists(st.binary(max_size=40) | JSON.map(json.dumps).map(str.encode), max_size=5))
def test_any_bytes_in_a_jsonl_file_read_or_fail_clearly(tmp_path, lines):
    path = tmp_path / "hyponymy_test.jsonl"
    path.write_bytes(b"\n".join(lines))
    _read(path)


@SETTINGS
@given(records=st.lists(RECORD, min_size=1, max_size=4))
def test_arc_shaped_records_read_or_fail_clearly(tmp_path, records):
    path = tmp_path / "quiz.jsonl"  # no released name: read as a custom probe, with a warning
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CustomProbeWarning)
        _read(path)


@SETTINGS
@given(data=st.binary(max_size=64))
def test_any_bytes_as_a_parquet_file_fail_clearly(tmp_path, data):
    path = tmp_path / "train.parquet"
    path.write_bytes(data)
    _read(path)


@SETTINGS
@given(document=JSON)
def test_any_json_as_a_templates_file_loads_or_names_the_field(tmp_path, document):
    path = tmp_path / "templates.json"
    path.write_text(json.dumps(document))
    try:
        load_templates("hypernymy", path)
    except WorkbenchError as err:
        assert str(path) in str(err)


@settings(max_examples=200, deadline=None)
@given(
    max_hops=st.integers(-3, 9),
    max_depth=st.integers(-3, 9),
    perturbations=st.none() | st.integers(-2, 200),
    golds=st.none() | st.integers(-2, 2000),
    seed=st.integers(-5, 2**33),
)
def test_any_probe_spec_numbers_build_a_spec_or_name_the_parameter(max_hops, max_depth, perturbations, golds, seed):
    try:
        ProbeSpec(
            "hypernymy",
            max_hops=max_hops,
            max_depth=max_depth,
            perturbations=perturbations,
            golds_per_hop=golds,
            seed=seed,
        )
    except WorkbenchError as err:
        assert any(name in str(err) for name in ("max_hops", "max_depth", "perturbations", "golds_per_hop", "seed"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=st.binary(max_size=60),
    args=st.lists(st.sampled_from(["--rows", "0", "-1", "x", "3", "--bogus"]), max_size=3),
)
def test_the_cli_on_malformed_input_exits_0_or_2_with_one_line(tmp_path, capsys, monkeypatch, content, args):
    import sys

    from workbench.cli import main

    path = tmp_path / "hypernymy_test.jsonl"
    path.write_bytes(content)
    monkeypatch.setattr(sys, "argv", ["workbench", "probes", "load", str(path), *args])
    with pytest.raises(SystemExit) as exit_info:
        main()
    err = capsys.readouterr().err
    assert exit_info.value.code in (0, 2, None), err
    assert "Traceback" not in err
    if exit_info.value.code == 2 and err.startswith("error:"):
        assert len([line for line in err.splitlines() if line.strip()]) == 1, err
