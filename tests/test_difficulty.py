"""What makes an item hard: item properties from WordNet, the mixed-effects logistic model, its chart and report."""

import json
import math

import numpy as np
import polars as pl
import pytest
from test_metrics import predict

from workbench import reports
from workbench.analysis.difficulty import fit_difficulty, item_properties, reading
from workbench.charts import coefficient_plot
from workbench.errors import SpecError, WorkbenchError

TRUTH = {"intercept": 1.0, "hops": -0.5, "sister": -1.0, "isa_up": 0.5, "polysemy": 0.1, "concept_sd": 0.8}


@pytest.fixture(scope="module")
def simulated() -> pl.DataFrame:
    """3,000 questions about 500 concepts, right with the probability of a known logistic model whose intercept
    varies by concept (SD 0.8); the template is the same everywhere."""
    rng = np.random.default_rng(0)
    n, concepts = 3000, 500
    concept = rng.integers(0, concepts, n)
    hops = rng.integers(1, 5, n)
    family = rng.choice(["random", "sister", "isa_up"], n)
    polysemy = rng.integers(1, 12, n)
    eta = (
        TRUTH["intercept"]
        + TRUTH["hops"] * hops
        + np.where(family == "sister", TRUTH["sister"], 0.0)
        + np.where(family == "isa_up", TRUTH["isa_up"], 0.0)
        + TRUTH["polysemy"] * polysemy
        + rng.normal(0, TRUTH["concept_sd"], concepts)[concept]
    )
    correct = rng.random(n) < 1 / (1 + np.exp(-eta))
    return pl.DataFrame(
        {
            "correct": correct,
            "cluster_id": [f"hypernymy:c{i}" for i in concept],
            "hops": hops,
            "distractor_family": family,
            "polysemy": polysemy,
            "template": ["c0s0"] * n,
        }
    )


@pytest.fixture(scope="module")
def fitted(simulated: pl.DataFrame) -> pl.DataFrame:
    return fit_difficulty(simulated, ["hops", "distractor_family", "polysemy", "template"])


def test_the_fit_recovers_the_coefficients_of_a_known_model(simulated: pl.DataFrame, fitted: pl.DataFrame):
    by_term = {row["term"]: row for row in fitted.iter_rows(named=True)}
    hops, polysemy = simulated["hops"].to_numpy(), simulated["polysemy"].to_numpy()
    # continuous terms are standardised: the truth per SD is the coefficient times the SD (numpy's, ddof 0)
    assert by_term["hops"]["scale"] == pytest.approx(hops.std())
    assert by_term["hops"]["estimate"] == pytest.approx(TRUTH["hops"] * hops.std(), abs=0.1)
    assert by_term["polysemy"]["estimate"] == pytest.approx(TRUTH["polysemy"] * polysemy.std(), abs=0.1)
    assert by_term["distractor_family=sister"]["estimate"] == pytest.approx(TRUTH["sister"], abs=0.2)
    assert by_term["distractor_family=isa_up"]["estimate"] == pytest.approx(TRUTH["isa_up"], abs=0.2)
    average = TRUTH["intercept"] + TRUTH["hops"] * hops.mean() + TRUTH["polysemy"] * polysemy.mean()
    assert by_term["intercept"]["estimate"] == pytest.approx(average, abs=0.15)
    assert by_term["concept_sd"]["kind"] == "random"
    assert by_term["concept_sd"]["estimate"] == pytest.approx(TRUTH["concept_sd"], abs=0.15)
    assert (by_term["hops"]["n"], by_term["hops"]["n_clusters"]) == (3000, simulated["cluster_id"].n_unique())


def test_the_same_questions_give_the_same_table(simulated: pl.DataFrame, fitted: pl.DataFrame):
    """The fit starts from a seeded random point: a report re-run prints the same digits."""
    terms = ["hops", "distractor_family", "polysemy", "template"]
    assert fit_difficulty(simulated, terms).equals(fitted)
    other = fit_difficulty(simulated, terms, seed=1)
    assert np.allclose(other["estimate"].drop_nulls().to_numpy(), fitted["estimate"].drop_nulls().to_numpy(), atol=0.01)


def test_odds_ratios_and_intervals_follow_from_the_posterior(fitted: pl.DataFrame):
    fixed = fitted.filter(pl.col("kind") == "fixed")
    assert np.allclose(fixed["odds_ratio"], np.exp(fixed["estimate"]))
    assert np.allclose(fixed["hi"] - fixed["estimate"], 1.959964 * fixed["std_error"], rtol=1e-5)
    assert np.allclose(fixed["odds_lo"], np.exp(fixed["lo"]))
    assert (fixed["lo"] < fixed["estimate"]).all() and (fixed["estimate"] < fixed["hi"]).all()


def test_a_constant_term_is_dropped_with_a_note(fitted: pl.DataFrame):
    dropped = fitted.filter(pl.col("kind") == "dropped")
    assert dropped.select("term", "note").rows() == [("template", "constant in these questions (c0s0)")]


def test_a_collinear_term_is_dropped_after_the_terms_it_repeats(simulated: pl.DataFrame):
    frame = simulated.with_columns(distractor_depth=(pl.col("distractor_family") == "sister").cast(pl.Int64))
    table = fit_difficulty(frame, ["distractor_family", "distractor_depth"])
    dropped = table.filter(pl.col("kind") == "dropped")
    assert dropped.select("term", "note").rows() == [("distractor_depth", "collinear with the terms before it")]


def test_the_reading_gives_per_unit_odds_ratios(fitted: pl.DataFrame):
    hops = fitted.filter(pl.col("term") == "hops").row(0, named=True)
    per_hop = math.exp(hops["estimate"] / hops["scale"])
    lines = reading(fitted)
    assert lines[0].startswith(
        f"Each extra hop to the gold answer multiplies the odds of a right answer by {per_hop:.2f} ["
    )
    assert 0.55 < per_hop < 0.66  # the truth: exp(-0.5) = 0.61 per hop
    assert lines[-1].startswith("Concepts differ beyond these properties: their intercepts have an SD of ")


def test_too_few_questions_or_a_one_sided_outcome_is_a_clear_error(simulated: pl.DataFrame):
    with pytest.raises(WorkbenchError, match="too few for the difficulty model"):
        fit_difficulty(simulated.head(50), ["hops"])
    with pytest.raises(WorkbenchError, match="all right or all wrong"):
        fit_difficulty(simulated.with_columns(correct=pl.lit(True)), ["hops"])
    with pytest.raises(SpecError, match=r"\['lemma'\] not in the frame"):
        fit_difficulty(simulated, ["lemma"])


def test_the_coefficient_plot_draws_each_fixed_effect_beside_a_zero_line(fitted: pl.DataFrame):
    spec = coefficient_plot(fitted).to_dict()
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rule", "point", "rule"]
    rows = spec["datasets"][spec["layer"][0]["data"]["name"]]
    assert [row["term"] for row in rows] == ["hops", "distractor_family=isa_up", "distractor_family=sister", "polysemy"]
    assert spec["layer"][0]["encoding"]["x2"]["field"] == "hi"


@pytest.fixture(scope="module")
def released_preds(released_dir) -> pl.DataFrame:
    """200 released hypernymy test questions (real WordNet concepts), right when the gold answer is one hop up,
    and every fourth question besides."""
    from workbench.probes.formats import read_probes

    probes = read_probes(released_dir / "hypernymy_test.jsonl").head(200)
    rows = enumerate(probes.select("answer", "hops").rows())
    picks = [answer if hops == 1 or index % 4 == 0 else (answer + 1) % 5 for index, (answer, hops) in rows]
    return predict(probes, picks, "toy")


def test_item_properties_agree_with_nltk(released_preds: pl.DataFrame, wordnet_graph):
    from workbench.knowledge.wordnet import open_wordnet

    props = item_properties(released_preds, wordnet_graph)
    assert props.height == released_preds.height and props["correct"].to_list() == released_preds["correct"].to_list()
    wn = open_wordnet()
    for row in props.unique("concept", maintain_order=True).head(25).iter_rows(named=True):
        synset = wn.synset(row["concept"])
        lemma = next(item for item in synset.lemmas() if item.name().replace("_", " ") == row["lemma"])
        assert row["polysemy"] == len(wn.synsets(lemma.name(), synset.pos())), row["concept"]
        assert row["concept_depth"] == synset.min_depth(), row["concept"]
        assert row["lemma_frequency"] == lemma.count(), row["concept"]


def test_item_properties_pick_the_lemma_the_word_is_a_form_of(wordnet_graph):
    rows = {"concept": ["squat.v.01", "dog.n.01", "on.u.18"], "word": ["hunkered", "dogs", "on"]}
    from workbench.knowledge.measures import concept_measures

    measures = {row["concept"]: row for row in concept_measures(wordnet_graph, pl.DataFrame(rows)).to_dicts()}
    assert measures["squat.v.01"]["lemma"] == "hunker"
    assert (measures["dog.n.01"]["lemma"], measures["dog.n.01"]["polysemy"]) == ("dog", 7)
    assert (measures["dog.n.01"]["concept_depth"], measures["dog.n.01"]["sense_count"]) == (8, 42)
    assert measures["on.u.18"]["polysemy"] is None  # a GCIDE sense: not in WordNet


def test_the_report_holds_the_difficulty_model_when_there_are_enough_questions(released_preds: pl.DataFrame):
    document = json.loads(json.dumps(reports.json_report(released_preds, n_boot=50), allow_nan=False))
    rows = {row["term"]: row for row in document["difficulty"]}
    assert {row["label"] for row in rows.values()} == {"toy"}
    assert rows["hops"]["kind"] == "fixed" and rows["hops"]["estimate"] < 0  # right only at one hop
    assert rows["concept_sd"]["kind"] == "random" and rows["hops"]["n"] == 200
    text = reports.text_report(released_preds, n_boot=50)
    assert "What makes an item hard" in text and "toy: Each extra hop to the gold answer multiplies the odds" in text
    small = predict(released_preds.head(20), released_preds["pred"].head(20).to_list())
    assert reports.json_report(small, n_boot=50)["difficulty"] == []
    assert "Too few questions for the difficulty model" in reports.text_report(small, n_boot=50)
