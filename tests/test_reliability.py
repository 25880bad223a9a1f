"""Nothing silently wrong: incomplete model folders, hub names without a network (docs/RELIABILITY.md)."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.errors import WorkbenchError
from workbench.scoring.models import load_model

from tiny_models import tiny_multiple_choice_bert


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
        with pytest.raises(WorkbenchError, match=r"no-tokenizer lacks tokenizer files \(one of tokenizer.json, vocab.txt"):
            load_model(folder, scorer)
    from workbench.inoculation.train import load_for_training

    with pytest.raises(WorkbenchError, match="lacks tokenizer files"):
        load_for_training(folder)


def test_a_model_folder_without_weights_is_one_clear_error(tiny_model, tmp_path):
    folder = _copy_without(tiny_model, tmp_path / "no-weights", "*.safetensors", "*.bin")
    with pytest.raises(WorkbenchError, match=r"no-weights lacks weights \(one of model.safetensors"):
        load_model(folder, "mcqa")
    assert load_model(folder, "mcqa", control="random-weights").control == "random-weights"  # a control needs no weights


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
