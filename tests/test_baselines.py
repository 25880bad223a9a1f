"""Partial-input baselines and the probe-health report, on generated WordNet probes and the released data."""

import json
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbench import metrics
from workbench.baselines import (
    ChoiceOnly,
    ChoiceToChoice,
    MajorityPosition,
    QuestionToChoice,
    Random,
    baseline_predictions,
    health_table,
    probe_health,
)
from workbench.errors import SpecError, WorkbenchError
from workbench.io import write_parquet
from workbench.probes import ProbeSpec, build_probes
from workbench.probes.formats import read_probes
from workbench.probes.select import sample_clusters
from workbench.reports import text_report
from workbench.schema import PREDICTION_SCHEMA

N_TRAIN, N_EVAL = 600, 400


@pytest.fixture(scope="module")
def generated(wordnet_graph) -> pl.DataFrame:
    """A small real hypernymy probe (random distractors): 600 train and 400 dev questions."""
    spec = ProbeSpec(
        "hypernymy", max_hops=2, families=("random",), max_depth=1, perturbations=1, seed=3, train_size=N_TRAIN
    )
    probes = build_probes(spec, wordnet_graph, progress=False)
    return pl.concat(
        [
            probes.filter(pl.col("split") == "train"),
            probes.filter(pl.col("split") == "dev").sample(N_EVAL, seed=0),
        ]
    )


@pytest.fixture(scope="module")
def clean(generated) -> pl.DataFrame:
    """The generated questions with the gold label moved to a uniformly drawn choice: by construction
    no choice text tells the (new) gold one from the others, so no baseline can beat chance."""
    rng = np.random.default_rng(11)
    return generated.with_columns(answer=pl.Series(rng.integers(0, 5, generated.height), dtype=pl.Int64))


def plant(probes: pl.DataFrame, how) -> pl.DataFrame:
    """``probes`` with ``how`` applied to the text of every gold choice (train and dev alike)."""
    gold = pl.col("choices").list.get(pl.col("answer"))
    return probes.with_columns(
        choices=pl.concat_list(
            pl.when(pl.col("answer") == index).then(how(gold)).otherwise(pl.col("choices").list.get(index))
            for index in range(5)
        )
    )


def marker(text: pl.Expr) -> pl.Expr:
    return pl.concat_str(pl.lit("indeed "), text)


def longer(text: pl.Expr) -> pl.Expr:
    return pl.concat_str(text, pl.lit("; "), text)


def split(probes: pl.DataFrame, name: str) -> pl.DataFrame:
    return probes.filter(pl.col("split") == name)


@pytest.mark.wordnet
@pytest.mark.parametrize("artefact", [marker, longer], ids=["marker-word", "longer-gold"])
def test_planted_artefact_is_flagged_by_choice_only_and_clean_probe_is_not(clean, artefact):
    planted = plant(clean, artefact)
    assert (
        planted["choices"].list.get(planted["answer"]).to_list() != clean["choices"].list.get(clean["answer"]).to_list()
    )
    names = ["random", "choice-only"]
    leaky = probe_health(planted, baselines=names, n_boot=200, progress=False)
    fine = probe_health(clean, baselines=names, n_boot=200, progress=False)
    leaky_choice = leaky.filter(baseline="choice-only").row(0, named=True)
    assert leaky_choice["flagged"] and leaky_choice["accuracy"] > 0.8
    assert not fine["flagged"].any()
    fine_choice = fine.filter(baseline="choice-only").row(0, named=True)
    assert fine_choice["lo"] < fine_choice["chance"] + 0.10
    assert leaky["chance"].to_list() == [0.2, 0.2]


@pytest.mark.wordnet
def test_baselines_learn_and_predict_without_touching_their_inputs(generated):
    train, dev = split(generated, "train"), split(generated, "dev")
    before = (train.clone(), dev.clone())
    for baseline in (ChoiceOnly(seed=0), ChoiceToChoice(seed=0), QuestionToChoice(seed=0)):
        preds = baseline.fit(train).predict(dev)
        assert preds.schema == pl.Schema(PREDICTION_SCHEMA)
        assert (
            preds.height == dev.height and preds["scores"].list.len().to_list() == dev["choices"].list.len().to_list()
        )
        assert preds["pred"].to_list() == [int(np.argmax(scores)) for scores in preds["scores"].to_list()]
        assert (preds["model"] == baseline.name).all() and (preds["scorer"] == "baseline").all()
        assert baseline.n_train_ == train.height
    assert train.equals(before[0]) and dev.equals(before[1])


@pytest.mark.wordnet
def test_same_seed_gives_identical_predictions_and_new_training_data_a_new_fingerprint(generated):
    train, dev = split(generated, "train"), split(generated, "dev")
    first = ChoiceToChoice(seed=4).fit(train).predict(dev)
    again = ChoiceToChoice(seed=4).fit(train).predict(dev)
    assert first.equals(again)
    other = ChoiceToChoice(seed=4).fit(train.head(300)).predict(dev)
    assert other["fingerprint"][0] != first["fingerprint"][0]


@pytest.mark.wordnet
def test_hypernymy_with_random_distractors_leaks_through_the_choices(generated):
    """Gold hypernyms are general concepts ('entity', 'object') and random distractors are not:
    the question-blind Choice-Only finds the answer well above chance, and the report says so."""
    health = probe_health(generated, baselines=["random", "choice-only"], n_boot=200, progress=False)
    choice_only = health.filter(baseline="choice-only").row(0, named=True)
    assert choice_only["flagged"] and choice_only["lift_lo"] > 0.10


@pytest.mark.wordnet
def test_baseline_predictions_feed_metrics_and_reports_unchanged(generated):
    preds = baseline_predictions(generated, ["random", "majority-position", "choice-only"], progress=False)
    assert set(split(preds, "dev")["model"].unique()) == {"random", "majority-position", "choice-only"}
    summary = metrics.summary(preds, n_boot=50)
    assert set(summary["models"]) == {"random", "majority-position", "choice-only"}
    assert "choice-only" in text_report(preds, n_boot=50)
    clusters = metrics.cluster_accuracy(preds, n_boot=50).filter(model="choice-only")
    assert clusters["n_clusters"].item() == split(generated, "dev")["cluster_id"].n_unique()
    assert summary["instance_accuracy"]["choice-only"] == preds.filter(model="choice-only")["correct"].mean()


def released(released_dir, *names: str) -> pl.DataFrame:
    return pl.concat([read_probes(released_dir / f"{name}.jsonl") for name in names])


def test_majority_position_equals_the_observed_gold_position_frequency(released_dir):
    train, test = released(released_dir, "hypernymy_train"), released(released_dir, "hypernymy_test")
    baseline = MajorityPosition().fit(train)
    observed = train["answer"].value_counts()
    assert baseline.position_counts_.tolist() == [observed.filter(answer=i)["count"].item() for i in range(5)]
    assert baseline.majority_position_ == observed.sort("count", descending=True)["answer"][0]
    preds = baseline.predict(test)
    assert (preds["pred"] == baseline.majority_position_).all()
    assert preds["correct"].mean() == (test["answer"] == baseline.majority_position_).mean()


def test_random_baseline_is_near_chance_and_seeded(released_dir):
    test = released(released_dir, "hypernymy_test")
    preds = Random(seed=1).fit(test).predict(test)
    assert abs(preds["correct"].mean() - 0.2) < 0.03  # n = 2254: 3.5 standard errors
    assert preds["pred"].value_counts()["count"].min() > 0.8 * test.height / 5
    assert preds.equals(Random(seed=1).fit(test).predict(test))
    assert not preds["pred"].equals(Random(seed=2).fit(test).predict(test)["pred"])
    reversed_preds = Random(seed=1).fit(test).predict(test.reverse())
    assert reversed_preds.select("id", "pred").sort("id").equals(preds.select("id", "pred").sort("id"))


def test_released_hypernymy_choice_only_beats_chance_and_is_flagged(released_dir):
    """The paper (§5.1) found hypernymy's choice-only bias; our lexical Choice-Only finds it in its released data."""
    probes = released(released_dir, "hypernymy_train", "hypernymy_test")
    health = probe_health(probes, baselines=["random", "choice-only"], n_boot=200, progress=False)
    assert health["split"].unique().to_list() == ["test"] and (health["n"] == 2254).all()
    random_row, choice_row = (
        health.filter(baseline="random").row(0, named=True),
        health.filter(baseline="choice-only").row(0, named=True),
    )
    assert random_row["lo"] <= random_row["chance"] <= random_row["hi"] and not random_row["flagged"]
    assert choice_row["flagged"]


def test_health_table_shows_a_models_accuracy_beside_the_baselines(released_dir):
    test = released(released_dir, "hyponymy_test")
    baseline_preds = Random(seed=0).fit(test).predict(test)
    model = (
        MajorityPosition().fit(test).predict(test).with_columns(model=pl.lit("my-model"), scorer=pl.lit("similarity"))
    )
    table = health_table(baseline_preds, model)
    row = table.filter(kind="model").row(0, named=True)
    assert row["baseline"] == "my-model" and not row["flagged"]
    assert row["accuracy"] == model["correct"].mean() and row["n"] == test.height
    assert table["kind"].to_list() == ["baseline", "model"]
    with pytest.raises(WorkbenchError, match="cover no probe and split"):
        health_table(baseline_preds, model.with_columns(probe=pl.lit("synonymy")))


def test_probes_without_a_train_or_an_eval_split_are_clear_errors(released_dir):
    with pytest.raises(WorkbenchError, match="probe 'hypernymy' has no train split"):
        probe_health(released(released_dir, "hypernymy_test"), progress=False)
    with pytest.raises(WorkbenchError, match="probe 'synonymy' has no dev or test split"):
        probe_health(released(released_dir, "synonymy_train"), progress=False)
    with pytest.raises(SpecError, match="needs model=PATH"):
        probe_health(released(released_dir, "hyponymy_test"), baselines=["choice-only-transformer"])
    with pytest.raises(SpecError, match="margin=1.5"):
        probe_health(released(released_dir, "hyponymy_test"), margin=1.5)
    both = pl.concat([released(released_dir, "hypernymy_train"), released(released_dir, "hypernymy_test")])
    other = MajorityPosition().fit(released(released_dir, "hyponymy_test"))
    with pytest.raises(WorkbenchError, match="predictions cover hyponymy/test, but the baselines are scored on hyp"):
        probe_health(both, other.predict(released(released_dir, "hyponymy_test")), progress=False)
    with pytest.raises(WorkbenchError, match="not been fitted"):
        ChoiceOnly().predict(released(released_dir, "hyponymy_test"))


@pytest.mark.model
@pytest.mark.wordnet
def test_transformer_choice_only_uses_minilm_and_caches_its_embeddings(clean, minilm_path, tmp_path):
    from workbench.baselines import TransformerChoiceOnly
    from workbench.scoring import load_model

    probes = plant(clean, marker)
    train, dev = split(probes, "train").head(100), split(probes, "dev").head(60)
    model = load_model(minilm_path, "similarity", device="cpu")
    cache = tmp_path / "cache.sqlite"
    first = TransformerChoiceOnly(model, cache=cache, progress=False).fit(train)
    preds = first.predict(dev)
    assert first.model_ is model and str(minilm_path) in preds["rule"][0]
    assert preds["model"][0] == "choice-only-transformer"
    assert preds["correct"].mean() > 0.6  # the marker word is visible in the choice embeddings
    calls = []
    hook = model.network.register_forward_hook(lambda *args: calls.append(1))
    try:
        again = TransformerChoiceOnly(model, cache=cache, progress=False).fit(train).predict(dev)
    finally:
        hook.remove()
    assert calls == [] and again.equals(preds)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, timeout=600)


@pytest.mark.wordnet
def test_cli_prints_the_health_table_writes_it_and_refuses_probes_without_train(generated, tmp_path):
    write_parquet(split(generated, "train").head(300), tmp_path / "train.parquet")
    write_parquet(split(generated, "dev").head(200), tmp_path / "dev.parquet")
    result = run(
        "baselines",
        "--probes",
        str(tmp_path / "train.parquet"),
        "--probes",
        str(tmp_path / "dev.parquet"),
        "--json",
        "--out",
        str(tmp_path / "health.parquet"),
        "--n-boot",
        "100",
    )
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {row["baseline"] for row in rows} == {
        "random",
        "majority-position",
        "choice-only",
        "choice-to-choice",
        "question-to-choice",
    }
    assert pl.read_parquet(tmp_path / "health.parquet").to_dicts() == rows
    text = run(
        "baselines",
        "--probes",
        str(tmp_path / "train.parquet"),
        "--probes",
        str(tmp_path / "dev.parquet"),
        "--n-boot",
        "100",
    )
    assert text.returncode == 0 and "choice-only" in text.stdout and "LEAKS" in text.stdout
    refused = run("baselines", "--probes", str(tmp_path / "dev.parquet"))
    assert refused.returncode == 2 and "no train split" in refused.stderr and "Traceback" not in refused.stderr


@pytest.mark.wordnet
def test_saved_baseline_predictions_answer_a_sweeps_sample_and_are_irt_members_each_its_own_family(generated, tmp_path):
    write_parquet(split(generated, "train").head(300), tmp_path / "train.parquet")
    write_parquet(split(generated, "dev"), tmp_path / "dev.parquet")
    saved = tmp_path / "baselines.parquet"
    result = run("baselines", "--probes", str(tmp_path / "train.parquet"), "--probes", str(tmp_path / "dev.parquet"),
                 "--n-boot", "10", "--max-questions", "120", "--save-predictions", str(saved))  # fmt: skip
    assert result.returncode == 0, result.stderr
    preds = pl.read_parquet(saved)
    sample = sample_clusters(read_probes(tmp_path / "dev.parquet"), 120, 0)  # what a sweep's unit scores
    assert 0 < sample.height <= 120 < split(generated, "dev").height
    for name, part in preds.partition_by("model", as_dict=True).items():
        assert sorted(part["id"]) == sorted(sample["id"]), name
    fitted = run("irt", "fit", str(saved), "--held-out", "0", "--out", str(tmp_path / "fit"))
    assert fitted.returncode == 0, fitted.stderr
    members = pl.read_parquet(tmp_path / "fit" / "members.parquet")
    assert sorted(members["family"]) == sorted(preds["model"].unique()) and members.height == 5


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet=st.sampled_from("aAbÉé z\t\n-'.,"), max_size=30), min_size=1, max_size=8),
    st.lists(st.text(alphabet=st.sampled_from("abcÉé z\t-'."), max_size=30), min_size=1, max_size=8),
)
def test_the_character_tfidf_is_scikit_learns_char_wb_one_bit_for_bit(fitted: list[str], unseen: list[str]):
    """``CharTfidf`` counts word by word; its vocabulary and matrices are ``TfidfVectorizer``'s, on texts it was
    fitted on and on texts with words it never saw (and texts with no word at all)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from workbench.baselines.lexical import CharTfidf

    assume(any(len(text.split()) for text in fitted))
    expected = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True)
    got = CharTfidf()
    for made, ours in ((expected.fit_transform(fitted), got.fit_transform(fitted)),
                       (expected.transform(unseen), got.transform(unseen))):  # fmt: skip
        assert ours.shape == made.shape and ours.dtype == made.dtype
        assert np.array_equal(ours.toarray(), made.toarray())
    assert got.vocabulary_ == expected.vocabulary_
