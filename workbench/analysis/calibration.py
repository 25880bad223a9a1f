"""Calibration of a model's choice scores: does a confident pick tend to be right?

A question's probabilities are the softmax of its choice ``scores``; its confidence is the probability of
the pick. Expected calibration error (ECE) bins questions by confidence into equal-width bins and averages
|accuracy − confidence| weighted by the bins' sizes (Guo et al. 2017); the Brier score is the mean squared
distance between the probabilities and the one-hot gold answer (over all choices). Both are per model
identity and per ``by`` (probe, hops, distractor family, ...). Note that softmax over raw scores is what the
scorer gives: cosine similarities, for instance, are never confident, which is a finding, not a bug.

    >>> calibration(preds, by=("probe", "hops"))  # doctest: +SKIP
"""

from collections.abc import Sequence

import polars as pl

from workbench import metrics
from workbench.errors import WorkbenchError


def probabilities(preds: pl.DataFrame) -> pl.DataFrame:
    """``preds`` with ``probs`` (softmax of ``scores``), ``confidence`` (the pick's probability) and ``brier``."""
    if preds.filter(pl.col("scores").list.len() == 0).height:
        raise WorkbenchError("some questions have no choice scores; calibration needs the scorer's scores")
    shifted = pl.col("scores").list.eval(pl.element() - pl.element().max())  # a stable softmax
    probs = shifted.list.eval(pl.element().exp() / pl.element().exp().sum())
    squares = pl.col("probs").list.eval(pl.element().pow(2)).list.sum()
    return preds.with_columns(probs=probs).with_columns(
        confidence=pl.col("probs").list.max(),
        brier=squares - 2 * pl.col("probs").list.get(pl.col("answer")) + 1.0,  # sum over choices of (p - gold)^2
    )


def reliability(preds: pl.DataFrame, bins: int = 10, by: Sequence[str] = ()) -> pl.DataFrame:
    """Per model identity, ``by`` and confidence bin: the bin's ``confidence`` and ``accuracy`` and its ``n``."""
    if not isinstance(bins, int) or bins < 1:
        raise WorkbenchError(f"bins={bins!r} is out of range; use a whole number >= 1")
    keys = [*metrics.identity_keys(preds), *by]
    scored = probabilities(preds).with_columns(
        bin=(pl.col("confidence") * bins).floor().clip(upper_bound=bins - 1).cast(pl.Int64)
    )
    return (
        scored.group_by(*keys, "bin")
        .agg(n=pl.len(), confidence=pl.col("confidence").mean(), accuracy=pl.col("correct").cast(pl.Float64).mean())
        .sort(*keys, "bin", nulls_last=True)
    )


def calibration(preds: pl.DataFrame, bins: int = 10, by: Sequence[str] = ("probe",)) -> pl.DataFrame:
    """Expected calibration error and Brier score per model identity and ``by``.

    Parameters
    ----------
    preds : polars.DataFrame
        Predictions (``PREDICTION_SCHEMA``) with each question's choice ``scores``.
    bins : int
        Equal-width confidence bins of the ECE.
    by : sequence of str
        Columns to group by besides the model identity (e.g. ``("probe", "hops", "distractor_family")``).

    Returns
    -------
    polars.DataFrame
        The identity keys, ``by``, ``n``, ``accuracy``, ``confidence`` (mean), ``ece`` and ``brier``.

    Examples
    --------
    >>> calibration(preds).select("probe", "accuracy", "confidence", "ece", "brier")  # doctest: +SKIP
    """
    keys = [*metrics.identity_keys(preds), *by]
    per_bin = reliability(preds, bins, by)
    ece = per_bin.group_by(keys).agg(
        ece=((pl.col("accuracy") - pl.col("confidence")).abs() * pl.col("n")).sum() / pl.col("n").sum()
    )
    overall = (
        probabilities(preds)
        .group_by(keys)
        .agg(
            n=pl.len(),
            accuracy=pl.col("correct").cast(pl.Float64).mean(),
            confidence=pl.col("confidence").mean(),
            brier=pl.col("brier").mean(),
        )
    )
    return overall.join(ece, on=keys, nulls_equal=True).sort(keys, nulls_last=True)
