"""Prediction frames of real probe sets without a model: seeded scores, for tests of what reads predictions."""

import numpy as np
import polars as pl

from workbench.schema import PREDICTION_SCHEMA, conform


def predictions_of(probes: pl.DataFrame, model: str = "m", seed: int = 0, skill: float = 0.6) -> pl.DataFrame:
    """``probes`` scored by a pretend model that picks the gold with probability ``skill`` (seeded)."""
    rng = np.random.default_rng(seed)
    sizes = probes["choices"].list.len().to_numpy()
    answers = probes["answer"].to_numpy()
    right = rng.random(probes.height) < skill
    preds = np.where(right, answers, (answers + 1) % sizes)
    scores = [[1.0 if i == p else 0.0 for i in range(n)] for p, n in zip(preds, sizes)]
    frame = probes.with_columns(
        scores=pl.Series(scores, dtype=pl.List(pl.Float64)),
        pred=pl.Series(preds, dtype=pl.Int64),
        model=pl.lit(model),
        fingerprint=pl.lit(f"fp-{model}"),
        scorer=pl.lit("similarity"),
        rule=pl.lit("cosine"),
        control=pl.lit("none"),
    ).with_columns(correct=pl.col("pred") == pl.col("answer"))
    return conform(frame, PREDICTION_SCHEMA)
