"""Item response theory over a population: parameters recovered from simulated 2PL answers, factor effects
recovered by the explanatory model, a real population (MiniLM and its random-weights controls on real WordNet
questions) fitted from the CLI, and the bad inputs refused in one line with nothing written."""

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from workbench.charts.irt import ability_chart, characteristic_chart
from workbench.errors import WorkbenchError
from workbench.io import read_predictions, write_parquet
from workbench.irt import IrtFit, fit_irt, predict_difficulty, responses
from workbench.irt.adaptive import adaptive
from workbench.irt.fit import ability, characteristic_curves
from workbench.irt.responses import RESPONSE_SCHEMA, item_key
from workbench.schema import PROBE_SCHEMA, empty


def simulated(n_members: int, n_items: int, seed: int, difficulty=None) -> tuple[pl.DataFrame, dict]:
    """A response frame of 2PL answers: abilities N(0, 1), discriminations U(0.5, 2), difficulties N(0, 1)
    unless given; each question's factors: hops 1-3 and a distractor family."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n_members)
    a = rng.uniform(0.5, 2.0, n_items)
    hops = rng.integers(1, 4, n_items)
    family = rng.choice(["random", "sister"], n_items)
    b = rng.normal(size=n_items) if difficulty is None else difficulty(hops, family)
    p = 1 / (1 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
    right = rng.random(p.shape) < p
    member, item = np.meshgrid(np.arange(n_members), np.arange(n_items), indexing="ij")
    frame = pl.DataFrame({
        "member": [f"m{m}" for m in member.ravel()], "label": [f"model {m}" for m in member.ravel()],
        "source": "simulated", "item": [f"q{i}" for i in item.ravel()], "id": [f"q{i}" for i in item.ravel()],
        "probe": "hypernymy", "choices": 4, "hops": hops[item.ravel()], "distractor_family": family[item.ravel()],
        "distractor_depth": 0, "concept": "", "word": "", "question": "?", "right": right.ravel(),
    }, schema=RESPONSE_SCHEMA)  # fmt: skip
    return frame, {"theta": theta, "a": a, "b": b}


def test_2pl_recovers_simulated_difficulties_and_discriminations():
    frame, truth = simulated(200, 500, seed=0)
    fit = fit_irt(frame, model="2pl", held_out=0)
    items = fit.items.with_columns(index=pl.col("item").str.slice(1).cast(pl.Int64)).sort("index")
    assert np.corrcoef(items["b"], truth["b"])[0, 1] >= 0.95
    assert np.corrcoef(items["a"], truth["a"])[0, 1] >= 0.85
    members = fit.members.with_columns(index=pl.col("member").str.slice(1).cast(pl.Int64)).sort("index")
    assert np.corrcoef(members["theta"], truth["theta"])[0, 1] >= 0.95
    covered = (members["theta_lo"].to_numpy() <= truth["theta"]) & (truth["theta"] <= members["theta_hi"].to_numpy())
    assert covered.mean() >= 0.85  # 95 % intervals, shrunk towards the population's mean


def test_sparse_answers_and_held_out_quality():
    frame, truth = simulated(60, 120, seed=1)
    sparse = frame.sample(fraction=0.7, seed=2)  # members answered different subsets
    fit = fit_irt(sparse, model="1pl", held_out=0.15)
    assert fit.quality["answers"] == sparse.height
    assert fit.quality["held_out_loglik"] > fit.quality["held_out_baseline"]  # item parameters add information
    assert fit.items["a"].n_unique() == 1  # Rasch: one discrimination
    items = fit.items.with_columns(index=pl.col("item").str.slice(1).cast(pl.Int64)).sort("index")
    assert np.corrcoef(items["b"], truth["b"])[0, 1] >= 0.85


def test_adaptive_intervals_hold_the_whole_sets_accuracy_of_members_the_fit_never_saw():
    """The estimate's 95 % interval counts each unasked answer's own chance, not only the ability's: over 60 new
    members asked 30 of 200 questions, it holds their accuracy on all 200 about 95 % of the time."""
    rng = np.random.default_rng(7)
    n_items, n_fitted, n_new = 200, 150, 60
    a, b, theta = rng.uniform(0.5, 2.0, n_items), rng.normal(size=n_items), rng.normal(size=n_fitted + n_new)
    right = rng.random((n_fitted + n_new, n_items)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))
    probes = pl.concat([empty(PROBE_SCHEMA), pl.DataFrame({
        "id": [f"q{i}" for i in range(n_items)], "probe": "hypernymy", "context": "", "answer": 0,
        "question": [f"question {i}?" for i in range(n_items)], "choices": [["a", "b", "c", "d"]] * n_items,
        "hops": rng.integers(1, 4, n_items), "distractor_family": rng.choice(["random", "sister"], n_items),
    })], how="diagonal_relaxed")  # fmt: skip
    frame = pl.DataFrame({
        "member": np.repeat([f"m{m}" for m in range(n_fitted)], n_items), "source": "simulated",
        "item": np.tile(probes.select(item_key(probes))[:, 0].to_numpy(), n_fitted),
        "id": np.tile(probes["id"], n_fitted), "probe": "hypernymy", "choices": 4,
        "hops": np.tile(probes["hops"], n_fitted), "distractor_family": np.tile(probes["distractor_family"], n_fitted),
        "distractor_depth": 0, "concept": "", "word": "", "question": "", "right": right[:n_fitted].ravel(),
    }).with_columns(label=pl.col("member")).select(list(RESPONSE_SCHEMA)).cast(RESPONSE_SCHEMA)  # fmt: skip
    fit = fit_irt(frame, held_out=0)
    held, inside = [], []
    for member in range(n_fitted, n_fitted + n_new):
        by_id = dict(zip(probes["id"], right[member], strict=True))
        result = adaptive(fit, probes, lambda rows: rows.with_columns(correct=rows["id"].replace_strict(by_id)), 30)
        row = result.estimate.row(0, named=True)
        held.append(row["lo"] <= right[member].mean() <= row["hi"])
        inside.append(row["questions"] == n_items and row["asked"] == 30 and row["lo"] <= row["accuracy"] <= row["hi"])
    assert all(inside) and np.mean(held) >= 0.88, np.mean(held)


@pytest.mark.wordnet
def test_explanatory_model_recovers_factor_effects_read_from_the_questions_and_wordnet(released_dir, wordnet_graph):
    from workbench.knowledge.measures import concept_measures
    from workbench.probes.formats import read_probes

    questions = read_probes(released_dir / "hypernymy_test.jsonl").sort("id")
    fitted, fresh = questions.head(300), questions.slice(300, 100)
    measures = concept_measures(wordnet_graph, questions).select("concept", "word", "concept_depth", "polysemy")

    def truth(frame: pl.DataFrame) -> np.ndarray:  # harder with hops, sister distractors, senses; easier deeper
        known = frame.join(measures, on=["concept", "word"], how="left", maintain_order="left")
        return (-1.5 + 0.5 * known["hops"] + 0.8 * (known["distractor_family"] == "sister")
                - 0.2 * (known["concept_depth"] - 7) + 0.15 * known["polysemy"]).to_numpy()  # fmt: skip

    rng = np.random.default_rng(3)
    theta = rng.normal(size=150)
    right = rng.random((150, 300)) < 1 / (1 + np.exp(-(theta[:, None] - truth(fitted)[None, :])))
    frame = pl.concat([fitted.with_columns(member=pl.lit(f"m{m}")) for m in range(150)]).with_columns(
        right=pl.Series(right.ravel()), label="member", source=pl.lit("simulated"), item="id",
        choices=pl.lit(4, pl.Int64),
    ).select(list(RESPONSE_SCHEMA))  # fmt: skip
    factors = ("hops", "distractor_family", "concept_depth", "polysemy")
    fit = fit_irt(frame, explain=factors, held_out=0.2, graph=wordnet_graph)
    assert fit.quality["predicted_difficulty_r"] >= 0.9 and fit.quality["held_out_questions"] >= 40
    effects = {row["term"]: row for row in fit.effects.iter_rows(named=True)}
    assert effects["hops"]["effect"] == pytest.approx(0.5, abs=0.1)
    assert effects["distractor_family=sister"]["effect"] == pytest.approx(0.8, abs=0.15)
    assert effects["concept_depth"]["effect"] == pytest.approx(-0.2, abs=0.06)
    assert effects["polysemy"]["effect"] == pytest.approx(0.15, abs=0.05)
    given = ("hops", "distractor_family=sister", "concept_depth", "polysemy")
    assert all(effects[term]["lo"] > 0 or effects[term]["hi"] < 0 for term in given)  # told apart from none
    assert effects["distractor_family=isa_down"]["lo"] < 0 < effects["distractor_family=isa_down"]["hi"]  # none given
    assert {"concept_depth", "polysemy"} <= set(fit.items.columns)
    predicted = predict_difficulty(fit, fresh, graph=wordnet_graph)  # questions no member answered
    assert predicted.height == 100 and np.corrcoef(predicted["b_predicted"], truth(fresh))[0, 1] >= 0.95
    gcide = fresh.head(2).with_columns(concept=pl.lit("on.u.18"))
    with pytest.raises(WorkbenchError, match=r"2 question\(s\) have no concept_depth \('on.u.18' is not a wordnet"):
        predict_difficulty(fit, gcide, graph=wordnet_graph)


def test_questions_the_strong_miss_and_the_weak_get_are_suspected_defects():
    from workbench.irt.diagnostics import overlap, suspect_problems
    from workbench.irt.responses import item_key
    from workbench.probes.quality import PROBLEMS_SCHEMA
    from workbench.schema import PROBE_SCHEMA, empty

    frame, _ = simulated(120, 60, seed=5)
    reversed_ = [f"q{i}" for i in range(5)]  # five questions answered right by the weak, wrong by the strong
    order = frame.select("member").unique(maintain_order=True).with_row_index("rank")
    theta_rank = frame.group_by("member").agg(pl.col("right").mean()).join(order, on="member")
    strong = set(theta_rank.filter(pl.col("right") > pl.col("right").median())["member"])
    frame = frame.with_columns(
        right=pl.when(pl.col("item").is_in(reversed_)).then(~pl.col("member").is_in(list(strong)))
        .otherwise("right")
    )  # fmt: skip
    probes = pl.concat([empty(PROBE_SCHEMA), pl.DataFrame({
        "id": [f"q{i}" for i in range(60)], "probe": "hypernymy", "context": "",
        "question": [f"q{i}?" for i in range(60)], "choices": [["a", "b", "c", "d"]] * 60, "answer": 0,
    })], how="diagonal_relaxed")  # fmt: skip
    keys = dict(zip(probes["id"], probes.select(item_key(probes))[:, 0], strict=True))
    fit = fit_irt(frame.with_columns(pl.col("item").replace_strict(keys)), held_out=0)
    problems = suspect_problems(fit, probes)
    assert set(reversed_) <= set(problems["id"]) and problems.height <= 8
    assert problems.columns == list(PROBLEMS_SCHEMA) and (problems["kind"] == "undiscriminating").all()
    people = pl.DataFrame({"id": ["q0", "q40"], "field": "choice", "kind": "also-right", "detail": "", "text": ""})
    assert overlap(pl.concat([problems, people])) == {"people": 2, "irt": problems.height, "both": 1}


def test_one_member_and_a_bad_spec_are_refused():
    frame, _ = simulated(3, 10, seed=4)
    with pytest.raises(WorkbenchError, match="holds 1 member"):
        fit_irt(frame.filter(pl.col("member") == "m0"))
    with pytest.raises(WorkbenchError, match="model='4pl'"):
        fit_irt(frame, model="4pl")


@pytest.fixture(scope="module")
def population(tmp_path_factory, wordnet_graph, minilm_path):
    """MiniLM and two random-weights controls scored on 40 real WordNet hypernymy questions."""
    import workbench as wb
    from workbench.probes import ProbeSpec

    root = tmp_path_factory.mktemp("irt")
    spec = ProbeSpec("hypernymy", max_hops=2, families=("random", "sister"), max_depth=1, seed=3, train_size=50)
    probes = wb.build_probes(spec, wordnet_graph, progress=False).filter(pl.col("split") == "dev").head(40)
    write_parquet(probes, root / "probes.parquet")
    for control, seed in [("none", 0), ("random-weights", 0), ("random-weights", 1)]:
        preds = wb.score(probes, minilm_path, "similarity", control=control, seed=seed, progress=False)
        write_parquet(preds, root / "preds" / f"{control}-{seed}.parquet")
    return root


@pytest.fixture(scope="module")
def fit_folder(population, tmp_path_factory) -> Path:
    """The population's 2PL fit, saved."""
    return fit_irt(responses([population / "preds"]), held_out=0).save(tmp_path_factory.mktemp("fit") / "fit")


@pytest.mark.wordnet
@pytest.mark.model
def test_fit_from_the_cli_on_a_real_population(population, cli):
    out = population / "fit"
    explain = ["--explain", "hops", "--explain", "concept_depth", "--explain", "polysemy"]
    result = CliRunner().invoke(cli, ["irt", "fit", str(population / "preds"), *explain, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "3 members x 40 questions, 120 answers" in result.output
    fit = IrtFit.load(out)
    assert fit.effects["term"].to_list() == ["intercept", "hops", "concept_depth", "polysemy"]
    assert fit.items["concept_depth"].min() >= 1 and fit.items["polysemy"].min() >= 1  # read from WordNet
    predicted = CliRunner().invoke(cli, ["irt", "predict", str(out), str(population / "probes.parquet")])
    assert predicted.exit_code == 0 and "40 questions, predicted difficulty" in predicted.output, predicted.output
    best = fit.members.sort("theta", descending=True)
    assert best["label"][0].endswith("none]")  # the trained model above its random-weights controls
    assert best["theta"][0] > best["theta_hi"][1]
    assert "intercept" in fit.effects["term"].to_list()
    chart = ability_chart(fit.members).to_dict()
    assert [row["label"] for row in chart["datasets"][next(iter(chart["datasets"]))]] == fit.members["label"].to_list()
    curves = characteristic_curves(fit.items.sort("a").tail(2))
    assert curves.height == 2 * 61 and curves.filter(pl.col("theta") == 4.0)["p"].min() > 0.5  # rises to the right
    assert "line" in str(characteristic_chart(curves).to_dict()["mark"])
    checked = CliRunner().invoke(cli, ["probes", "check", str(population / "probes.parquet"), "--irt", str(out)])
    assert checked.exit_code == 0 and "the fit suspects" in checked.output, checked.output
    estimate = ability(fit, read_predictions(population / "preds" / "none-0.parquet").head(20))
    assert estimate["asked"][0] == 20 and 0 <= estimate["lo"][0] <= estimate["accuracy"][0] <= estimate["hi"][0]


def _bad_input(case: str, population, fit_folder, minilm_path, folder) -> list[str]:
    """The command line of one bad input of issue 61's point 8, its files written into ``folder``."""
    preds, probes = population / "preds", pl.read_parquet(population / "probes.parquet")
    full = read_predictions(preds / "none-0.parquet")
    member = folder / "member.parquet"
    fit_args = ["irt", "fit", str(preds), str(member), "--out", str(folder / "fit")]
    if case == "one member":
        return ["irt", "fit", str(preds / "none-0.parquet"), "--out", str(folder / "fit")]
    if case == "a file given twice":
        write_parquet(full, member)
    elif case == "one model under two names":
        write_parquet(full.with_columns(fingerprint=pl.lit("another"), model=pl.lit("renamed")), member)
    elif case == "NaN scores":
        write_parquet(full.with_columns(fingerprint=pl.lit("nan"), scores=pl.col("scores").list.eval(
            pl.element() * float("nan"))), member)  # fmt: skip
    elif case == "missing answers":
        write_parquet(full.with_columns(fingerprint=pl.lit("missing"), correct=pl.lit(None, pl.Boolean)), member)
    elif case == "a member that answered nothing":
        write_parquet(full.clear(), member)
    if case in ("a file given twice", "one model under two names", "NaN scores", "missing answers",
                "a member that answered nothing"):  # fmt: skip
        return fit_args
    if case == "another probe set":
        probes = probes.with_columns(id=pl.col("id") + "-other", question=pl.col("question") + " really?")
    elif case == "a question changed since the fit":
        probes = probes.with_columns(choices=pl.col("choices").list.reverse())
    write_parquet(probes, folder / "probes.parquet")
    n = "41" if case == "--adaptive above the set" else "5"
    return ["score", "--model", str(minilm_path), "--scorer", "similarity", "--probes", str(folder / "probes.parquet"),
            "--adaptive", n, "--irt", str(fit_folder), "--out", str(folder / "adaptive.parquet")]  # fmt: skip


BAD_INPUTS = {
    "one member": "the population holds 1 member\\(s\\)",
    "a file given twice": "answered question .* twice, in .*: the same model given twice",
    "one model under two names": "identical scores on all 40 questions: the same model twice",
    "NaN scores": "a score is NaN or infinite",
    "missing answers": "correct is not pred == answer",
    "a member that answered nothing": "holds no predictions",
    "another probe set": "none of the 40 questions is in the fit",
    "a question changed since the fit": "40 question\\(s\\) changed since the fit",
    "--adaptive above the set": "--adaptive 41 is more than the 40 questions",
}
"""Issue 61's point 8: each bad input, and the line that refuses it."""


@pytest.mark.wordnet
@pytest.mark.model
@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_each_bad_input_is_refused_in_one_line_with_nothing_written(case, population, fit_folder, minilm_path, cli,
                                                                    tmp_path):  # fmt: skip
    args = _bad_input(case, population, fit_folder, minilm_path, tmp_path)
    given = sorted(tmp_path.rglob("*"))
    result = CliRunner().invoke(cli, args)
    assert isinstance(result.exception, WorkbenchError), (result.exception, result.output)
    assert re.search(BAD_INPUTS[case], str(result.exception)) and "\n" not in str(result.exception)
    assert sorted(tmp_path.rglob("*")) == given  # nothing written: no fit folder, no prediction file, no staging


@pytest.mark.wordnet
@pytest.mark.model
def test_a_fit_applied_to_other_or_changed_questions_is_refused(population):
    fit = fit_irt(responses([population / "preds"]), held_out=0)
    preds = read_predictions(population / "preds" / "none-0.parquet")
    other = preds.with_columns(id=pl.col("id") + "-other", question=pl.col("question") + " really?")
    with pytest.raises(WorkbenchError, match="none of the 40 questions is in the fit"):
        ability(fit, other)
    changed = preds.with_columns(choices=pl.col("choices").list.reverse())
    with pytest.raises(WorkbenchError, match="changed since the fit"):
        ability(fit, changed)
    from workbench.irt.adaptive import adaptive
    from workbench.irt.anchors import anchors

    probes = pl.read_parquet(population / "probes.parquet")
    edited = probes.with_columns(
        question=pl.when(pl.int_range(pl.len()) == 3).then(pl.lit("edited?")).otherwise("question")
    )
    with pytest.raises(WorkbenchError, match="1 question\\(s\\) changed since the fit"):
        anchors(fit, edited, 5)
    with pytest.raises(WorkbenchError, match="1 question\\(s\\) changed since the fit"):
        adaptive(fit, edited, ask=lambda rows: rows, n=5)


@pytest.mark.wordnet
@pytest.mark.model
def test_adaptive_run_on_a_real_model_against_its_full_run(population, minilm_path, tmp_path):
    import functools

    import workbench as wb
    from workbench.irt.adaptive import adaptive
    from workbench.scoring.cache import PredictionCache
    from workbench.scoring.models import load_model

    fit = fit_irt(responses([population / "preds"]), held_out=0)
    probes = pl.read_parquet(population / "probes.parquet")
    full = read_predictions(population / "preds" / "none-0.parquet")
    store = PredictionCache(tmp_path / "cache.sqlite")
    model = load_model(minilm_path, "similarity")
    ask = functools.partial(wb.score, model=model, cache=store, progress=False)
    result = adaptive(fit, probes, ask, n=12)
    assert result.asked.height == 12 and result.asked["id"].n_unique() == 12
    assert len(store) > 0  # the questions asked went through the prediction cache
    same = full.join(result.asked.select("id", "question", asked=pl.col("scores")), on=["id", "question"])
    assert same.height == 12 and all(np.allclose(x, y) for x, y in zip(same["scores"], same["asked"], strict=True))
    row = result.estimate.row(0, named=True)
    assert row["asked"] == 12 and row["questions"] == 40 and row["lo"] <= row["accuracy"] <= row["hi"]
    assert result.cells["questions"].sum() == 40
    assert adaptive(fit, probes, ask, n=12, se=5.0).asked.height == 1  # the standard error stop
    with pytest.raises(WorkbenchError, match="--adaptive 41 is more than the 40 questions"):
        adaptive(fit, probes, ask, n=41)


@pytest.mark.wordnet
@pytest.mark.model
def test_anchors_stand_for_the_set_with_weights(population, fit_folder, cli, tmp_path):
    from workbench.irt.anchors import anchor_estimate

    out = tmp_path / "tiny.parquet"
    args = ["probes", "tiny", str(population / "probes.parquet"), "--irt", str(fit_folder), "--n", "8", "--out"]
    result = CliRunner().invoke(cli, [*args, str(out)])
    assert result.exit_code == 0, result.output
    tiny = pl.read_parquet(out)
    assert tiny.height == 8 and tiny["id"].n_unique() == 8 and tiny["weight"].sum() == pytest.approx(1.0)
    full = read_predictions(population / "preds" / "none-0.parquet")
    estimate = anchor_estimate(tiny, full)
    weighted = full.join(tiny.select("id", "question", "weight"), on=["id", "question"])
    assert estimate["accuracy"][0] == pytest.approx((weighted["correct"] * weighted["weight"]).sum())
    too_many = CliRunner().invoke(cli, [*args[:-3], "--n", "41", "--out", str(tmp_path / "t2.parquet")])
    assert "--n 41: give 1 to 40" in str(too_many.exception) and not (tmp_path / "t2.parquet").exists()


@pytest.mark.wordnet
@pytest.mark.model
def test_a_sweeps_members_fit(population, cli, minilm_path, tmp_path):
    swept = tmp_path / "sweep"
    args = ["sweep", "--out", str(swept), "--model", f"minilm={minilm_path}", "--probes",
            f"h={population / 'probes.parquet'}", "--controls", "none,random-weights", "--seeds", "0,1"]  # fmt: skip
    assert CliRunner().invoke(cli, args).exit_code == 0
    answers = responses(sweeps=[swept])
    assert answers["member"].n_unique() == 3 and answers["item"].n_unique() == 40  # none once, two control seeds
    assert fit_irt(answers, held_out=0).members.height == 3


@pytest.mark.wordnet
@pytest.mark.model
def test_adaptive_needs_its_fit(cli, population, tmp_path):
    result = CliRunner().invoke(cli, ["score", "--model", "m", "--scorer", "similarity", "--probes",
                                      str(population / "probes.parquet"), "--adaptive", "5",
                                      "--out", str(tmp_path / "a.parquet")])  # fmt: skip
    assert "--adaptive N and --irt FIT go together" in str(result.exception) and not (tmp_path / "a.parquet").exists()


@pytest.fixture(scope="module")
def adaptive_file(population, fit_folder, minilm_path, tmp_path_factory):
    """MiniLM asked 8 of the 40 questions adaptively (``workbench score --adaptive 8 --irt FIT``)."""
    from workbench.cli import make_app

    out = tmp_path_factory.mktemp("adaptive") / "minilm-adaptive.parquet"
    result = CliRunner().invoke(make_app(), ["score", "--model", str(minilm_path), "--scorer", "similarity", "--probes",
                                             str(population / "probes.parquet"), "--adaptive", "8", "--irt",
                                             str(fit_folder), "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.wordnet
@pytest.mark.model
def test_report_shows_an_adaptive_run_as_its_estimate_never_the_asked_accuracy(adaptive_file, population, cli,
                                                                               tmp_path):  # fmt: skip
    import json

    from workbench.irt.adaptive import read_estimate
    from workbench.irt.estimates import NOT_FROM_AN_ESTIMATE, full_runs

    stored = read_estimate(adaptive_file)["estimate"][0]
    text = CliRunner().invoke(cli, ["report", str(adaptive_file), "--html", str(tmp_path / "r.html")])
    assert text.exit_code == 0, text.output
    assert "adaptive estimate from 8 asked questions of 40" in text.output and NOT_FROM_AN_ESTIMATE in text.output
    assert f"estimated accuracy {stored['accuracy']:.3f} [{stored['lo']:.3f}, {stored['hi']:.3f}]" in text.output
    assert "hops x " in text.output and "strict cluster" not in text.output.replace(NOT_FROM_AN_ESTIMATE, "")
    page = (tmp_path / "r.html").read_text()
    assert "adaptive estimate from 8 asked questions" in page and "<td>8 of 40</td>" in page  # asked of the set
    assert f"{stored['accuracy']:.3f} [{stored['lo']:.3f}, {stored['hi']:.3f}]" in page
    doc = json.loads(CliRunner().invoke(cli, ["report", str(adaptive_file), "--json"]).output)
    assert "instance_accuracy" not in doc and doc["estimates"][0]["by_probe"][0]["accuracy"] == stored["accuracy"]
    assert sum(cell["questions"] for cell in doc["estimates"][0]["cells"]) == 40
    mixed = CliRunner().invoke(cli, ["report", str(adaptive_file), str(population / "preds" / "none-0.parquet")])
    assert full_runs([adaptive_file, population / "preds" / "none-0.parquet"]) == [
        population / "preds" / "none-0.parquet"
    ]
    assert "give `workbench report` the adaptive files apart from the full runs" in str(mixed.exception)
    # the file's metadata survives a rewrite under another model name; the name is escaped on the page
    renamed = tmp_path / "renamed.parquet"
    write_parquet(read_predictions(adaptive_file).with_columns(model=pl.lit("<img src=x onerror=alert(1)>")), renamed,
                  metadata={"workbench_irt_estimate": json.dumps(read_estimate(adaptive_file))})  # fmt: skip
    CliRunner().invoke(cli, ["report", str(renamed), "--html", str(tmp_path / "x.html")])
    assert "<img src=x" not in (tmp_path / "x.html").read_text()


@pytest.mark.wordnet
@pytest.mark.model
def test_compare_and_publish_show_an_adaptive_run_as_its_estimate(adaptive_file, population, cli, tmp_path):
    from workbench.irt.estimates import NOT_PAIRED

    full = population / "preds" / "none-0.parquet"
    compared = CliRunner().invoke(cli, ["compare", str(full), str(adaptive_file)])
    assert compared.exit_code == 0, compared.output
    assert NOT_PAIRED in compared.output and "p_mcnemar" not in compared.output
    assert "adaptive estimate from 8 asked questions of 40" in compared.output
    measured = read_predictions(full)["correct"].mean()
    assert f"every question answered\n  hypernymy: accuracy {measured:.3f} over 40 questions" in compared.output
    site = tmp_path / "site"
    published = CliRunner().invoke(cli, ["publish", str(adaptive_file), "--out", str(site)])
    assert published.exit_code == 0, published.output
    page = (site / "index.html").read_text()
    assert "Adaptive estimate" in page and "adaptive estimate from 8 asked questions of 40" in page
    assert not (site / "data").exists()  # no heat map, no question tables: the asked subset is not shown as measured
    mixed = CliRunner().invoke(cli, ["publish", str(adaptive_file), str(full), "--out", str(tmp_path / "other")])
    assert "adaptive files apart" in str(mixed.exception) and not (tmp_path / "other").exists()


@pytest.mark.wordnet
@pytest.mark.model
def test_the_dashboard_shows_an_adaptive_run_as_its_estimate(adaptive_file, population):
    from widgets import ResultsDashboard, Session

    full = population / "preds" / "none-0.parquet"
    session = Session()
    board = ResultsDashboard(session, files=[adaptive_file, full])
    board.files.value = (str(adaptive_file),)
    assert session.predictions is None and "adaptive estimate from 8 asked questions of 40" in board.message.value
    assert board.heat.layout.display == "none"
    board.files.value = (str(adaptive_file), str(full))
    assert "not loaded" in board.message.value and "adaptive files apart" in board.message.value
    board.files.value = (str(full),)
    assert session.predictions is not None and session.predictions.height == 40 and not board.estimated


@pytest.mark.wordnet
@pytest.mark.model
def test_the_cluster_browser_shows_a_questions_difficulty_discrimination_and_curve(fit_folder, population):
    from widgets import ClusterBrowser, Session
    from workbench.irt.fit import in_fit

    fit = IrtFit.load(fit_folder)
    probes = pl.read_parquet(population / "probes.parquet")
    session = Session(probes=probes, fit=fit)
    browser = ClusterBrowser(session)
    session.concept = probes["concept"][0]
    item = in_fit(fit, probes.filter(pl.col("id") == browser.question.value))
    assert f"difficulty {item['b'][0]:+.2f}, discrimination {item['a'][0]:.2f}" in browser.irt.value
    assert browser.curve.layout.display is None and "line" in str(browser.curve.chart.to_dict()["mark"])
    session.probes = probes.with_columns(question=pl.col("question") + " (edited)")  # no longer the fit's question
    assert "not in the IRT fit" in browser.irt.value and browser.curve.layout.display == "none"
    session.fit = None
    assert browser.irt.value == ""


@pytest.fixture(scope="module")
def served_smollm2():
    """SmolLM2 served by llama-cpp-python's server, behind a proxy counting the requests it is sent."""
    pytest.importorskip("llama_cpp")
    from servers import counting_proxy, llama_server

    from workbench.scoring.gguf import smollm2_gguf

    with llama_server(smollm2_gguf()) as (_, url), counting_proxy(url) as proxied:
        yield proxied


@pytest.mark.wordnet
@pytest.mark.model
def test_adaptive_run_on_a_served_model_against_its_full_run(population, fit_folder, served_smollm2, cli, tmp_path):
    from workbench.irt.adaptive import adaptive, read_estimate
    from workbench.scoring import score

    url, sent = served_smollm2
    probes = pl.read_parquet(population / "probes.parquet").head(10)
    write_parquet(probes, tmp_path / "probes.parquet")
    asking = {"scorer": "generate", "format": "letters", "chat_template": "auto", "max_new_tokens": 4}
    full = score(probes, url, **asking, cache=False, progress=False)  # the reference: every question, no cache
    options = ["--model", url, "--probes", str(tmp_path / "probes.parquet"), "--scorer", "generate", "--format",
               "letters", "--chat-template", "auto", "--max-new-tokens", "4",
               "--irt", str(fit_folder)]  # fmt: skip
    sent.clear()
    result = CliRunner().invoke(cli, ["score", *options, "--adaptive", "4", "--out", str(tmp_path / "a.parquet")])
    assert result.exit_code == 0, result.output
    assert sent == {("GET", "/v1/models"): 1, ("POST", "/v1/chat/completions"): 4}, sent  # the asked, one listing
    assert "sent 4 requests" in result.output and "estimated accuracy" in result.output
    asked = read_predictions(tmp_path / "a.parquet")
    same = full.join(asked.select("id", "question", asked=pl.col("scores")), on=["id", "question"])
    assert same.height == 4 and same["scores"].to_list() == same["asked"].to_list()
    assert read_estimate(tmp_path / "a.parquet")["asked"] == 4
    sent.clear()
    options = options[:-2]  # the same model, asked every question through the same prediction cache
    whole = CliRunner().invoke(cli, ["score", *options, "--out", str(tmp_path / "full.parquet")])
    assert whole.exit_code == 0, whole.output
    assert sent == {("GET", "/v1/models"): 1, ("POST", "/v1/chat/completions"): 6}, sent  # only the rest
    assert read_predictions(tmp_path / "full.parquet")["scores"].to_list() == full["scores"].to_list()
    fit = IrtFit.load(fit_folder)

    def answered(rows: pl.DataFrame) -> pl.DataFrame:  # the full run's answers, as the server gave them
        return full.join(rows.select("id", "question"), on=["id", "question"], how="semi")

    se = adaptive(fit, probes, answered, n=2).theta_se + 1e-4  # the standard error after two answers
    assert adaptive(fit, probes, answered, n=1).theta_se > se
    sent.clear()
    stopped = CliRunner().invoke(cli, ["score", *options, "--irt", str(fit_folder), "--adaptive", "4", "--se",
                                       f"{se:.6f}", "--out", str(tmp_path / "se.parquet")])  # fmt: skip
    assert stopped.exit_code == 0, stopped.output
    assert read_predictions(tmp_path / "se.parquet").height == 2 and "asked 2 questions" in stopped.output
    assert sent[("POST", "/v1/chat/completions")] == 0  # its two questions were asked before: from the cache
