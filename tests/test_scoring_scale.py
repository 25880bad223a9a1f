"""Scoring at scale, checked on the CPU: device and dtype choice, device_map's extra, the out-of-memory back-off
(out-of-memory raised by a forward hook above a batch size, as a GPU would), tokenising ahead on a background
thread (the same outputs as in turn), and fingerprints from the model's files."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from test_scoring import QUESTIONS, make_probes, tiny_config
from transformers import AutoTokenizer, BertConfig, BertForMultipleChoice
from typer.testing import CliRunner

from workbench.errors import SpecError, WorkbenchError
from workbench.paths import cache_dir
from workbench.scoring import ScoreSpec, ScoringWarning, load_model, score
from workbench.scoring.batch_sizes import MEMORY
from workbench.scoring.batching import CHUNK_STEPS, Work, compute, encode_texts
from workbench.scoring.fingerprints import model_fingerprint
from workbench.scoring.models import check_device, check_dtype, torch_threads
from workbench.scoring.similarity import embed

ROOT = Path(__file__).resolve().parents[1]
HAS_ACCELERATE = importlib.util.find_spec("accelerate") is not None


@pytest.fixture(scope="module")
def tiny_mc(tmp_path_factory, minilm_path) -> Path:
    """A tiny random BERT with a multiple-choice head (seed 0) and the MiniLM tokenizer."""
    tokenizer = AutoTokenizer.from_pretrained(minilm_path)
    folder = tmp_path_factory.mktemp("tiny-mc")
    torch.manual_seed(0)
    BertForMultipleChoice(tiny_config(tokenizer)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def out_of_memory_above(model, rows: int) -> list[int]:
    """Make ``model.network`` raise torch.OutOfMemoryError on a batch of more than ``rows`` inputs, as a GPU
    would; return the batch sizes that ran out of memory."""
    failed: list[int] = []

    def hook(module, args, kwargs):
        size = len(kwargs["input_ids"])
        if size > rows:
            failed.append(size)
            raise torch.OutOfMemoryError(f"CUDA out of memory (simulated: {size} rows > {rows})")

    model.network.register_forward_pre_hook(hook, with_kwargs=True)
    return failed


def flat(frame) -> np.ndarray:
    return np.concatenate(frame["scores"].to_list())


# --- device and dtype ---------------------------------------------------------------------------


@pytest.mark.parametrize(("share", "expected"), [("1", 1), (None, "cores"), ("999", "cores"), ("two", "cores")])
def test_torch_takes_the_omp_num_threads_share_of_the_cores(monkeypatch, share, expected):
    """Two test workers each running torch on both cores of a 2-core machine spent twice the CPU time."""
    cores = len(os.sched_getaffinity(0))
    if share is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", share)
    before = torch.get_num_threads()
    with torch_threads(None) as count:
        assert count == torch.get_num_threads() == (cores if expected == "cores" else expected)
    assert torch.get_num_threads() == before


def test_auto_device_is_the_gpu_when_there_is_one_and_a_missing_gpu_is_refused():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert check_device("auto") == check_device(None) == expected
    with pytest.raises(SpecError, match="not a torch device"):
        check_device("gpu0")
    if not torch.cuda.is_available():
        with pytest.raises(SpecError, match="torch sees none here"):
            ScoreSpec(device="cuda")


def test_dtypes_are_named_and_float16_is_refused_on_the_cpu():
    assert check_dtype(None, "cpu") is torch.float32
    assert check_dtype("bfloat16", "cpu") is torch.bfloat16
    with pytest.raises(SpecError, match="choose one of \\['float32', 'bfloat16', 'float16'\\]"):
        ScoreSpec(dtype="half")
    with pytest.raises(SpecError, match="float16' needs a GPU"):
        ScoreSpec(dtype="float16", device="cpu")


def test_bfloat16_weights_give_float32_scores_near_the_float32_ones_under_their_own_fingerprint(tiny_mc):
    probes = make_probes()
    full = score(probes, tiny_mc, scorer="mcqa", device="cpu", cache=False, progress=False)
    half = load_model(tiny_mc, "mcqa", device="cpu", dtype="bfloat16")
    assert {parameter.dtype for parameter in half.network.parameters()} == {torch.bfloat16}
    preds = score(probes, half, scorer="mcqa", dtype="bfloat16", cache=False, progress=False)
    assert preds["scores"].dtype.inner == full["scores"].dtype.inner  # written as float32 whatever the weights
    np.testing.assert_allclose(flat(preds), flat(full), atol=0.05)  # bfloat16 keeps about 3 significant digits
    assert preds["fingerprint"][0] != full["fingerprint"][0]
    with pytest.raises(SpecError, match="dtype='float32' \\(loaded with 'bfloat16'\\)"):
        score(probes, half, scorer="mcqa", dtype="float32", cache=False, progress=False)


@pytest.mark.skipif(HAS_ACCELERATE, reason="accelerate is installed here")
def test_device_map_auto_without_accelerate_names_the_gpu_extra(tiny_mc):
    with pytest.raises(WorkbenchError, match=r"pip install 'probe-workbench\[gpu\]'"):
        load_model(tiny_mc, "mcqa", device_map="auto")


@pytest.mark.skipif(not HAS_ACCELERATE, reason="needs the gpu extra (accelerate)")
def test_device_map_auto_places_the_model_and_scores_as_one_device_does(tiny_mc):
    probes = make_probes()
    spread = load_model(tiny_mc, "mcqa", device_map="auto")
    assert spread.device == check_device("auto") and spread.device_map == "auto"
    alone = score(probes, tiny_mc, scorer="mcqa", device=spread.device, cache=False, progress=False)
    np.testing.assert_allclose(flat(score(probes, spread, "mcqa", cache=False, progress=False)), flat(alone), atol=1e-5)


def test_device_map_is_auto_or_nothing_and_never_beside_a_device():
    with pytest.raises(SpecError, match="use 'auto'"):
        ScoreSpec(device_map="balanced")
    with pytest.raises(SpecError, match="pass one"):
        ScoreSpec(device_map="auto", device="cpu")
    with pytest.raises(SpecError, match="random-weights control"):
        ScoreSpec(device_map="auto", control="random-weights")


# --- automatic batch size -----------------------------------------------------------------------


def test_out_of_memory_halves_the_batch_retries_it_and_the_next_run_starts_from_what_fit(tiny_mc):
    probes = make_probes()
    wanted = score(probes, tiny_mc, scorer="mcqa", batch_size=8, cache=False, progress=False)
    first = load_model(tiny_mc, "mcqa")
    failed = out_of_memory_above(first, rows=10)
    preds = score(probes, first, scorer="mcqa", batch_size="auto", cache=False, progress=False)
    assert failed == [25, 16]  # CPU guess 32: all 25 pairs, then 16 after one halving; 8 fits
    np.testing.assert_allclose(flat(preds), flat(wanted), atol=1e-6)
    memory = json.loads((cache_dir("predictions") / MEMORY).read_text())
    assert [size for key, size in memory.items() if key.startswith(first.fingerprint)] == [8]

    again = load_model(tiny_mc, "mcqa")
    assert out_of_memory_above(again, rows=10) == []
    score(probes, again, scorer="mcqa", batch_size="auto", cache=False, progress=False)
    assert out_of_memory_above(again, rows=10) == []  # started from 8: nothing ran out of memory


def test_a_fixed_batch_that_runs_out_of_memory_names_auto_and_one_input_too_many_names_the_ways_out(tiny_mc):
    probes = make_probes()
    model = load_model(tiny_mc, "mcqa")
    out_of_memory_above(model, rows=0)
    with pytest.raises(WorkbenchError, match="batch size 32.*batch_size='auto'"):
        score(probes, model, scorer="mcqa", batch_size=32, cache=False, progress=False)
    with pytest.raises(WorkbenchError, match="batch size 1; use a smaller max_length, dtype='bfloat16'"):
        score(probes, model, scorer="mcqa", batch_size="auto", cache=False, progress=False)


def test_workbench_score_takes_an_automatic_batch_size_and_a_dtype(cli, tiny_mc, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    make_probes().write_parquet(tmp_path / "probes.parquet")
    args = ["score", "--model", str(tiny_mc), "--scorer", "mcqa", "--probes", str(tmp_path / "probes.parquet")]
    out = tmp_path / "preds.parquet"
    result = CliRunner().invoke(cli, [*args, "--out", str(out), "--batch-size", "auto", "--dtype", "bfloat16"])
    assert result.exit_code == 0, result.output
    assert len(json.loads((tmp_path / "home" / "predictions" / MEMORY).read_text())) == 1
    wrong = CliRunner().invoke(cli, [*args, "--out", str(out), "--batch-size", "many"])
    assert isinstance(wrong.exception, SpecError) and "pass one (e.g. 32) or auto" in str(wrong.exception)


def test_batch_size_is_a_whole_number_or_auto():
    assert ScoreSpec(batch_size="auto").batch_size == "auto"
    with pytest.raises(SpecError, match="or 'auto'"):
        ScoreSpec(batch_size="big")


# --- tokenising ahead ---------------------------------------------------------------------------


def test_tokenising_ahead_on_a_thread_gives_the_outputs_of_tokenising_in_turn(tiny_mc):
    model = load_model(tiny_mc, "similarity")
    texts = [(f"{question} {' '.join(choices[: 1 + index % 4])} ({index})",) for index, (question, choices, _)
             in enumerate(QUESTIONS * 8)]  # fmt: skip, 40 texts of several lengths
    threads: list[str] = []

    def encode(units):
        threads.append(threading.current_thread().name)
        return encode_texts(model, [unit[0] for unit in units])

    work = Work("embedding", encode=encode, run=lambda features, _: embed(model, features))
    ahead = compute(model, work, texts, 4, None, progress=False, prefetch=2)
    assert len(threads) == -(-len(texts) // (4 * CHUNK_STEPS)) == 3 and "MainThread" not in threads
    threads.clear()
    in_turn = compute(model, work, texts, 4, None, progress=False, prefetch=0)
    assert set(threads) == {"MainThread"}
    assert all(np.array_equal(ahead[unit], in_turn[unit]) for unit in texts)


def test_texts_are_tokenised_as_transformers_tokenises_them_and_only_long_ones_are_cut(tiny_mc):
    model = load_model(tiny_mc, "mcqa", max_length=16)
    first, second = ["A dog is a kind of", "x " * 40, "Which word"], ["animal", "long", ""]
    for pairs in (None, second):
        expected = model.tokenizer(first, pairs, truncation=True, max_length=16)
        features = encode_texts(model, first, pairs)
        assert [item["input_ids"] for item in features] == expected["input_ids"]
        assert [item["token_type_ids"] for item in features] == expected["token_type_ids"]
        assert [item["truncated"] for item in features] == [False, True, False]


# --- fingerprints from files --------------------------------------------------------------------


def test_the_fingerprint_follows_the_files_not_their_place(tiny_mc, tmp_path):
    copy = shutil.copytree(tiny_mc, tmp_path / "copy")
    assert load_model(copy, "mcqa").fingerprint == load_model(tiny_mc, "mcqa").fingerprint
    torch.manual_seed(1)  # other weights, the same config and tokenizer
    BertForMultipleChoice(BertConfig.from_pretrained(tiny_mc)).save_pretrained(copy)
    assert load_model(copy, "mcqa").fingerprint != load_model(tiny_mc, "mcqa").fingerprint


def test_a_file_changed_in_place_with_its_size_and_mtime_put_back_is_read_again(tiny_mc, tmp_path, monkeypatch):
    import hashlib

    copy = shutil.copytree(tiny_mc, tmp_path / "copy")
    weights, store = copy / "model.safetensors", tmp_path / "digests.json"
    first = model_fingerprint(copy, "BertForMultipleChoice", "none", torch.float32, store=store)
    reads = []
    digest = hashlib.file_digest
    monkeypatch.setattr(hashlib, "file_digest", lambda handle, name: reads.append(handle.name) or digest(handle, name))
    assert model_fingerprint(copy, "BertForMultipleChoice", "none", torch.float32, store=store) == first
    assert reads == []  # an untouched file is not read again
    stamp, data = weights.stat(), bytearray(weights.read_bytes())
    data[-1] ^= 0xFF  # a changed weight, same size, the old mtime put back (issue 53: it was scored as the old one)
    weights.write_bytes(bytes(data))
    os.utime(weights, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert weights.stat().st_size == stamp.st_size and weights.stat().st_mtime_ns == stamp.st_mtime_ns
    assert model_fingerprint(copy, "BertForMultipleChoice", "none", torch.float32, store=store) != first
    assert reads == [str(weights)]


def test_a_hub_name_is_fingerprinted_from_its_snapshot_folder(tiny_mc, tmp_path, monkeypatch):
    import huggingface_hub.constants

    repo = tmp_path / "hub" / "models--lab--tiny-mc"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0123abcd")
    snapshot = repo / "snapshots" / "0123abcd"
    blobs = shutil.copytree(tiny_mc, repo / "blobs")
    snapshot.mkdir(parents=True)
    for blob in blobs.iterdir():  # the hub cache's layout: snapshot files are links to blobs
        (snapshot / blob.name).symlink_to(blob)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert load_model("lab/tiny-mc", "mcqa").fingerprint == load_model(tiny_mc, "mcqa").fingerprint


def test_controls_heads_dtypes_and_seeds_keep_their_own_fingerprints(tiny_mc, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScoringWarning)
        prints = {
            "mcqa": load_model(tiny_mc, "mcqa").fingerprint,
            "similarity": load_model(tiny_mc, "similarity").fingerprint,
            "static": load_model(tiny_mc, "similarity", control="static-embeddings").fingerprint,
            "random 0": load_model(tiny_mc, "mcqa", control="random-weights").fingerprint,
            "random 1": load_model(tiny_mc, "mcqa", control="random-weights", seed=1).fingerprint,
            "bfloat16": load_model(tiny_mc, "mcqa", dtype="bfloat16").fingerprint,
        }
    assert len(set(prints.values())) == len(prints)
    copy = shutil.copytree(tiny_mc, tmp_path / "copy")
    (copy / "model.safetensors").unlink()  # random weights read no weight file
    assert load_model(copy, "mcqa", control="random-weights").fingerprint == prints["random 0"]


# --- the benchmark's small mode -----------------------------------------------------------------


def test_the_scoring_benchmark_runs_in_its_small_mode_and_records_it(tmp_path):
    """The bench case, run by the bench's runner: one record with the scorer against its bare forward and the
    fingerprint against the old way, measured in the same run."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(ROOT / "bench" / "run.py"), "scoring-scale-small", "--records", str(tmp_path)]
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    (record,) = [json.loads(line) for line in (tmp_path / "scoring-scale-small.jsonl").read_text().splitlines()]
    rows = {row["measure"]: row for row in record["rows"]}
    assert rows["tiny BERT scorer / bare forward"]["ours_s"] > rows["tiny BERT scorer / bare forward"]["bare_s"] > 0
    assert rows["fingerprint, cached (size and mtime unchanged)"]["ratio"] < 1  # against every tensor hashed
    assert record["commit"] and record["machine"]["cores"] >= 1


# --- every GPU check, in its CPU mode (bench/gpu_check.sh) -----------------------------------------------------------


def test_the_gpu_check_runs_every_step_in_its_cpu_mode_and_prints_each_figure_as_a_json_line(tmp_path, released_dir):
    """The script the GPU machine runs, on tiny sizes: every step leaves figures and no error, the causal scorer
    agrees with the plain transformers loop and with lm-eval, and the log in $OUT holds what stdout printed."""
    env = {**os.environ, "OUT": str(tmp_path / "out"), "PYTHON": sys.executable, "GPU_BUNDLE": str(tmp_path / "none")}
    run = subprocess.run(["bash", str(ROOT / "bench" / "gpu_check.sh"), "--cpu"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    printed = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    logged = [json.loads(line) for line in (tmp_path / "out" / "gpu_check.jsonl").read_text().splitlines()]
    assert printed == logged
    assert [line for line in logged if "error" in line or "skipped" in line] == []
    steps = {line["step"] for line in logged}
    assert steps == {"env", "mcqa-float32", "mcqa-bfloat16", "causal-135m", "causal-1.7b", "lm-eval", "fit", "done"}
    compared = {line["compare"]: line for line in logged if "compare" in line}
    for name in ("workbench-float32 vs reference-float32", "workbench-bfloat16 vs reference-bfloat16"):
        assert compared[name]["picks_agree"] == 1.0 and compared[name]["max_abs_diff"] < 1e-3
    harness = next(line for line in logged if line["step"] == "lm-eval")
    assert harness["picks_agree"] == 1.0 and harness["acc"] == harness["workbench_acc"]
    assert {line["model"] for line in logged if line["step"] == "fit"} == {"bert-base", "roberta-large"}
    assert all(line["ratio"] > 0 for line in logged if line["step"].startswith("mcqa"))
