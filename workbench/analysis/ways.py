"""Ways of asking side by side: one model asked several ways (format, shots, chat template, scorer, rule) and the
paired difference between two of its ways on the questions both scored.

A model is its name and control (``PAIR_KEYS``, as recognition beside recall pairs them); each of its prediction
identities (``metrics.identity_keys``: a way of asking changes the fingerprint) is one way, named by its label
(``metrics.model_labels``: "SmolLM2 · letters/5-shot/chat"). The difference is ``comparison.compare`` of the two
ways' rows: B − A overall and per heat-map cell, cluster-bootstrap intervals, exact McNemar, Holm across cells.

>>> ways_of_asking(preds).select("model", "label", "asking", "n")  # doctest: +SKIP
>>> way_difference(preds, "SmolLM2 · cloze/0-shot/plain", "SmolLM2 · letters/5-shot/chat")  # doctest: +SKIP
"""

import polars as pl

from workbench import metrics
from workbench.analysis.recall import PAIR_KEYS
from workbench.errors import WorkbenchError


def ways_of_asking(preds: pl.DataFrame) -> pl.DataFrame:
    """The ways each model of ``preds`` was asked, for models asked more than one way: one row per identity with
    its ``label``, ``asking`` (the way's recorded label, "" for scorers without prompts) and ``n`` questions, in
    the frame's order. Empty when every model was asked one way."""
    keys = metrics.identity_keys(preds)
    asked = pl.col("asking").first() if "asking" in preds.columns else pl.lit("")
    ways = (
        preds.group_by(keys, maintain_order=True)
        .agg(asking=asked, n=pl.len().cast(pl.Int64))
        .join(metrics.model_labels(preds), on=keys, nulls_equal=True, maintain_order="left")
    )
    return ways.filter(pl.len().over(PAIR_KEYS) > 1)


def way_rows(preds: pl.DataFrame, label: str) -> pl.DataFrame:
    """The rows of ``preds`` asked the way ``label`` names (a label of ``metrics.model_labels(preds)``)."""
    keys = metrics.identity_keys(preds)
    chosen = metrics.model_labels(preds).filter(pl.col("label") == label)
    if chosen.is_empty():
        raise WorkbenchError(f"no way of asking is labelled {label!r} here; pick one of ways_of_asking(preds)")
    return preds.join(chosen.select(keys), on=keys, how="semi", nulls_equal=True)


def way_difference(preds: pl.DataFrame, a: str, b: str, n_boot: int = 1000, seed: int = 0) -> pl.DataFrame:
    """Way ``b`` against way ``a`` (labels of ``ways_of_asking(preds)``) on the questions both scored:
    ``comparison.compare``'s table (``COMPARISON_SCHEMA``: diff = B − A) with the two labels, ``a`` and ``b``."""
    # here: scipy.stats, a second of a dashboard kernel's start, only once two ways are compared
    from workbench.analysis.comparison import compare

    table = compare(way_rows(preds, a), way_rows(preds, b), n_boot=n_boot, seed=seed)
    return table.with_columns(a=pl.lit(a), b=pl.lit(b))
