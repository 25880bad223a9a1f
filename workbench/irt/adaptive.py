"""Adaptive probing: ask a model the questions that tell most about its ability, stop when the ability is known.

Each next question is the unasked one of maximum Fisher information at the current ability estimate (EAP over
the answers so far, item parameters fixed from a fit); the run stops after ``n`` questions or once the ability's
standard error is at most ``se``. The estimate of accuracy on the whole set counts the asked questions as
answered and each unasked one as a right answer with its probability, over the ability's posterior (the
posterior predictive); its 95 % interval holds both the ability's uncertainty and each unasked answer's chance.

>>> result = adaptive(fit, probes, ask=lambda rows: wb.score(rows, model, progress=False), n=50)  # doctest: +SKIP
>>> result.estimate  # per probe; result.cells per probe x hops x distractor family          # doctest: +SKIP
"""

import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from workbench.errors import WorkbenchError
from workbench.irt import model as irt_model
from workbench.irt.fit import in_fit
from workbench.irt.model import Z95

ESTIMATE_KEY = "workbench_irt_estimate"
"""The key of a prediction file's Parquet metadata that marks it as an adaptive run's (its value: the estimate)."""


@dataclass(frozen=True)
class AdaptiveResult:
    """``asked``: the model's predictions on the questions asked, in the order asked; ``estimate``: estimated
    accuracy per probe on the whole set with a 95 % interval; ``cells``: the same per probe x hops x distractor
    family; ``theta``/``theta_se``: the final ability."""

    asked: pl.DataFrame
    estimate: pl.DataFrame
    cells: pl.DataFrame
    theta: float
    theta_se: float

    def metadata(self) -> dict[str, str]:
        """The prediction file's metadata saying that its accuracy is an estimate, and what it is."""
        value = {"theta": self.theta, "theta_se": self.theta_se, "asked": self.asked.height,
                 "estimate": self.estimate.to_dicts(), "cells": self.cells.to_dicts()}  # fmt: skip
        return {ESTIMATE_KEY: json.dumps(value)}


def adaptive(
    fit,
    probes: pl.DataFrame,
    ask: Callable[[pl.DataFrame], pl.DataFrame],
    n: int,
    se: float | None = None,
) -> AdaptiveResult:
    """Ask ``ask`` (probe rows -> their predictions) at most ``n`` of ``probes``' questions that ``fit`` holds,
    most informative first, stopping early once the ability's standard error is at most ``se``.

    Refused as ``askable`` refuses.
    """
    known = askable(fit, probes, n)
    a, b, floor = (known[name].to_numpy() for name in ("a", "b", "floor"))
    asked: list[int] = []
    answers: list[pl.DataFrame] = []
    theta, sd = 0.0, 1.0
    while len(asked) < n and (not asked or se is None or sd > se):
        info = irt_model.information(theta, a, b, floor)
        info[asked] = -np.inf
        index = int(np.argmax(info))
        asked.append(index)
        answers.append(ask(known[index].drop("item", "a", "b", "floor")))
        right = pl.concat(answers)["correct"].cast(pl.Float64).to_numpy()
        post = irt_model.posterior(right[None, :], np.ones((1, len(asked)), bool), a[asked], b[asked],
                                   floor[asked])[0]  # fmt: skip
        theta, sd = map(float, irt_model.moments(post))
    predictions = pl.concat(answers)
    p = irt_model.probability(irt_model.GRID, a, b, floor)  # grid x questions
    observed = _set(np.full(known.height, np.nan), asked, right)

    def per(keys: list[str]) -> pl.DataFrame:
        groups = known.with_row_index("at").group_by(keys, maintain_order=True).agg("at").sort(keys)
        rows = [_predictive(np.asarray(at), observed, p, post) for at in groups["at"]]
        columns = ["accuracy", "lo", "hi", "questions", "asked"]
        return pl.concat([groups.drop("at"), pl.DataFrame(rows, schema=columns, orient="row")], how="horizontal")

    return AdaptiveResult(predictions, per(["probe"]), per(["probe", "hops", "distractor_family"]), theta, sd)


def _predictive(at: np.ndarray, observed: np.ndarray, p: np.ndarray, post: np.ndarray) -> tuple:
    """Accuracy on the questions ``at`` (the posterior predictive mean) with its 95 % interval: the asked ones as
    answered, each unasked one a right answer with its probability, over the ability's whole posterior (so the
    interval holds both the ability's uncertainty and the unasked answers' own chance)."""
    seen = ~np.isnan(observed[at])
    unasked = p[:, at[~seen]]
    mean_g, var_g = unasked.sum(axis=1), (unasked * (1 - unasked)).sum(axis=1)  # per ability on the grid
    mean = float(post @ mean_g)
    spread = np.sqrt(max(float(post @ (var_g + mean_g**2)) - mean**2, 0.0))
    n, right = len(at), float(observed[at][seen].sum())
    low, high = (right + mean - Z95 * spread) / n, (right + mean + Z95 * spread) / n
    return (right + mean) / n, max(low, 0.0), min(high, 1.0), n, int(seen.sum())


def askable(fit, probes: pl.DataFrame, n: int) -> pl.DataFrame:
    """The rows of ``probes`` the fit holds (``in_fit``), checked before a model is loaded or a file locked.

    Refused: ``n`` above them, or below one, and as ``fit.in_fit`` refuses (another probe set, a question changed
    since the fit).
    """
    known = in_fit(fit, probes)
    if n > known.height:
        raise WorkbenchError(f"--adaptive {n} is more than the {known.height} questions of the probe set the fit "
                             f"holds; give at most {known.height}, or score the set whole")  # fmt: skip
    if n < 1:
        raise WorkbenchError(f"--adaptive {n}: ask at least one question")
    return known


def _set(values: np.ndarray, index: list[int], to) -> np.ndarray:
    values = values.copy()
    values[index] = to
    return values


def read_estimate(path) -> dict | None:
    """The estimate a prediction file of an adaptive run carries (``ESTIMATE_KEY``), or None for a full run's."""
    metadata = pl.read_parquet_metadata(path)
    return json.loads(metadata[ESTIMATE_KEY]) if ESTIMATE_KEY in metadata else None
