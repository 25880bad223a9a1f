"""Scorers (mcqa, mlm, similarity), controls, the prediction cache and ``workbench score``.

Plumbing runs on tiny random BERTs saved from configs (with the real MiniLM vocabulary);
integration runs on the real offline all-MiniLM-L6-v2 (``@pytest.mark.model``).
"""

import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch
from transformers import (
    AutoModel,
    AutoTokenizer,
    BertConfig,
    BertForMaskedLM,
    BertForMultipleChoice,
    BertModel,
)
from typer.testing import CliRunner

from workbench.errors import SpecError, WorkbenchError
from workbench.schema import PREDICTION_SCHEMA, PROBE_SCHEMA, conform
from workbench.scoring import PredictionCache, ScoreSpec, ScoringWarning, load_model, score

HYPERNYMY = "In {s}, the word or concept {w} is best described as a type of"
QUESTIONS = [
    (
        HYPERNYMY.format(s="'the dog barked at the mailman'", w="dog"),
        [
            "canine, defined as 'any of various fissiped mammals with nonretractile claws'",
            "tree, defined as 'a tall perennial woody plant'",
            "vehicle, defined as 'a conveyance that transports people or objects'",
            "feline, defined as 'any of various lithe-bodied roundheaded fissiped mammals'",
            "mineral, defined as 'solid homogeneous inorganic substances occurring in nature'",
        ],
        0,
    ),
    (
        HYPERNYMY.format(s="'she planted an oak in the garden'", w="oak"),
        [
            "vehicle, defined as 'a conveyance that transports people or objects'",
            "tree, defined as 'a tall perennial woody plant'",
            "canine, defined as 'any of various fissiped mammals with nonretractile claws'",
            "fish, defined as 'any of various mostly cold-blooded aquatic vertebrates'",
            "tool, defined as 'an implement used in the practice of a vocation'",
        ],
        1,
    ),
    (
        "Which set of words best corresponds to the definition 'a large natural stream of water'?",
        ["river", "desk, table", "run, sprint", "anger, ire", "hat"],
        0,
    ),
    ("A robin is a type of [MASK].", ["bird", "fish", "rock", "tree", "car"], 0),
    ("The opposite of hot is", ["cold", "warm", "red", "dog", "blue"], 0),
]


def make_probes(rows=QUESTIONS) -> pl.DataFrame:
    """A probe frame of the given (question, choices, answer) rows, in PROBE_SCHEMA."""
    data = {name: [None] * len(rows) for name in PROBE_SCHEMA}
    data.update(
        id=[f"q{index}" for index in range(len(rows))],
        probe=["hypernymy"] * len(rows),
        split=["test"] * len(rows),
        question=[question for question, _, _ in rows],
        choices=[choices for _, choices, _ in rows],
        answer=[answer for _, _, answer in rows],
    )
    return conform(pl.DataFrame(data, schema=PROBE_SCHEMA, strict=False), PROBE_SCHEMA)


def tiny_config(tokenizer) -> BertConfig:
    return BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=128,
    )


@pytest.fixture(scope="session")
def tokenizer(minilm_path: Path):
    return AutoTokenizer.from_pretrained(minilm_path)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory, tokenizer) -> dict[str, Path]:
    """Tiny random checkpoints: with an MLM head, with a trained-looking MC head, and headless."""
    folders = {}
    for name, cls in (("mlm", BertForMaskedLM), ("mcqa", BertForMultipleChoice), ("bare", BertModel)):
        torch.manual_seed(len(name))
        folder = tmp_path_factory.mktemp(f"tiny-{name}")
        cls(tiny_config(tokenizer)).save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        folders[name] = folder
    return folders


@pytest.fixture
def cache(tmp_path: Path) -> PredictionCache:
    return PredictionCache(tmp_path / "predictions.sqlite")


def count_forwards(model, fail_at: int | None = None) -> list[int]:
    """Record the batch size of each forward of ``model.network``; raise KeyboardInterrupt at call ``fail_at``."""
    calls: list[int] = []

    def hook(module, args, kwargs):
        calls.append(len((kwargs.get("input_ids") if "input_ids" in kwargs else args[0])))
        if fail_at is not None and len(calls) == fail_at:
            raise KeyboardInterrupt

    model.network.register_forward_pre_hook(hook, with_kwargs=True)
    return calls


def load_quietly(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScoringWarning)
        return load_model(*args, **kwargs)


# --- output frame -----------------------------------------------------------------------------


def test_prediction_frame_keeps_every_probe_row_and_adds_the_score_columns(tiny, cache):
    probes = make_probes()
    preds = score(probes, tiny["mlm"], scorer="similarity", cache=cache, progress=False)
    assert preds.schema == pl.Schema(PREDICTION_SCHEMA)
    assert preds.select(list(PROBE_SCHEMA)).equals(probes)
    assert (preds["scores"].list.len() == preds["choices"].list.len()).all()
    assert preds["pred"].to_list() == [int(np.argmax(row)) for row in preds["scores"].to_list()]
    assert (preds["correct"] == (preds["pred"] == preds["answer"])).all()
    assert set(preds["model"]) == {tiny["mlm"].name}  # the model's folder name, not its whole path
    named = score(probes, tiny["mlm"], scorer="similarity", cache=cache, progress=False, name="my BERT")
    assert set(named["model"]) == {"my BERT"}
    assert set(preds["scorer"]) == {"similarity"} and set(preds["rule"]) == {"cosine"}
    assert set(preds["control"]) == {"none"} and preds["fingerprint"].n_unique() == 1


def test_empty_probe_frame_and_choiceless_questions_are_refused(tiny, cache):
    with pytest.raises(WorkbenchError, match="no questions to score"):
        score(make_probes([]), tiny["mlm"], cache=cache, progress=False)
    with pytest.raises(WorkbenchError, match="at least two non-empty choices"):
        score(make_probes([("Is it?", ["yes", " "], 0)]), tiny["mlm"], cache=cache, progress=False)


# --- similarity -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm(minilm_path: Path):
    return load_model(minilm_path, "similarity")


@pytest.mark.model
def test_similarity_scores_are_the_cosine_of_mean_pooled_minilm_states(minilm, minilm_path, cache):
    probes = make_probes(QUESTIONS[:2])
    preds = score(probes, minilm, scorer="similarity", cache=cache, progress=False)
    network, tokenizer = AutoModel.from_pretrained(minilm_path), AutoTokenizer.from_pretrained(minilm_path)

    def embed(text: str) -> torch.Tensor:
        with torch.no_grad():
            return network(**tokenizer(text, return_tensors="pt")).last_hidden_state[0].mean(dim=0)

    for (question, choices, _), scores in zip(QUESTIONS[:2], preds["scores"].to_list()):
        direct = [torch.cosine_similarity(embed(question), embed(choice), dim=0).item() for choice in choices]
        assert scores == pytest.approx(direct, abs=1e-5)
    assert preds["correct"].all()  # MiniLM knows a dog is a canine and an oak a tree


def test_each_unique_text_is_embedded_once(tiny, cache):
    probes = make_probes([QUESTIONS[0], QUESTIONS[0], QUESTIONS[1]])  # a repeated row; shared choices
    model = load_model(tiny["mlm"], "similarity")
    calls = count_forwards(model)
    score(probes, model, scorer="similarity", cache=cache, batch_size=4, progress=False)
    texts = {QUESTIONS[0][0], QUESTIONS[1][0], *QUESTIONS[0][1], *QUESTIONS[1][1]}
    assert sum(calls) == len(texts) == 9


def test_static_embeddings_control_averages_the_embedding_rows_without_special_tokens(tiny, tokenizer, cache):
    probes = make_probes(QUESTIONS[2:3])
    preds = score(probes, tiny["mlm"], scorer="similarity", control="static-embeddings", cache=cache, progress=False)
    table = BertModel.from_pretrained(tiny["mlm"]).get_input_embeddings().weight.detach()

    def embed(text: str) -> torch.Tensor:
        return table[tokenizer(text, add_special_tokens=False)["input_ids"]].mean(dim=0)

    question, choices, _ = QUESTIONS[2]
    direct = [torch.cosine_similarity(embed(question), embed(choice), dim=0).item() for choice in choices]
    assert preds["scores"][0].to_list() == pytest.approx(direct, abs=1e-5)
    assert preds["control"][0] == "static-embeddings"


@pytest.mark.parametrize("scorer", ["mcqa", "mlm"])
def test_static_embeddings_control_is_refused_for_heads_that_read_one_position(scorer):
    with pytest.raises(SpecError, match="static-embeddings.*similarity"):
        ScoreSpec(scorer, control="static-embeddings")


# --- mcqa -------------------------------------------------------------------------------------


@pytest.mark.parametrize("batch_size", [1, 7])
def test_mcqa_scores_equal_one_multiple_choice_forward_per_question(tiny, tokenizer, cache, batch_size):
    probes = make_probes()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ScoringWarning)  # this checkpoint has its head: no warning
        preds = score(probes, tiny["mcqa"], scorer="mcqa", cache=cache, batch_size=batch_size, progress=False)
    network = BertForMultipleChoice.from_pretrained(tiny["mcqa"]).eval()
    for (question, choices, _), scores in zip(QUESTIONS, preds["scores"].to_list()):
        batch = tokenizer([question] * len(choices), choices, padding=True, return_tensors="pt")
        with torch.no_grad():
            logits = network(**{name: tensor.unsqueeze(0) for name, tensor in batch.items()}).logits[0]
        assert scores == pytest.approx(logits.tolist(), abs=1e-5)
    assert set(preds["rule"]) == {"logit"}


def test_mcqa_on_a_checkpoint_without_its_head_warns_and_seeds_the_fresh_head(tiny, cache):
    with pytest.warns(ScoringWarning, match="no trained multiple-choice head.*not meaningful zero-shot"):
        first = load_model(tiny["mlm"], "mcqa", seed=0)
    assert first.fresh_head
    again, other = load_quietly(tiny["mlm"], "mcqa", seed=0), load_quietly(tiny["mlm"], "mcqa", seed=1)
    assert again.fingerprint == first.fingerprint != other.fingerprint


def test_identical_question_choice_pairs_are_scored_once(tiny, cache):
    probes = make_probes([QUESTIONS[0], QUESTIONS[0], QUESTIONS[1]])
    model = load_model(tiny["mcqa"], "mcqa")
    calls = count_forwards(model)
    preds = score(probes, model, scorer="mcqa", cache=cache, batch_size=64, progress=False)
    assert sum(calls) == 10  # 5 + 5 pairs; the repeated row and shared choices add none
    assert preds["scores"][0].to_list() == preds["scores"][1].to_list()


# --- mlm --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mlm_network(tiny):
    return BertForMaskedLM.from_pretrained(tiny["mlm"]).eval()


def test_mc_mlm_is_the_softmax_restricted_to_the_candidates(tiny, tokenizer, mlm_network, cache):
    probes = make_probes(QUESTIONS[3:5])  # one question with its own [MASK], one without
    preds = score(probes, tiny["mlm"], scorer="mlm", cache=cache, progress=False)
    assert preds["rule"].to_list() == ["mc-mlm", "mc-mlm"]
    for (question, choices, _), scores in zip(QUESTIONS[3:5], preds["scores"].to_list()):
        statement = question if "[MASK]" in question else f"{question} [MASK]"
        encoded = tokenizer(statement, return_tensors="pt")
        position = encoded["input_ids"][0].tolist().index(tokenizer.mask_token_id)
        candidates = tokenizer.convert_tokens_to_ids(choices)
        with torch.no_grad():
            logits = mlm_network(**encoded).logits[0, position, candidates]
        assert scores == pytest.approx(torch.log_softmax(logits, dim=-1).tolist(), abs=1e-5)


def test_multi_token_choices_get_the_pseudo_log_likelihood_of_their_tokens(tiny, tokenizer, mlm_network, cache):
    question, choices, _ = QUESTIONS[0]
    probes = make_probes([QUESTIONS[0], QUESTIONS[3]])
    by_rule = {
        rule: score(probes, tiny["mlm"], scorer="mlm", rule=rule, cache=cache, progress=False)
        for rule in ("auto", "pll-sum", "pll-mean")
    }
    assert by_rule["auto"]["rule"].to_list() == ["pll-mean", "mc-mlm"]
    for index, choice in enumerate(choices):
        ids = tokenizer(f"{question} {choice}")["input_ids"]
        start = len(tokenizer(question)["input_ids"]) - 1  # the choice's tokens follow the question's
        logprobs = []
        for position in range(start, len(ids) - 1):
            masked = torch.tensor([ids[:position] + [tokenizer.mask_token_id] + ids[position + 1 :]])
            with torch.no_grad():
                logits = mlm_network(input_ids=masked).logits[0, position]
            logprobs.append(torch.log_softmax(logits, dim=-1)[ids[position]].item())
        assert by_rule["pll-sum"]["scores"][0][index] == pytest.approx(sum(logprobs), abs=1e-4)
        assert by_rule["pll-mean"]["scores"][0][index] == pytest.approx(np.mean(logprobs), abs=1e-5)
    assert by_rule["auto"]["scores"][0].to_list() == by_rule["pll-mean"]["scores"][0].to_list()
    assert by_rule["auto"]["fingerprint"][0] != by_rule["auto"]["fingerprint"][1]  # the rule is part of it


def test_mc_mlm_rule_refuses_multi_token_choices(tiny, cache):
    with pytest.raises(WorkbenchError, match="mc-mlm.*one token.*1 questions"):
        score(
            make_probes(QUESTIONS[:1] + QUESTIONS[3:4]), tiny["mlm"], "mlm", rule="mc-mlm", cache=cache, progress=False
        )


def test_mlm_scorer_refuses_a_checkpoint_without_an_mlm_head(tiny):
    with pytest.raises(WorkbenchError, match="no trained masked-LM head.*similarity"):
        load_model(tiny["bare"], "mlm")


# --- controls ---------------------------------------------------------------------------------


def test_random_weights_control_is_deterministic_per_seed_and_differs_from_the_model(tiny, cache):
    probes = make_probes(QUESTIONS[2:])
    runs = {
        (control, seed): score(
            probes, tiny["mlm"], scorer="mlm", control=control, seed=seed, cache=False, progress=False
        )
        for control, seed in (("none", 0), ("random-weights", 0), ("random-weights", 1))
    }
    again = score(probes, tiny["mlm"], scorer="mlm", control="random-weights", seed=0, cache=False, progress=False)
    assert again["scores"].to_list() == runs[("random-weights", 0)]["scores"].to_list()
    assert again["fingerprint"].to_list() == runs[("random-weights", 0)]["fingerprint"].to_list()
    assert runs[("random-weights", 0)]["scores"].to_list() != runs[("random-weights", 1)]["scores"].to_list()
    assert runs[("random-weights", 0)]["scores"].to_list() != runs[("none", 0)]["scores"].to_list()
    assert set(runs[("random-weights", 1)]["control"]) == {"random-weights"}


# --- cache ------------------------------------------------------------------------------------


def test_rescoring_the_same_items_never_calls_the_model(tiny, cache):
    probes = make_probes()
    model = load_model(tiny["mcqa"], "mcqa")
    calls = count_forwards(model)
    first = score(probes, model, scorer="mcqa", cache=cache, batch_size=4, progress=False)
    assert len(calls) == 7 and len(cache) == 25  # 25 unique pairs in batches of 4
    second = score(probes, model, scorer="mcqa", cache=cache, batch_size=4, progress=False)
    assert len(calls) == 7
    assert second.equals(first)


def test_an_interrupted_run_resumes_from_the_batches_it_committed(tiny, cache):
    probes = make_probes()
    fresh = score(probes, tiny["mcqa"], scorer="mcqa", cache=False, progress=False)
    interrupted = load_model(tiny["mcqa"], "mcqa")
    count_forwards(interrupted, fail_at=3)
    with pytest.raises(KeyboardInterrupt):
        score(probes, interrupted, scorer="mcqa", cache=cache, batch_size=4, progress=False)
    resumed = load_model(tiny["mcqa"], "mcqa")
    calls = count_forwards(resumed)
    preds = score(probes, resumed, scorer="mcqa", cache=cache, batch_size=4, progress=False)
    assert len(calls) == 7 - 2  # the two batches committed before the interruption are not rerun
    flat = [np.concatenate(frame["scores"].to_list()) for frame in (preds, fresh)]
    np.testing.assert_allclose(*flat, atol=1e-6)


def test_a_cache_written_by_other_weights_is_never_reused(tiny, cache):
    probes = make_probes()
    score(probes, tiny["mlm"], scorer="similarity", cache=cache, progress=False)
    other = load_model(tiny["mlm"], "similarity", control="random-weights")
    calls = count_forwards(other)
    preds = score(probes, other, scorer="similarity", control="random-weights", cache=cache, progress=False)
    texts = set(probes["question"]) | set(probes["choices"].explode())
    assert sum(calls) == len(texts)
    assert preds["fingerprint"][0] != score(probes, tiny["mlm"], cache=cache, progress=False)["fingerprint"][0]


# --- bad input, truncation, progress ----------------------------------------------------------


def test_a_loaded_model_must_match_the_settings_asked_for(tiny, cache):
    model = load_model(tiny["mlm"], "similarity", seed=3)
    with pytest.raises(SpecError, match=r"seed=0 \(loaded with 3\)"):
        score(make_probes(), model, scorer="similarity", seed=0, cache=cache, progress=False)


def test_a_missing_model_path_is_named_with_the_fix(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(WorkbenchError, match=f"model path {missing} does not exist; check the path"):
        load_model(missing, "similarity")


def test_an_unknown_hub_name_says_how_to_get_it_offline():
    with pytest.raises(
        WorkbenchError, match="the model nobody/no-such-model is not in the local Hugging Face cache.*HF_HUB_OFFLINE"
    ):
        load_model("nobody/no-such-model", "similarity")


def test_truncation_is_reported_with_the_count(tiny, tokenizer, cache):
    probes = make_probes(QUESTIONS[:2])
    texts = set(probes["question"]) | set(probes["choices"].explode())
    long = sum(len(tokenizer(text)["input_ids"]) > 16 for text in texts)
    assert 0 < long < len(texts) == 9
    with pytest.warns(ScoringWarning, match=rf"{long} of 9 embedding inputs were longer than 16 tokens"):
        score(probes, tiny["mlm"], max_length=16, cache=cache, progress=False)


def test_mlm_truncation_drops_the_start_of_the_question_never_the_choice(tiny, cache):
    probes = make_probes(QUESTIONS[:1] + QUESTIONS[3:4])
    with pytest.warns(ScoringWarning, match="pll inputs were longer than 24 tokens"):
        preds = score(probes, tiny["mlm"], scorer="mlm", max_length=24, cache=cache, progress=False)
    assert np.isfinite(np.concatenate(preds["scores"].to_list())).all()
    assert preds["rule"].to_list() == ["pll-mean", "mc-mlm"]


def test_progress_bar_shows_rate_and_can_be_turned_off(tiny, cache, capsys):
    score(make_probes(QUESTIONS[2:3]), tiny["mlm"], cache=cache, progress=False)
    assert "item/s" not in capsys.readouterr().err
    score(make_probes(QUESTIONS[3:4]), tiny["mlm"], cache=cache, progress=True)
    assert "item/s" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scorer": "bleu"}, "scorer='bleu' is not allowed"),
        ({"scorer": "mcqa", "rule": "pll-sum"}, "rule='pll-sum' is not allowed for scorer='mcqa'"),
        ({"batch_size": 0}, "batch_size=0 is out of range"),
        ({"control": "shuffled"}, "control='shuffled' is not allowed"),
        ({"device": "tpu:x"}, "device='tpu:x' is not a torch device"),
    ],
)
def test_score_spec_names_the_bad_parameter(kwargs, message):
    with pytest.raises(SpecError, match=message):
        ScoreSpec(**kwargs)


# --- the released data and the CLI ------------------------------------------------------------


@pytest.mark.model
def test_minilm_similarity_scores_released_hypernymy_above_chance(minilm, released_dir, cache):
    from workbench.probes.formats import read_probes

    probes = read_probes(released_dir / "hypernymy_test.jsonl").head(60)
    preds = score(probes, minilm, scorer="similarity", cache=cache, progress=False)
    assert preds.schema == pl.Schema(PREDICTION_SCHEMA) and preds.height == 60
    accuracy = preds["correct"].mean()
    assert 0.2 < accuracy <= 1.0  # five choices: chance is 0.2


def test_cli_scores_one_split_of_a_probe_file(cli, tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    probes = make_probes().with_columns(split=pl.Series(["test", "test", "train", "test", "train"]))
    probes.write_parquet(tmp_path / "probes.parquet")
    out = tmp_path / "preds.parquet"
    args = ["score", "--model", str(tiny["mlm"]), "--scorer", "mlm", "--probes", str(tmp_path / "probes.parquet")]
    result = CliRunner().invoke(cli, [*args, "--out", str(out), "--split", "test", "--batch-size", "8"])
    assert result.exit_code == 0, result.output
    assert "scored 3 questions with mlm (rule pll-mean (2), mc-mlm (1), control none): accuracy" in result.stdout
    preds = pl.read_parquet(out)
    assert preds.schema == pl.Schema(PREDICTION_SCHEMA) and preds["id"].to_list() == ["q0", "q1", "q3"]
    missing = CliRunner().invoke(cli, [*args, "--out", str(out), "--split", "dev"])
    assert isinstance(missing.exception, WorkbenchError) and "no questions in split 'dev'" in str(missing.exception)
