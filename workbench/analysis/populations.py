"""The workbench's own population of models: one row of probe scores and original-task accuracy per
scored model or inoculation checkpoint, ready for ``fit_pls``.

- A prediction file (``workbench score`` output, ``PREDICTION_SCHEMA``) gives one row per
  fingerprint (model, scorer, rule, control): its accuracy on each probe in the file(s); rows of ``probe="mcqa"``
  (a science QA set scored like a probe) give its original-task accuracy ``orig``.
- A sweep folder (``workbench sweep`` output) gives one row per (model, scorer, rule, control, seed) over all
  its probe sets, so the random-weights controls of several seeds are several members; a swept inoculation
  checkpoint keeps its trial's k, learning rate, epochs, seed and add-some setting.
- An inoculation run (``workbench inoculate`` output) gives one row per finished trial (baseline
  included): per-probe accuracy from ``trials/<trial>/probe.parquet``, ``orig`` = ``S_orig``, and the
  trial's k, learning rate, epochs, seed and add-some setting.

With ``by_hops=True`` every probe column is split by ISA hop count (``hypernymy_h1``, ``hypernymy_h2``, ...).

>>> population(predictions=["preds/minilm.parquet"], runs=["runs/inoc-hypernymy"])  # doctest: +SKIP
>>> population(sweeps=["sweeps/s1"], by_hops=True)  # doctest: +SKIP
"""

import json
import warnings
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError
from workbench.io import prediction_files, read_predictions
from workbench.schema import PROBES

ORIG = "orig"
"""The column of original-task (science QA) accuracy."""

KEY_COLUMNS: dict[str, pl.DataType] = {
    "unit": pl.String(),  # the member's label: "model [scorer, rule, control]", a sweep's, or "run/trial"
    "origin": pl.String(),  # "scored" or "inoculation"
    "model": pl.String(),  # model name or path (scored), run folder (inoculation)
    "scorer": pl.String(),
    "rule": pl.String(),
    "control": pl.String(),
    "trial": pl.String(),
    "k": pl.Int64(),
    "lr": pl.Float64(),
    "epochs": pl.Int64(),
    "seed": pl.Int64(),
    "add_some": pl.String(),
    "fingerprint": pl.String(),  # the member's identity: the predictions' fingerprint (weights, scorer, rule,
    # control and its seed, way of asking), or run folder and trial
    "source": pl.String(),  # the file(s) or folder(s) it was read from
}


def population(
    predictions: Sequence[str | Path] = (),
    runs: Sequence[str | Path] = (),
    by_hops: bool = False,
    sweeps: Sequence[str | Path] = (),
) -> pl.DataFrame:
    """The population frame for ``fit_pls``: one row per scored model, sweep member and inoculation checkpoint.

    A member is identified by what it is, not by its label: the predictions' ``fingerprint`` (the model's weights,
    scorer, rule, control and its seed, the way of asking), or an inoculation run's folder and trial. Files of one
    member (probe by probe) become one row; two files holding the same probe of one member are refused, naming
    both; two members with one label keep apart, each label followed by ``#`` and its fingerprint's first 8
    characters. A probe a sweep scored from two probe sets is two columns, ``<probe>@<probe set>``, never pooled.

    Parameters
    ----------
    predictions : sequence of str or Path
        Prediction files or folders (``workbench score --out``); one member per fingerprint.
    runs : sequence of str or Path
        Inoculation run folders; one member per finished trial, baseline included.
    by_hops : bool
        One column per probe and ISA hop count (``hypernymy_h1``, ...) instead of one per probe.
    sweeps : sequence of str or Path
        Sweep folders (``workbench sweep --out``); one member per (model, scorer, rule, control, seed).

    Returns
    -------
    polars.DataFrame
        ``KEY_COLUMNS``, then one accuracy column per probe (``definitions``, ``hypernymy``, ``hyponymy``,
        ``synonymy``, ``wordsense``, or ``<probe>_h<k>`` with ``by_hops``) and ``orig``. A probe a member was not
        scored on is null.

    Examples
    --------
    >>> population(runs=["runs/inoc"]).select("trial", "k", "hypernymy", "orig")  # doctest: +SKIP
    >>> population(sweeps=["sweeps/s1"], by_hops=True)  # doctest: +SKIP
    """
    if not predictions and not runs and not sweeps:
        raise WorkbenchError(
            "give prediction files (predictions=[...]), inoculation runs (runs=[...]) or sweep folders (sweeps=[...]) "
            "to build a population from"
        )
    parts = [_scored(read_predictions(p), p, by_hops) for p in prediction_files(predictions)]
    parts += [_inoculated(Path(r), by_hops) for r in runs]
    parts += [_swept(Path(s), by_hops) for s in sweeps]
    parts = [p for p in parts if not p.is_empty()]
    if not parts:
        raise WorkbenchError("the runs hold no finished trials yet; finish them (rerun `workbench inoculate`) first")
    frame = pl.concat(parts, how="diagonal_relaxed")
    frame = frame.with_columns(pl.lit(None, t).alias(c) for c, t in KEY_COLUMNS.items() if c not in frame.columns)
    frame = _distinct_labels(_merged(frame))
    scores = sorted((c for c in frame.columns if c not in KEY_COLUMNS and c != ORIG), key=_score_order)
    return frame.select(
        *[pl.col(c).cast(t) for c, t in KEY_COLUMNS.items()],
        *scores,
        pl.col(ORIG) if ORIG in frame.columns else pl.lit(None, pl.Float64).alias(ORIG),
    )


def _merged(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per member (``fingerprint``): its files' columns together; a score two sources both hold is
    refused, naming them (pooling or picking one would make the number depend on the arguments)."""
    scores = [c for c in frame.columns if c not in KEY_COLUMNS]
    held = frame.group_by("fingerprint").agg(pl.col(c).is_not_null().sum() for c in scores)
    for column in scores:
        if (twice := held.filter(pl.col(column) > 1)).height:
            rows = frame.filter((pl.col("fingerprint") == twice["fingerprint"][0]) & pl.col(column).is_not_null())
            raise WorkbenchError(
                f"{rows['source'][0]} and {rows['source'][1]} both hold {column} of the member "
                f"{rows['unit'][0]!r} (fingerprint {rows['fingerprint'][0]}); give one of them"
            )
    return frame.group_by("fingerprint", maintain_order=True).agg(
        *[pl.col(c).drop_nulls().first() for c in frame.columns if c not in ("fingerprint", "source")],
        pl.col("source").unique(maintain_order=True).str.join("; "),
    )


def _distinct_labels(frame: pl.DataFrame) -> pl.DataFrame:
    """Members sharing a label (two models both named ``minilm``, two seeds of a control in prediction files)
    keep apart: each such label gets `` #`` and the first 8 characters of its fingerprint."""
    shared = pl.col("fingerprint").n_unique().over("unit") > 1
    return frame.with_columns(
        unit=pl.when(shared).then(pl.col("unit") + " #" + pl.col("fingerprint").str.slice(0, 8)).otherwise("unit")
    )


def _accuracy_columns(preds: pl.DataFrame, keys: list[str], by_hops: bool) -> pl.DataFrame:
    """Accuracy per probe (or probe x hops), wide: ``keys`` + one column each; ``mcqa`` becomes ``orig``."""
    column = pl.when(pl.col("probe") == "mcqa").then(pl.lit(ORIG))
    column = column.otherwise(pl.col("probe") + "_h" + pl.col("hops").cast(pl.String) if by_hops else pl.col("probe"))
    long = (
        preds.with_columns(column=column)
        .group_by([*keys, "column"])
        .agg(accuracy=pl.col("correct").cast(pl.Float64).mean())
    )
    return long.pivot(on="column", index=keys, values="accuracy", sort_columns=True)


def _scored(preds: pl.DataFrame, path: Path, by_hops: bool) -> pl.DataFrame:
    keys = ["model", "fingerprint", "scorer", "rule", "control"]
    wide = _accuracy_columns(preds, keys, by_hops)
    return wide.with_columns(
        unit=pl.format("{} [{}, {}, {}]", "model", "scorer", "rule", "control"),
        origin=pl.lit("scored"),
        source=pl.lit(str(path)),
    )


def _swept(folder: Path, by_hops: bool) -> pl.DataFrame:
    from workbench.sweep.plan import changed_since, file_digest, read_record

    records = [r for path in sorted(folder.glob("units/*.json")) if (r := read_record(path)) is not None]
    if not records:
        raise WorkbenchError(f"{folder} holds no finished sweep units (units/*.json); run `workbench sweep` into it")
    if stale := [record["unit"] for record in records if changed_since(record)]:
        warnings.warn(f"{folder}: {len(stale)} unit(s) were scored on model or probe files that have changed since "
                      f"({', '.join(stale[:3])}{', ...' if len(stale) > 3 else ''}): their scores are of the old "
                      f"files; rerun `workbench sweep` on {folder} to score them again", stacklevel=3)  # fmt: skip
    keys = ["model", "fingerprint", "scorer", "rule", "control", "seed"]
    parts = []
    for record in records:
        file = folder / "predictions" / f"{record['unit']}.parquet"
        if not file.is_file() or file_digest(file) != record["file_digest"]:
            raise WorkbenchError(f"{file} is not the file its record {record['unit']}.json names (missing or "
                                 f"changed); rerun `workbench sweep` on {folder} to score it again")  # fmt: skip
        parts.append(read_predictions(file).with_columns(pl.lit(record["seed"], pl.Int64).alias("seed"),
                     model=pl.lit(record["model"]), probe_set=pl.lit(record["probe_set"])))  # fmt: skip
    preds = pl.concat(parts, how="vertical_relaxed")
    shared = (pl.col("probe") != "mcqa") & (pl.col("probe_set").n_unique().over("probe") > 1)
    preds = preds.with_columns(probe=pl.when(shared).then(pl.col("probe") + "@" + pl.col("probe_set"))
                               .otherwise("probe"))  # fmt: skip
    wide = _accuracy_columns(preds, keys, by_hops)
    trials = pl.DataFrame(
        [{"model": r["model"], **json.loads(r["trial"])} for r in records if r.get("trial")],
        schema={"model": pl.String, **{c: KEY_COLUMNS[c] for c in ("trial", "k", "lr", "epochs", "add_some")},
                "seed": pl.Int64},
    ).unique("model").rename({"seed": "trial_seed"})  # fmt: skip
    wide = wide.join(trials, on="model", how="left").with_columns(
        seed=pl.coalesce("trial_seed", "seed"),
        origin=pl.when(pl.col("trial").is_null()).then(pl.lit("scored")).otherwise(pl.lit("inoculation")),
        unit=pl.when(pl.col("control") == "none").then(pl.format("{} [{}, {}]", "model", "scorer", "rule"))
        .otherwise(pl.format("{} [{}, {}, {} seed {}]", "model", "scorer", "rule", "control", "seed")),
        source=pl.lit(str(folder)),
    )  # fmt: skip
    return wide.drop("trial_seed")


def _inoculated(run: Path, by_hops: bool) -> pl.DataFrame:
    from workbench.inoculation.runs import load_run  # here, not at the top: it brings in torch

    trials = load_run(run).filter(pl.col("status").is_in(["ok", "baseline"]))
    parts = []
    for trial in trials.iter_rows(named=True):
        file = run / "trials" / trial["trial"] / "probe.parquet"
        if not file.is_file():
            raise WorkbenchError(
                f"{file} is missing; the run {run} is incomplete (rerun `workbench inoculate` on it to finish)"
            )
        preds = read_predictions(file).with_columns(trial=pl.lit(trial["trial"]))
        parts.append(_accuracy_columns(preds, ["trial"], by_hops))
    if not parts:
        return pl.DataFrame()
    scores = pl.concat(parts, how="diagonal_relaxed")
    return (
        trials.select("trial", "k", "lr", "epochs", "seed", "add_some", pl.col("S_orig").alias(ORIG))
        .join(scores, on="trial")
        .with_columns(
            unit=pl.lit(f"{run.name}/") + pl.col("trial"), origin=pl.lit("inoculation"), model=pl.lit(str(run)),
            scorer=pl.lit("mcqa"), control=pl.lit("none"), source=pl.lit(str(run)),
            fingerprint=pl.lit(f"{run.resolve()}#") + pl.col("trial"),
        )
    )  # fmt: skip


def _score_order(column: str) -> tuple:
    probe, _, hops = column.partition("_h")
    rank = PROBES.index(probe) if probe in PROBES else len(PROBES)
    return (rank, probe, int(hops) if hops.isdigit() else -1)
