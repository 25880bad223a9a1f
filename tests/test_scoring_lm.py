"""The language-model scorers (causal, seq2seq): rules, shared prefix, prompt templates, truncation,
controls, zero-shot accuracy for inoculation curves, the CLI and the report's rule notes.

Runs on a tiny random GPT-2 and a tiny random T5 built from configs, with byte-level BPE / Metaspace
tokenizers trained here on the test questions (GPT-2's has no pad token, as the real one; T5's
appends ``</s>``). Expected values are computed directly: one forward over the whole prompt + choice
string, log_softmax, gather.
"""

import json
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch
from test_scoring import QUESTIONS, count_forwards, make_probes
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerFast,
    T5Config,
    T5ForConditionalGeneration,
)
from typer.testing import CliRunner

from workbench.errors import SpecError, WorkbenchError
from workbench.probes.templates import TemplateError
from workbench.reports import rule_notes, text_report
from workbench.schema import PREDICTION_SCHEMA, RULE_NOTES
from workbench.scoring import (
    PredictionCache,
    ScoreSpec,
    ScoringWarning,
    causal,
    lm,
    load_model,
    load_prompts,
    score,
    zero_shot_accuracy,
)
from workbench.scoring.lm import encode_units

TEXTS = [question for question, _, _ in QUESTIONS] + [choice for _, choices, _ in QUESTIONS for choice in choices]
RULES = ("sum", "mean-token", "mean-char", "mi")


def byte_bpe(bos: bool = False) -> PreTrainedTokenizerFast:
    """A GPT-2-style byte-level BPE (no pad token); with ``bos``, one that puts <|endoftext|> first (Llama-style)."""
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(TEXTS, trainer)
    if bos:
        bpe.post_processor = processors.TemplateProcessing(
            single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", 0)]
        )
    return PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>")


def metaspace_bpe() -> PreTrainedTokenizerFast:
    """A T5-style tokenizer: pad 0, </s> 1 appended to every encoder text."""
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.Metaspace()
    bpe.decoder = decoders.Metaspace()
    bpe.train_from_iterator(TEXTS, trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "</s>", "<unk>"]))
    bpe.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> dict[str, Path]:
    """Tiny random checkpoints: GPT-2 (causal), GPT-2 with a BOS-adding tokenizer, T5 (seq2seq)."""
    folders = {}
    gpt2 = GPT2Config(vocab_size=400, n_positions=128, n_embd=32, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0)
    t5 = T5Config(
        vocab_size=300, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_heads=2,
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
    )  # fmt: skip
    builds = {
        "causal": (GPT2LMHeadModel, gpt2, byte_bpe()),
        "causal-bos": (GPT2LMHeadModel, gpt2, byte_bpe(bos=True)),
        "seq2seq": (T5ForConditionalGeneration, t5, metaspace_bpe()),
    }
    for name, (cls, config, tokenizer) in builds.items():
        torch.manual_seed(len(name))
        folder = tmp_path_factory.mktemp(f"tiny-{name}")
        cls(config).save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        folders[name] = folder
    return folders


@pytest.fixture
def cache(tmp_path: Path) -> PredictionCache:
    return PredictionCache(tmp_path / "predictions.sqlite")


def synonymy(rows) -> pl.DataFrame:
    """Probe rows of type synonymy: the default prompt is 'Question: ...\\nAnswer:', neutral 'Answer:'."""
    return make_probes(rows).with_columns(probe=pl.lit("synonymy"))


def direct_logprob(scorer: str, folder: Path, prompt: str, choice: str) -> tuple[float, int]:
    """Sum of the choice's token log-probabilities (and its token count), from one plain forward."""
    tokenizer = AutoTokenizer.from_pretrained(folder)
    continuation = tokenizer(" " + choice, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        if scorer == "causal":
            network = AutoModelForCausalLM.from_pretrained(folder).eval()
            context = tokenizer(prompt)["input_ids"]
            logits = network(torch.tensor([context + continuation])).logits[0, len(context) - 1 : -1]
        else:
            network = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
            encoder = torch.tensor([tokenizer(prompt)["input_ids"]])
            decoder = torch.tensor([[network.config.decoder_start_token_id, *continuation[:-1]]])
            logits = network(input_ids=encoder, decoder_input_ids=decoder).logits[0]
    logprobs = torch.log_softmax(logits, dim=-1)[torch.arange(len(continuation)), continuation]
    return float(logprobs.sum()), len(continuation)


# --- the rules against a direct computation ---------------------------------------------------


@pytest.mark.parametrize("scorer", ["causal", "seq2seq"])
def test_each_rule_equals_a_direct_log_softmax_over_prompt_and_choice(tiny_lm, cache, scorer):
    rows = QUESTIONS[2:4]
    preds = score(synonymy(rows), tiny_lm[scorer], scorer=scorer, rule="all", cache=cache, batch_size=3, progress=False)
    assert preds["rule"].to_list() == [rule for rule in RULES for _ in rows]
    by_rule = {rule: preds.filter(pl.col("rule") == rule)["scores"].to_list() for rule in RULES}
    for index, (question, choices, _) in enumerate(rows):
        for position, choice in enumerate(choices):
            total, tokens = direct_logprob(scorer, tiny_lm[scorer], f"Question: {question}\nAnswer:", choice)
            neutral, _ = direct_logprob(scorer, tiny_lm[scorer], "Answer:", choice)
            assert by_rule["sum"][index][position] == pytest.approx(total, abs=1e-4)
            assert by_rule["mean-token"][index][position] == pytest.approx(total / tokens, abs=1e-5)
            assert by_rule["mean-char"][index][position] == pytest.approx(total / len(choice), abs=1e-5)
            assert by_rule["mi"][index][position] == pytest.approx(total - neutral, abs=1e-4)


def test_one_rule_is_the_matching_rows_of_all_and_auto_is_sum(tiny_lm, cache):
    probes = synonymy(QUESTIONS[:3])
    every = score(probes, tiny_lm["causal"], scorer="causal", rule="all", cache=cache, progress=False)
    assert every.schema == pl.Schema(PREDICTION_SCHEMA) and every.height == 4 * probes.height
    for rule in RULES:
        alone = score(probes, tiny_lm["causal"], scorer="causal", rule=rule, cache=False, progress=False)
        assert alone["id"].to_list() == probes["id"].to_list()
        np.testing.assert_allclose(
            np.concatenate(alone["scores"].to_list()),
            np.concatenate(every.filter(pl.col("rule") == rule)["scores"].to_list()),
            atol=1e-5,
        )
        assert alone["fingerprint"][0] == every.filter(pl.col("rule") == rule)["fingerprint"][0]
    assert every.group_by("rule").agg(pl.col("fingerprint").first())["fingerprint"].n_unique() == 4
    auto = score(probes, tiny_lm["causal"], scorer="causal", cache=cache, progress=False)
    assert set(auto["rule"]) == {"sum"}


def test_all_rules_come_from_one_model_run_through_the_cache(tiny_lm, cache):
    probes = synonymy(QUESTIONS[:2])
    model = load_model(tiny_lm["causal"], "causal")
    calls = count_forwards(model)
    score(probes, model, scorer="causal", rule="all", cache=cache, progress=False)
    ran = len(calls)
    assert ran > 0
    for rule in RULES:
        score(probes, model, scorer="causal", rule=rule, cache=cache, progress=False)
    assert len(calls) == ran


# --- shared prefix ----------------------------------------------------------------------------


@pytest.mark.parametrize("scorer", ["causal", "seq2seq"])
def test_shared_prefix_scores_do_not_depend_on_how_choices_are_batched(tiny_lm, scorer):
    probes = make_probes()
    runs = [
        score(probes, tiny_lm[scorer], scorer=scorer, rule="all", batch_size=size, cache=False, progress=False)
        for size in (1, 4, 64)
    ]
    flat = [np.concatenate(run["scores"].to_list()) for run in runs]
    np.testing.assert_allclose(flat[0], flat[1], atol=1e-5)
    np.testing.assert_allclose(flat[0], flat[2], atol=1e-5)


def test_causal_runs_each_prompt_once_for_all_its_choices(tiny_lm, tmp_path):
    probes = synonymy(QUESTIONS)
    model = load_model(tiny_lm["causal"], "causal")
    prompt_rows: list[int] = []

    def hook(module, args, kwargs):
        if kwargs.get("cache") is None:  # the prompt pass; the choices' pass reuses its cache
            prompt_rows.append(len(kwargs["input_ids"]))

    model.network.register_forward_pre_hook(hook, with_kwargs=True)
    score(probes, model, scorer="causal", batch_size=5, cache=False, progress=False)
    assert sum(prompt_rows) == probes.height  # five choices per question, one prompt run per question


def forward_kinds(model) -> list[tuple[bool, int]]:
    """Record each forward of ``model.network``: (whether it reads a past key/value cache, its rows)."""
    calls: list[tuple[bool, int]] = []
    model.network.register_forward_pre_hook(
        lambda module, args, kwargs: calls.append((kwargs.get("cache") is not None, len(kwargs["input_ids"]))),
        with_kwargs=True,
    )
    return calls


@pytest.mark.parametrize("path", ["shared", "scratch"])
def test_both_causal_paths_equal_a_direct_forward_even_for_a_one_token_prompt(tiny_lm, path):
    model = load_model(tiny_lm["causal"], "causal")
    question, choices, _ = QUESTIONS[2]
    units = [(f"Question: {question}\nAnswer:", f" {choice}") for choice in choices] + [
        ("A", " river"),
        ("A", " a long way down"),
    ]
    features = causal.encode(model, units)
    assert len(features[-1]["prompt"]) == 1  # nothing before its last token: no prefix to cache
    with torch.inference_mode():
        values = causal.token_logprobs(model, features, batch_size=2, path=path)
    for (prompt, continuation), value in zip(units, values):
        total, tokens = direct_logprob("causal", tiny_lm["causal"], prompt, continuation[1:])
        assert len(value) == tokens and float(value.sum()) == pytest.approx(total, abs=1e-4)


def test_causal_continuations_are_batched_across_questions(tiny_lm):
    probes = synonymy(QUESTIONS)
    model = load_model(tiny_lm["causal"], "causal")
    calls = forward_kinds(model)
    score(probes, model, scorer="causal", batch_size=64, cache=False, progress=False)
    assert [rows for cached, rows in calls if not cached] == [probes.height]  # all prompts in one forward
    assert [rows for cached, rows in calls if cached] == [probes.height * 5]  # all choices of all questions in one


def test_auto_path_scores_from_scratch_where_the_prefix_saves_too_little(tiny_lm):
    model = load_model(tiny_lm["causal"], "causal")
    calls = forward_kinds(model)
    question, choices, _ = QUESTIONS[2]
    shared = causal.encode(model, [(f"Question: {question}\nAnswer:", f" {choice}") for choice in choices])
    alone = causal.encode(model, [(f"Q{index}:", f" {choice}") for index, choice in enumerate(choices)])
    both, one = causal.block_of(shared), causal.block_of(alone)
    assert causal.prefix_saving(both, 8) >= causal.MIN_SAVING > causal.prefix_saving(one, 8)
    assert causal.prefers_shared(both, 8, "cpu") and not causal.prefers_shared(one, 8, "cpu")
    assert not causal.prefers_shared(both, causal.GPU_MIN_BATCH - 1, "cuda:0")  # small GPU batches: overhead-bound
    assert causal.prefers_shared(both, causal.GPU_MIN_BATCH, "cuda")
    with torch.inference_mode():
        auto = causal.token_logprobs(model, alone, 8)
        assert not any(cached for cached, _ in calls)  # one forward per batch of whole strings
        forced = causal.token_logprobs(model, alone, 8, path="shared")
        causal.token_logprobs(model, shared, 8)
    assert any(cached for cached, _ in calls)
    np.testing.assert_allclose(np.concatenate(auto), np.concatenate(forced), atol=1e-5)


# --- prompts ----------------------------------------------------------------------------------


def test_default_prompts_follow_the_probe_type():
    templates = load_prompts()
    assert templates.render("synonymy", "Which word means big?", "large") == (
        "Question: Which word means big?\nAnswer:",
        "Answer:",
        " large",
    )
    question = "In 'an oak grew', the word oak is best described as a type of"
    assert templates.render("hypernymy", question, "tree")[0] == question  # a cloze: the choice completes it
    assert templates.render(None, "Is it?", "yes") == templates.render("no-such-probe", "Is it?", "yes")


def test_a_user_prompt_file_changes_the_prompts_and_the_fingerprint(tiny_lm, cache, tmp_path):
    path = tmp_path / "prompts.json"
    entry = {"prompt": "Q: {question}\nA:", "neutral": "A:", "choice": " {choice}"}
    path.write_text(json.dumps({"default": entry, "probes": {}}))
    probes = synonymy(QUESTIONS[2:3])
    ours = score(probes, tiny_lm["causal"], scorer="causal", prompts=path, cache=cache, progress=False)
    default = score(probes, tiny_lm["causal"], scorer="causal", cache=cache, progress=False)
    question, choices, _ = QUESTIONS[2]
    total, _ = direct_logprob("causal", tiny_lm["causal"], f"Q: {question}\nA:", choices[0])
    assert ours["scores"][0][0] == pytest.approx(total, abs=1e-4)
    assert ours["fingerprint"][0] != default["fingerprint"][0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            {"default": {"prompt": "{question} {answer}", "neutral": "A:", "choice": "{choice}"}},
            r"unknown field\(s\) \['answer'\]",
        ),
        ({"default": {"prompt": "{question}", "choice": "{choice}"}}, "expected JSON with 'default'"),
        ({"default": {"prompt": "{question}", "neutral": " ", "choice": "{choice}"}}, "must be a non-empty string"),
    ],
)
def test_a_bad_prompt_file_is_refused_with_the_problem(tmp_path, content, message):
    path = tmp_path / "prompts.json"
    path.write_text(json.dumps(content))
    with pytest.raises(TemplateError, match=message):
        load_prompts(path)


def test_a_prompt_file_for_a_scorer_without_prompts_is_refused():
    with pytest.raises(SpecError, match="prompts='p.json' is only used by the scorers"):
        ScoreSpec("mcqa", prompts="p.json")


# --- tokenisation at the boundary: truncation, BOS --------------------------------------------


def test_truncation_drops_the_start_of_the_prompt_never_the_choice(tiny_lm, cache):
    probes = synonymy(QUESTIONS[2:3])
    with pytest.warns(ScoringWarning, match="causal-logprobs inputs were longer than 12 tokens"):
        preds = score(probes, tiny_lm["causal"], scorer="causal", max_length=12, cache=cache, progress=False)
    tokenizer = AutoTokenizer.from_pretrained(tiny_lm["causal"])
    network = AutoModelForCausalLM.from_pretrained(tiny_lm["causal"]).eval()
    question, choices, _ = QUESTIONS[2]
    for choice, got in zip(choices, preds["scores"][0].to_list()):
        continuation = tokenizer(" " + choice, add_special_tokens=False)["input_ids"]
        context = tokenizer(f"Question: {question}\nAnswer:")["input_ids"][-(12 - len(continuation)) :]
        with torch.no_grad():
            logits = network(torch.tensor([context + continuation])).logits[0, len(context) - 1 : -1]
        expected = torch.log_softmax(logits, dim=-1)[torch.arange(len(continuation)), continuation].sum()
        assert got == pytest.approx(float(expected), abs=1e-4)


def test_a_choice_longer_than_max_length_is_refused(tiny_lm, cache):
    probes = synonymy([("Pick one", ["a rather long choice that will not fit in eight tokens at all", "b"], 0)])
    with pytest.raises(WorkbenchError, match="never truncated, so raise max_length"):
        score(probes, tiny_lm["causal"], scorer="causal", max_length=8, cache=cache, progress=False)


def test_an_instruction_longer_than_the_context_is_refused_before_any_work(tiny_lm, cache):
    probes = synonymy(QUESTIONS[:2])  # 120 KB of instruction: it took 4.5 minutes and 2.5 GB before (issue 53)
    with pytest.raises(
        WorkbenchError, match=r"the instruction \(--system\) is [\d,]+ tokens, as long as .* context of 64"
    ):
        score(probes, tiny_lm["causal"], scorer="causal", max_length=64, system="word " * 24_000, cache=cache,
              progress=False)  # fmt: skip


def test_a_bos_adding_tokenizer_keeps_its_bos_first_when_the_prompt_is_cut(tiny_lm):
    model = load_model(tiny_lm["causal-bos"], "causal", max_length=10)
    bos = model.tokenizer.bos_token_id
    short, long = encode_units(
        model,
        [("Answer:", " river"), ("Question: " + QUESTIONS[2][0], " river")],
        joint_limit=True,
        prompt_special=False,
    )
    assert short["prompt"][0] == bos and short["prompt"].count(bos) == 1 and not short["truncated"]
    assert long["truncated"] and long["prompt"][0] == bos and len(long["input_ids"]) == 10
    assert long["continuation"] == short["continuation"]


# --- controls and heads -----------------------------------------------------------------------


@pytest.mark.parametrize("scorer", ["causal", "seq2seq"])
def test_static_embeddings_control_is_refused_for_language_model_scorers(scorer):
    with pytest.raises(SpecError, match="static-embeddings.*next-token distribution.*random-weights"):
        ScoreSpec(scorer, control="static-embeddings")


@pytest.mark.parametrize("scorer", ["causal", "seq2seq"])
def test_random_weights_control_is_seeded_and_differs_from_the_model(tiny_lm, scorer):
    probes = make_probes(QUESTIONS[2:])
    runs = {
        (control, seed): score(
            probes, tiny_lm[scorer], scorer=scorer, control=control, seed=seed, cache=False, progress=False
        )
        for control, seed in (("none", 0), ("random-weights", 0), ("random-weights", 1))
    }
    again = score(probes, tiny_lm[scorer], scorer=scorer, control="random-weights", seed=0, cache=False, progress=False)
    assert again["scores"].to_list() == runs[("random-weights", 0)]["scores"].to_list()
    assert runs[("random-weights", 0)]["scores"].to_list() != runs[("random-weights", 1)]["scores"].to_list()
    assert runs[("random-weights", 0)]["scores"].to_list() != runs[("none", 0)]["scores"].to_list()


def test_a_causal_scorer_refuses_a_model_without_a_language_model_head(tmp_path):
    from transformers import BertConfig, BertModel

    tokenizer = byte_bpe()
    config = BertConfig(
        vocab_size=400, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37
    )
    BertModel(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    with warnings.catch_warnings(), pytest.raises(WorkbenchError, match="lacks trained weights of its causal-LM"):
        warnings.simplefilter("ignore")
        load_model(tmp_path, "causal")


# --- zero-shot accuracy, report, CLI ----------------------------------------------------------


def test_zero_shot_accuracy_gives_one_k0_point_per_rule(tiny_lm, cache):
    preds = score(make_probes(), tiny_lm["causal"], scorer="causal", rule="all", cache=cache, progress=False)
    points = zero_shot_accuracy(preds)
    assert points["rule"].to_list() == list(RULES) and set(points["k"]) == {0}
    for rule, accuracy, count in points.select("rule", "S_new", "n").iter_rows():
        part = preds.filter(pl.col("rule") == rule)
        assert count == part.height == 5 and accuracy == pytest.approx(part["correct"].mean())


def test_the_report_explains_each_rule_the_predictions_use(tiny_lm, cache):
    preds = score(make_probes(), tiny_lm["causal"], scorer="causal", rule="all", cache=cache, progress=False)
    assert list(rule_notes(preds)) == list(RULES)
    report = text_report(
        preds.with_columns(
            cluster_id=pl.col("id"), hops=pl.lit(1), distractor_family=pl.lit("random"), distractor_depth=pl.lit(0)
        ),
        n_boot=20,
    )
    for rule in RULES:
        assert f"  {rule}: {RULE_NOTES[rule]}" in report


def test_cli_scores_with_a_causal_model_under_all_rules(cli, tiny_lm, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    make_probes().write_parquet(tmp_path / "probes.parquet")
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps({"default": {"prompt": "Q: {question}\nA:", "neutral": "A:", "choice": " {choice}"}}))
    out = tmp_path / "preds.parquet"
    args = [
        "score",
        "--model",
        str(tiny_lm["causal"]),
        "--scorer",
        "causal",
        "--probes",
        str(tmp_path / "probes.parquet"),
    ]
    result = CliRunner().invoke(cli, [*args, "--out", str(out), "--rule", "all", "--prompts", str(prompts)])
    assert result.exit_code == 0, result.output
    assert "scored 5 questions with causal under 4 rules (control none): accuracy sum " in result.stdout
    preds = pl.read_parquet(out)
    assert preds.schema == pl.Schema(PREDICTION_SCHEMA) and preds["rule"].unique(maintain_order=True).to_list() == list(
        RULES
    )


def test_shots_before_every_question_run_once_and_score_as_from_scratch(tiny_lm):
    """A head of tokens every prompt starts with (the shots) runs once for the block, the rest after its cache."""
    model = load_model(tiny_lm["causal"], "causal")
    shots = "Question: a dog is a type of\nAnswer: canine\n\nQuestion: an oak is a type of\nAnswer: tree\n\n"
    questions = {"a cat": (" feline", " mineral", " vehicle"), "a car": (" vehicle", " tree"), "gold": (" mineral",)}
    units = [
        (f"{shots}Question: {word} is a type of\nAnswer:", choice)
        for word, choices in questions.items()
        for choice in choices
    ]
    features = causal.encode(model, units)
    assert len(causal.shared_head([item["prompt"][:-1] for item in features])) >= causal.MIN_HEAD
    calls = forward_kinds(model)
    with torch.inference_mode():
        shared = causal.token_logprobs(model, features, batch_size=4, path="shared")
    assert calls[0] == (False, 1)  # the head alone, once
    assert sum(1 for _, rows in calls if rows == 1) == 1
    with torch.inference_mode():
        scratch = causal.token_logprobs(model, features, batch_size=4, path="scratch")
    for a, b in zip(shared, scratch):
        assert a == pytest.approx(b, abs=1e-4)


def test_scoring_on_a_gpu_leaves_cudnn_attention_out_and_the_cpu_as_it_is():
    from workbench.scoring.batching import attention_kernels

    before = torch.backends.cuda.cudnn_sdp_enabled()
    with attention_kernels("cuda:0"):
        assert not torch.backends.cuda.cudnn_sdp_enabled()
        assert torch.backends.cuda.flash_sdp_enabled() and torch.backends.cuda.mem_efficient_sdp_enabled()
    with attention_kernels("cpu"):
        assert torch.backends.cuda.cudnn_sdp_enabled() == before
    assert torch.backends.cuda.cudnn_sdp_enabled() == before


def test_orders_over_all_units_at_once_equal_the_per_unit_sort_keys(released_dir):
    """The units' orders computed over the whole list (polars, NumPy) are those of Python's stable sort by the
    per-unit keys they replace, on every released hypernymy test question rendered with the default prompts."""
    from workbench.probes.formats import read_probes
    from workbench.scoring.asking import Asking, render
    from workbench.scoring.batching import longest_text_first

    probes = read_probes(released_dir / "hypernymy_test.jsonl")
    pairs = probes.select(pl.int_range(pl.len()).alias("row"), "probe", "question", pl.col("choices").alias("choice"))
    rendered = render(pairs.explode("choice"), probes, load_prompts(), Asking())
    units = list(zip(rendered["prompt"].to_list(), rendered["continuation"].to_list()))
    units += [("Définition : é", " ça"), ("Définition : e", " z"), ("Définition : é", " b")]  # code points past ASCII
    by_text = sorted(range(len(units)), key=lambda at: (-len(units[at][0]), units[at][0], -len(units[at][1])))
    assert lm.by_prompt_text(units).tolist() == by_text
    longest = sorted(range(len(units)), key=lambda at: -sum(map(len, units[at])))
    assert longest_text_first(units).tolist() == longest


def test_nan_scores_never_become_picks_or_an_accuracy(tiny_lm, tmp_path):
    """Damaged weights (NaN) give NaN log-likelihoods: the run is refused naming the model and the first question,
    and a prediction file holding such scores is refused when read."""
    from workbench.io import read_predictions

    model = load_model(tiny_lm["causal"], "causal")
    with torch.no_grad():
        model.network.lm_head.weight[7] = float("nan")  # shared with the input embeddings: NaN flows everywhere
    probes = make_probes()
    refused = r"^damaged gave NaN or infinite scores on 5 questions \(first: id "
    with pytest.raises(WorkbenchError, match=refused) as err:
        score(probes, model, "causal", cache=False, progress=False, name="damaged")
    assert repr(probes["id"][0]) in str(err.value) and "\n" not in str(err.value)
    sound = score(probes, tiny_lm["causal"], "causal", cache=False, progress=False)
    path = tmp_path / "nan.parquet"
    sound.with_columns(scores=pl.col("scores").list.eval(pl.element() * float("nan"))).write_parquet(path)
    with pytest.raises(WorkbenchError, match="row 1: a score is NaN or infinite"):
        read_predictions(path)
    generator = load_model(tiny_lm["causal"], "generate")  # free answers: greedy search took the NaN's token
    with torch.no_grad():
        generator.network.lm_head.weight[7] = float("nan")
    with pytest.raises(WorkbenchError, match=refused):
        score(probes, generator, "generate", max_new_tokens=4, cache=False, progress=False, name="damaged")
