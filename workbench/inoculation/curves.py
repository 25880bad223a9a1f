"""Learning curves of an inoculation run and their oLMpics summaries (SPEC §6).

``learning_curve``: one row per k — k=0 is the source model before inoculation, then for each k and
each seed the configuration (lr, epochs) with the best AVG(S_new, S_orig); S_new and S_orig are then
averaged over seeds, with their standard deviation (0 for a single seed).

Zero-shot points (``workbench.scoring.zero_shot_accuracy``: any scorer's accuracy on the probe with no
training, one row per rule) can stand for k=0 instead (``learning_curve(trials, zero_shot=points)``):
then the curve is one curve per rule (column ``rule``), each starting at that rule's zero-shot
accuracy and going on with the run's k > 0 points; S_orig is empty at k=0 (the zero-shot scorer was
not measured on the original task), and the run needs no baseline row.

``curve_summaries``: MAX (the best point over k > 0) and WS (a weighted mean over k > 0) of the
seed-averaged curve, as oLMpics §2 ("averaged over seeds" applies to the curve, not to per-seed
maxima). oLMpics defines WS over N ∈ {62, 125, 250, 500, 1k, 2k, 4k} with weights 0.23, 0.20, 0.17,
0.14, 0.11, 0.08, 0.07 (small N weigh more: learning from few examples counts most). Our k grid is the
user's, so each k takes the weight of the oLMpics N nearest to it on a log scale (k=100 -> N=125:
0.20; 3000 -> 4k: 0.07), and the weights are renormalised to sum to 1 over the grid. On the oLMpics
grid itself this is exactly their WS.

>>> curve = learning_curve(load_run("runs/inoc"))  # doctest: +SKIP
>>> per_rule = learning_curve(load_run("runs/inoc"), zero_shot=zero_shot_accuracy(preds))  # doctest: +SKIP
"""

import math

import polars as pl

from workbench.errors import WorkbenchError

COLUMNS = ("k", "S_new", "S_new_std", "S_orig", "S_orig_std", "n_seeds")
OLMPICS_N = (62, 125, 250, 500, 1000, 2000, 4000)
OLMPICS_WEIGHTS = (0.23, 0.20, 0.17, 0.14, 0.11, 0.08, 0.07)


def ws_weight(k: int) -> float:
    """The oLMpics WS weight of the N nearest to ``k`` on a log scale (before renormalising)."""
    index = min(range(len(OLMPICS_N)), key=lambda i: (abs(math.log(k) - math.log(OLMPICS_N[i])), i))
    return OLMPICS_WEIGHTS[index]


def per_seed_curve(trials: pl.DataFrame) -> pl.DataFrame:
    """For every (k > 0, seed): the best-AVG configuration's row (ties: smaller lr, then fewer epochs)."""
    return (
        trials.filter(pl.col("status") == "ok")
        .sort(["k", "seed", "avg", "lr", "epochs"], descending=[False, False, True, False, False])
        .group_by(["k", "seed"], maintain_order=True)
        .first()
    )


def learning_curve(trials: pl.DataFrame, zero_shot: pl.DataFrame | None = None) -> pl.DataFrame:
    """The learning curve of an inoculation run: per k, M*'s scores averaged over seeds; k=0 first.

    For each k and seed the configuration (lr, epochs) with the best AVG(S_new, S_orig) is taken; k=0 is
    the source model before inoculation.

    Parameters
    ----------
    trials : polars.DataFrame
        ``load_run(folder)``.
    zero_shot : polars.DataFrame, optional
        Zero-shot points (``zero_shot_accuracy``) as k=0 instead of the run's baseline, one curve per rule
        (see ``with_zero_shot``).

    Returns
    -------
    polars.DataFrame
        k, S_new, S_new_std, S_orig, S_orig_std, n_seeds (and ``rule`` with ``zero_shot``).

    Examples
    --------
    >>> inoculation_curves(learning_curve(load_run("runs/inoc")))  # doctest: +SKIP
    """
    if zero_shot is not None:
        return with_zero_shot(inoculated(trials), zero_shot)
    base = trials.filter(pl.col("status") == "baseline")
    if base.is_empty():
        raise WorkbenchError(
            "the run has no baseline row (k=0); rerun inoculate to measure the source model first, "
            "or pass zero_shot=zero_shot_accuracy(preds) to start the curve at a zero-shot score"
        )
    zero = (
        base.head(1)
        .select("k", "S_new", "S_orig")
        .with_columns(S_new_std=pl.lit(0.0), S_orig_std=pl.lit(0.0), n_seeds=pl.lit(1, pl.Int64))
    )
    return pl.concat([zero, inoculated(trials)], how="diagonal_relaxed").select(COLUMNS).sort("k")


def inoculated(trials: pl.DataFrame) -> pl.DataFrame:
    """The k > 0 points of the curve: each seed's best-AVG configuration, then mean and std over seeds."""
    return (
        per_seed_curve(trials)
        .group_by("k")
        .agg(
            S_new=pl.col("S_new").mean(),
            S_new_std=pl.col("S_new").std(ddof=0),
            S_orig=pl.col("S_orig").mean(),
            S_orig_std=pl.col("S_orig").std(ddof=0),
            n_seeds=pl.len().cast(pl.Int64),
        )  # fmt: skip
        .select(COLUMNS)
        .sort("k")
    )


def with_zero_shot(curve: pl.DataFrame, zero_shot: pl.DataFrame) -> pl.DataFrame:
    """One curve per rule of ``zero_shot``: its zero-shot accuracy at k=0 (S_orig empty), then the
    k > 0 points of ``curve``; columns ``rule`` and ``COLUMNS``, rules in the order of ``zero_shot``.

    >>> points = pl.DataFrame({"rule": ["sum", "mi"], "k": [0, 0], "S_new": [0.4, 0.3]})
    >>> later = pl.DataFrame(
    ...     {"k": [100], "S_new": [0.7], "S_new_std": [0.0], "S_orig": [0.6], "S_orig_std": [0.0], "n_seeds": [1]}
    ... )
    >>> with_zero_shot(later, points).select("rule", "k", "S_new", "S_orig").rows()
    [('sum', 0, 0.4, None), ('sum', 100, 0.7, 0.6), ('mi', 0, 0.3, None), ('mi', 100, 0.7, 0.6)]
    """
    missing = [name for name in ("rule", "k", "S_new") if name not in zero_shot.columns]
    if missing:
        raise WorkbenchError(
            f"zero_shot lacks the columns {missing}; pass what workbench.scoring.zero_shot_accuracy returns"
        )
    if zero_shot.filter(pl.col("k") != 0).height:
        raise WorkbenchError(
            "zero_shot has rows with k != 0; zero-shot points are the k=0 of a curve, pass zero_shot_accuracy(preds)"
        )
    repeated = zero_shot.group_by("rule").len().filter(pl.col("len") > 1)["rule"].to_list()
    if repeated:
        raise WorkbenchError(
            f"zero_shot has several rows for the rule(s) {sorted(repeated)} (several models, controls or prompt sets); "
            "keep one per rule, e.g. zero_shot.filter(pl.col('control') == 'none')"
        )
    rules = zero_shot.select("rule", order=pl.int_range(pl.len()))
    zeros = zero_shot.select(
        "rule", k=pl.lit(0, pl.Int64), S_new=pl.col("S_new").cast(pl.Float64), S_new_std=pl.lit(0.0),
        S_orig=pl.lit(None, pl.Float64), S_orig_std=pl.lit(None, pl.Float64), n_seeds=pl.lit(1, pl.Int64),
    )  # fmt: skip
    later = curve.filter(pl.col("k") > 0).select(COLUMNS).join(rules.select("rule"), how="cross")
    return (
        pl.concat([zeros, later], how="diagonal_relaxed")
        .join(rules, on="rule")
        .sort("order", "k")
        .select("rule", *COLUMNS)
    )


def seed_averaged_summary(points: pl.DataFrame, keys: list[str], x: str, y: str) -> pl.DataFrame:
    """MAX and WS of each ``keys`` group's curve ``y`` over ``x`` (> 0), averaged over ``seed`` first.

    MAX is the best point of the seed-mean curve and ``MAX_std`` the seeds' spread there; WS is the
    ``ws_weight``-weighted mean of the seed-mean curve (renormalised over the group's x values) and
    ``WS_std`` the spread of per-seed WS.

    >>> toy = pl.DataFrame(
    ...     {"g": ["a"] * 4, "seed": [0, 0, 1, 1], "n": [62, 125, 62, 125], "acc": [0.9, 0.5, 0.45, 0.7]}
    ... )
    >>> # mean curve 0.675, 0.6 (not (0.9 + 0.7) / 2)
    >>> seed_averaged_summary(toy, ["g"], "n", "acc")["MAX"].round(3).item()
    0.675
    """
    weighted = points.with_columns(w=pl.col(x).map_elements(ws_weight, return_dtype=pl.Float64))
    means = weighted.group_by([*keys, x]).agg(
        mean=pl.col(y).mean(), std=pl.col(y).std(ddof=0), w=pl.col("w").first(), seeds=pl.len().cast(pl.Int64)
    )
    best = means.sort("mean", descending=True).group_by(keys, maintain_order=True).first()
    summary = means.group_by(keys).agg(WS=(pl.col("mean") * pl.col("w")).sum() / pl.col("w").sum())
    per_seed = (
        weighted.group_by([*keys, "seed"])
        .agg(WS=(pl.col(y) * pl.col("w")).sum() / pl.col("w").sum())
        .group_by(keys)
        .agg(WS_std=pl.col("WS").std(ddof=0), n_seeds=pl.len().cast(pl.Int64))
    )
    return (
        summary.join(per_seed, on=keys)
        .join(best.select(*keys, MAX=pl.col("mean"), MAX_std=pl.col("std")), on=keys)
        .select(*keys, "WS", "WS_std", "MAX", "MAX_std", "n_seeds")
        .sort(keys)
    )


def curve_summaries(trials: pl.DataFrame) -> pl.DataFrame:
    """One row per measure (S_new, S_orig): MAX and WS over k > 0 of the seed-averaged curve (oLMpics §2)."""
    curves = per_seed_curve(trials)
    if curves.is_empty():
        raise WorkbenchError("the run has no finished trials with k > 0; nothing to summarise")
    long = curves.unpivot(["S_new", "S_orig"], index=["k", "seed"], variable_name="measure", value_name="value")
    summary = seed_averaged_summary(long.drop_nulls("value"), ["measure"], "k", "value")
    return summary.select("measure", "MAX", "MAX_std", "WS", "WS_std", "n_seeds")
