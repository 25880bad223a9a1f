"""Paired comparison of two prediction frames: is model A really better than model B, overall and per cell?

Both frames are joined on the questions both scored, by ``metrics.with_question_key``: the question's content
(probe, id, context, stem, choices, answer) and its occurrence among equal rows, a key unique by construction
(ids alone are not: the released training files reuse them). Differences of instance accuracy and of strict
cluster accuracy (B minus A) get a paired bootstrap interval that resamples **clusters** (the questions of one
concept are not independent), and each scope an exact McNemar test on the discordant questions (A right and B
wrong, or the reverse: a two-sided binomial test at 1/2). P-values across the heat-map cells are Holm-adjusted
(statsmodels), since a researcher reads every cell at once.

    >>> table = compare(read_predictions("minilm.parquet"), read_predictions("minilm-random.parquet"))
    >>> table.filter(pl.col("significant")).select("row", "column", "diff", "p_holm")  # doctest: +SKIP
"""

import numpy as np
import polars as pl
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from workbench import metrics
from workbench.errors import WorkbenchError

COMPARISON_SCHEMA: dict[str, pl.DataType] = {
    "scope": pl.String(),  # overall, or cell
    "row": pl.String(),  # probe, hops ("hypernymy k=2"); empty overall
    "column": pl.String(),  # distractor family, depth ("sister 1"); empty overall
    "n": pl.Int64(),  # questions both scored
    "n_clusters": pl.Int64(),
    "accuracy_a": pl.Float64(),
    "accuracy_b": pl.Float64(),
    "diff": pl.Float64(),  # accuracy_b - accuracy_a
    "diff_lo": pl.Float64(),
    "diff_hi": pl.Float64(),
    "cluster_accuracy_a": pl.Float64(),  # strict: every question of the cluster right
    "cluster_accuracy_b": pl.Float64(),
    "cluster_diff": pl.Float64(),
    "cluster_diff_lo": pl.Float64(),
    "cluster_diff_hi": pl.Float64(),
    "a_only": pl.Int64(),  # questions A got right and B wrong
    "b_only": pl.Int64(),
    "p_mcnemar": pl.Float64(),  # exact, two-sided
    "p_holm": pl.Float64(),  # Holm-adjusted across cells (overall: unadjusted)
    "significant": pl.Boolean(),  # p_holm < alpha
}


def paired(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    """One row per question both frames scored (the same ``metrics.with_question_key``: content and occurrence, not
    the id, which the released files repeat): cluster, heat-map ``row``/``column`` and ``correct_a``/``correct_b``."""
    for name, frame in (("A", a), ("B", b)):
        models = frame.select(metrics.identity_keys(frame)).unique()
        if models.height != 1:
            raise WorkbenchError(
                f"{name} holds {models.height} model identities; compare two frames of one model each "
                "(filter by model, scorer, rule, control)"
            )
    a, b = metrics.with_question_key(a), metrics.with_question_key(b)
    keep = list(dict.fromkeys(["question_key", "cluster_id", *metrics.CELL_KEYS, "correct"]))
    both = a.select(keep).join(b.select("question_key", "correct"), on="question_key", suffix="_b")
    if both.is_empty():
        raise WorkbenchError("A and B share no question (same probe, id, text, choices); score one probe set with both")
    both = both.rename({"correct": "correct_a"})
    return both.with_columns(*metrics.cell_labels())


def compare(
    a: pl.DataFrame, b: pl.DataFrame, n_boot: int = 1000, seed: int = 0, ci: float = 0.95, alpha: float = 0.05
) -> pl.DataFrame:
    """B against A on the questions both scored, overall and per heat-map cell (``COMPARISON_SCHEMA``).

    Parameters
    ----------
    a, b : polars.DataFrame
        Predictions of one model each (``PREDICTION_SCHEMA``): a model and its random-weights control, two
        rules, a checkpoint and its source model.
    n_boot, seed, ci
        Paired bootstrap resamples of clusters (0: no intervals, as the heat map's significance marks ask), their
        seed, and the intervals' coverage.
    alpha : float
        Significance level of the Holm-adjusted McNemar p-values.

    Returns
    -------
    polars.DataFrame
        One row overall, then one per cell in the paper's order: accuracies, ``diff`` = B − A with its cluster
        bootstrap interval, the same for strict cluster accuracy, McNemar's discordant counts and p-values.

    Examples
    --------
    >>> compare(minilm, minilm_random).filter(pl.col("scope") == "overall").select("diff", "p_mcnemar")
    """
    metrics.check_n_boot(n_boot)
    both = paired(a, b)
    rng = np.random.default_rng(seed)
    rows = [{"scope": "overall", "row": "", "column": "", **_scope(both, n_boot, rng, ci)}]
    for (row, column), part in both.group_by("row", "column", maintain_order=True):
        rows.append({"scope": "cell", "row": row, "column": column, **_scope(part, n_boot, rng, ci)})
    table = pl.DataFrame(rows)
    cells = table["scope"] == "cell"
    holm = multipletests(table.filter(cells)["p_mcnemar"].to_numpy(), method="holm")[1] if cells.any() else []
    table = table.with_columns(
        p_holm=pl.when(cells).then(pl.Series(_spread(cells.to_list(), list(holm)))).otherwise(pl.col("p_mcnemar"))
    )
    table = table.with_columns(significant=pl.col("p_holm") < alpha)
    rows_in_order, columns_in_order = metrics.cell_order(both)
    rank = pl.struct(
        pl.col("row").replace_strict(rows_in_order, range(len(rows_in_order)), default=-1, return_dtype=pl.Int64),
        pl.col("column").replace_strict(
            columns_in_order, range(len(columns_in_order)), default=-1, return_dtype=pl.Int64
        ),
    )
    return table.sort(rank).select(pl.col(name).cast(dtype) for name, dtype in COMPARISON_SCHEMA.items())


def _spread(mask: list[bool], values: list[float]) -> list[float | None]:
    """``values`` placed at the True positions of ``mask``, None elsewhere."""
    it = iter(values)
    return [next(it) if keep else None for keep in mask]


def _scope(part: pl.DataFrame, n_boot: int, rng: np.random.Generator, ci: float) -> dict:
    """Accuracies, paired cluster-bootstrap intervals and McNemar's test of one scope."""
    clusters = part.group_by("cluster_id", maintain_order=True).agg(  # in order: a seeded bootstrap repeats
        n=pl.len(),
        right_a=pl.col("correct_a").sum(),
        right_b=pl.col("correct_b").sum(),
        all_a=pl.col("correct_a").all(),
        all_b=pl.col("correct_b").all(),
    )
    n, right_a, right_b = (clusters[name].to_numpy().astype(float) for name in ("n", "right_a", "right_b"))
    all_a, all_b = (clusters[name].to_numpy().astype(float) for name in ("all_a", "all_b"))
    draws = rng.integers(0, len(n), size=(n_boot, len(n)))
    tail = (1 - ci) / 2 * 100
    diffs = (right_b[draws].sum(1) - right_a[draws].sum(1)) / n[draws].sum(1)
    cluster_diffs = all_b[draws].mean(1) - all_a[draws].mean(1)

    def bound(values: np.ndarray, percent: float) -> float | None:
        return float(np.percentile(values, percent)) if n_boot else None

    a_only = int((part["correct_a"] & ~part["correct_b"]).sum())
    b_only = int((part["correct_b"] & ~part["correct_a"]).sum())
    discordant = a_only + b_only
    return {
        "n": part.height,
        "n_clusters": len(n),
        "accuracy_a": right_a.sum() / n.sum(),
        "accuracy_b": right_b.sum() / n.sum(),
        "diff": (right_b.sum() - right_a.sum()) / n.sum(),
        "diff_lo": bound(diffs, tail),
        "diff_hi": bound(diffs, 100 - tail),
        "cluster_accuracy_a": all_a.mean(),
        "cluster_accuracy_b": all_b.mean(),
        "cluster_diff": all_b.mean() - all_a.mean(),
        "cluster_diff_lo": bound(cluster_diffs, tail),
        "cluster_diff_hi": bound(cluster_diffs, 100 - tail),
        "a_only": a_only,
        "b_only": b_only,
        "p_mcnemar": binomtest(min(a_only, b_only), discordant, 0.5).pvalue if discordant else 1.0,
    }
