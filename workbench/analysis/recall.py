"""Recognition beside recall: on the same questions, how often a model picks the gold among the choices (a choice
scorer: causal, seq2seq, mlm, ...) and how often it produces it as a free answer (the ``generate`` scorer).

The two prediction frames are paired per model (``model``, ``control``) and question (``metrics.with_question_key``);
each way the choices were scored (scorer, rule, way of asking) is its own row. ``recognition`` and ``recall`` are
shares of the paired questions; ``near`` the share of free answers naming a concept next to the gold (reported
apart, never counted as recall); ``both``, ``recognised_only`` and ``recalled_only`` split the questions.

>>> recognition_recall(*split(preds), by=("probe", "hops"))  # doctest: +SKIP
"""

import polars as pl

from workbench.metrics import with_question_key
from workbench.schema import PREDICTION_SCHEMA, conform

PAIR_KEYS = ("model", "control")
"""A choice frame's and a generate frame's rows are one model's when these are equal."""


def split(preds: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``preds`` cut into the choosing rows (every scorer but generate) and the generating rows."""
    free = pl.col("scorer") == "generate"
    return preds.filter(~free), preds.filter(free)


def recognition_recall(
    choosing: pl.DataFrame, generating: pl.DataFrame, by: tuple[str, ...] = ("probe",)
) -> pl.DataFrame:
    """Per model, way of choosing and ``by`` (columns of the predictions, e.g. probe, hops): ``n`` questions answered
    both ways, ``recognition``, ``recall``, ``near``, ``both``, ``recognised_only``, ``recalled_only`` (shares).

    Empty when the frames share no model and question."""
    choosing = with_question_key(conform(choosing, PREDICTION_SCHEMA, "choice predictions"))
    generating = with_question_key(conform(generating, PREDICTION_SCHEMA, "generate predictions"))
    way = pl.concat_str("scorer", "rule", "asking", separator=" ").str.strip_chars()
    picked = choosing.select(*PAIR_KEYS, "question_key", *by, way=way, recognised="correct")
    produced = generating.select(*PAIR_KEYS, "question_key", recalled="correct", near=pl.col("match") == "near")
    paired = picked.join(produced, on=[*PAIR_KEYS, "question_key"], how="inner")
    mean = lambda expr: expr.cast(pl.Float64).mean()  # noqa: E731
    recognised, recalled = pl.col("recognised"), pl.col("recalled")
    return (
        paired.group_by(*PAIR_KEYS, "way", *by, maintain_order=True)
        .agg(
            n=pl.len().cast(pl.Int64),
            recognition=mean(recognised),
            recall=mean(recalled),
            near=mean(pl.col("near")),
            both=mean(recognised & recalled),
            recognised_only=mean(recognised & ~recalled),
            recalled_only=mean(~recognised & recalled),
        )
        .sort(*PAIR_KEYS, "way", *by)
    )
