"""The generate scorer (free answers): greedy decoding on a tiny random GPT-2 (the mechanics: batching with left
padding, stops, the cache, the prediction rows, bad input), the match rules on real WordNet lemmas, recognition
beside recall in the report, and one real SmolLM2 run on a few released hypernymy questions."""

import json

import numpy as np
import polars as pl
import pytest
import torch
from test_scoring import QUESTIONS, count_forwards, make_probes
from test_scoring_lm import tiny_lm  # noqa: F401  (the fixture)
from typer.testing import CliRunner

from workbench.errors import SpecError, WorkbenchError
from workbench.io import read_predictions
from workbench.reports import text_report
from workbench.schema import MATCH_KINDS, PREDICTION_SCHEMA
from workbench.scoring import PredictionCache, ScoreSpec, load_model, score
from workbench.scoring.answers import match_answers, normalise
from workbench.scoring.generate import decode, encode_prompts, stop_tokens


@pytest.fixture(scope="module")
def tiny(tiny_lm):  # noqa: F811
    return load_model(tiny_lm["causal"], "generate")


def greedy_loop(model, ids: list[int], max_new_tokens: int, stops: list[int]) -> list[int]:
    """One prompt decoded token by token: the argmax of a plain forward over everything so far."""
    new: list[int] = []
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = model.network(torch.tensor([ids + new])).logits[0, -1]
            new.append(int(logits.argmax()))
            if new[-1] in stops:
                break
    return new


def test_batched_left_padded_decoding_equals_a_plain_greedy_loop(tiny):
    prompts = [(question, "12") for question, _, _ in QUESTIONS] + [("Answer:", "12")]
    features = encode_prompts(tiny, prompts, 12)
    assert len({len(item["input_ids"]) for item in features}) > 2  # prompts of different lengths share a batch
    stops = stop_tokens(tiny)
    with torch.inference_mode():
        batched = decode(tiny, features, batch_size=len(features), max_new_tokens=12, stops=stops)
    for item, ids in zip(features, batched):
        assert ids.astype(int).tolist() == greedy_loop(tiny, item["input_ids"], 12, stops)
    newline = tiny.tokenizer("\n", add_special_tokens=False)["input_ids"]
    assert set(newline) <= set(stops) and tiny.tokenizer.eos_token_id in stops


def test_a_generate_run_records_the_answer_and_scores_the_choice_it_names(tiny, tmp_path):
    probes = make_probes()
    cache = PredictionCache(tmp_path / "cache.sqlite")
    calls = count_forwards(tiny)
    preds = score(probes, tiny, "generate", max_new_tokens=6, cache=cache, progress=False)
    assert preds.columns == list(PREDICTION_SCHEMA) and preds.height == probes.height
    assert calls and preds["generated"].dtype == pl.String and preds["match"].is_in(MATCH_KINDS).all()
    assert (preds["rule"] == "match").all() and (preds["scorer"] == "generate").all()
    # the random model names none of these choices: no pred, scores all 0, not correct
    named = preds.filter(pl.col("pred").is_not_null())
    assert preds["scores"].list.sum().to_list() == [float(pred is not None) for pred in preds["pred"]]
    assert preds["correct"].to_list() == [pred == answer for pred, answer in zip(preds["pred"], preds["answer"])]
    assert named.height == preds.filter(pl.col("match").is_in(["exact", "choice"])).height
    # the same answers from the cache: nothing decoded again
    calls.clear()
    again = score(probes, tiny, "generate", max_new_tokens=6, cache=cache, progress=False)
    assert calls == [] and again.equals(preds)
    # a question whose gold choice is the model's own answer is recalled; one whose distractor is, is not
    said = preds["generated"][0]
    assert said and normalise(said)
    rows = [(QUESTIONS[0][0], [said, "tree", "vehicle"], 0), (QUESTIONS[0][0], ["tree", said.upper() + ".", "x"], 2)]
    tailored = score(make_probes(rows), tiny, "generate", max_new_tokens=6, cache=cache, progress=False)
    assert tailored["match"].to_list() == ["exact", "choice"] and tailored["pred"].to_list() == [0, 1]
    assert tailored["correct"].to_list() == [True, False] and tailored["scores"][1].to_list() == [0.0, 1.0, 0.0]
    # more tokens is another fingerprint (the answers may differ)
    longer = score(probes, tiny, "generate", max_new_tokens=7, cache=cache, progress=False)
    assert longer["fingerprint"][0] != preds["fingerprint"][0]


def test_the_same_prompts_shots_and_template_as_the_choice_scorers(tiny, tmp_path):
    probes = make_probes()
    number = pl.int_range(pl.len()).cast(pl.String)
    pool = make_probes(QUESTIONS[:3]).with_columns(
        id="shot" + number, cluster_id="c" + number, concept="k" + number, gold_concept="g" + number
    )
    options = dict(cache=False, progress=False, shots=2, shot_pool=pool)
    free = score(probes, tiny, "generate", max_new_tokens=3, **options)
    chosen = score(probes, load_model(tiny.name, "causal"), "causal", **options)
    assert free["prompt"].to_list() == chosen["prompt"].to_list() and free["asking"].equals(chosen["asking"])
    shown = [choices[answer] in free["prompt"][0] for _, choices, answer in QUESTIONS[:3]]
    assert sum(shown) == 2  # each of the two shots is followed by its gold's text


def test_an_encoder_and_max_new_tokens_elsewhere_are_refused(minilm_path, tiny_lm):  # noqa: F811
    with pytest.raises(SpecError, match="max_new_tokens=8 is only used by scorer='generate'"):
        ScoreSpec("causal", max_new_tokens=8)
    with pytest.raises(WorkbenchError, match="causal .*decoder-only.* is a BertModel") as caught:
        load_model(minilm_path, "generate")
    assert "\n" not in str(caught.value)
    with pytest.raises(WorkbenchError, match="has no causal-LM architecture"):  # an encoder-decoder
        load_model(tiny_lm["seq2seq"], "generate")


def test_cli_generate_writes_free_answers_and_letters_read_from_the_letter_written(cli, tiny_lm, tmp_path, monkeypatch):  # noqa: F811, E501
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    make_probes().write_parquet(tmp_path / "probes.parquet")
    base = ["score", "--model", str(tiny_lm["causal"]), "--probes", str(tmp_path / "probes.parquet")]
    lettered = tmp_path / "letters.parquet"
    result = CliRunner().invoke(cli, [*base, "--scorer", "generate", "--format", "letters", "--out", str(lettered)])
    assert result.exit_code == 0, result.output
    letters = read_predictions(lettered)
    assert letters["prompt"].str.contains("\nA. ").all() and letters["asking"].str.starts_with("letters/").all()
    named = letters.filter(pl.col("pred").is_not_null())
    assert (named["matched"].str.len_chars() == 1).all() and set(letters["match"]) <= {"exact", "choice", "other"}
    out, chosen = tmp_path / "free.parquet", tmp_path / "chosen.parquet"
    result = CliRunner().invoke(cli, [*base, "--scorer", "generate", "--max-new-tokens", "5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "asked 5 questions for a free answer (control none): recall " in result.stdout
    assert CliRunner().invoke(cli, [*base, "--scorer", "causal", "--out", str(chosen)]).exit_code == 0
    free = read_predictions(out)  # the file's checks accept a free answer that names no choice
    assert free["pred"].null_count() == free.filter(pl.col("match").is_in(["near", "other"])).height
    result = CliRunner().invoke(cli, ["report", str(chosen), str(out), "--n-boot", "20", "--json"])
    assert result.exit_code == 0, result.output
    paired = json.loads(result.stdout)["recall"]["probe"]
    assert [row["n"] for row in paired] == [5] and paired[0]["way"].startswith("causal sum")
    both = read_predictions(chosen, out)
    assert paired[0]["recognition"] == pytest.approx(both.filter(pl.col("scorer") == "causal")["correct"].mean())
    assert paired[0]["recall"] == pytest.approx(free["correct"].mean())
    assert "Recognition (choosing among the choices) beside recall" in text_report(both, n_boot=20)


# --- the match rules on WordNet's lemmas ---------------------------------------------------------------


def asked(probe: str, concept: str, gold_concept: str, choices: list[str], answer: int, n: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "probe": [probe] * n,
            "concept": [concept] * n,
            "choices": [choices] * n,
            "answer": [answer] * n,
            "gold_concept": [gold_concept] * n,
        }  # fmt: skip
    )


def test_answers_naming_the_gold_in_any_inflection_or_lemma_are_exact(wordnet_graph):
    answers = ["Dogs", "a dog", "the domestic dog", "Canis familiaris, a mammal", "DOG.\nQuestion: what"]
    frame = asked("hypernymy", "poodle.n.01", "dog.n.01", ["cat", "dog", "car"], 1, len(answers))
    matched = match_answers(frame, answers, wordnet_graph)
    assert matched["match"].to_list() == ["exact"] * 5 and matched["pred"].to_list() == [1] * 5
    assert matched["matched"].to_list() == ["dog", "dog", "domestic dog", "canis familiaris", "dog"]
    lemmas = wordnet_graph.lemmas.filter(pl.col("id") == wordnet_graph.id_of("dog.n.01"))["lemma"]
    assert {"domestic dog", "Canis familiaris"} <= set(lemmas)  # the lemmas matched are WordNet's
    verbs = ["decontrol event, defined as 'relax'", "sit (or sit down) event, defined as 'be seated'"]
    released = asked("hypernymy", "squat.v.01", "sit.v.01", verbs, 1, 3)  # the released verb questions' form
    assert match_answers(released, ["sit down event", "sat", "decontrol"], wordnet_graph).rows() == [
        ("sit down", "exact", 1), ("sit", "exact", 1), ("decontrol", "choice", 0),
    ]  # fmt: skip
    irregular = asked("hyponymy", "bird.n.01", "goose.n.01", ["goose", "cat"], 0, 2)
    assert match_answers(irregular, ["geese", "wild geese"], wordnet_graph)["match"].to_list() == ["exact", "other"]


def test_other_hypernyms_hyponyms_and_synset_lemmas_are_near_and_distractors_are_choices(wordnet_graph):
    hypernymy = asked("hypernymy", "poodle.n.01", "dog.n.01", ["cat", "dog", "car"], 1, 5)
    answers = ["animals", "a carnivore", "cats", "poodle", "an idea"]
    matched = match_answers(hypernymy, answers, wordnet_graph)
    assert matched["match"].to_list() == ["near", "near", "choice", "other", "other"]
    assert matched["matched"].to_list() == ["animal", "carnivore", "cat", None, None]
    assert matched["pred"].to_list() == [None, None, 0, None, None]
    taxonomy, ids = wordnet_graph.taxonomy, wordnet_graph.ids
    assert ids["carnivore.n.01"] in taxonomy.ancestors(ids["poodle.n.01"])  # a hypernym further up the chain
    hyponymy = asked("hyponymy", "dog.n.01", "poodle.n.01", ["poodle", "oak"], 0, 3)
    assert match_answers(hyponymy, ["corgis", "poodles", "animal"], wordnet_graph)["match"].to_list() == [
        "near", "exact", "other",
    ]  # fmt: skip
    synonymy = asked("synonymy", "dog.n.01", "dog.n.01", ["dog, domestic dog", "tree"], 0, 3)
    assert match_answers(synonymy, ["domestic dogs", "Canis familiaris", "trees"], wordnet_graph).rows() == [
        ("domestic dog", "exact", 0), ("canis familiaris", "near", None), ("tree", "choice", 1),
    ]  # fmt: skip


def test_gloss_answers_match_only_a_choice_text_whole(wordnet_graph):
    glosses = ["Toward; for", "In progress; proceeding"]
    frame = asked("wordsense", "on.u.18", "on.u.18", glosses, 1, 3)
    matched = match_answers(frame, ["in progress; proceeding.", "In progress", "toward; for"], wordnet_graph)
    assert matched["match"].to_list() == ["exact", "other", "choice"]


# --- a real model -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2_generator():
    pytest.importorskip("gguf")
    from workbench.scoring.gguf import smollm2_gguf

    return load_model(smollm2_gguf(), "generate")


def test_smollm2_answers_released_hypernymy_questions_in_text_matched_by_the_rules(
    smollm2_generator, released_dir, wordnet_graph, tmp_path
):
    from workbench.probes.formats import read_probes

    frame = read_probes(released_dir / "hypernymy_test.jsonl").filter(pl.col("pos") == "n")
    few = frame.sort(pl.col("question").str.len_chars(), "id").head(2)
    preds = score(few, smollm2_generator, "generate", max_new_tokens=6, cache=tmp_path / "c.sqlite", progress=False)
    assert preds["generated"].str.len_chars().min() > 0 and (preds["prompt"] == few["question"]).all()
    lemmas = wordnet_graph.lemmas.with_columns(pl.col("lemma").str.replace_all("_", " ").str.to_lowercase())
    for row in preds.iter_rows(named=True):
        gold = set(lemmas.filter(pl.col("id") == wordnet_graph.id_of(row["gold_concept"]))["lemma"])
        gold_text = normalise(row["choices"][row["answer"]])
        if row["match"] == "exact":
            assert (row["matched"] in gold or row["matched"] in gold_text) and row["correct"]
        else:
            assert not row["correct"] and normalise(row["generated"]) not in gold | {gold_text}
        assert np.isclose(sum(row["scores"]), float(row["pred"] is not None))
