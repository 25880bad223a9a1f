"""Adaptive runs' prediction files read back as what they are: an estimate of accuracy on the whole set.

An adaptive run (``workbench score --adaptive N --irt FIT``) writes the predictions of the questions it asked only,
chosen by information (not at random), and the estimate in the file's Parquet metadata (``adaptive.ESTIMATE_KEY``).
``read_predictions`` stacks frames, which carry no metadata, so report, compare, the dashboard and publish read the
estimate here, by path, and show it in place of the asked questions' accuracy.

    >>> found = estimates(["minilm-adaptive.parquet", "minilm.parquet"])  # doctest: +SKIP
    >>> print("\\n".join(estimate_lines(found[0])))                        # doctest: +SKIP
"""

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from workbench import markup
from workbench.errors import WorkbenchError
from workbench.irt.adaptive import read_estimate

NOT_FROM_AN_ESTIMATE = ("strict cluster accuracy, bootstrap intervals and paired (McNemar) tests need every question "
                        "answered: not computed from an adaptive estimate")  # fmt: skip
"""The one line said where a statistic cannot be computed honestly from an estimate."""
NOT_PAIRED = ("B minus A not computed: paired (McNemar) tests and the cluster bootstrap need both models' answers "
              "to the same questions; an adaptive run answered only those it asked: compare the estimates")  # fmt: skip
"""``workbench compare``'s one line where A or B is an adaptive estimate."""


@dataclass(frozen=True)
class Estimate:
    """An adaptive run's file: ``asked`` questions of ``questions``; ``probes``: estimated accuracy per probe with
    its 95 % interval (``accuracy``, ``lo``, ``hi``, ``questions``, ``asked``); ``cells``: the same per probe x
    hops x distractor family."""

    path: Path
    model: str
    asked: int
    theta: float
    theta_se: float
    probes: pl.DataFrame
    cells: pl.DataFrame

    @property
    def questions(self) -> int:
        return int(self.probes["questions"].sum())

    def headline(self) -> str:
        """One line: whose estimate, from how many of how many questions."""
        return (f"{self.model} ({self.path.name}): adaptive estimate from {self.asked} asked questions of "
                f"{self.questions} (ability {self.theta:+.2f} ± {self.theta_se:.2f}); the asked questions were chosen "
                "by information, so their own accuracy is not the model's")  # fmt: skip


def estimates(paths: Iterable[str | Path]) -> list[Estimate]:
    """The adaptive runs among the prediction files ``paths``, their estimates read from each file's metadata."""
    from workbench import metrics
    from workbench.io import read_predictions

    found = []
    for path in map(Path, paths):
        try:
            value = read_estimate(path) if path.is_file() else None
        except (pl.exceptions.PolarsError, OSError):  # not Parquet: read_predictions says so in one line
            value = None
        if value is not None:
            model = metrics.model_labels(read_predictions(path))["label"].to_list()[0]
            found.append(Estimate(path, model, int(value["asked"]), float(value["theta"]), float(value["theta_se"]),
                                  pl.DataFrame(value["estimate"]), pl.DataFrame(value["cells"])))  # fmt: skip
    return found


def full_runs(paths: Iterable[str | Path]) -> list[Path]:
    """The prediction files among ``paths`` that are not adaptive runs' (whose accuracy is measured)."""
    files = [Path(path) for path in paths]
    adaptive = {e.path for e in estimates(files)}
    return [path for path in files if path not in adaptive]


def refuse_mixed(paths: Iterable[str | Path], found: list[Estimate], where: str) -> None:
    """Refuse full runs given with adaptive ones: one page cannot hold measured and estimated accuracy as alike."""
    full = [Path(path).name for path in paths if Path(path) not in {e.path for e in found}]
    if found and full:
        raise WorkbenchError(f"{found[0].path.name} is an adaptive estimate and {full[0]} a full run; give "
                             f"{where} the adaptive files apart from the full runs")  # fmt: skip


def estimate_lines(estimate: Estimate) -> list[str]:
    """The estimate as text: its headline, each probe's estimated accuracy and interval, then each cell's."""
    lines = [estimate.headline()]
    for r in estimate.probes.iter_rows(named=True):
        lines.append(f"  {r['probe']}: estimated accuracy {r['accuracy']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}] over "
                     f"{r['questions']} questions, {r['asked']} asked")  # fmt: skip
    lines.append("  per probe x hops x distractor family:")
    for r in estimate.cells.iter_rows(named=True):
        lines.append(f"    {r['probe']} {r['hops']} hops x {r['distractor_family']}: {r['accuracy']:.3f} "
                     f"[{r['lo']:.3f}, {r['hi']:.3f}] ({r['questions']} questions, {r['asked']} asked)")  # fmt: skip
    return lines


def measured_lines(path: str | Path) -> list[str]:
    """A full run's accuracy per probe as text, to read beside an estimate (``workbench compare``)."""
    from workbench import metrics
    from workbench.io import read_predictions

    preds = read_predictions(path)
    lines = [f"{metrics.model_labels(preds)['label'][0]} ({Path(path).name}): full run, every question answered"]
    for r in preds.group_by("probe").agg(pl.col("correct").mean(), pl.len()).sort("probe").iter_rows(named=True):
        lines.append(f"  {r['probe']}: accuracy {r['correct']:.3f} over {r['len']} questions")
    return lines


def estimate_text(found: list[Estimate]) -> str:
    """The text report of adaptive files: each estimate's lines, and what is not computed from them."""
    return "\n".join([line for e in found for line in estimate_lines(e)] + [NOT_FROM_AN_ESTIMATE]) + "\n"


def estimate_json(found: list[Estimate]) -> dict:
    """The JSON report of adaptive files: ``estimates`` (each file's, per probe and per cell) and ``not_computed``."""
    return {
        "estimates": [
            {"file": e.path.name, "model": e.model, "adaptive": True, "asked": e.asked, "questions": e.questions,
             "theta": e.theta, "theta_se": e.theta_se, "by_probe": e.probes.to_dicts(), "cells": e.cells.to_dicts()}
            for e in found
        ],
        "not_computed": NOT_FROM_AN_ESTIMATE,
    }  # fmt: skip


def estimate_html(found: list[Estimate]) -> str:
    """The estimates as HTML: each file's headline and tables (every value escaped), and what is not computed."""
    parts_html = []
    for e in found:
        parts_html.append(f'<p class="wb-estimate"><b>{markup.text(e.headline())}</b></p>')
        parts_html.append(_table_html(e.probes, ["probe"]))
        parts_html.append(_table_html(e.cells, ["probe", "hops", "distractor_family"]))
    parts_html.append(f"<p>{markup.text(NOT_FROM_AN_ESTIMATE)}.</p>")
    return "\n".join(parts_html)


def _table_html(frame: pl.DataFrame, keys: list[str]) -> str:
    """Estimated accuracy and its 95 % interval per ``keys``, every cell escaped."""
    head_html = "".join(f"<th>{markup.text(name)}</th>" for name in [*keys, "estimated accuracy [95%]", "asked"])
    rows_html = "".join(
        "<tr>" + "".join(f"<td>{markup.text(r[key])}</td>" for key in keys)
        + f"<td>{r['accuracy']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}]</td>"
        + f"<td>{r['asked']:,} of {r['questions']:,}</td></tr>"
        for r in frame.iter_rows(named=True)
    )  # fmt: skip
    return f"<table><thead><tr>{head_html}</tr></thead><tbody>{rows_html}</tbody></table>"
