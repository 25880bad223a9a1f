"""Nothing silently wrong: incomplete model folders, hub names without a network (docs/RELIABILITY.md)."""

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tiny_models import tiny_multiple_choice_bert

from workbench.errors import WorkbenchError
from workbench.scoring.models import load_model


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, minilm_path) -> Path:
    return tiny_multiple_choice_bert(tmp_path_factory.mktemp("tiny"), minilm_path)


def _copy_without(model: Path, folder: Path, *names: str) -> Path:
    shutil.copytree(model, folder, ignore=shutil.ignore_patterns(*names))
    return folder


TOKENIZER = ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json")


def test_a_model_folder_without_tokenizer_files_is_refused_naming_them(tiny_model, tmp_path):
    """Without tokenizer files transformers fell back to a tokenizer that reads every word as [UNK], and a
    scoring run exited 0 with a plausible accuracy (0.300 against 0.367 for the real model)."""
    folder = _copy_without(tiny_model, tmp_path / "no-tokenizer", *TOKENIZER)
    for scorer in ("mcqa", "similarity"):
        with pytest.raises(
            WorkbenchError, match=r"no-tokenizer lacks tokenizer files \(one of tokenizer.json, vocab.txt"
        ):
            load_model(folder, scorer)
    from workbench.inoculation.train import load_for_training

    with pytest.raises(WorkbenchError, match="lacks tokenizer files"):
        load_for_training(folder)


def test_a_model_folder_without_weights_is_one_clear_error(tiny_model, tmp_path):
    folder = _copy_without(tiny_model, tmp_path / "no-weights", "*.safetensors", "*.bin")
    with pytest.raises(WorkbenchError, match=r"no-weights lacks weights \(one of model.safetensors"):
        load_model(folder, "mcqa")
    assert (
        load_model(folder, "mcqa", control="random-weights").control == "random-weights"
    )  # a control needs no weights


def test_a_tokenizer_larger_than_the_models_vocabulary_is_refused(tiny_model, tmp_path):
    folder = _copy_without(tiny_model, tmp_path / "small-vocab", "")
    config = json.loads((folder / "config.json").read_text())
    config["vocab_size"] = 1000
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(WorkbenchError, match=r"has 30522 tokens but the model's vocabulary holds 1000"):
        load_model(folder, "similarity", control="random-weights")


def test_a_hub_name_without_network_fails_at_once(tmp_path, released_dir):
    """A hub-style name offline used to fail only after ~50 s of retries."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "workbench", "score", "--model", "someorg/some-model", "--scorer", "similarity",
         "--probes", str(released_dir / "dictionary_qa_test.jsonl"), "--out", str(tmp_path / "p.parquet")],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert time.monotonic() - started < 30
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "someorg/some-model is not in the local Hugging Face cache" in lines[0], run.stderr


# --- one clear line, exit 2, nothing written: the CLI as a careless user meets it ---------------------------------


def _cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env={**os.environ, **(env or {})})  # fmt: skip


def _one_error_line(run: subprocess.CompletedProcess, expected: str) -> None:
    lines = [
        line
        for line in run.stderr.splitlines()
        if line.strip() and not line.startswith("warning:") and "%|" not in line
    ]
    assert run.returncode == 2, run.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], run.stderr


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory, released_dir) -> Path:
    folder = tmp_path_factory.mktemp("bad")
    first = (released_dir / "hyponymy_test.jsonl").read_bytes().splitlines()[0]
    (folder / "hyponymy_test.jsonl").write_bytes(first + b"\n" + b'{"id": "\xff\xfe"}\n')
    (folder / "empty.jsonl").write_text("\n\n")
    entry = {"table2": "In '{context}', '{word}' is a type of", "choice": "{word}"}
    (folder / "templates.json").write_text(json.dumps({"contexts": "In '{context}',", "probes": {"hypernymy": entry}}))
    (folder / "a-file").write_text("not a folder")
    return folder


def test_bad_input_is_one_line_naming_the_file_line_or_field(bad_files, tmp_path):
    _one_error_line(
        _cli("probes", "load", str(bad_files / "hyponymy_test.jsonl")), "hyponymy_test.jsonl, line 2: not valid UTF-8"
    )
    _one_error_line(_cli("probes", "load", str(bad_files / "empty.jsonl")), "no questions in")
    templates = ["probes", "build", "--probe", "hypernymy", "--concepts", "dog.n.01", "--out", str(tmp_path / "t")]
    _one_error_line(
        _cli(*templates, "--templates", str(bad_files / "templates.json")),
        "contexts must be a list of strings, not str",
    )
    _one_error_line(_cli("probes", "build", "--probe", ",", "--out", str(tmp_path / "p")), "names no probe")
    _one_error_line(
        _cli("probes", "build", "--probe", "hypernymy", "--out", str(bad_files / "a-file")), "is a file; give a folder"
    )
    assert not (tmp_path / "t").exists() and not (tmp_path / "p").exists()


def test_debug_shows_the_traceback(bad_files):
    run = _cli("probes", "load", str(bad_files / "empty.jsonl"), "--debug")
    assert run.returncode != 0 and "Traceback (most recent call last)" in run.stderr


def test_outputs_are_checked_before_any_work(released_dir, minilm_path, bad_files, tmp_path):
    """`score --out DIR` used to fail with a traceback after all the scoring; `report --html` into a place that cannot
    be written likewise."""
    probes = str(released_dir / "dictionary_qa_test.jsonl")
    started = time.monotonic()
    run = _cli(
        "score", "--model", str(minilm_path), "--scorer", "similarity", "--probes", probes, "--out", str(tmp_path)
    )
    _one_error_line(run, "is a folder; give a file name")
    assert time.monotonic() - started < 30  # no scoring happened (1,114 questions take longer)
    html = str(bad_files / "a-file" / "report.html")
    _one_error_line(_cli("report", str(tmp_path / "none.parquet"), "--html", html), "a-file is a file, not a folder")


def test_inoculation_arguments_are_checked_before_anything_is_written(tiny_model, tmp_path, mcqa_dir):
    """`--lr 0` and `--epochs 0` used to fail after the run folder was written and the baseline scored;
    `train-source --max-eval -1` after a full training."""
    from workbench.errors import SpecError
    from workbench.inoculation import inoculate, train_source
    from workbench.inoculation.train import TrainSpec

    for grid in ({"lrs": (0.0,)}, {"epochs": (0,)}, {"lrs": (float("inf"),)}, {"max_eval": 0}):
        with pytest.raises(SpecError):
            inoculate(tiny_model, tmp_path / "no-probes", mcqa_dir / "arc_easy", ks=(8,), out=tmp_path / "run", **grid)
    with pytest.raises(SpecError, match="max_eval=-1"):
        train_source(tiny_model, mcqa_dir / "arc_easy", tmp_path / "src", TrainSpec(), max_eval=-1)
    assert not (tmp_path / "run").exists() and not (tmp_path / "src").exists()


def test_an_unknown_multiple_choice_file_loads_as_a_custom_probe(tmp_path, minilm_path):
    from workbench.probes.formats import CustomProbeWarning, read_probes
    from workbench.scoring import score

    rows = [
        {
            "id": f"x{i}",
            "question": {
                "stem": f"Which is a fruit? ({i})",
                "choices": [{"text": t, "label": label} for t, label in zip(["apple", "hammer", "car"], "ABC")],
            },
            "answerKey": "A",
        }
        for i in range(3)
    ]
    path = tmp_path / "quiz_test.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.warns(CustomProbeWarning, match="custom probe 'quiz'"):
        probes = read_probes(path)
    assert probes["probe"].unique().to_list() == ["quiz"] and probes["split"].unique().to_list() == ["test"]
    assert probes["cluster_id"].n_unique() == 3  # no concept named: every question its own cluster
    assert score(probes, minilm_path, "similarity", progress=False)["correct"].count() == 3


def test_progress_in_a_log_file_is_a_few_lines_not_thousands(tmp_path):
    import subprocess
    import sys

    code = (
        "import time\n"
        "from workbench.progress import ProgressBar\n"
        "for _ in ProgressBar(range(400), desc='work'):\n"
        "    time.sleep(0.005)\n"
    )
    log = tmp_path / "run.log"
    with log.open("w") as out:  # a file, not a terminal: what nohup, CI and `> log` give
        subprocess.run([sys.executable, "-c", code], stderr=out, check=True)
    updates = log.read_text().count("\r") + log.read_text().count("\n")
    assert 1 <= updates <= 4, log.read_text()


def test_a_damaged_weight_file_is_one_clear_error(tiny_model, tmp_path):
    """Random bytes, a truncated or an empty model.safetensors, a garbage pytorch_model.bin: 'unexpected error'."""
    weights = (tiny_model / "model.safetensors").read_bytes()
    damaged = {"random": random.Random(0).randbytes(5000), "truncated": weights[: len(weights) // 2], "empty": b""}
    for kind, data in damaged.items():
        folder = _copy_without(tiny_model, tmp_path / kind, "")
        (folder / "model.safetensors").write_bytes(data)
        with pytest.raises(WorkbenchError, match=rf"the weight file of .*{kind} cannot be read .* damaged or trunc"):
            load_model(folder, "mcqa")
    folder = _copy_without(tiny_model, tmp_path / "bin", "*.safetensors")
    for seed in range(30):  # torch's unpickler meets random bytes with many errors: seed 2 an IndexError, 20 a KeyError
        (folder / "pytorch_model.bin").write_bytes(random.Random(seed).randbytes(5000))
        with pytest.raises(WorkbenchError, match="the weight file of .*bin cannot be read"):
            load_model(folder, "mcqa")


def test_a_truncated_gguf_is_one_line_and_a_truncated_dequantised_cache_is_made_again(tmp_path, monkeypatch):
    """Issue 42: a GGUF file cut to 30 bytes was "unexpected error (error)" (struct.error); a dequantised cache
    whose model.safetensors was cut was blamed on the intact GGUF file ("download again") for good."""
    pytest.importorskip("gguf")
    from workbench.scoring import gguf

    path = gguf.smollm2_gguf()
    cut = tmp_path / "cut.gguf"
    with path.open("rb") as handle:
        cut.write_bytes(handle.read(30))
    with pytest.raises(WorkbenchError, match="cannot read the GGUF file .*cut.gguf"):
        load_model(cut, "causal")
    made = gguf.dequantised(path)  # the tests' workspace's copy (made once per session)
    workspace = tmp_path / "workspace"
    copy = workspace / "gguf" / made.name
    shutil.copytree(made, copy)
    weights = copy / "model.safetensors"
    with weights.open("r+b") as handle:
        handle.truncate(weights.stat().st_size // 2)
    monkeypatch.setattr(gguf, "cache_dir", lambda kind: workspace)
    with pytest.warns(UserWarning, match="dequantised GGUF cache .* is damaged"):
        assert gguf.dequantised(path) == copy
    assert weights.read_bytes() == (made / "model.safetensors").read_bytes()  # made again, whole


def test_a_read_only_workspace_names_the_files_and_the_fix_never_a_temporary_file(
    released_dir, minilm_path, tmp_path, monkeypatch
):
    """Issue 42: a read-only workspace gave errors naming temporary files; the cache says how to go on
    (--no-cache), and the digest store, which only saves reading files again, is skipped with a warning."""
    from inprocess import refused, workbench

    disk = tmp_path / "disk"
    disk.mkdir()
    if shutil.which("mount") is None or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk)],
                                                       capture_output=True).returncode:  # fmt: skip
        pytest.skip("mounting a tmpfs needs root")
    try:
        monkeypatch.setenv("WORKBENCH_HOME", str(disk / "workspace"))
        probes = tmp_path / "dictionary_qa_test.jsonl"
        probes.write_text("".join((released_dir / "dictionary_qa_test.jsonl").open().readlines()[:5]))
        score = ("score", "--scorer", "similarity", "--probes", probes)
        assert workbench(*score, "--model", minilm_path, "--out", tmp_path / "a.parquet")[0] == 0
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        refused(
            workbench(*score, "--model", minilm_path, "--out", tmp_path / "b.parquet", "--max-questions", "3"),
            "make the workspace writable (or set WORKBENCH_HOME to a writable one), or score without the cache",
        )
        model = tmp_path / "model"
        shutil.copytree(minilm_path, model)  # new files: their digests cannot be kept
        with pytest.warns(UserWarning, match="digests are not kept") as warned:
            code, out, err = workbench(*score, "--model", model, "--out", tmp_path / "c.parquet", "--no-cache")
        assert code == 0 and ".tmp" not in str(warned[0].message), err
        refused(workbench("report", tmp_path / "a.parquet", "--html", disk / "r.html"), "not writable")
    finally:
        subprocess.run(["umount", str(disk)], check=False)
