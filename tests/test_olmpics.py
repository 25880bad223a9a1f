"""oLMpics MC-MLM probes: generators checked against real WordNet, the language controls, the JSONL
format, zero-shot and learning curves on a tiny random masked LM, the fresh-head path on the real MiniLM."""

import json
import warnings

import numpy as np
import polars as pl
import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

from workbench.errors import ProbeFormatError, SpecError
from workbench.olmpics import (
    CURVE_SCHEMA,
    CandidateHead,
    CurveSpec,
    OlmpicsSpec,
    build_olmpics,
    language_sensitivity,
    load_masked_lm,
    no_lang,
    perturbed_lang,
    read_jsonl,
    results_table,
    run_curves,
    summarize,
    with_controls,
    write_jsonl,
    zero_shot,
)
from workbench.olmpics.curves import fit_head
from workbench.olmpics.language_controls import NONSENSE
from workbench.scoring import ScoringWarning


def _ages(frame: pl.DataFrame, split: str) -> set[int]:
    return {int(arg) for args in frame.filter(pl.col("split") == split)["args"] for arg in args if arg.isdigit()}


@pytest.mark.parametrize("probe", ["age-compare", "multi-hop-comparison"])
def test_age_probes_train_on_43_to_120_and_test_on_15_to_38(probe):
    frame = build_olmpics(OlmpicsSpec(probe, n_train=300, n_dev=100, seed=1))
    assert min(_ages(frame, "train")) >= 43 and max(_ages(frame, "train")) <= 120
    assert min(_ages(frame, "dev")) >= 15 and max(_ages(frame, "dev")) <= 38
    assert frame["id"].n_unique() == frame.height == 400


def test_age_compare_gold_says_whether_the_first_age_is_younger():
    frame = build_olmpics(OlmpicsSpec("age-compare", n_train=50, n_dev=50))
    for args, choices, answer in frame.select("args", "choices", "answer").iter_rows():
        assert choices[answer] == ("younger" if int(args[0]) < int(args[1]) else "older")


def test_multi_hop_gold_is_the_position_of_the_oldest_or_youngest():
    frame = build_olmpics(OlmpicsSpec("multi-hop-comparison", n_train=60, n_dev=20))
    for args, choices, answer in frame.select("args", "choices", "answer").iter_rows():
        ages, word = [int(a) for a in args[:3]], args[3]
        target = max(ages) if word == "oldest" else min(ages)
        assert choices[answer] == ["first", "second", "third"][ages.index(target)]


def test_generation_is_deterministic_per_seed():
    one = build_olmpics(OlmpicsSpec("age-compare", n_train=30, n_dev=10, seed=3))
    assert one.equals(build_olmpics(OlmpicsSpec("age-compare", n_train=30, n_dev=10, seed=3)))
    assert not one.equals(build_olmpics(OlmpicsSpec("age-compare", n_train=30, n_dev=10, seed=4)))


def test_spec_names_the_bad_parameter():
    with pytest.raises(SpecError, match="probe='colour'"):
        OlmpicsSpec("colour")
    with pytest.raises(SpecError, match="n_train"):
        OlmpicsSpec("age-compare", n_train=-1)


@pytest.fixture(scope="module")
def wordnet_reader():
    from workbench.knowledge.wordnet import open_wordnet

    return open_wordnet()


@pytest.mark.wordnet
def test_antonym_negation_pairs_really_are_wordnet_antonyms_or_synonyms(wordnet_reader):
    frame = build_olmpics(OlmpicsSpec("antonym-negation", n_train=200, n_dev=100, seed=0))
    counts = frame.group_by("split", "answer").len()
    assert counts.group_by("split").agg(pl.col("len").n_unique())["len"].to_list() == [1, 1]  # balanced in each split
    for (first, second), answer in frame.select("args", "answer").iter_rows():
        lemmas = [lemma for lemma in wordnet_reader.lemmas(first) if lemma.synset().pos() in "as"]
        antonyms = {other.name() for lemma in lemmas for other in lemma.antonyms()}
        if answer == 0:
            assert second in antonyms, (first, second)
        else:
            assert second not in antonyms
            assert any(second in lemma.synset().lemma_names() for lemma in lemmas), (first, second)
    train_words = {w for args in frame.filter(pl.col("split") == "train")["args"] for w in args}
    dev_words = {w for args in frame.filter(pl.col("split") == "dev")["args"] for w in args}
    assert not train_words & dev_words


@pytest.mark.wordnet
def test_taxonomy_conjunction_gold_is_a_common_hypernym_and_each_distractor_is_one_sided(wordnet_graph, wordnet_reader):
    frame = build_olmpics(OlmpicsSpec("taxonomy-conjunction", n_train=40, n_dev=20, seed=0), graph=wordnet_graph)
    assert frame.filter(pl.col("split") == "dev").height >= 10
    up = lambda name: set(wordnet_reader.synset(name).closure(lambda s: s.hypernyms() + s.instance_hypernyms()))  # noqa: E731
    dev_roots = {wordnet_reader.synset(name) for name in ("food.n.01", "food.n.02", "animal.n.01")}
    for split, choices, answer, concepts in frame.select("split", "choices", "answer", "concepts").iter_rows():
        first, second, gold, *distractors = concepts
        above_first, above_second = up(first), up(second)
        assert wordnet_reader.synset(gold) in above_first & above_second
        assert choices[answer] == wordnet_reader.synset(gold).lemma_names()[0]
        for distractor in map(wordnet_reader.synset, distractors):
            assert (distractor in above_first) != (distractor in above_second)
        assert len(set(choices)) == 3
        assert (split == "dev") == bool((up(gold) | {wordnet_reader.synset(gold)}) & dev_roots)
    words = lambda split: {  # noqa: E731
        w
        for row in frame.filter(pl.col("split") == split).select("args", "choices").iter_rows()
        for part in row
        for w in part
    }
    assert not words("train") & words("dev")


def test_no_lang_keeps_only_the_mask_and_the_arguments_and_renames_closed_candidates():
    frame = build_olmpics(OlmpicsSpec("age-compare", n_train=5, n_dev=5))
    control = no_lang(frame)
    for (first, second), statement, choices in zip(
        frame["args"].to_list(), control["statement"], control["choices"].to_list()
    ):
        assert statement == f"{first} [MASK] {second}"
        assert choices == ["blah", "ya"]
    assert set(control["control"]) == {"no-lang"} and not set(control["id"]) & set(frame["id"])


def test_no_lang_keeps_open_candidates():
    rows = [
        {
            "statement": f"A {a} and a {b} are both a type of [MASK].",
            "choices": choices,
            "answer": 0,
            "args": [a, b],
            "keywords": ["and"],
        }
        for a, b, choices in (("cat", "dog", ["animal", "pet", "toy"]), ("oak", "elm", ["tree", "wood", "leaf"]))
    ]
    frame = _user_frame(rows)
    control = no_lang(frame)
    assert control["statement"].to_list() == ["cat dog [MASK]", "oak elm [MASK]"]
    assert control["choices"].to_list() == frame["choices"].to_list()


def test_perturbed_lang_replaces_each_keyword_with_a_seeded_nonsense_word():
    frame = build_olmpics(OlmpicsSpec("age-compare", n_train=20, n_dev=0))
    one, again, other = perturbed_lang(frame, seed=0), perturbed_lang(frame, seed=0), perturbed_lang(frame, seed=1)
    assert one.equals(again) and not one["statement"].equals(other["statement"])
    for before, after in zip(frame["statement"], one["statement"]):
        removed = set(before.split()) - set(after.split())
        added = {w.strip(",.") for w in set(after.split()) - set(before.split())}
        assert {w.strip(",.") for w in removed} == {"age", "than"}
        assert added <= set(NONSENSE) and len(added) == 2
        assert "[MASK]" in after


def test_controls_refuse_rows_without_arguments():
    frame = _user_frame([{"statement": "It is [MASK].", "choices": ["hot", "cold"], "answer": 0}])
    with pytest.raises(ProbeFormatError, match="args"):
        no_lang(frame)


def _user_frame(rows, tmp_dir=None) -> pl.DataFrame:
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "mine.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return read_jsonl(path)


def test_jsonl_round_trips_and_a_bad_line_is_named(tmp_path):
    frame = with_controls(build_olmpics(OlmpicsSpec("age-compare", n_train=5, n_dev=5)))
    write_jsonl(frame, tmp_path / "age.jsonl")
    assert read_jsonl(tmp_path / "age.jsonl").equals(frame)
    (tmp_path / "bad.jsonl").write_text('{"statement": "no mask here", "choices": ["a", "b"], "answer": 0}\n')
    with pytest.raises(ProbeFormatError, match="line 1.*MASK"):
        read_jsonl(tmp_path / "bad.jsonl")


def test_user_rows_may_name_the_gold_word():
    frame = _user_frame(
        [{"statement": "Fire is [MASK].", "choices": ["cold", "hot"], "answer": "hot", "split": "train"}]
    )
    assert frame["answer"].to_list() == [1] and frame["split"].to_list() == ["train"] and frame["probe"][0] == "mine"


# --- scoring and learning curves on a tiny random masked LM -------------------------------------


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory, minilm_path):
    tokenizer = AutoTokenizer.from_pretrained(minilm_path)
    folder = tmp_path_factory.mktemp("tiny-olmpics-mlm")
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        initializer_range=0.2,
    )
    torch.manual_seed(0)
    BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_candidate_head_reproduces_the_models_logits_at_the_mask(tiny_mlm):
    model = load_masked_lm(tiny_mlm)
    ids = model.tokenizer.convert_tokens_to_ids(["younger", "older"])
    head = CandidateHead(model, ids)
    encoded = model.tokenizer("A 20 year old is [MASK] than me.", return_tensors="pt")
    position = encoded["input_ids"][0].tolist().index(model.tokenizer.mask_token_id)
    with torch.inference_mode():
        full = model.network(**encoded).logits[0, position, ids]
        mine = head(model.network.base_model(**encoded).last_hidden_state[0, position])
    assert torch.allclose(full, mine, atol=1e-5)


def test_zero_shot_point_of_the_curve_equals_mc_mlm_scoring(tiny_mlm, tmp_path):
    frame = build_olmpics(OlmpicsSpec("multi-hop-comparison", n_train=70, n_dev=40))
    predictions = zero_shot(
        frame.filter(pl.col("split") == "dev"), tiny_mlm, cache=tmp_path / "p.sqlite", progress=False
    )
    curves = run_curves(
        frame,
        tiny_mlm,
        CurveSpec(ns=(62,), seeds=(0,), settings=("linear",)),
        cache=tmp_path / "r.sqlite",
        progress=False,
    )
    point = curves.filter(pl.col("setting") == "zero-shot")["accuracy"].item()
    assert point == pytest.approx(predictions["correct"].mean())
    assert set(predictions["rule"]) == {"mc-mlm"}


def _synthetic(n_train: int, n_dev: int) -> pl.DataFrame:
    """A probe a frozen random encoder can carry: the key word (hot/cold) decides the answer;
    fillers differ by split."""
    rng = np.random.default_rng(0)
    fillers = {"train": ["red", "blue", "green", "small", "big", "old"], "dev": ["new", "dark", "light"]}
    rows = []
    for split, count in (("train", n_train), ("dev", n_dev)):
        for index in range(count):
            key = ["hot", "cold"][index % 2]
            filler = fillers[split][rng.integers(len(fillers[split]))]
            rows.append({"statement": f"the {filler} thing was [MASK] {key} .", "choices": ["not", "very"],
                         "answer": index % 2, "split": split, "args": [key], "keywords": ["thing"]})  # fmt: skip
    return _user_frame(rows)


def test_a_trained_head_learns_what_the_frozen_states_carry(tiny_mlm, tmp_path):
    frame = _synthetic(200, 60)
    spec = CurveSpec(ns=(125,), seeds=(0,), settings=("mlp",), lr=1e-2, min_steps=300)
    curves = run_curves(frame, tiny_mlm, spec, cache=tmp_path / "r.sqlite", progress=False)
    assert curves.filter(pl.col("setting") == "mlp")["accuracy"].item() >= 0.9


def test_linear_trains_only_the_last_layer_and_mlp_trains_the_whole_head(tiny_mlm):
    model = load_masked_lm(tiny_mlm)
    ids = model.tokenizer.convert_tokens_to_ids(["not", "very"])
    base = CandidateHead(model, ids)
    vectors = torch.randn(40, 32)
    candidates, answers = np.tile([0, 1], (40, 1)), np.arange(40) % 2
    spec = CurveSpec(ns=(40,), seeds=(0,), epochs=2, min_steps=5)
    for setting, transform_moves in (("linear", False), ("mlp", True)):
        head = fit_head(base, vectors, candidates, answers, setting, spec, seed=0)
        moved = {name: not torch.equal(p, dict(base.named_parameters())[name]) for name, p in head.named_parameters()}
        assert all(moved[name] for name in moved if ".decoder." in name)
        assert any(moved[name] for name in moved if "transform" in name) == transform_moves


def test_curves_have_every_size_seed_and_setting_and_repeat_exactly(tiny_mlm, tmp_path):
    frame = with_controls(build_olmpics(OlmpicsSpec("age-compare", n_train=130, n_dev=30)))
    spec = CurveSpec(ns=(62, 125), seeds=(0, 1), epochs=2, min_steps=10)
    curves = run_curves(frame, tiny_mlm, spec, cache=tmp_path / "r.sqlite", progress=False)
    assert curves.schema == pl.Schema(CURVE_SCHEMA)
    trained = curves.filter(pl.col("n") > 0)
    assert trained.height == 3 * 2 * 2 * 2  # controls x sizes x seeds x settings
    again = run_curves(frame, tiny_mlm, spec, cache=tmp_path / "r.sqlite", progress=False)
    assert again.equals(curves)
    table = results_table(curves)
    assert table.columns == [
        "model",
        "probe",
        "zero_shot",
        "mlp_WS",
        "mlp_MAX",
        "linear_WS",
        "linear_MAX",
        "pert",
        "nolang",
    ]


def _curve_rows(accuracies: dict[str, list[float]], ns=(62, 125, 250, 500, 1000, 2000, 4000)) -> pl.DataFrame:
    rows = [
        {"model": "m", "fingerprint": "f", "probe": "p", "control": control, "setting": "mlp", "n": n, "seed": 0,
         "accuracy": acc, "n_dev": 10, "fresh_head": False}
        for control, values in accuracies.items() for n, acc in zip(ns, values)
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=CURVE_SCHEMA)


def test_ws_uses_the_olmpics_weights_and_max_the_best_point():
    accuracy = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0]
    paper_weights = [0.23, 0.20, 0.17, 0.14, 0.11, 0.08, 0.07]
    summary = summarize(_curve_rows({"none": accuracy}))
    assert summary["WS"].item() == pytest.approx(sum(w * a for w, a in zip(paper_weights, accuracy)))
    assert summary["MAX"].item() == 1.0


def test_language_sensitivity_counts_only_where_the_control_is_worse():
    curves = _curve_rows({"none": [0.9] * 7, "no-lang": [0.5] * 6 + [1.0]})
    sense = language_sensitivity(curves)["LANGSENSE"].item()
    assert sense == pytest.approx(0.4 * (1 - 0.07))


# --- the real MiniLM: no MLM head ---------------------------------------------------------------


@pytest.mark.model
def test_minilm_gets_a_fresh_head_and_zero_shot_is_unavailable(minilm_path, tmp_path):
    with pytest.warns(ScoringWarning, match="zero-shot MC-MLM is unavailable"):
        model = load_masked_lm(minilm_path, seed=0)
    assert model.fresh_head
    frame = build_olmpics(OlmpicsSpec("age-compare", n_train=62, n_dev=20))
    with pytest.warns(ScoringWarning, match="unavailable"):
        assert zero_shot(frame, model) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curves = run_curves(
            frame,
            model,
            CurveSpec(ns=(62,), seeds=(0,), epochs=1, min_steps=5),
            cache=tmp_path / "r.sqlite",
            progress=False,
        )
    assert curves["fresh_head"].all() and "zero-shot" not in set(curves["setting"])
    assert results_table(curves)["zero_shot"].is_null().all()


def test_cli_builds_probes_and_writes_curves_parquet(cli, tiny_mlm, tmp_path):
    from typer.testing import CliRunner

    app = cli
    runner = CliRunner()
    built = runner.invoke(
        app, ["olmpics", "build", "--out", str(tmp_path), "--probe", "age-compare", "--n-train", "70", "--n-dev", "20"]
    )
    assert built.exit_code == 0, built.output
    out = tmp_path / "curves.parquet"
    ran = runner.invoke(app, ["olmpics", "curves", "--model", str(tiny_mlm),
                              "--probes", str(tmp_path / "age-compare.jsonl"), "--out", str(out),
                              "--ns", "62", "--seeds", "0", "--epochs", "1", "--min-steps", "3"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    curves = pl.read_parquet(out)
    assert set(curves["control"]) == {"none", "no-lang", "perturbed-lang"} and "mlp_WS" in ran.output


def test_curve_chart_plots_the_seed_mean_per_size_and_the_zero_shot_rule():
    from workbench import charts

    curves = _curve_rows({"none": [0.5, 0.7, 0.9, 0.9, 0.9, 0.9, 0.9], "no-lang": [0.5] * 7})
    curves = pl.concat([curves, curves.with_columns(seed=pl.lit(1, pl.Int64), accuracy=pl.col("accuracy") - 0.1),
                        curves.head(1).with_columns(setting=pl.lit("zero-shot"), n=pl.lit(0, pl.Int64),
                                                    accuracy=pl.lit(0.6))])  # fmt: skip
    spec = charts.olmpics_curves(curves).to_dict()
    (rows,) = spec["datasets"].values()
    first = next(r for r in rows if r["n"] == 62 and r["control"] == "none")
    assert first["accuracy"] == pytest.approx(0.45) and first["zero_shot"] == pytest.approx(0.6)
    assert spec["facet"]["column"]["field"] == "probe"
    import vl_convert

    assert "<svg" in vl_convert.vegalite_to_svg(charts.language_sensitivity_bars(curves).to_json())


@pytest.mark.wordnet
def test_a_tokenizer_vocabulary_keeps_every_taxonomy_candidate_one_token(wordnet_graph, minilm_path):
    from workbench.olmpics.curves import candidate_tokens

    tokenizer = AutoTokenizer.from_pretrained(minilm_path)
    vocabulary = frozenset(token for token in tokenizer.get_vocab() if token.isalpha())
    frame = build_olmpics(
        OlmpicsSpec("taxonomy-conjunction", n_train=30, n_dev=10, seed=2), graph=wordnet_graph, vocabulary=vocabulary
    )
    for statement, choices in frame.select("statement", "choices").iter_rows():
        assert len(candidate_tokens(tokenizer, statement, choices)) == 3


def test_max_is_the_best_point_of_the_seed_averaged_curve():
    """oLMpics §2: MAX and WS are read off the learning curve averaged over seeds. Seed 0 peaks at 0.9 at N=62,
    seed 1 at 0.7 at N=125; the mean curve is 0.675, 0.6: MAX 0.675, not the mean of the seeds' maxima 0.800."""
    rows = [
        {"model": "m", "fingerprint": "f", "probe": "p", "control": "none", "setting": "mlp", "n": n, "seed": seed,
         "accuracy": acc, "n_dev": 10, "fresh_head": False}
        for seed, n, acc in [(0, 62, 0.9), (0, 125, 0.5), (1, 62, 0.45), (1, 125, 0.7)]
    ]  # fmt: skip
    summary = summarize(pl.DataFrame(rows, schema=CURVE_SCHEMA)).row(0, named=True)
    assert summary["MAX"] == pytest.approx(0.675)
    assert summary["MAX_std"] == pytest.approx(0.225)
    assert summary["WS"] == pytest.approx((0.23 * 0.675 + 0.20 * 0.6) / 0.43)
    assert summary["n_seeds"] == 2
