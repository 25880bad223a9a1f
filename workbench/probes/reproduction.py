"""Our probe build beside the released data, on the concepts both contain (docs/REPRODUCTION.md).

Each table has one row per value with the count and share in ``ours`` and in ``released``, so a large
difference shows at a glance; ``gold_overlap`` says how often our gold answers for a (concept, hop) are
among the released ones.
"""

from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError

TABLES = ("hops", "families", "cluster_sizes", "answer_positions", "gold_overlap")


def _side_by_side(ours: pl.DataFrame, released: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    def counted(frame: pl.DataFrame, name: str) -> pl.DataFrame:
        counts = frame.group_by(keys).agg(pl.len().alias(name))
        return counts.with_columns((pl.col(name) / pl.col(name).sum()).round(4).alias(f"{name}_share"))

    joined = counted(ours, "ours").join(counted(released, "released"), on=keys, how="full", coalesce=True)
    return joined.fill_null(0).sort(keys)


def _gold_overlap(ours: pl.DataFrame, released: pl.DataFrame) -> pl.DataFrame:
    def golds(frame: pl.DataFrame, name: str) -> pl.DataFrame:
        return frame.group_by("concept", "hops").agg(pl.col("gold_concept").unique().alias(name))

    pairs = golds(released, "released").join(golds(ours, "ours"), on=["concept", "hops"], how="inner")
    hit = pl.col("released").list.set_intersection(pl.col("ours")).list.len() > 0
    return (
        pairs.with_columns(hit.alias("coincide"))
        .group_by("hops")
        .agg(pl.len().alias("pairs"), pl.col("coincide").mean().round(4).alias("share_coinciding"))
        .sort("hops")
    )


def compare_with_released(ours: pl.DataFrame, released: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """``TABLES`` comparing ``ours`` with ``released`` (both probe frames of one probe) on their shared concepts.

    >>> tables = compare_with_released(
    ...     build_probes(ProbeSpec.paper("hyponymy")), read_probes("hyponymy_test.jsonl")
    ... )  # doctest: +SKIP
    >>> tables["families"]  # doctest: +SKIP
    """
    shared = set(ours["concept"].unique()) & set(released["concept"].unique())
    if not shared:
        raise WorkbenchError(
            "the two probe sets share no concept; compare builds of the same probe (e.g. hyponymy with hyponymy)"
        )
    ours = ours.filter(pl.col("concept").is_in(list(shared)))
    released = released.filter(pl.col("concept").is_in(list(shared)))

    def sizes(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.group_by("cluster_id").agg(pl.len().clip(upper_bound=20).alias("cluster_size"))

    return {
        "hops": _side_by_side(ours, released, ["hops"]),
        "families": _side_by_side(ours, released, ["distractor_family", "distractor_depth"]),
        "cluster_sizes": _side_by_side(sizes(ours), sizes(released), ["cluster_size"]),
        "answer_positions": _side_by_side(ours, released, ["answer"]),
        "gold_overlap": _gold_overlap(ours, released),
    }


def to_markdown(frame: pl.DataFrame) -> str:
    """A frame as a Markdown table (for docs/REPRODUCTION.md), through polars' own table formatting."""
    with pl.Config(
        tbl_formatting="MARKDOWN",
        tbl_hide_column_data_types=True,
        tbl_hide_dataframe_shape=True,
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=400,
        fmt_str_lengths=200,
    ):
        return str(frame)


def reproduction_tables(released_dir: str | Path, seed: int = 0, progress: bool = True) -> str:
    """Markdown for docs/REPRODUCTION.md: Table 4 and ``TABLES`` of the paper preset against every released file.

    Each probe found in ``released_dir`` (ARC-style JSONL, all splits together) is compared with
    ``build_probes(ProbeSpec.paper(probe, seed=seed))`` on the concepts both contain.
    """
    from workbench.probes import ProbeSpec, build_probes
    from workbench.probes.formats import read_probes
    from workbench.probes.stats import table4

    files = sorted(Path(released_dir).glob("*.jsonl"))
    if not files:
        raise WorkbenchError(f"no .jsonl files in {released_dir}; pass the folder of the released probe data")
    released = pl.concat([read_probes(path) for path in files], how="vertical_relaxed")
    sections = []
    for probe in sorted(released["probe"].unique()):
        theirs = released.filter(pl.col("probe") == probe)
        ours = build_probes(ProbeSpec.paper(probe, seed=seed), progress=progress)
        sections.append(f"### {probe}\n\nTable 4, whole sets (ours: the paper preset; released: the files at hand)\n")
        sections.append(
            to_markdown(
                pl.concat(
                    [table4(ours).with_columns(set=pl.lit("ours")), table4(theirs).with_columns(set=pl.lit("released"))]
                )
            )
        )
        for name, table in compare_with_released(ours, theirs).items():
            sections.append(f"\n{name} (shared concepts)\n")
            sections.append(to_markdown(table))
        sections.append("")
    return "\n".join(sections)


MEASURES = {  # marginal -> the expression it is read from (adjective satellites count as adjectives)
    "pos": pl.col("pos").replace("s", "a"),
    "hops": pl.col("hops").cast(pl.String),
    "kind": pl.when(pl.col("distractor_depth") == 0)
    .then(pl.col("distractor_family"))
    .otherwise(pl.format("{}_{}", pl.col("distractor_family"), pl.col("distractor_depth"))),
}
PARTIAL_INPUT = ("ChoiceOnly", "ChoiceToChoice", "QuestionToChoice")


def drawn_like_release(ours: pl.DataFrame, n: int, seed: int = 0) -> pl.DataFrame:
    """``n`` questions of ``ours`` drawn as the released train files were: from its train split when it has one
    (the paper preset draws train as the paper did), at random from the whole set otherwise."""
    train = ours.filter(pl.col("split") == "train")
    source = train if train.height else ours
    return source.sample(min(n, source.height), seed=seed, shuffle=True)


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
    ours: pl.DataFrame, released: pl.DataFrame, seed: int = 0, baselines: bool = True
) -> dict[str, pl.DataFrame]:
    """Our set beside a released file of the same probe, on a sample of ours drawn as the release was.

    Returns frames: ``marginals`` (part of speech, hops, distractor kind), ``distances`` (total variation per
    marginal), ``clusters`` (clusters, stems per cluster, choice lengths), ``table4`` (Table 4 of our whole set
    and of the released file) and, unless ``baselines`` is off, ``baselines`` (partial-input accuracy, cross-fitted
    by cluster; the slow part).

    >>> ours, theirs = read_probes("probes/hypernymy"), read_probes("hypernymy_train.jsonl")  # doctest: +SKIP
    >>> tables = release_comparison(ours, theirs)  # doctest: +SKIP
    >>> tables["distances"]  # doctest: +SKIP
    """
    from workbench.probes.stats import table4

    probes = set(ours["probe"].unique()) | set(released["probe"].unique())
    if len(probes) != 1:
        raise WorkbenchError(f"compare one probe with the same probe; these sets hold {sorted(probes)}")
    drawn = drawn_like_release(ours, released.height, seed)
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
        tables["baselines"] = pl.DataFrame([{"set": side, **partial_input(frame, seed)} for side, frame in sides])
    return tables


MIXES = {"hop_mix": "hops", "family_mix": "kind"}  # ProbeSpec field -> the measure whose shares it sets


def calibrated_mixes(probe: str, released: pl.DataFrame, rounds: int = 2, seed: int = 0) -> dict[str, dict]:
    """The paper preset's ``hop_mix`` and ``family_mix`` for ``probe``: the released file's shares, corrected
    ``rounds`` times by ``weight * released share / share in our build``, so that the build's rows hold them.

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
    spec = ProbeSpec.paper(probe, seed=seed, train_pool=None)
    mixes = {field: dict(getattr(spec, field)) for field in MIXES if getattr(spec, field)}
    for _ in range(rounds):
        realised = shares(build_probes(replace(spec, **mixes), progress=False))
        for field, weights in mixes.items():
            have, want = realised[MIXES[field]], target[MIXES[field]]
            corrected = {key: w * want.get(str(key), 0.0) / have[str(key)] if have.get(str(key)) else w
                         for key, w in weights.items()}  # fmt: skip
            mixes[field] = {key: round(w / sum(corrected.values()), 4) for key, w in corrected.items()}
    return mixes
