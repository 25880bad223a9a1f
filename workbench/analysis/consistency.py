"""Template sensitivity: does a model's pick change when only the phrasing of the question changes?

A probe set asks about one concept with the same choices in several phrasings (templates) once
``workbench.probes.phrasings.rephrase`` has added them (the generator and the released files phrase each question
once). Grouping a model's
predictions by concept and choice set, a group asked in two or more templates is *consistent* when every
template's pick is the same choice text; the consistency score is the share of consistent groups, an
invariance check in the manner of behavioural-testing suites, read beside accuracy.

    >>> template_consistency(preds)  # doctest: +SKIP
"""

from collections.abc import Sequence

import polars as pl

from workbench import metrics


def template_consistency(preds: pl.DataFrame, by: Sequence[str] = ("probe",)) -> pl.DataFrame:
    """Per model identity and ``by``: how many concept-and-choices groups were asked in 2+ templates
    (``n_groups``), the share whose picks all agree (``consistency``) and the accuracy on their questions.

    Parameters
    ----------
    preds : polars.DataFrame
        Predictions (``PREDICTION_SCHEMA``) with a ``template`` column.
    by : sequence of str
        Columns to group by besides the model identity.

    Returns
    -------
    polars.DataFrame
        The identity keys, ``by``, ``n_groups``, ``n_questions``, ``consistency``, ``accuracy``.

    Examples
    --------
    >>> template_consistency(preds).select("probe", "n_groups", "consistency", "accuracy")  # doctest: +SKIP
    """
    keys = [*metrics.identity_keys(preds), *by]
    groups = (
        preds.with_columns(
            choice_set=pl.col("choices").list.sort().list.join("\x1f"), pick=pl.col("choices").list.get(pl.col("pred"))
        )
        .group_by(*keys, "concept", "choice_set")
        .agg(
            templates=pl.col("template").n_unique(),
            picks=pl.col("pick").n_unique(),
            n=pl.len(),
            right=pl.col("correct").sum(),
        )
        .filter(pl.col("templates") > 1)
    )
    return (
        groups.group_by(keys)
        .agg(
            n_groups=pl.len(),
            n_questions=pl.col("n").sum(),
            consistency=(pl.col("picks") == 1).mean(),
            accuracy=pl.col("right").sum() / pl.col("n").sum(),
        )
        .sort(keys, nulls_last=True)
    )
