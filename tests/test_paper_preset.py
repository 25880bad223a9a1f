"""The paper preset builds the paper's population of questions (docs/REPRODUCTION.md, "What the paper preset is").

Each rule of ``ProbeSpec.PAPER`` rests on a fact of R&S 2020 or of the released files
(../shared/data/semantic_fragments); the first tests pin those facts on the released files, the others build the
preset on real WordNet and check it against the released train files and against WordNet itself.
"""

import json
import math
import random
from collections import Counter
from itertools import accumulate

import polars as pl
import pytest

from workbench.analysis.release import (
    ALIKE,
    PARTIAL_INPUT,
    alike_accuracy,
    asked_alike,
    baseline_seeds,
    distances,
    drawn_like_release,
    human_votes,
    marginals,
    partial_input,
    release_comparison,
)
from workbench.distractors import draw_disjoint, randbelow
from workbench.errors import SpecError
from workbench.knowledge.wordnet import open_wordnet
from workbench.probes import ProbeSpec, below_bin, build_probes, general_golds, gold_generality
from workbench.probes.formats import read_probes
from workbench.probes.splits import split_by_concept
from workbench.probes.stats import MEASURES, table4
from workbench.probes.wordnetqa import _choice_counts

pytestmark = pytest.mark.wordnet
PROBES = ("definitions", "hypernymy", "hyponymy")
TABLE4 = {  # R&S 2020 Table 4: unique (Q, A) pairs, with perturbations, average cluster size, synsets
    "definitions": (31380, 148662, 10, 15159),
    "hypernymy": (19705, 35094, 5, 7849),
    "hyponymy": (6697, 35243, 11, 3452),
    "synonymy": (28254, 91069, 6, 15632),
}


def released_rows(released_dir, name: str) -> list[dict]:
    return [json.loads(line) for line in (released_dir / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("probe", ["definitions", "hypernymy", "synonymy"])
def test_released_random_perturbations_are_one_per_question(released_dir, probe):
    """Rule ``draws="disjoint"``, its random set: a released id ends in a running perturbation index except for the
    random-distractor rows, whose ids have no index (one random set per question), so the share of index-less ids
    is exactly the share of random rows."""
    rows = released_rows(released_dir, f"{probe}_train")
    without_index = sum(len(row["id"].split("-")) == 3 for row in rows)
    random_rows = sum(row["notes"]["distractor_type"] == "random" for row in rows)
    assert without_index == random_rows > 0


def test_released_sister_draws_are_the_ceiling_of_a_quarter_of_the_family(released_dir, wordnet_graph):
    """Rule ``draws="disjoint"``: a question's k-th sister-1 set has running index k, and the indices stay below
    ceil(|SISTER_1| / 4) (cleats.n.01's 26 siblings give indices 0-6); capped at 101 (``max_draws``)."""
    taxonomy = wordnet_graph.taxonomy_for(False)
    index_of = {name: number for number, name in enumerate(wordnet_graph.names)}
    fits, total = 0, 0
    for row in released_rows(released_dir, "definitions_train"):
        parts = row["id"].split("-")
        if len(parts) != 5 or row["notes"]["distractor_type"] != "sister" or parts[3] != "1":
            continue
        siblings = len(taxonomy.sisters(index_of[row["notes"]["gold_synset"]], 1))
        total += 1
        fits += int(parts[4]) < min(101, math.ceil(siblings / 4))
    assert total > 1500 and fits / total >= 0.95


def sister_1_last_sets(rows, taxonomy, index_of) -> tuple[float, float]:
    """Of sister-1 rows ((concept, set index or None for "topped up") pairs) whose family gives two or more sets: the
    share at the family's last set and its expectation if a question's sets were any of the family's (the mean of
    1 / sets)."""
    at_last = expected = total = 0.0
    for concept, position in rows:
        sets = min(101, math.ceil(len(taxonomy.sisters(index_of[concept], 1)) / 4))
        if sets < 2:
            continue
        total += 1
        at_last += position is None or position == sets - 1
        expected += 1 / sets
    return at_last / total, expected / total


@pytest.mark.parametrize("probe", PROBES)
def test_released_sister_1_sets_are_any_of_the_familys(released_dir, wordnet_graph, probe):
    """Rule ``spread_sets=("sister_1",)``: a released sister-1 row is the family's last set (the one topped up) as
    often as if a question's sets were drawn among all of its family's, 1 / ceil(|SISTER_1| / 4) on average: hyponymy
    0.175 against 0.171 (1,217 rows), definitions 0.084 against 0.090 (1,832), hypernymy 0.324 against 0.315 (562),
    where taking a question's first sets reaches the last one only when it takes them all."""
    taxonomy, index_of = wordnet_graph.taxonomy_for(False), wordnet_graph.ids
    rows = []
    for row in released_rows(released_dir, f"{probe}_train"):
        notes = row["notes"]
        if notes["distractor_type"] == "sister" and notes["distractor_hops"] == 1 and notes["gold_synset"] in index_of:
            rows.append((notes["gold_synset"], int(row["id"].split("-")[-1])))
    at_last, expected = sister_1_last_sets(rows, taxonomy, index_of)
    assert len(rows) > 1000 and abs(at_last - expected) <= 0.02, (at_last, expected)


def test_our_sister_1_sets_are_any_of_the_familys(paper, wordnet_graph):
    """Ours the same: a sister-1 set from a family whose size is not a multiple of four is topped up exactly when it
    is the family's last set, which a row is 1 / sets of the time (whole sets: hyponymy 0.125 against 0.132; without
    the rule 0.056, a question's first sets; definitions, whose questions mostly take every sister-1 set, 0.126
    against 0.126 either way)."""
    taxonomy, index_of = wordnet_graph.taxonomy_for(False), wordnet_graph.ids
    for frame in (paper["hyponymy"], paper["definitions"]):
        sister = frame.filter(pl.col("distractor_family") == "sister", pl.col("distractor_depth") == 1)
        rows = [
            (concept, None if filled else -1)
            for concept, filled in sister.select("concept", "n_random_fill").iter_rows()
            if len(taxonomy.sisters(index_of[concept], 1)) % 4
        ]
        at_last, expected = sister_1_last_sets(rows, taxonomy, index_of)
        assert len(rows) > 1000 and abs(at_last - expected) <= 0.02, (at_last, expected)
    with pytest.raises(SpecError, match="spread_sets names 'random'"):
        ProbeSpec("hyponymy", spread_sets=("random",))


def test_no_family_set_is_random_filler_only(released_dir, paper):
    """Rule ``family_mix`` (a kind gives a question at most its family's disjoint sets): no released family set
    (sister, isa) is four random fillers, though fillers are common (3 of 4 in 8-100 % of a kind's rows); nor is
    one of ours but where the family's concepts would all be right answers."""
    for probe in PROBES:
        released = read_probes(released_dir / f"{probe}_train.jsonl").filter(pl.col("distractor_family") != "random")
        assert (released["n_random_fill"] == 3).sum() > 200 and (released["n_random_fill"] == 4).sum() == 0
        ours = paper[probe].filter(pl.col("distractor_family") != "random")
        assert (ours["n_random_fill"] == 4).mean() < 0.005, probe


def test_released_hypernymy_questions_carry_few_family_sets(released_dir):
    """Rule ``perturbations=2`` for hypernymy: 77 % of the released hypernymy rows' running set indices are 0 or 1
    (a question's first two family sets), against 29 % of definitions' (whose sets run up to index 142)."""

    def low_share(name: str) -> float:
        indices = [
            int(row["id"].split("-")[4]) for row in released_rows(released_dir, name) if row["id"].count("-") == 4
        ]
        return sum(index < 2 for index in indices) / len(indices)

    assert low_share("hypernymy_train") > 0.75 and low_share("definitions_train") < 0.3


def test_released_train_files_spread_3000_questions_over_many_clusters(released_dir):
    """Rule ``train_pool``: the released train files hold 3,000 questions over 1,327-2,712 clusters (mean 1.1-2.3
    questions), which no split of whole clusters gives: train is a random draw of questions."""
    for probe in PROBES:
        frame = read_probes(released_dir / f"{probe}_train.jsonl")
        assert frame.height == 3000 and frame["cluster_id"].n_unique() > 1300


def test_released_hypernymy_train_holds_few_test_golds(released_dir):
    """Rule ``held_out_golds`` (R&S 2020 §5.1: splits "de-duplicat[ed] with respect to correct answer"): 99 of the
    3,000 released hypernymy train questions (3 %) have a gold that is also a released test gold, though general
    hypernyms are the gold of many concepts."""
    train, test = (read_probes(released_dir / f"hypernymy_{split}.jsonl") for split in ("train", "test"))
    shared = train.filter(pl.col("gold_concept").is_in(test["gold_concept"].unique().implode()))
    assert shared.height / train.height < 0.05


@pytest.mark.parametrize(("probe", "humans"), [("hypernymy", 0.96), ("hyponymy", 0.955)])
def test_released_gold_tests_keep_their_annotators_judgements(released_dir, probe, humans):
    """R&S 2020 §3.1.3 filtered the gold-standard tests of the questions its annotators got wrong: every kept
    question's distinct picks hold the gold, and the kept pick is right as often as the paper's humans (96 %,
    95.5 %). Questions whose annotators picked three different choices mostly keep the gold as their pick, so a
    question had more annotators than picks and the picks do not say how many got it right."""
    rows = released_rows(released_dir, f"{probe}_test")
    votes = human_votes(released_dir / f"{probe}_test.jsonl")
    assert votes.height == len(rows)
    assert all(row["answerKey"] in row["notes"]["total_votes"] for row in rows)
    assert votes["human_correct"].mean() == pytest.approx(humans, abs=0.005)
    assert votes.filter(pl.col("picks") == 3)["human_correct"].mean() > 0.6
    assert human_votes(released_dir / f"{probe}_train.jsonl").is_empty()


def test_compare_release_sets_the_annotators_beside_a_released_test(paper, released_dir, tmp_path, cli):
    """`compare-release` on a released gold-standard test prints its annotators' accuracy and agreement; with
    `--no-baselines` it fits no baseline (the README's run prints them)."""
    from typer.testing import CliRunner

    ours = tmp_path / "hypernymy.parquet"
    paper["hypernymy"].write_parquet(ours)
    released = released_dir / "hypernymy_test.jsonl"
    result = CliRunner().invoke(cli, ["probes", "compare-release", str(ours), str(released), "--no-baselines"])
    assert result.exit_code == 0, result.output
    assert "\nbaselines\n" not in result.output and "\ndistances\n" in result.output
    table = [line for line in result.output.split("\nhumans\n")[1].splitlines() if line.startswith("|")]
    header, values = ([cell.strip() for cell in line.strip("|").split("|")] for line in (table[0], table[2]))
    votes = human_votes(released)
    assert dict(zip(header, map(float, values))) == {
        "human_accuracy": round(votes["human_correct"].mean(), 4),
        "one_pick": round((votes["picks"] == 1).mean(), 4),
    }


def test_compare_release_alike_asks_for_a_model(released_dir, tmp_path, cli):
    """`--alike` scores questions, so without `--model` it is refused before anything is read or built."""
    from typer.testing import CliRunner

    released = str(released_dir / "hypernymy_test.jsonl")
    result = CliRunner().invoke(cli, ["probes", "compare-release", str(tmp_path / "missing"), released, "--alike"])
    assert result.exit_code == 2
    assert "give --model too" in result.output


@pytest.fixture(scope="module")
def whole(wordnet_graph) -> dict[str, pl.DataFrame]:
    """The paper preset's whole sets (every question of the size sample; train as whole clusters, none left out,
    and no test draw)."""
    return {
        probe: build_probes(
            ProbeSpec.paper(probe, train_pool=None, held_out_golds=False, test_size=None), wordnet_graph, progress=False
        )
        for probe in PROBES
    }


@pytest.fixture(scope="module")
def paper(whole, wordnet_graph) -> dict[str, pl.DataFrame]:
    """The preset's splits: what ``build_probes(ProbeSpec.paper(probe))`` returns, its train drawn as the paper's."""
    specs = {probe: ProbeSpec.paper(probe) for probe in PROBES}
    return {
        probe: split_by_concept(
            frame,
            spec.train_size,
            spec.seed,
            spec.train_pool,
            spec.held_out_golds,
            test_size=spec.test_size,
            test_pool=spec.test_pool,
            test_mix=spec.test_mix,
            test_leave_out=general_golds(wordnet_graph, frame, spec),
            test_measures=gold_generality(wordnet_graph, frame, spec),
        )
        for probe, frame in whole.items()
        for spec in [specs[probe]]
    }


@pytest.mark.parametrize("probe", PROBES)
def test_the_preset_draws_like_the_released_train_file(paper, released_dir, probe):
    """3,000 questions of our train split beside the released train file: parts of speech, hops and distractor kinds
    within 0.05 total variation; as many clusters within 15 % (hyponymy within 30 %: docs/REPRODUCTION.md)."""
    tables = release_comparison(paper[probe], read_probes(released_dir / f"{probe}_train.jsonl"), baselines=False)
    distances = dict(tables["distances"].iter_rows())
    assert max(distances.values()) <= 0.05, distances
    clusters = dict(zip(tables["clusters"]["set"], tables["clusters"]["clusters"]))
    tolerance = {"hyponymy": 0.3}.get(probe, 0.15)
    assert abs(clusters["ours"] - clusters["released"]) <= tolerance * clusters["released"], clusters


@pytest.mark.parametrize("probe", ["hypernymy", "hyponymy"])
def test_the_test_mix_is_the_released_gold_tests(released_dir, probe):
    """Rule ``test_size`` / ``test_mix``: the paper preset's test holds as many questions as the released
    gold-standard test file and its shares of part of speech, hops and distractor kind, which differ from the
    released train file's (hypernymy's test: 45 % verbs against the train's 29 %, hop 1 59 % against 75 %), so a
    test drawn like the train cannot be the gold test."""
    test, train = (read_probes(released_dir / f"{probe}_{split}.jsonl") for split in ("test", "train"))
    spec = ProbeSpec.paper(probe)
    assert spec.test_size == test.height
    shares = {key: share for key, share in spec.test_mix}
    for measure, expression in MEASURES.items():
        counted = test.select(value=expression).group_by("value").len().iter_rows()
        assert {f"{measure}:{value}": round(n / test.height, 4) for value, n in counted} == pytest.approx(
            {key: share for key, share in shares.items() if key.startswith(f"{measure}:")}, abs=2e-4
        )
    assert max(dict(distances(marginals(test, train)).iter_rows()).values()) > 0.08


def test_released_hypernymy_test_golds_are_not_general(released_dir, paper, wordnet_graph):
    """Rule ``test_max_below``: 1.0 % of the released hypernymy test's rows have a gold with more than 2,000 concepts
    below it (at any depth; 'entity' has 74,373), against 47 % of our silver dev and test rows (the general golds
    ``held_out_golds`` keeps out of train), so the gold-like test leaves them out; ours holds none."""
    taxonomy, ids = wordnet_graph.taxonomy_for(False), wordnet_graph.ids
    cap = ProbeSpec.paper("hypernymy").test_max_below
    below = {}

    def general(frame: pl.DataFrame) -> float:
        for gold in frame["gold_concept"].unique().to_list():
            if gold not in below:
                below[gold] = len(taxonomy.hops(ids[gold], "down", 10**6))
        return frame["gold_concept"].replace_strict(below, return_dtype=pl.Int64).gt(cap).mean()

    whole = build_probes(ProbeSpec.paper("hypernymy", test_size=None), wordnet_graph, progress=False)
    assert general(read_probes(released_dir / "hypernymy_test.jsonl")) < 0.011
    assert general(whole.filter(pl.col("split") != "train")) > 0.3
    assert general(paper["hypernymy"].filter(pl.col("split") == "test")) == 0


def test_released_hypernymy_test_golds_are_as_general_as_the_test_mix(released_dir, paper, wordnet_graph):
    """Rule ``test_mix``, ``below``: the released hypernymy test's golds have the shares of generality (concepts below
    the gold, in ``BELOW_BINS``) that the preset's test mix names: median 35 concepts below, where a draw holding only
    its part of speech, hops and kinds had median 53 (12 % of rows with 1,001-2,000 below against the release's
    1.7 %) and our silver dev has more general golds still; our gold-like test holds the release's shares.
    Follows R&S 2020 §3.1.3 (the gold-standard test sets, drawn and filtered apart from the silver dev sets)."""
    spec = ProbeSpec.paper("hypernymy")
    released = read_probes(released_dir / "hypernymy_test.jsonl")
    assert [below_bin(count) for count in (0, 1, 2, 3, 4, 2000, 2001, 74373)] == [
        "0-1", "0-1", "2-3", "2-3", "4-10", "1001-2000", "2001+", "2001+",
    ]  # fmt: skip

    def shares(frame: pl.DataFrame) -> dict[str, float]:
        below = gold_generality(wordnet_graph, frame, spec)["below"]
        return {value: n / frame.height for value, n in frame.select(value=below).group_by("value").len().iter_rows()}

    def distance(ours: dict[str, float], theirs: dict[str, float]) -> float:
        return sum(abs(ours.get(key, 0) - theirs.get(key, 0)) for key in ours.keys() | theirs.keys()) / 2

    mix = {key.partition(":")[2]: share for key, share in spec.test_mix if key.startswith("below:")}
    assert {key: round(share, 4) for key, share in shares(released).items()} == pytest.approx(mix, abs=2e-4)
    frame = paper["hypernymy"]
    assert distance(shares(frame.filter(pl.col("split") == "dev")), mix) > 0.3
    assert distance(shares(frame.filter(pl.col("split") == "test")), mix) < 0.05  # 0.19 without the rule


@pytest.mark.parametrize("probe", ["hypernymy", "hyponymy"])
def test_the_preset_draws_its_test_like_the_released_gold_test(paper, released_dir, probe):
    """Our gold-like test split beside the released test file (docs/REPRODUCTION.md, "The gold-like test"): parts of
    speech, hops and kinds within 0.05 total variation, as many clusters within 10 %, its questions named gold-like
    and dev the large silver set; no cluster in two splits."""
    released = read_probes(released_dir / f"{probe}_test.jsonl")
    tables = release_comparison(paper[probe], released, baselines=False)
    assert max(dict(tables["distances"].iter_rows()).values()) <= 0.05, tables["distances"]
    clusters = dict(zip(tables["clusters"]["set"], tables["clusters"]["clusters"]))
    assert abs(clusters["ours"] - clusters["released"]) <= 0.1 * clusters["released"], clusters
    frame = paper[probe]
    test = frame.filter(pl.col("split") == "test")
    assert test.height == released.height
    assert frame.group_by("cluster_id").agg(pl.col("split").n_unique())["split"].max() == 1
    assert frame.filter(pl.col("split") == "dev").height > 2 * test.height


def test_hypernymy_train_golds_are_as_specific_as_the_released(paper, whole, released_dir, wordnet_graph):
    """Rule ``held_out_golds``: no train question of ours has a dev or test gold (without the rule most would: the
    general hypernyms that many concepts share), so train asks for specific hypernyms as the release does: the
    median number of hyponyms of a train gold is at most twice the released train's (4 for nouns, 3 for verbs;
    ours 6 and 4), where the whole set's is more than twice it (11 and 12)."""
    frame = paper["hypernymy"]
    held = frame.filter(pl.col("split") != "train")["gold_concept"].unique().implode()
    train = frame.filter(pl.col("split") == "train")
    assert train.height == 3000 and train.filter(pl.col("gold_concept").is_in(held)).is_empty()
    children, ids = wordnet_graph.taxonomy_for(False).children, wordnet_graph.ids

    def hyponyms(rows: pl.DataFrame) -> dict[str, float]:
        counts = pl.Series([len(children[ids[gold]]) for gold in rows["gold_concept"]])
        return dict(rows.select("pos").with_columns(n=counts).group_by("pos").agg(pl.col("n").median()).iter_rows())

    released = hyponyms(read_probes(released_dir / "hypernymy_train.jsonl"))
    ours, everything = hyponyms(train), hyponyms(whole["hypernymy"].sample(3000, seed=0))
    for pos in ("n", "v"):
        assert ours[pos] <= 2 * released[pos] < everything[pos], (pos, ours, released, everything)


def test_hypernymy_train_keeps_a_questions_perturbations_together(paper, released_dir, wordnet_graph):
    """Rule ``size_unit="question"`` (hypernymy): the whole set samples whole questions, each with its random and
    family sets. The released train file holds 1.87 rows per (cluster, gold), where a whole set sampled row by row
    leaves a question about one row of its 2.4 and our train 1.33; sampling whole questions gives 2.01, and the train
    then spans about as many clusters as the release's (1,405 against 1,341)."""

    def rows_per_question(frame: pl.DataFrame) -> float:
        return frame.height / frame.select("cluster_id", "gold_concept").n_unique()

    released = rows_per_question(read_probes(released_dir / "hypernymy_train.jsonl"))
    ours = rows_per_question(paper["hypernymy"].filter(pl.col("split") == "train"))
    by_row = build_probes(ProbeSpec.paper("hypernymy", size_unit="row", train_pool=0.7), wordnet_graph, progress=False)
    assert released > 1.8 and abs(ours - released) <= 0.25, (ours, released)
    assert rows_per_question(by_row.filter(pl.col("split") == "train")) < 1.5
    with pytest.raises(SpecError, match="size_unit='concept' is not allowed"):
        ProbeSpec("hypernymy", size_unit="concept")


def test_taxonomy_choices_name_their_concept_as_the_release_does(paper, released_dir):
    """Rule ``choice_words="name"`` (R&S 2020 Table 2: 'escape event defined as ...'): in the released hypernymy
    train file every verb choice has ' event' after its words and no choice starts with a capital ('victorian (or
    Victorian)'); ours the same, each choice's words being its concept's name word and at most two other lemmas,
    read from WordNet through NLTK."""
    wn = open_wordnet()
    released = read_probes(released_dir / "hypernymy_train.jsonl")
    for frame in (released, paper["hypernymy"].filter(pl.col("split") == "train")):
        choices = frame.select("pos", "choices").explode("choices")
        verbs = choices.filter(pl.col("pos") == "v")["choices"]
        assert verbs.str.contains(" event, defined as '", literal=True).all()
        assert not choices["choices"].str.contains(r"^[A-Z]").any()
    for row in paper["hypernymy"].sample(300, seed=2).iter_rows(named=True):
        text, name = row["choices"][row["answer"]], row["gold_concept"]
        head = text.split(", defined as '")[0]
        word, _, others = (head.removesuffix(" event") if ".v." in name else head).partition(" (or ")  # social event.n
        shown = others.removesuffix(")").split(", ") if others else []
        other_lemmas = {lemma.replace("_", " ") for lemma in wn.synset(name).lemma_names()} - {word}
        assert word == name.rsplit(".", 2)[0].replace("_", " "), (text, name)
        assert set(shown) <= other_lemmas and len(shown) == min(2, len(other_lemmas)), (text, other_lemmas)


def test_definitions_partial_input_baselines_match_the_release(paper, released_dir):
    """The partial-input baselines (cross-fitted by cluster) on our definitions draw and on the released train file
    within 0.05 of each other: the generator leaks no more and no less than the paper's (hypernymy's and synonymy's
    do not match: docs/REPRODUCTION.md). The target is 0.03, met by the documented draw; the estimate moves by about
    0.02 with the seed of the draw and of the folds, hence the margin here."""
    tables = release_comparison(paper["definitions"], read_probes(released_dir / "definitions_train.jsonl"))
    ours, released = (
        tables["baselines"].filter(pl.col("set") == side).row(0, named=True) for side in ("ours", "released")
    )
    for name in ("ChoiceOnly", "ChoiceToChoice", "QuestionToChoice"):
        assert abs(ours[name] - released[name]) <= 0.05, (name, ours[name], released[name])


def test_synonymy_draws_and_leaks_like_the_release(released_dir, wordnet_graph):
    """The synonymy preset's train split beside the released train file: parts of speech, hops and kinds within 0.05
    total variation, and the partial-input baselines within 0.05 (target 0.03, met at seed 0 and over five seeds:
    docs/REPRODUCTION.md). Before ``hide_defined_lemmas`` hid the lemmas that hold a word of the definition
    ('peacetime' for 'a period of time ...'), Question-to-Choice was 0.455 against the release's 0.389."""
    ours = build_probes(ProbeSpec.paper("synonymy"), wordnet_graph, progress=False)
    tables = release_comparison(ours, read_probes(released_dir / "synonymy_train.jsonl"))
    distances = dict(tables["distances"].iter_rows())
    assert max(distances.values()) <= 0.05, distances
    mine, released = (
        tables["baselines"].filter(pl.col("set") == side).row(0, named=True) for side in ("ours", "released")
    )
    for name in PARTIAL_INPUT:
        assert abs(mine[name] - released[name]) <= 0.05, (name, mine[name], released[name])


def test_baselines_over_seeds_are_the_mean_and_spread_of_each_seeds_draw_and_folds(released_dir):
    """`compare-release --seeds N`: each seed refolds both sides and, where ours holds more questions than the
    release (here 450 against 300), draws ours anew (docs/REPRODUCTION.md's table of five seeds); the released rows
    stay the same. The mean and spread are those of the seeds' runs at any size; 450 and 300 rows keep two draws of
    ours apart (the last assertion) at half the cost of fitting the baselines eight times on 900 and 600."""
    ours = read_probes(released_dir / "hyponymy_test.jsonl").head(450)
    released = read_probes(released_dir / "hyponymy_train.jsonl").head(300)
    table = baseline_seeds(ours, released, range(3, 5))
    for side in ("ours", "released"):
        each = [partial_input(drawn_like_release(ours, 300, s) if side == "ours" else released, s) for s in (3, 4)]
        row = table.filter(pl.col("set") == side).row(0, named=True)
        for name in PARTIAL_INPUT:
            values = pl.Series([run[name] for run in each])
            assert row[name] == pytest.approx(values.mean(), abs=1e-4)
            assert row[f"{name}_sd"] == pytest.approx(values.std(), abs=1e-4)
    assert table.filter(pl.col("set") == "ours")["ChoiceOnly_sd"].item() > 0  # the draws differ


@pytest.mark.parametrize("probe", PROBES)
def test_the_whole_set_has_table4s_size(whole, paper, probe):
    """Rule ``size``: the whole set is a uniform sample of exactly Table 4's "with perturbations" questions (its
    synsets are not the paper's: docs/REPRODUCTION.md). Train is 3,000 questions drawn from whole clusters'
    questions: no cluster straddles two splits."""
    stats = table4(whole[probe]).row(0, named=True)
    assert stats["with_perturbations"] == TABLE4[probe][1]
    train = paper[probe].filter(pl.col("split") == "train")
    assert train.height == 3000
    splits = paper[probe].group_by("cluster_id").agg(pl.col("split").n_unique())
    assert splits["split"].max() == 1  # no cluster straddles two splits


def test_disjoint_sets_of_one_question_never_share_a_distractor(paper):
    """Rule ``draws="disjoint"``: the sets a question draws from one family are disjoint (as the paper's running
    index deals the shuffled family out), apart from the random concepts that top a short set up."""
    rows = paper["definitions"].filter(pl.col("distractor_family") == "sister", pl.col("n_random_fill") == 0)
    groups = rows.group_by("concept", "context", "question", "distractor_family", "distractor_depth").agg(
        pl.col("distractor_concepts").explode()
    )
    repeated = groups.filter(pl.col("distractor_concepts").list.n_unique() < pl.col("distractor_concepts").list.len())
    assert groups.height > 1000 and repeated.height == 0


def test_a_kept_set_is_dealt_after_the_sets_before_it():
    """``draw_disjoint`` with ``keep``: a set left out is still dealt (the kept ones are what they would be among all
    of them: disjoint, from the family), it is None, and only kept sets are topped up from the pool."""
    family, pool = list(range(10)), list(range(100, 200))
    drawn = draw_disjoint(random.Random(0), family, pool, lambda x: True, str, set(), [False, True, True, False])
    assert drawn[0] is None and drawn[3] is None
    (second, from_family), (third, filled) = ((d.concepts, d.n_random_fill) for d in drawn[1:3])
    assert set(second) <= set(family) and from_family == 0 and not set(second) & set(third)
    assert len(set(third) & set(family)) == 2 and filled == 2 and set(third) - set(family) <= set(pool)  # 10 = 4+4+2


def test_a_set_takes_one_concept_per_branch_and_the_rest_wait_for_the_next_sets():
    """``draw_disjoint`` with ``branch`` (rule ``one_per_branch``): no set holds two concepts of one branch, no
    concept is in two sets, a concept passed over waits for a later set (so the family is used up as without the
    rule), and a set that runs out of branches is topped up from the pool. Without ``branch``, sets mix branches."""
    family, pool = list(range(12)), list(range(100, 200))
    branch = {x: x // 6 if x < 6 else 1 + x % 3 for x in family}.__getitem__  # branches 0 (six concepts), 1, 2, 3
    drawn = draw_disjoint(random.Random(1), family, pool, lambda x: True, str, set(), [True] * 4, branch=branch)
    inside = [[x for x in d.concepts if x in family] for d in drawn]
    assert all(len({branch(x) for x in members}) == len(members) for members in inside)
    used = [x for members in inside for x in members]
    assert len(set(used)) == len(used) == 10 and set(range(6, 12)) <= set(used)  # disjoint; branches 1-3 used up
    assert [d.n_random_fill for d in drawn] == [4 - len(members) for members in inside]
    assert [len(members) for members in inside] == [4, 4, 1, 1]  # then branch 0 alone: one concept a set
    plain = draw_disjoint(random.Random(1), family, pool, lambda x: True, str, set(), [True] * 3)
    assert any(len({branch(x) for x in d.concepts}) < 4 for d in plain)


def test_released_deep_sets_take_one_concept_per_branch(released_dir, wordnet_graph):
    """Rule ``one_per_branch``: every released set of four from a family two or more levels deep comes from four
    branches (a sibling of the concept for ``sister``, a child for ``isa_down``): 333 hyponymy, 253 definitions, 56
    synonymy, 45 hypernymy sister-2 sets, where drawing four at random from the family gives four branches in 50 %,
    64 %, 23 % and 32 % of them; the sets short of branches are topped up with random concepts (weather.n.01's
    sister-2 set: dew, blizzard, aurora australis, cold front, from four of its siblings). Ours the same."""
    taxonomy, index = wordnet_graph.taxonomy_for(False), wordnet_graph.ids

    def branches(concept: int, members: list[int]) -> int:
        siblings = {c for parent in taxonomy.parents[concept] for c in taxonomy.children[parent]} - {concept}
        return len({min(s for s, links in taxonomy.hops(m, "up", 1).items() if links == 1 and s in siblings)
                    for m in members})  # fmt: skip

    full = spanning = 0
    for probe in ("definitions", "hyponymy", "synonymy"):
        for row in released_rows(released_dir, f"{probe}_train"):
            notes = row["notes"]
            if notes["distractor_type"] != "sister" or notes["distractor_hops"] != 2 or notes["random_distractors"]:
                continue
            pairs = [link.split("=>") for link in notes["distractor_chain"].split(";")]
            if all(name in index for pair in pairs for name in pair):
                full += 1
                spanning += branches(index[pairs[0][0]], [index[member] for _, member in pairs]) == 4
    assert full > 600 and spanning == full
    frame = build_probes(ProbeSpec.paper("hyponymy"), wordnet_graph, progress=False)
    sets = frame.filter(pl.col("distractor_family") == "sister", pl.col("distractor_depth") == 2)
    sets = sets.filter(pl.col("n_random_fill") == 0).head(300)
    for concept, members in sets.select("concept", "distractor_concepts").iter_rows():
        assert branches(index[concept], [index[m] for m in members]) == 4, (concept, members)
    assert sets.height == 300


def test_kind_counts_are_those_of_random_choices():
    """A question's family kinds are counted from sorted draws (``_choice_counts``), not from ``random.choices``; the
    counts and the generator's state after them must be the same, or the build's sample would change."""
    maker = random.Random(5)
    for _ in range(300):
        weights = [maker.choice([0.0, 0.0137, 0.25, 0.6861, 1.0]) for _ in range(maker.randint(1, 11))]
        if not any(weights):
            continue
        k, seed = maker.randint(0, 150), maker.random()
        drawn = Counter(random.Random(seed).choices(range(len(weights)), weights=weights, k=k))
        ours, theirs = random.Random(seed), random.Random(seed)
        theirs.choices(range(len(weights)), weights=weights, k=k)
        assert _choice_counts(ours, list(accumulate(weights)), k) == [drawn[i] for i in range(len(weights))]
        assert ours.random() == theirs.random()


def test_a_shuffle_draws_what_randrange_draws():
    """Draws deal their candidates with ``randbelow``, not ``random.randrange``; the numbers and the generator's
    state after them must be the same, or every distractor of the build would change."""
    ours, theirs = random.Random(3), random.Random(3)
    below = randbelow(ours)
    for n in [1, 2, 3, 4, 5, 7, 8, 9, 100, 143, 1024, 1025, 117_659] * 50:
        assert below(n) == theirs.randrange(n)
    assert ours.random() == theirs.random()


def links_up(concept, goal) -> int | None:
    """Shortest number of hypernym links from ``concept`` up to ``goal`` (class links, as the preset follows)."""
    frontier, seen, depth = {concept}, {concept}, 0
    while frontier:
        if goal in frontier:
            return depth
        frontier = {parent for node in frontier for parent in node.hypernyms()} - seen
        seen |= frontier
        depth += 1
    return None


def assert_right_by_wordnet(wn, row: dict) -> None:
    """A hypernymy question right by WordNet through NLTK: its gold exactly ``hops`` links up, no distractor above
    the concept (instance links included)."""
    concept = wn.synset(row["concept"])
    assert links_up(concept, wn.synset(row["gold_concept"])) == row["hops"], row["id"]
    above = set(concept.closure(lambda synset: synset.hypernyms() + synset.instance_hypernyms()))
    assert not any(wn.synset(name) in above for name in row["distractor_concepts"]), row["id"]


def test_paper_questions_are_right_by_wordnet(paper):
    """Every gold answer right and no distractor also right, read from WordNet through NLTK: hypernymy golds exactly
    ``hops`` links up and no distractor above the concept; definitions golds the concept's gloss, no distractor's."""
    wn = open_wordnet()
    for row in paper["hypernymy"].sample(600, seed=1).iter_rows(named=True):
        assert_right_by_wordnet(wn, row)
    for row in paper["definitions"].sample(600, seed=1).iter_rows(named=True):
        gloss = wn.synset(row["concept"]).definition().strip().casefold()
        assert row["choices"][row["answer"]].strip().casefold() == gloss, row["id"]
        others = [choice for number, choice in enumerate(row["choices"]) if number != row["answer"]]
        assert all(choice.strip().casefold() != gloss for choice in others), row["id"]


@pytest.mark.model
def test_our_questions_asking_what_the_released_ask_score_as_the_released(released_dir, wordnet_graph, minilm_path):
    """Asked about the released hypernymy test's own concepts, golds and distractor kinds (600 of its questions),
    the preset makes questions for most released questions, every one right by WordNet, and MiniLM scores them as it
    scores the released ones (within 0.03): where ours and the release differ it is in which questions are asked."""
    from workbench.scoring import score

    released = read_probes(released_dir / "hypernymy_test.jsonl").sample(600, seed=0)
    alike = asked_alike(released, wordnet_graph)
    assert alike.join(released.select(ALIKE).unique(), on=ALIKE, how="anti").is_empty()
    assert released.join(alike.select(ALIKE).unique(), on=ALIKE, how="semi").height / released.height > 0.75
    wn = open_wordnet()
    for row in alike.sample(300, seed=0).iter_rows(named=True):
        assert_right_by_wordnet(wn, row)
    scored = [score(frame, str(minilm_path), "similarity", progress=False) for frame in (alike, released)]
    table = alike_accuracy(*scored)
    whole = table.filter(pl.col("pos") == "all").row(0, named=True)
    assert whole["questions"] == table.filter(pl.col("family") != "all")["questions"].sum()
    assert whole["ours"] == pytest.approx(whole["released"], abs=0.03)


def test_paper_stems_vary_within_a_cluster(paper):
    """Rules ``sentences="all"`` and ``phrasings=2``: the released files have more than one stem in 67-94 % of their
    multi-question clusters (a question per example sentence, phrased two ways); so do ours."""
    for probe in PROBES:
        clusters = paper[probe].group_by("cluster_id").agg(pl.len(), pl.col("question").n_unique().alias("stems"))
        several = clusters.filter(pl.col("len") > 1)
        assert (several["stems"] > 1).mean() >= 0.6, probe


def test_a_named_concept_gets_its_whole_population_of_questions(wordnet_graph):
    """Picked in the explorer, a concept shows every question of its: the ``size`` sample thins whole builds only,
    so naming a concept gives the same questions with or without it."""
    named = build_probes(ProbeSpec.paper("hyponymy", concepts=("dog.n.01",)), wordnet_graph, progress=False)
    unsampled = build_probes(
        ProbeSpec.paper("hyponymy", concepts=("dog.n.01",), size=None, pos_mix={}), wordnet_graph, progress=False
    )
    assert named.height > 50 and named.equals(unsampled)
    assert named["concept"].unique().to_list() == ["dog.n.01"]


@pytest.fixture(scope="module")
def synonymy_release(released_dir, wordnet_graph) -> tuple[list[dict], pl.DataFrame]:
    """60 released synonymy rows (every fifth multi-lemma gold) and our paper preset on their gold synsets."""
    rows = [row for row in released_rows(released_dir, "synonymy_train") if row["notes"]["gold_synset"]]
    known = set(wordnet_graph.names)
    picked = [row for row in rows if row["notes"]["gold_synset"] in known][::50][:60]
    concepts = tuple(sorted({row["notes"]["gold_synset"] for row in picked}))
    return picked, build_probes(ProbeSpec.paper("synonymy", concepts=concepts), wordnet_graph, progress=False)


def lemma_list(text: str) -> list[str]:
    return [part.strip().lower() for part in text.split(",")]


def in_clause(lemma: str, clause: str) -> bool:
    """A word of ``lemma`` found in the (lowercase) clause's text: the first direction of ``hide_defined_lemmas``."""
    return any(word in clause for word in lemma.lower().split())


def holds_clause_word(lemma: str, clause: str) -> bool:
    """A word of the clause, split at spaces as its text stands, found in ``lemma``: the rule's second direction."""
    return any(word in lemma.lower() for word in clause.split())


def test_released_synonymy_golds_hide_what_their_definition_gives_away(synonymy_release, wordnet_graph):
    """Rule ``hide_defined_lemmas``: a released synonymy gold leaves out the lemmas with a word in its definition's
    first clause (`tip.v.03` 'give a tip or gratuity to ...' shows 'fee, bung'); measured on all 2,246 released
    multi-lemma golds, 2,243 follow it, and their distractors show every lemma. Ours give the released gold text."""
    picked, ours = synonymy_release
    gold_of = {row["concept"]: lemma_list(row["choices"][row["answer"]]) for row in ours.iter_rows(named=True)}
    answer = lambda row: row["question"]["choices"][int(row["answerKey"])]["text"]  # noqa: E731
    released = {row["notes"]["gold_synset"]: answer(row) for row in picked}
    same = [lemma_list(text) == gold_of[name] for name, text in released.items()]
    assert len(same) >= 50 and sum(same) >= 0.95 * len(same)
    index = {name: number for number, name in enumerate(wordnet_graph.names)}
    counts = wordnet_graph.lemmas.group_by("id").agg(pl.col("lemma").str.to_lowercase().n_unique())
    count = dict(zip(counts["id"], counts["lemma"]))
    assert sum(len(gold) < count[index[name]] for name, gold in gold_of.items()) > 0.2 * len(gold_of)


def test_released_synonymy_never_gives_its_gold_away(released_dir, wordnet_graph, synonymy_release):
    """Rule ``hide_defined_lemmas``, second half: in 3 of the 3,000 released synonymy questions a lemma the gold shows
    has a word in the definition the question shows (its first clause): a synset whose every lemma does is not
    asked about (19,504 of WordNet's; ours asked about them, a third of our questions gave the gold away). So
    `forced_landing.n.01` ('an unscheduled airplane landing ...') is not eligible, and none of ours gives it away."""
    index = wordnet_graph.ids
    gloss = wordnet_graph.concepts["gloss"].to_list()

    def gives_away(concept: str, gold: str) -> bool:
        clause = gloss[index[concept]].split(";")[0].lower()
        return any(in_clause(lemma, clause) for lemma in lemma_list(gold))

    rows = released_rows(released_dir, "synonymy_train")
    answer = lambda row: row["question"]["choices"][int(row["answerKey"])]["text"]  # noqa: E731
    known = [row for row in rows if row["notes"]["gold_synset"] in index]
    given = sum(gives_away(row["notes"]["gold_synset"], answer(row)) for row in known)
    assert len(known) > 2900 and given <= 5
    _, ours = synonymy_release
    assert not any(gives_away(row["concept"], row["choices"][row["answer"]]) for row in ours.iter_rows(named=True))
    with pytest.raises(SpecError, match="forced_landing"):
        build_probes(ProbeSpec.paper("synonymy", concepts=("forced_landing.n.01",)), wordnet_graph, progress=False)


def test_released_synonymy_golds_hold_no_word_of_their_definition(released_dir, wordnet_graph):
    """Rule ``hide_defined_lemmas``, its second direction: no lemma a released synonymy gold shows holds a word of the
    definition's first clause (split at spaces, punctuation kept: 'time' in 'peacetime'; even a lemma with an 'a'
    where the clause has the word 'a'), in any of the 2,998 rows whose gold WordNet knows, where hiding by the first
    direction alone would show such a lemma in 43 % of the synsets it asks about (42,468 of 98,155). The golds'
    shown lemmas fit both directions as they fit the first (docs/REPRODUCTION.md). Ours hide 'deodorize' and
    'deodorise' for 'eliminate the odor from', and ask nothing about `peacetime.n.01` ('a period of time ...'), whose
    'peace' holds the clause's word 'a'."""
    index = wordnet_graph.ids
    gloss = wordnet_graph.concepts["gloss"].to_list()
    clause_of = lambda name: gloss[index[name]].split(";")[0].lower()  # noqa: E731
    answer = lambda row: row["question"]["choices"][int(row["answerKey"])]["text"]  # noqa: E731
    rows = [row for row in released_rows(released_dir, "synonymy_train") if row["notes"]["gold_synset"] in index]
    holding = [row for row in rows if any(holds_clause_word(lemma, clause_of(row["notes"]["gold_synset"]))
                                          for lemma in lemma_list(answer(row)))]  # fmt: skip
    assert len(rows) > 2900 and not holding
    lemmas = wordnet_graph.lemmas.group_by("id").agg(pl.col("lemma").str.to_lowercase())
    shown_by_first = [
        [lemma for lemma in found if not in_clause(lemma, clause)]
        for found, clause in ((found, gloss[concept].split(";")[0].lower()) for concept, found in lemmas.iter_rows())
    ]
    clauses = [gloss[concept].split(";")[0].lower() for concept in lemmas["id"]]
    asked = [(shown, clause) for shown, clause in zip(shown_by_first, clauses) if shown]
    would_hold = sum(any(holds_clause_word(lemma, clause) for lemma in shown) for shown, clause in asked)
    assert would_hold > 0.3 * len(asked)  # the release's none is a rule, not chance
    ours = build_probes(ProbeSpec.paper("synonymy", concepts=("deodorize.v.01",)), wordnet_graph, progress=False)
    assert set(ours["choices"].list.get(ours["answer"])) == {"deodourise"}  # 'eliminate the odor from'
    with pytest.raises(SpecError, match="peacetime.*sharing text with the definition"):
        build_probes(ProbeSpec.paper("synonymy", concepts=("peacetime.n.01",)), wordnet_graph, progress=False)


def test_synonymy_train_shares_no_answer_word_with_dev_or_test(wordnet_graph):
    """Rule ``held_out_golds`` for synonymy (R&S 2020 §5.1, splits de-duplicated by correct answer; a synonymy answer
    is a list of lemmas): no train gold lists a lemma that a dev or test gold lists. On the release this shows as
    rarer words in train: its asked word has one sense in 72.5 % of rows, ours 61 % without the rule and 73 % with it
    (docs/REPRODUCTION.md). Built here on the concepts named by a few polysemous words and their compounds
    ('headache', 'bankruptcy'): the senses share lemmas across synsets, the compounds give train golds that share
    none."""
    lemmas = wordnet_graph.lemmas.group_by("id").agg(pl.col("lemma").str.to_lowercase())
    lemmas_of = dict(zip(lemmas["id"], lemmas["lemma"]))
    gloss = wordnet_graph.concepts["gloss"].to_list()

    def asked(concept: int) -> bool:  # rule hide_defined_lemmas: a lemma the definition does not give away
        clause = gloss[concept].split(";")[0].lower()
        return any(not (in_clause(lemma, clause) or holds_clause_word(lemma, clause)) for lemma in lemmas_of[concept])

    concepts = tuple(
        name
        for concept, name in enumerate(wordnet_graph.names)
        if name.split(".")[0].startswith(("bank", "head", "run", "line")) and asked(concept)
    )

    def lemma_sets(held_out: bool) -> tuple[set[str], set[str]]:
        spec = ProbeSpec.paper("synonymy", concepts=concepts, train_pool=None, train_size=150, held_out_golds=held_out)
        frame = build_probes(spec, wordnet_graph, progress=False)
        parts = frame.select("split", part=pl.col("choices").list.get(pl.col("answer")).str.to_lowercase())
        parts = parts.with_columns(pl.col("part").str.split(", ")).explode("part")
        in_train = pl.col("split") == "train"
        return set(parts.filter(in_train)["part"]), set(parts.filter(~in_train)["part"])

    train, other = lemma_sets(False)
    assert train & other
    train, other = lemma_sets(True)
    assert train and not train & other


def test_released_synonymy_hypernym_distractors_skip_the_parent(released_dir, wordnet_graph, synonymy_release):
    """Rule ``isa_up_skip=1`` for synonymy: a released synonymy hypernym distractor of depth k is k + 1 links above
    its gold (1,102 of 1,112 rows; definitions' are k links up, 397 of 397); ours the same."""
    taxonomy, index = wordnet_graph.taxonomy_for(False), wordnet_graph.ids

    def links_above(concept: str, distractor: str) -> int | None:
        return taxonomy.hops(index[concept], "up", 8).get(index[distractor])

    pairs = [
        (row["notes"]["distractor_hops"], links_above(row["notes"]["gold_synset"], distractor))
        for row in released_rows(released_dir, "synonymy_train")
        if row["notes"]["distractor_type"] == "hypernym"
        for distractor in row["notes"]["other_distractors"]
    ]
    assert len(pairs) > 1000 and sum(links == depth + 1 for depth, links in pairs) >= 0.97 * len(pairs)
    _, ours = synonymy_release
    isa_up = ours.filter(pl.col("distractor_family") == "isa_up")
    picked = [  # the family's distractors come first, the random ones topping the set up after them
        (row["distractor_depth"], links_above(row["concept"], distractor))
        for row in isa_up.iter_rows(named=True)
        for distractor in row["distractor_concepts"][: 4 - row["n_random_fill"]]
    ]
    assert len(picked) > 50 and all(links == depth + 1 for depth, links in picked)


def test_released_synonymy_asks_a_question_per_lemma(synonymy_release, released_dir, wordnet_graph):
    """Rule ``sentences="lemmas"``: a released synonymy row's surface form is a lemma of its gold (2,995 of 3,000)
    and synsets with more lemmas are asked more often (a quarter of the released golds have one lemma, half of
    WordNet's synsets do); our preset asks one question per lemma."""
    rows = released_rows(released_dir, "synonymy_train")
    index = {name: number for number, name in enumerate(wordnet_graph.names)}
    counts = wordnet_graph.lemmas.group_by("id").agg(pl.col("lemma").str.to_lowercase().n_unique())
    count = dict(zip(counts["id"], counts["lemma"]))
    golds = [index[row["notes"]["gold_synset"]] for row in rows if row["notes"]["gold_synset"] in index]
    assert sum(count[gold] == 1 for gold in golds) / len(golds) < 0.3 < 0.45 < (counts["lemma"] == 1).mean()
    _, ours = synonymy_release
    lemmas = wordnet_graph.lemmas.group_by("id").agg(pl.col("lemma").str.to_lowercase())
    lemmas_of = dict(zip(lemmas["id"], lemmas["lemma"]))
    words = ours.group_by("concept").agg(pl.col("word").str.to_lowercase().unique())
    for concept, asked in words.iter_rows():
        assert set(asked) == set(lemmas_of[index[concept]]), concept


def test_a_report_names_the_population_its_scores_are_on(wordnet_graph, released_dir, tmp_path):
    """Every score names its population: a report on the paper preset's hyponymy test says gold-like, on its dev
    silver, on a released file released (text, JSON and HTML), and the population survives a JSONL round trip."""
    from tests.fake_scores import predictions_of
    from workbench.probes.formats import write_jsonl
    from workbench.reports import html_report, json_report, text_report

    built = build_probes(ProbeSpec.paper("hyponymy"), wordnet_graph, progress=False)
    populations = built.group_by("split").agg(pl.col("population").unique())
    assert dict(populations.iter_rows()) == {"train": ["silver"], "dev": ["silver"], "test": ["gold-like"]}
    test, dev = (built.filter(pl.col("split") == split).head(200) for split in ("test", "dev"))
    preds = predictions_of(pl.concat([test, dev]))
    text = text_report(preds, n_boot=10)
    assert "Population: hyponymy dev silver, hyponymy test gold-like" in text
    assert "gold-like: the paper preset's gold-like test" in text
    rows = {(row["split"], row["population"]) for row in json_report(preds, n_boot=10)["populations"]}
    assert rows == {("dev", "silver"), ("test", "gold-like")}
    assert "hyponymy test gold-like" in html_report(preds, n_boot=10)
    released = read_probes(released_dir / "hyponymy_test.jsonl").head(100)
    assert "Population: hyponymy test released" in text_report(predictions_of(released), n_boot=10)
    assert read_probes(write_jsonl(test, tmp_path / "test.jsonl"))["population"].unique().to_list() == ["gold-like"]
    assert ProbeSpec("hyponymy").population_of("test") == "uniform"
