"""Ways of asking (``workbench.scoring.asking``): shots drawn by the rules on the released probes, letters
balanced, the chat template rendered as transformers renders it, the bad inputs refused in one line, and the
lm-evaluation-harness round trip of a 5-shot lettered chat export with SmolLM2 (the real model)."""

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from workbench.cli import make_app
from workbench.errors import SpecError, WorkbenchError
from workbench.probes.formats import read_probes
from workbench.scoring import PredictionCache, ScoreSpec, load_model, load_prompts, score
from workbench.scoring.asking import LETTERS, Asking, draw_shots, render
from workbench.scoring.gguf import smollm2_gguf
from workbench.scoring.harness import export_lm_eval, import_lm_eval


@pytest.fixture(scope="module")
def released(released_dir) -> dict[str, pl.DataFrame]:
    """The released hypernymy test (300 questions of it, by id) and train files."""
    test = read_probes(released_dir / "hypernymy_test.jsonl").sort("id").head(300)
    return {"test": test, "train": read_probes(released_dir / "hypernymy_train.jsonl")}


@pytest.fixture(scope="module")
def smollm2():
    pytest.importorskip("gguf")
    return load_model(smollm2_gguf(), "causal", max_length=2048)


def pairs_of(probes: pl.DataFrame) -> pl.DataFrame:
    return probes.select(
        pl.int_range(pl.len()).alias("row"), "probe", "question", pl.col("choices").alias("choice")
    ).explode("choice")


def test_shared_shots_avoid_every_scored_cluster_concept_and_gold(released):
    test, train = released["test"], released["train"]
    assert set(train["cluster_id"]) & set(test["cluster_id"])  # the released splits share clusters: they must go
    shots = draw_shots(train, test, Asking(shots=5))
    frame = shots.frame
    assert frame.height == 5 and frame["row"].to_list() == [-1] * 5 and frame["position"].to_list() == list(range(5))
    scored = set(test["concept"]) | set(test["gold_concept"])
    assert not set(frame["cluster_id"]) & set(test["cluster_id"])
    assert not (set(frame["concept"]) | set(frame["gold_concept"])) & scored
    assert frame["concept"].n_unique() == 5
    assert draw_shots(train, test, Asking(shots=5)).digest == shots.digest  # seeded
    assert draw_shots(train, test, Asking(shots=5, shot_seed=1)).digest != shots.digest


def test_shots_of_another_probe_are_refused(released, released_dir):
    hyponymy = read_probes(released_dir / "hyponymy_train.jsonl")
    with pytest.raises(WorkbenchError, match="holds hyponymy questions, but the scored questions are hypernymy"):
        draw_shots(hyponymy, released["test"], Asking(shots=5))
    mixed = pl.concat([hyponymy, released["train"]])  # a pool of both lends each probe its own
    assert set(draw_shots(mixed, released["test"], Asking(shots=5)).frame["probe"]) == {"hypernymy"}


def test_per_question_shots_avoid_their_own_question_and_differ_between_questions(released):
    test, train = released["test"].head(40), released["train"]
    frame = draw_shots(train, test, Asking(shots=3, shots_per_question=True)).frame
    assert frame.group_by("row").len()["len"].to_list() == [3] * 40
    joined = frame.join(test.with_row_index("row").with_columns(pl.col("row").cast(pl.Int64)), on="row", suffix="_q")
    for row in joined.iter_rows(named=True):
        assert {row["concept"], row["gold_concept"]}.isdisjoint({row["concept_q"], row["gold_concept_q"]})
        assert row["cluster_id"] not in set(test["cluster_id"])
    assert frame.group_by("row").agg(pl.col("id").sort())["id"].n_unique() > 30  # drawn anew for each


def test_lettered_shots_balance_their_gold_letters_and_keep_their_choices(released):
    test, train = released["test"], released["train"]
    asked = Asking(format="letters", shots=5)
    frame = draw_shots(train, test, asked).frame
    assert sorted(frame["answer"].to_list()) == [0, 1, 2, 3, 4]  # five shots of five choices: each letter once
    originals = train.unique("id", keep="first", maintain_order=True)  # the rows draw_shots draws from
    for shot in frame.join(originals, on="id", suffix="_orig").iter_rows(named=True):
        assert sorted(shot["choices"]) == sorted(shot["choices_orig"])
        assert shot["choices"][shot["answer"]] == shot["choices_orig"][shot["answer_orig"]]
    probes = test.head(2)
    rendered = render(pairs_of(probes), probes, load_prompts(), asked, draw_shots(train, test, asked))
    prompt = rendered["prompt"][0]
    for shot in frame.iter_rows(named=True):  # each shot: its listed choices, then its gold's letter
        listed = "\n".join(f"{LETTERS[i]}. {choice}" for i, choice in enumerate(shot["choices"]))
        assert f"{listed}\nAnswer: {LETTERS[shot['answer']]}\n\n" in prompt
    assert rendered["continuation"].to_list()[:5] == [" A", " B", " C", " D", " E"]
    assert prompt.endswith("\nAnswer:") and prompt.count("Answer:") == 6


def test_the_chat_template_is_rendered_as_transformers_renders_it(released, smollm2):
    test, train = released["test"].head(3), released["train"]
    asked = Asking(format="letters", shots=2, chat_template="auto", system="Answer with a letter.")
    shots = draw_shots(train, test, asked)
    rendered = render(pairs_of(test), test, load_prompts(), asked, shots, smollm2.tokenizer)
    templates = load_prompts()
    messages = [{"role": "system", "content": "Answer with a letter."}]
    for shot in shots.frame.iter_rows(named=True):
        user, _ = templates.render_letters(shot["probe"], shot["question"], shot["choices"])
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": LETTERS[shot["answer"]]}]
    question = test.row(0, named=True)
    messages.append(
        {"role": "user", "content": templates.render_letters("hypernymy", question["question"], question["choices"])[0]}
    )
    expected = smollm2.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert rendered["prompt"][0] == expected
    assert expected.startswith("<|im_start|>system\nAnswer with a letter.<|im_end|>")
    assert rendered["continuation"].to_list()[:3] == ["A", "B", "C"]  # no delimiter after the assistant's turn


def test_each_way_is_recorded_and_ways_never_share_a_fingerprint(released, smollm2, tmp_path):
    test, train = released["test"].head(2), released["train"]
    cache = PredictionCache(tmp_path / "cache.sqlite")
    ways = [{}, {"format": "letters"}, {"shots": 2}, {"shots": 2, "shot_seed": 1}, {"chat_template": "auto"}]
    preds = [score(test, smollm2, "causal", shot_pool=train, cache=cache, progress=False, **way) for way in ways]
    assert [frame["asking"][0].split("/shots=")[0] for frame in preds] == [
        "cloze/0-shot/plain", "letters/0-shot/plain", "cloze/2-shot/plain", "cloze/2-shot/plain", "cloze/0-shot/chat"
    ]  # fmt: skip
    assert len({frame["fingerprint"][0] for frame in preds}) == len(ways)
    assert len({frame["asking"][0] for frame in preds}) == len(ways)  # two shot draws: two digests
    assert preds[2]["prompt"][0].count("\n\n") == 2 and preds[2]["prompt"][0].endswith(test["question"][0])


def test_bad_ways_of_asking_are_refused_in_one_line(released, smollm2, tmp_path):
    test, train = released["test"].head(5), released["train"]
    with pytest.raises(WorkbenchError, match="fewer than the 9 shots"):
        draw_shots(train.head(8), test, Asking(shots=9))
    with pytest.raises(WorkbenchError, match="scored questions themselves"):
        draw_shots(released["test"], test, Asking(shots=2))
    with pytest.raises(SpecError, match="ways of asking .* not scorer='similarity'"):
        ScoreSpec("similarity", format="letters")
    with pytest.raises(SpecError, match="needs a source of worked examples"):
        score(test, smollm2, "causal", shots=2, cache=False, progress=False)
    wide = test.head(1).with_columns(choices=pl.lit([f"c{i}" for i in range(27)]))
    with pytest.raises(WorkbenchError, match="at most 26 choices"):
        score(wide, smollm2, "causal", format="letters", cache=False, progress=False)
    bare = load_model(smollm2_gguf(), "causal")
    object.__setattr__(bare, "tokenizer", bare.tokenizer.__class__.from_pretrained(bare.tokenizer.name_or_path))
    bare.tokenizer.chat_template = None
    with pytest.raises(WorkbenchError, match="has no chat template"):
        score(test, bare, "causal", chat_template="auto", cache=False, progress=False)
    test.write_parquet(tmp_path / "t.parquet")  # a file, not a folder: no train split to lend shots
    result = CliRunner().invoke(
        make_app(),
        ["score", "--model", str(smollm2_gguf()), "--scorer", "causal", "--shots", "2",
         "--out", str(tmp_path / "p.parquet"), "--probes", str(tmp_path / "t.parquet")],
    )  # fmt: skip
    assert isinstance(result.exception, SpecError) and "pass --shots-from" in str(result.exception)
    assert not (tmp_path / "p.parquet").exists()


def test_lm_eval_agrees_on_a_five_shot_lettered_chat_export(released, smollm2, tmp_path):
    """Export the way of asking, run lm-eval on it, import its samples: the same picks and log-likelihoods."""
    from harness_runs import logged_run

    test, train = released["test"], released["train"]
    size = pl.col("question").str.len_chars() + pl.col("choices").list.eval(pl.element().str.len_chars()).list.sum()
    few = test.sort(size, "id").head(4)
    asked = Asking(format="letters", shots=5, chat_template="auto", system="Answer with the letter.")
    shots = draw_shots(train, few, asked)  # as `score` draws them for these questions
    export_lm_eval(few, tmp_path / "tasks", asking=asked, shots=shots)
    task = (tmp_path / "tasks" / "workbench_hypernymy.yaml").read_text()
    assert "num_fewshot: 5" in task and "sampler: first_n" in task and "--apply_chat_template" in task
    _, samples, logged = logged_run(
        smollm2, tmp_path / "tasks", "workbench_hypernymy", tmp_path / "out",
        apply_chat_template=True, fewshot_as_multiturn=True,
    )  # fmt: skip
    theirs = import_lm_eval(logged).filter(pl.col("rule") == "sum")
    assert theirs["asking"].unique().to_list() == [asked.label]
    way = {"format": "letters", "shots": 5, "chat_template": "auto", "system": "Answer with the letter."}
    ours = score(few, smollm2, "causal", shot_pool=train, cache=False, progress=False, **way)
    contexts = {sample["doc"]["id"]: sample["arguments"]["gen_args_0"]["arg_0"] for sample in samples}
    assert dict(ours.select("id", "prompt").iter_rows()) == contexts  # the very text lm-eval asked
    both = ours.join(theirs, on="id", suffix="_lm")
    assert both.height == 4 and (both["pred"] == both["pred_lm"]).all()
    gaps = np.abs(np.array(both["scores"].to_list()) - np.array(both["scores_lm"].to_list()))
    assert gaps.max() < 1e-3


def test_a_released_file_reusing_the_scored_ids_for_other_questions_lends_its_shots(released_dir):
    """DictionaryQA's released train and test share ids for different questions: the same id is not the same
    question, so the train lends shots; the test itself does not."""
    test = read_probes(released_dir / "dictionary_qa_test.jsonl").head(50)
    train = read_probes(released_dir / "dictionary_qa_train.jsonl")
    assert set(test["id"]) & set(train["id"])
    assert draw_shots(train, test, Asking(shots=3)).frame.height == 3
    with pytest.raises(WorkbenchError, match="scored questions themselves"):
        draw_shots(read_probes(released_dir / "dictionary_qa_test.jsonl"), test, Asking(shots=3))
