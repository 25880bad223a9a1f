"""The population's answers as one long frame: one row per member and question, right or wrong.

A member is what the predictions' ``fingerprint`` names (weights, scorer, rule, control and its seed, way of
asking; a person of ``annotate people --each``), or an inoculation run's trial. A question is its content
(``QUESTION_KEY``: probe, context, stem, choices and answer), not its id: released files reuse ids, and two probe
sets holding one question share it.

>>> responses(predictions=["preds/minilm.parquet", "preds/random.parquet"])  # doctest: +SKIP
"""

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError
from workbench.io import prediction_files, read_predictions

QUESTION_KEY = ("probe", "context", "question", "choices", "answer")
"""What a question is for a fit: two rows with these equal are one question, whatever their ids."""
FACTORS = ("hops", "distractor_family", "distractor_depth")
"""The design factors every prediction row carries (the explanatory model may add more)."""
RESPONSE_SCHEMA: dict[str, pl.DataType] = {
    "member": pl.String(),  # the member's identity: fingerprint, or run folder # trial
    "label": pl.String(),  # its readable name
    "source": pl.String(),  # the file or folder it was read from
    "item": pl.String(),  # the question's content key (item_key)
    "id": pl.String(),
    "probe": pl.String(),
    "choices": pl.Int64(),  # how many choices (the 3PL guessing floor is 1 / choices)
    "hops": pl.Int64(),
    "distractor_family": pl.String(),
    "distractor_depth": pl.Int64(),
    "concept": pl.String(),
    "word": pl.String(),
    "question": pl.String(),
    "right": pl.Boolean(),
}
FAMILY = r"^(.+?)(?:/| \[|$)"
"""A member's family, the model its label starts with: the model name before its ``[scorer, rule, control]`` (a
model's random-weights and static controls share it) or before a ``/`` (an inoculation checkpoint
``<run>/<trial>`` belongs to its run's name: name a run after the model it trains)."""
MIN_SHARED = 20
"""Fewest questions two members must share before identical scores on all of them count as one model twice."""


def item_key(frame: pl.DataFrame) -> pl.Expr:
    """A question's content key: the first 16 hex digits of a hash of ``QUESTION_KEY`` (stable across runs)."""
    content = pl.struct(*QUESTION_KEY).struct.json_encode()
    return content.map_batches(_digests, return_dtype=pl.String)


def _digests(texts: pl.Series) -> pl.Series:
    import hashlib

    return pl.Series([hashlib.sha256(text.encode()).hexdigest()[:16] for text in texts], dtype=pl.String)


def as_responses(preds: pl.DataFrame, member: pl.Expr, label: pl.Expr, source: str) -> pl.DataFrame:
    """``preds`` (``PREDICTION_SCHEMA``) as response rows of the members ``member`` names."""
    return preds.select(
        member.alias("member"), label.alias("label"), pl.lit(source).alias("source"),
        item_key(preds).alias("item"), "id", "probe", pl.col("choices").list.len().cast(pl.Int64).alias("choices"),
        "hops", "distractor_family", "distractor_depth", "concept", "word", "question",
        pl.col("correct").alias("right"), pl.col("scores"),
    )  # fmt: skip


def responses(
    predictions: Sequence[str | Path] = (),
    sweeps: Sequence[str | Path] = (),
    runs: Sequence[str | Path] = (),
) -> pl.DataFrame:
    """The population's answers, ``RESPONSE_SCHEMA``: prediction files or folders (one member per fingerprint,
    people of ``annotate people --each`` included), sweep folders (one per model, control and seed) and inoculation
    runs (one per finished trial). Refused, in one line: a member that answered a question twice (a model given
    twice), two members with identical scores on every question they share (one model under two names), a
    response without an answer."""
    parts = [_from_file(path) for path in prediction_files(predictions)]
    parts += [_from_file(path) for folder in sweeps for path in _sweep_files(Path(folder))]
    parts += [part for run in runs for part in _from_run(Path(run))]
    if not parts:
        raise WorkbenchError("give prediction files, sweep folders (--sweep) or inoculation runs (--run) to fit")
    frame = pl.concat(parts, how="vertical_relaxed")
    shared = pl.col("member").n_unique().over("label") > 1  # two seeds of a control: told apart by fingerprint
    frame = frame.with_columns(label=pl.when(shared).then(pl.col("label") + " #" + pl.col("member").str.slice(0, 8))
                               .otherwise("label"))  # fmt: skip
    _check_once(frame)
    _check_distinct(frame)
    if (unanswered := frame.filter(pl.col("right").is_null())).height:
        row = unanswered.row(0, named=True)
        raise WorkbenchError(f"{row['label']} ({row['source']}) has {unanswered.height} question(s) without an "
                             "answer (correct is null); score them again or leave that member out")  # fmt: skip
    return frame.select(list(RESPONSE_SCHEMA))


def _from_file(path: Path) -> pl.DataFrame:
    preds = read_predictions(path)
    label = pl.format("{} [{}, {}, {}]", "model", "scorer", "rule", "control")
    return as_responses(preds, pl.col("fingerprint"), label, str(path))


def _from_run(run: Path) -> list[pl.DataFrame]:
    from workbench.inoculation.runs import load_run  # here: it brings in torch

    trials = load_run(run).filter(pl.col("status").is_in(["ok", "baseline"]))
    parts = []
    for trial in trials["trial"]:
        file = run / "trials" / trial / "probe.parquet"
        if not file.is_file():
            raise WorkbenchError(f"{file} is missing; finish the run (rerun `workbench inoculate` on {run})")
        preds = read_predictions(file)
        parts.append(as_responses(preds, pl.lit(f"{run.resolve()}#{trial}"), pl.lit(f"{run.name}/{trial}"), str(run)))
    return parts


def _sweep_files(folder: Path) -> list[Path]:
    files = sorted((folder / "predictions").glob("*.parquet"))
    if not files:
        raise WorkbenchError(
            f"{folder} holds no sweep predictions (predictions/*.parquet); run `workbench sweep` first"
        )
    return files


def _check_once(frame: pl.DataFrame) -> None:
    twice = frame.filter(pl.len().over("member", "item") > 1)
    if twice.height:
        first = twice.filter(pl.col("item") == twice["item"][0], pl.col("member") == twice["member"][0])
        sources = first["source"].unique(maintain_order=True).to_list()
        where = " and ".join(sources) if len(sources) > 1 else f"{sources[0]} (twice)"
        raise WorkbenchError(f"{first['label'][0]} answered question {first['id'][0]} twice, in {where}: the same "
                             "model given twice; give each member once")  # fmt: skip


def _check_distinct(frame: pl.DataFrame) -> None:
    """Two members (fingerprints) whose scores agree on every one of at least ``MIN_SHARED`` shared questions are
    one model under two names (a copied file, a renamed folder): refused, since it would count twice."""
    scores = frame.select("member", "label", "item", pl.col("scores").cast(pl.List(pl.String)).list.join(","))
    signature = (
        scores.sort("item")
        .group_by("member", maintain_order=True)
        .agg("label", pl.col("item").alias("items"), pl.col("scores").alias("all"))
    )
    signature = signature.with_columns(digest=pl.concat_list("items", "all").list.join("|").hash())
    same = signature.filter(pl.len().over("digest") > 1, pl.col("items").list.len() >= MIN_SHARED)
    if same.height:
        row = same.filter(pl.col("digest") == same["digest"][0])
        raise WorkbenchError(f"{row['label'][0][0]} and {row['label'][1][0]} gave identical scores on all "
                             f"{row['items'][0].len()} questions: the same model twice; give one of them")  # fmt: skip
