"""One row per question: the probe frame checked before scoring, each question's prompt, choice scores gathered per
question, and scores refused where they are NaN or infinite."""

import polars as pl

from workbench.errors import WorkbenchError
from workbench.schema import PROBE_SCHEMA, conform


def check_probes(probes: pl.DataFrame) -> pl.DataFrame:
    probes = conform(probes, PROBE_SCHEMA, "probe frame")
    if probes.is_empty():
        raise WorkbenchError("the probe frame has no questions to score; check the file, split or filter that made it")
    # Empty choices are allowed only as trailing padding (the paper's 5-way science sets), never as the gold.
    empty = pl.element().is_null() | (pl.element().str.strip_chars() == "")
    filled = pl.col("choices").list.eval(empty.not_().cast(pl.Int8))
    bad = probes.filter(
        pl.col("question").is_null()
        | (filled.list.sum().fill_null(0) < 2)
        | (filled.list.eval(pl.element().diff() > 0).list.any())
        | (filled.list.get(pl.col("answer"), null_on_oob=True) != 1)
    )
    if not bad.is_empty():
        raise WorkbenchError(
            f"{len(bad)} questions cannot be scored: each needs a question and at least two non-empty choices, the "
            f"gold among them, with empty padding only at the end (first: id {bad['id'][0]!r}); fix or drop them"
        )
    return probes


def question_prompts(pairs: pl.DataFrame) -> list[str]:
    """Each question's prompt, in order (a question's choices share it)."""
    return pairs.group_by("row", maintain_order=True).agg(pl.col("prompt").first())["prompt"].to_list()


def by_question(scored: pl.DataFrame, prompted: bool) -> pl.DataFrame:
    """Choice scores (``rule``, ``row``, ``score``, maybe ``prompt``) as one row per rule and question: ``scores``,
    ``prompt`` (``prompted``; else null) and ``pred``, the best-scoring choice."""
    return (
        scored.group_by("rule", "row", maintain_order=True)
        .agg(pl.col("score").alias("scores"), (pl.col("prompt").first() if prompted else pl.lit(None)).alias("prompt"))
        .with_columns(pred=pl.col("scores").list.arg_max())
    )


def check_finite(per_question: pl.DataFrame, probes: pl.DataFrame, label: str) -> None:
    """Refuse scores that are NaN or infinite (damaged weights: every pick would be choice 0 and the accuracy a
    number), naming the model and the first question; what the cache holds is kept."""
    broken = per_question.filter(pl.col("scores").list.eval(~pl.element().is_finite()).list.any())
    if broken.height:
        first = probes["id"][int(broken["row"].min())]
        raise WorkbenchError(
            f"{label} gave NaN or infinite scores on {broken['row'].n_unique():,} questions (first: id {first!r}), so "
            "none of its picks can be trusted and nothing is written; its weights are damaged or overflow in this "
            "dtype: load the model again from a sound copy (or use float32)"
        )
