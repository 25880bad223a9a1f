"""What every baseline shares: fit on a probe frame, predict a ``PREDICTION_SCHEMA`` frame.

A baseline scores each choice of a question (higher is better) and predicts the best one, so its
predictions are read by ``workbench.metrics`` and ``workbench.reports`` like any model's: ``model``
is the baseline's name, ``scorer`` is ``"baseline"``, ``rule`` says what the baseline looks at, and
``fingerprint`` names its settings and the training questions it learned from.

Subclasses implement ``_fit(pairs)`` and ``_scores(pairs)`` over *pairs*: one row per choice with
``row`` (question index), ``id``, ``question``, ``choice``, ``position``, ``n_choices`` and ``gold``.
"""

import hashlib
from typing import ClassVar, Self

import numpy as np
import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.schema import PREDICTION_SCHEMA, PROBE_SCHEMA, conform

SCORER = "baseline"
MAX_SEED = 2**32 - 1


class Baseline:
    """A partial-input or trivial baseline with scikit-learn's fit/predict contract.

    Learned state lives in attributes ending in ``_`` (``fingerprint_``, ``n_train_``, and each
    subclass's own); ``fit`` returns the baseline, ``predict`` a new frame, and neither changes its input.

    >>> ChoiceOnly(seed=0).fit(probes.filter(pl.col("split") == "train")).predict(dev)["correct"].mean()
    """

    name: ClassVar[str]
    rule: ClassVar[str]

    def fit(self, train: pl.DataFrame) -> Self:
        """Learn from the questions of ``train`` (a ``PROBE_SCHEMA`` frame); returns the baseline."""
        train = checked_probes(train, "the training frame")
        self._fit(pairs(train))
        self.n_train_ = train.height
        digest = hashlib.sha256(f"{self.name}\x1f{self.rule}\x1f{self.params()!r}".encode())
        for question_id in sorted(train["id"].to_list()):
            digest.update(f"\x1f{question_id}".encode())
        self.fingerprint_ = digest.hexdigest()[:16]
        return self

    def predict(self, probes: pl.DataFrame) -> pl.DataFrame:
        """Score every choice of ``probes`` and pick the best: one ``PREDICTION_SCHEMA`` row per question."""
        if not hasattr(self, "fingerprint_"):
            raise WorkbenchError(f"the {self.name} baseline has not been fitted yet; call fit(train) first")
        probes = checked_probes(probes, "the probe frame")
        choices = pairs(probes)
        scores = np.asarray(self._scores(choices), dtype=np.float64)
        per_question = (
            choices.select("row", score=pl.Series(scores))
            .group_by("row", maintain_order=True)
            .agg(scores=pl.col("score"))
        )
        result = probes.with_columns(
            scores=per_question["scores"],
            model=pl.lit(self.name),
            scorer=pl.lit(SCORER),
            rule=pl.lit(self.rule),
            control=pl.lit("none"),
            fingerprint=pl.lit(self.fingerprint_),
        ).with_columns(pred=pl.col("scores").list.arg_max())
        return conform(
            result.with_columns(correct=pl.col("pred") == pl.col("answer")), PREDICTION_SCHEMA, "predictions"
        )

    def params(self) -> dict:
        """The settings that shape what the baseline learns (part of its fingerprint)."""
        return {}

    def _fit(self, pairs: pl.DataFrame) -> None:
        raise NotImplementedError

    def _scores(self, pairs: pl.DataFrame) -> np.ndarray:
        raise NotImplementedError


def pairs(probes: pl.DataFrame) -> pl.DataFrame:
    """One row per (question, choice): ``row``, ``id``, ``question``, ``choice``, ``position``, ``n_choices``,
    ``gold``."""
    return (
        probes.select(
            pl.int_range(pl.len()).alias("row"),
            "id",
            "question",
            pl.col("choices").alias("choice"),
            pl.int_ranges(pl.col("choices").list.len()).alias("position"),
            pl.col("choices").list.len().alias("n_choices"),
            "answer",
        )
        .explode("choice", "position")
        .with_columns(gold=pl.col("position") == pl.col("answer"))
        .drop("answer")
    )


def checked_probes(probes: pl.DataFrame, what: str) -> pl.DataFrame:
    """``probes`` conformed to ``PROBE_SCHEMA``, refusing an empty frame or questions a baseline cannot use."""
    probes = conform(probes, PROBE_SCHEMA, what)
    if probes.is_empty():
        raise WorkbenchError(f"{what} has no questions; check the file, split or filter that made it")
    bad = probes.filter(
        pl.col("question").is_null()
        | (pl.col("choices").list.len().fill_null(0) < 2)
        | pl.col("choices").list.eval(pl.element().is_null()).list.any()
        | ~pl.col("answer").is_between(0, pl.col("choices").list.len() - 1)
    )
    if not bad.is_empty():
        raise WorkbenchError(
            f"{what} has {len(bad)} questions a baseline cannot use: each needs a question, at least two "
            f"choices and an answer index among them (first: id {bad['id'][0]!r}); fix or drop them"
        )
    return probes


def check_settings(seed: int, C: float | None = None) -> None:
    """Raise a ``SpecError`` for a seed outside 0..2**32-1 or a non-positive regularisation ``C``."""
    if not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise SpecError(f"seed={seed!r} is out of range; use a whole number from 0 to {MAX_SEED}")
    if C is not None and not (isinstance(C, int | float) and C > 0):
        raise SpecError(f"C={C!r} is not allowed; the inverse regularisation strength must be a number above 0")
