"""How far annotators agree, and how often they are right: Krippendorff's alpha (the ``krippendorff`` package) and
Fleiss' kappa (``statsmodels``) per probe or per hops x distractor cell, each with a percentile interval over
questions (a bootstrap that resamples questions), and people's accuracy per vote.

Both statistics treat a question's choices as nominal categories (the stored choice index: each person saw their
own order, so a position means nothing across people). Alpha takes any number of votes per question (a question
with one vote adds nothing); Fleiss' kappa needs the same number on every question, so it reads the questions with
the batch's full ``per_question`` votes (the most any question has) and says how many those are.

>>> agreement(batch.questions, read_votes(batch), by=("probe",))  # doctest: +SKIP
"""

from collections.abc import Sequence

import numpy as np
import polars as pl

from workbench.errors import WorkbenchError
from workbench.metrics import check_n_boot

AGREEMENT_SCHEMA = {
    "questions": pl.Int64, "votes": pl.Int64, "alpha": pl.Float64, "alpha_lo": pl.Float64, "alpha_hi": pl.Float64,
    "kappa_questions": pl.Int64, "kappa": pl.Float64, "kappa_lo": pl.Float64, "kappa_hi": pl.Float64,
    "accuracy": pl.Float64,
}  # fmt: skip


def counts_table(votes: pl.DataFrame, n_choices: int) -> np.ndarray:
    """Questions x choices: how many votes each choice of each question got (rows in question id order)."""
    ids = sorted(votes["id"].unique().to_list())
    row = {question: index for index, question in enumerate(ids)}
    table = np.zeros((len(ids), n_choices), dtype=np.int64)
    np.add.at(table, (votes["id"].replace_strict(row, return_dtype=pl.Int64).to_numpy(), votes["choice"].to_numpy()), 1)
    return table


def alpha(table: np.ndarray) -> float:
    """Krippendorff's alpha (nominal) of a questions x choices count table (``krippendorff.alpha``'s value counts)."""
    import krippendorff  # here, not at the top: an app's kernel imports the package for its flags alone

    usable = table[table.sum(axis=1) >= 2]
    if len(usable) < 2 or (usable.sum(axis=0) > 0).sum() < 2:
        return float("nan")
    return float(krippendorff.alpha(value_counts=usable, level_of_measurement="nominal"))


def kappa(table: np.ndarray) -> float:
    """Fleiss' kappa of the rows of ``table`` with the most votes (``statsmodels``' ``fleiss_kappa``)."""
    from statsmodels.stats.inter_rater import fleiss_kappa  # scipy.stats: seconds of an app kernel's start

    full = table[table.sum(axis=1) == table.sum(axis=1).max()] if len(table) else table
    if len(full) < 2 or full.sum(axis=1)[0] < 2 or (full.sum(axis=0) > 0).sum() < 2:
        return float("nan")
    return float(fleiss_kappa(full, method="fleiss"))


def _interval(table: np.ndarray, statistic, n_boot: int, rng: np.random.Generator, ci: float) -> tuple[float, float]:
    if n_boot == 0 or len(table) < 2:
        return float("nan"), float("nan")
    replicates = np.array([statistic(table[rng.integers(0, len(table), len(table))]) for _ in range(n_boot)])
    replicates = replicates[~np.isnan(replicates)]
    if not len(replicates):
        return float("nan"), float("nan")
    low, high = np.percentile(replicates, [50 * (1 - ci), 50 * (1 + ci)])
    return float(low), float(high)


def agreement(
    questions: pl.DataFrame,
    votes: pl.DataFrame,
    by: Sequence[str] = ("probe",),
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> pl.DataFrame:
    """Alpha, kappa (each with its interval over questions) and accuracy per vote, per group of ``by`` (columns of
    ``questions``: ``("probe",)``, or ``("probe", "hops", "distractor_family")`` for the cells); NaN where a group
    has too few questions or votes to say (a question needs two votes; kappa two questions with the same number)."""
    from workbench.annotation.votes import known_votes

    check_n_boot(n_boot)
    if votes.is_empty():
        raise WorkbenchError("nobody has voted in this batch yet: there is no agreement to measure")
    if (votes["source"] == "release").all():
        raise WorkbenchError(
            "a released file keeps each question's distinct picks, not every vote (how many people picked each "
            "choice is not recorded): agreement cannot be measured from it, only its human accuracy (annotate gold)"
        )
    votes = known_votes(questions, votes)
    cells = questions.select("id", "answer", *by, n_choices=pl.col("choices").list.len())
    joined = votes.join(cells, on="id", how="inner")
    rng = np.random.default_rng(seed)
    rows = []
    for key, part in sorted(joined.partition_by(list(by), as_dict=True).items(), key=lambda item: str(item[0])):
        table = counts_table(part, int(part["n_choices"].max()))
        full = int((table.sum(axis=1) == table.sum(axis=1).max()).sum())
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "questions": len(table), "votes": part.height,
                "alpha": alpha(table), **dict(zip(("alpha_lo", "alpha_hi"), _interval(table, alpha, n_boot, rng, ci))),
                "kappa_questions": full,
                "kappa": kappa(table), **dict(zip(("kappa_lo", "kappa_hi"), _interval(table, kappa, n_boot, rng, ci))),
                "accuracy": (part["choice"] == part["answer"]).mean(),
            }
        )  # fmt: skip
    schema = {**questions.select(by).schema, **AGREEMENT_SCHEMA}
    return pl.DataFrame(rows, schema=schema).with_columns(pl.col(pl.Float64).round(4))
