"""Our probe set beside a released file of the same probe, sampled as the release was (docs/REPRODUCTION.md, "The
preset beside the released train files"): marginals with total-variation distances, clusters and stems, choice
lengths, Table 4, partial-input baselines; the human judgements a released gold-standard test keeps; our questions
asking what the released ones ask; and the calibration of the paper preset's mixes against them.

>>> tables = release_comparison(read_probes("probes/hypernymy"), read_probes("hypernymy_train.jsonl"))  # doctest: +SKIP
"""

from dataclasses import replace
from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError
from workbench.knowledge.graph import Graph
from workbench.probes.formats import arc_records
from workbench.probes.stats import MEASURES

PARTIAL_INPUT = ("ChoiceOnly", "ChoiceToChoice", "QuestionToChoice")


def drawn_like_release(ours: pl.DataFrame, n: int, seed: int = 0, split: str = "train") -> pl.DataFrame:
    """``n`` questions of ``ours`` drawn as the released file of ``split`` was. Train: from its train split when it
    has one (the paper preset draws train as the paper did), at random from the whole set otherwise. Test: its test
    split (a paper-preset gold-like test is drawn as the released one, at its size), whole clusters at random up to
    ``n`` questions where it holds more (a silver test); the whole set where it has none."""
    part = ours.filter(pl.col("split") == split)
    if split != "test" or not part.height:
        source = part if part.height else ours
        return source.sample(min(n, source.height), seed=seed, shuffle=True)
    if part.height <= n:
        return part
    sizes = part.group_by("cluster_id").len().sort("cluster_id").sample(fraction=1.0, shuffle=True, seed=seed)
    kept = sizes.filter(pl.col("len").cum_sum() <= n)["cluster_id"].implode()
    return part.filter(pl.col("cluster_id").is_in(kept))


def released_split(released: pl.DataFrame) -> str:
    """``"test"`` for a released test file (every row's ``split``), else ``"train"``: which split of ours it is
    compared with."""
    return "test" if released.height and (released["split"] == "test").all() else "train"


def marginals(ours: pl.DataFrame, released: pl.DataFrame) -> pl.DataFrame:
    """Shares of each value of ``MEASURES`` in both sets, one row per (measure, value)."""
    rows = []
    for measure, expression in MEASURES.items():
        for side, frame in (("ours", ours), ("released", released)):
            counts = frame.select(value=expression).group_by("value").len()
            rows.append(
                counts.select("value", share=pl.col("len") / frame.height, side=pl.lit(side), measure=pl.lit(measure))
            )
    long = pl.concat(rows)
    wide = long.pivot("side", index=["measure", "value"], values="share").fill_null(0.0)
    return wide.select("measure", "value", pl.col("ours").round(4), pl.col("released").round(4)).sort(
        "measure", "value"
    )


def distances(shares: pl.DataFrame) -> pl.DataFrame:
    """Total-variation distance (half the summed absolute differences of shares) per measure of ``marginals``."""
    tvd = ((pl.col("ours") - pl.col("released")).abs().sum() / 2).round(4)
    return shares.group_by("measure").agg(total_variation=tvd).sort("measure")


def cluster_shape(frame: pl.DataFrame) -> pl.DataFrame:
    """Clusters, their mean size, the share of multi-question clusters with more than one stem, and choice lengths."""
    clusters = frame.group_by("cluster_id").agg(size=pl.len(), stems=pl.col("question").n_unique())
    multi = clusters.filter(pl.col("size") > 1)
    gold = pl.col("choices").list.get(pl.col("answer"))
    lengths = frame.select(
        gold_chars=gold.str.len_chars().mean(),
        distractor_chars=(
            (pl.col("choices").list.eval(pl.element().str.len_chars()).list.sum() - gold.str.len_chars())
            / (pl.col("choices").list.len() - 1)
        ).mean(),
    )
    return pl.DataFrame(
        {
            "questions": [frame.height],
            "clusters": [clusters.height],
            "mean_cluster": [round(clusters["size"].mean(), 3)],
            "several_stems": [round((multi["stems"] > 1).mean(), 3) if multi.height else 0.0],
            "gold_chars": [round(lengths["gold_chars"][0], 1)],
            "distractor_chars": [round(lengths["distractor_chars"][0], 1)],
        }
    )


def partial_input(frame: pl.DataFrame, seed: int = 0) -> dict[str, float]:
    """Accuracy of each partial-input baseline on ``frame``, fitted on half of its clusters and scored on the other
    half, both ways (two-fold cross-fitting by cluster, so no cluster is seen in training and test)."""
    from workbench import baselines

    fold = (pl.col("cluster_id").hash(seed) % 2).alias("fold")
    halves = frame.with_columns(fold).partition_by("fold", as_dict=True, include_key=False)
    if len(halves) < 2:
        raise WorkbenchError("the probe set has a single cluster; partial-input baselines need two or more")
    first, second = halves[(0,)], halves[(1,)]
    scores = {}
    for name in PARTIAL_INPUT:
        make = getattr(baselines, name)
        correct = pl.concat(
            [make(seed=seed).fit(a).predict(b).select("correct") for a, b in ((first, second), (second, first))]
        )
        scores[name] = round(correct["correct"].mean(), 4)
    return scores


def release_comparison(
    ours: pl.DataFrame,
    released: pl.DataFrame,
    seed: int = 0,
    baselines: bool = True,
    seeds: int = 1,
    progress: bool = False,
) -> dict[str, pl.DataFrame]:
    """Our set beside a released file of the same probe, on a sample of ours drawn as the release was (a released
    test file beside our test split, a train file beside our train split: ``released_split``).

    Returns frames: ``marginals`` (part of speech, hops, distractor kind), ``distances`` (total variation per
    marginal), ``clusters`` (clusters, stems per cluster, choice lengths), ``table4`` (Table 4 of our whole set
    and of the released file) and, unless ``baselines`` is off, ``baselines`` (partial-input accuracy, cross-fitted
    by cluster; the slow part). With ``seeds`` > 1 the baselines are the mean over seeds ``seed`` ... ``seed +
    seeds - 1`` (each new folds on both sides, and a new draw of ours where ours holds more questions than the
    release; a paper-preset train split holds exactly its ``train_size``, the released files' 3,000, so there only
    the folds move: build with other seeds to draw other questions), with their standard deviations (``*_sd``);
    ``progress`` shows a bar over the seeds.

    >>> ours, theirs = read_probes("probes/hypernymy"), read_probes("hypernymy_train.jsonl")  # doctest: +SKIP
    >>> tables = release_comparison(ours, theirs)  # doctest: +SKIP
    >>> tables["distances"]  # doctest: +SKIP
    """
    from workbench.probes.stats import table4

    probes = set(ours["probe"].unique()) | set(released["probe"].unique())
    if len(probes) != 1:
        raise WorkbenchError(f"compare one probe with the same probe; these sets hold {sorted(probes)}")
    split = released_split(released)
    drawn = drawn_like_release(ours, released.height, seed, split)
    shares = marginals(drawn, released)
    sides = (("ours", drawn), ("released", released))
    tables = {
        "marginals": shares,
        "distances": distances(shares),
        "clusters": pl.concat([cluster_shape(frame).with_columns(set=pl.lit(side)) for side, frame in sides]),
        "table4": pl.concat(
            [table4(ours).with_columns(set=pl.lit("ours")), table4(released).with_columns(set=pl.lit("released"))]
        ),
    }
    if baselines:
        tables["baselines"] = baseline_seeds(ours, released, range(seed, seed + seeds), progress)
    return tables


def baseline_seeds(ours: pl.DataFrame, released: pl.DataFrame, seeds: range, progress: bool = False) -> pl.DataFrame:
    """``partial_input`` of a draw of ``ours`` and of ``released`` at each seed: one row per side, the mean of each
    baseline over the seeds (and, for several seeds, its standard deviation ``NAME_sd``)."""
    from workbench.progress import ProgressBar

    runs = pl.DataFrame(
        [
            {"set": side, **partial_input(frame, seed)}
            for seed in ProgressBar(seeds, desc="baselines", unit="seed", disable=not progress)
            for side, frame in (
                ("ours", drawn_like_release(ours, released.height, seed, released_split(released))),
                ("released", released),
            )
        ]
    )
    spread = [pl.col(name).std().round(4).alias(f"{name}_sd") for name in PARTIAL_INPUT] if len(seeds) > 1 else []
    return runs.group_by("set", maintain_order=True).agg(
        *(pl.col(name).mean().round(4) for name in PARTIAL_INPUT), *spread
    )


def human_votes(path: str | Path) -> pl.DataFrame:
    """The annotators' judgements a released gold-standard test file keeps (R&S 2020 §3.1.3), one row per question:
    ``picks``, how many distinct choices its annotators picked (``notes.total_votes``, which always holds the
    gold: a question no annotator got right was filtered out), and ``human_correct``, whether the pick the release
    kept (``notes.turk_vote``) is the gold, the paper's human accuracy. The files do not record how many annotators a
    question had, nor the questions left out. Empty for a file without votes (train files, ours).

    >>> human_votes("hypernymy_test.jsonl")["human_correct"].mean()  # doctest: +SKIP
    0.961...
    """
    rows = []
    for _, record in arc_records(path):
        notes = record.get("notes") or {}
        if "total_votes" in notes and "turk_vote" in notes:
            rows.append(
                {
                    "id": str(record["id"]),
                    "picks": len(set(notes["total_votes"])),
                    "human_correct": str(notes["turk_vote"]) == str(record["answerKey"]),
                }
            )
    return pl.DataFrame(rows, schema={"id": pl.String, "picks": pl.Int64, "human_correct": pl.Boolean})


ALIKE = ["concept", "gold_concept", "distractor_family", "distractor_depth"]  # what a question asks


def asked_alike(released: pl.DataFrame, graph: Graph) -> pl.DataFrame:
    """Our questions asking what the released ones ask: every question the paper preset makes about the release's
    concepts (no sample, no split), kept where its concept, gold, distractor family and depth (``ALIKE``) are a
    released question's. A concept our generator cannot ask about (``askable``) is left out. Scored beside the
    release (``alike_accuracy``), it tells whether a gap between our set and the release lies in how questions are
    made or in which questions are asked (docs/REPRODUCTION.md).

    >>> alike = asked_alike(read_probes("hypernymy_test.jsonl"), load_graph("wordnet"))  # doctest: +SKIP
    """
    from workbench.probes import ProbeSpec, build_probes
    from workbench.probes.wordnetqa import askable

    probes = released["probe"].unique().to_list()
    if len(probes) != 1 or probes[0] not in ("definitions", "hypernymy", "hyponymy", "synonymy"):
        raise WorkbenchError(
            f"asked_alike needs released questions of one WordNet probe; these hold {sorted(probes)}: pass one "
            "released file (hypernymy_test.jsonl)"
        )
    spec = ProbeSpec.paper(
        probes[0], size=None, pos_mix=(), hop_mix=(), family_mix=(), train_pool=None, held_out_golds=False,
        test_size=None, test_mix=(), test_max_below=None,
    )  # fmt: skip
    concepts = tuple(sorted(set(released["concept"].to_list()) & askable(graph, spec)))
    if not concepts:
        return released.clear()
    ours = build_probes(replace(spec, concepts=concepts), graph, progress=False)
    return ours.join(released.select(ALIKE).unique(), on=ALIKE, how="semi")


def alike_accuracy(ours: pl.DataFrame, released: pl.DataFrame) -> pl.DataFrame:
    """Per released question, the accuracy of the scored ``asked_alike`` questions that ask what it asks (their
    mean) beside its own: one row per part of speech and distractor family, one per part of speech (``family``
    "all") and one for all (``pos`` "all"), over the released questions that have such questions (``questions``)."""
    mean = ours.group_by(ALIKE).agg(ours=pl.col("correct").mean())
    paired = released.join(mean, on=ALIKE).select("pos", family="distractor_family", released="correct", ours="ours")
    sides = (pl.len().alias("questions"), pl.col("released").mean().round(4), pl.col("ours").mean().round(4))
    by_cell = paired.group_by("pos", "family").agg(*sides)
    by_pos = paired.group_by("pos").agg(*sides).with_columns(family=pl.lit("all"))
    whole = paired.select(*sides).with_columns(pos=pl.lit("all"), family=pl.lit("all"))
    order = (pl.col("pos") == "all", "pos", pl.col("family") == "all", "family")
    return pl.concat([by_cell, by_pos, whole], how="diagonal").sort(*order)


# ProbeSpec field -> the measure whose shares it sets
MIXES = {"pos_mix": "pos", "hop_mix": "hops", "family_mix": "kind"}


def calibrated_mixes(probe: str, released: pl.DataFrame, rounds: int = 2, seed: int = 0) -> dict[str, dict]:
    """The paper preset's ``pos_mix``, ``hop_mix`` and ``family_mix`` for ``probe``: the released file's shares,
    corrected ``rounds`` times by ``weight * released share / share in our train split``, so that the rows the
    release was drawn from (our train split, every question of its pool, after ``held_out_golds``) hold them.

    Correction is needed because a concept lacks some kinds (a leaf has no ``isa_down``, an adjective no
    ``sister``), whose weight the build gives to the kinds it has, and because questions carry different
    numbers of perturbations. ``ProbeSpec.PAPER`` holds this function's output for seed 0.

    >>> calibrated_mixes("hypernymy", read_probes("hypernymy_train.jsonl"))["hop_mix"]  # doctest: +SKIP
    """
    from dataclasses import replace

    from workbench.probes import ProbeSpec, build_probes

    def shares(frame: pl.DataFrame) -> dict[str, dict[str, float]]:
        counted = {}
        for measure, expression in MEASURES.items():
            counts = frame.select(value=expression).group_by("value").len()
            counted[measure] = {value: n / frame.height for value, n in counts.iter_rows()}
        return counted

    target = shares(released)
    spec = ProbeSpec.paper(probe, seed=seed, train_size=10**7)  # train: every question its pool keeps
    mixes = {field: dict(getattr(spec, field)) for field in MIXES if getattr(spec, field)}
    for _ in range(rounds):
        built = build_probes(replace(spec, **mixes), progress=False)
        realised = shares(built.filter(pl.col("split") == "train"))
        for field, weights in mixes.items():
            have, want = realised[MIXES[field]], target[MIXES[field]]
            corrected = {key: w * want.get(str(key), 0.0) / have[str(key)] if have.get(str(key)) else w
                         for key, w in weights.items()}  # fmt: skip
            mixes[field] = {key: round(w / sum(corrected.values()), 4) for key, w in corrected.items()}
    return mixes
