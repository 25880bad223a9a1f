"""An annotation batch: a seeded sample of a probe set's questions, each assigned to ``per_question`` of the batch's
``annotators`` places, balanced, none twice to one person, the choices in an order of each person's own.

A batch is a folder: ``batch.json`` (how it was drawn), ``questions.parquet`` (the sampled probe rows, gold
included), ``assignments.parquet`` (place, question, position, choice order) and ``votes.sqlite`` (the annotators
and their votes, ``workbench.annotation.votes``).

>>> batch = create_batch(read_probes("probes/hypernymy"), "annotation/hyp", questions=30, per_question=2,
...                      annotators=3)  # doctest: +SKIP
"""

import functools
import hashlib
import json
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl

from workbench.annotation.store import NAME, connect, create_store
from workbench.errors import WorkbenchError
from workbench.io import (
    check_label,
    check_output,
    hidden_but_ours,
    read_parquet,
    staged_folder,
    write_parquet,
    write_text,
)
from workbench.schema import PROBE_SCHEMA, conform

BATCH_FILE = "batch.json"
QUESTIONS = "questions.parquet"
ASSIGNMENTS = "assignments.parquet"
VOTES = "votes.sqlite"
ANNOTATORS_LIMIT = 10_000
"""The most annotator places a batch may have (``--annotators``)."""
SEED_LIMIT = 2**32
"""Seeds are below this: numpy's and polars' generators take them whole."""
SOURCE_LIMIT = 4096
BATCH_LIMIT = 1 << 20
"""The largest ``batch.json`` read (bytes)."""
ASSIGNMENT_SCHEMA = {"place": pl.Int64, "id": pl.String, "position": pl.Int64, "order": pl.List(pl.Int64)}


@dataclass(frozen=True)
class Batch:
    """An annotation batch folder and how it was drawn (``batch.json``)."""

    folder: Path
    name: str
    per_question: int
    annotators: int
    seed: int
    draw: str
    source: str
    created: str

    @functools.cached_property
    def questions(self) -> pl.DataFrame:
        """The sampled questions (probe rows, gold included; read once: a batch's files never change)."""
        return conform(self._read(QUESTIONS), PROBE_SCHEMA, what=f"the batch's {QUESTIONS}")

    @functools.cached_property
    def assignments(self) -> pl.DataFrame:
        """One row per (place, question): the ``position`` in that person's sequence and the choice ``order``
        they see (indices into the question's choices)."""
        return conform(self._read(ASSIGNMENTS), ASSIGNMENT_SCHEMA, what=f"the batch's {ASSIGNMENTS}")

    def _read(self, name: str) -> pl.DataFrame:
        try:
            return read_parquet(_plain_file(self.folder / name))
        except (OSError, pl.exceptions.PolarsError) as err:
            raise WorkbenchError(
                f"{self.folder / name} cannot be read ({' '.join(str(err).split())[:200]}); the batch folder is "
                "damaged: restore it from a copy (its votes are in votes.sqlite)"
            ) from err

    @property
    def votes_path(self) -> Path:
        return self.folder / VOTES


def _plain_file(path: Path, limit: int | None = None) -> Path:
    """``path`` if it is a regular file (of ``limit`` bytes at most), else an ``OSError`` saying what it is: a FIFO
    put in a batch's place would hang every app page that looks for its batch, a huge file fill the memory."""
    if path.exists() and not path.is_file():
        raise OSError(f"{path.name} is not a regular file")
    if limit is not None and path.is_file() and path.stat().st_size > limit:
        raise OSError(f"{path.name} is over {limit:,} bytes; a batch's is a few hundred")
    return path


def draw_sample(probes: pl.DataFrame, questions: int, seed: int = 0, clusters: bool = False) -> pl.DataFrame:
    """``questions`` questions of ``probes`` at random (seeded), or with ``clusters`` whole clusters at random up to
    that many questions (every question of each cluster drawn)."""
    if questions < 1:
        raise WorkbenchError(f"--questions {questions}: a sample needs one question or more")
    if not clusters:
        return probes.sample(min(questions, probes.height), seed=seed, shuffle=True)
    sizes = probes.group_by("cluster_id").len().sort("cluster_id").sample(fraction=1.0, shuffle=True, seed=seed)
    kept = sizes.filter(pl.col("len").cum_sum() <= questions)["cluster_id"]
    if kept.is_empty():
        raise WorkbenchError(
            f"every cluster holds more than {questions} questions; ask for more (the smallest holds "
            f"{sizes['len'].min()}) or draw questions rather than whole clusters"
        )
    return probes.filter(pl.col("cluster_id").is_in(kept.implode()))


def assign(ids: list[str], annotators: int, per_question: int, seed: int = 0) -> pl.DataFrame:
    """Each question to ``per_question`` distinct places of ``annotators``, balanced (places' loads differ by one
    at most), each place's questions in an order of its own (seeded)."""
    if not 1 <= per_question <= annotators:
        raise WorkbenchError(
            f"--per-question {per_question} with --annotators {annotators}: each question needs that many distinct "
            "people, so give at least as many annotators as votes per question (and one vote or more)"
        )
    rng = np.random.default_rng(seed)
    shuffled = [ids[i] for i in rng.permutation(len(ids))]
    rows = [
        (place, question)
        for index, question in enumerate(shuffled)
        for place in ((index * per_question + j) % annotators for j in range(per_question))
    ]
    pairs = pl.DataFrame(rows, schema={"place": pl.Int64, "id": pl.String}, orient="row")
    keys = pairs.select(pl.concat_str(pl.lit(f"{seed}:"), "place", pl.lit(":"), "id").hash(seed).alias("key"))
    return (
        pairs.with_columns(keys)
        .sort("place", "key")
        .with_columns(position=pl.int_range(pl.len()).over("place"))
        .drop("key")
    )


def choice_order(n_choices: int, place: int, question: str, seed: int = 0) -> list[int]:
    """The order in which ``place`` sees a question's choices (indices), seeded by the batch, place and question."""
    digest = hashlib.sha256(f"{seed}:{place}:{question}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big")).permutation(n_choices).tolist()


def create_batch(
    probes: pl.DataFrame,
    out: str | Path,
    questions: int,
    per_question: int = 3,
    annotators: int = 3,
    seed: int = 0,
    clusters: bool = False,
    source: str = "",
) -> "Batch":
    """Draw a sample of ``probes``, assign it and write the batch folder ``out`` (a new or empty folder).

    ``per_question``: votes each question gets (distinct people); ``annotators``: the places people take with
    ``workbench annotate link``; ``clusters``: draw whole clusters rather than random questions.
    """
    out = Path(out)
    check_label(out.name, "the batch's folder name (its name, shown to every annotator)", file_name=True)
    if not 1 <= annotators <= ANNOTATORS_LIMIT:
        raise WorkbenchError(f"--annotators {annotators}: give 1 to {ANNOTATORS_LIMIT:,} places")
    if not 0 <= seed < SEED_LIMIT:
        raise WorkbenchError(f"--seed {seed}: give a seed from 0 to {SEED_LIMIT - 1}")
    if out.exists() and any(not hidden_but_ours(child.name) for child in out.iterdir()):
        raise WorkbenchError(f"{out} is not empty; an annotation batch is written into a new (or empty) folder")
    check_output(out, folder=True)
    probes = conform(probes, PROBE_SCHEMA, what="probe frame")
    sample = draw_sample(probes, questions, seed, clusters).sort("id")
    if sample["id"].n_unique() != sample.height:
        raise WorkbenchError("the probe set holds a question id twice; rebuild it or pass a file of one set")
    table = assign(sample["id"].to_list(), annotators, per_question, seed)
    sizes = dict(zip(sample["id"], sample["choices"].list.len(), strict=True))
    orders = [choice_order(sizes[q], p, q, seed) for p, q in zip(table["place"], table["id"], strict=True)]
    table = table.with_columns(order=pl.Series(orders, dtype=pl.List(pl.Int64)))
    record = {
        "name": out.name, "per_question": per_question, "annotators": annotators, "seed": seed,
        "draw": "clusters" if clusters else "questions", "source": source,
        "created": datetime.now(UTC).isoformat(timespec="seconds"), "questions": sample.height,
    }  # fmt: skip
    with staged_folder(out) as staging:
        write_parquet(sample, staging / QUESTIONS)
        write_parquet(table, staging / ASSIGNMENTS)
        create_store(staging / VOTES)
        write_text(json.dumps(record, indent=2) + "\n", staging / BATCH_FILE)
    return open_batch(out)


def open_batch(folder: str | Path) -> Batch:
    """The batch in ``folder`` (written by ``create_batch``), validated whole before any use: ``batch.json``'s
    fields (typed and bounded), its questions, its assignments (each question to ``per_question`` distinct places
    below ``annotators``, each order a permutation of the question's choices) and its people. A hand-edited or
    damaged batch is refused in one line naming the field and the fix (issue 60: ``per_question: 0`` was read)."""
    folder = Path(folder)
    try:
        record = json.loads(_plain_file(folder / BATCH_FILE, BATCH_LIMIT).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WorkbenchError(
            f"{folder} is not an annotation batch (no {BATCH_FILE}); make one with `workbench annotate sample`"
        ) from None
    except (OSError, ValueError, RecursionError) as err:
        raise WorkbenchError(
            f"{folder / BATCH_FILE} cannot be read ({' '.join(str(err).split())[:200]}); the batch folder is damaged"
        ) from err
    batch = Batch(folder=folder, **_fields(record, folder / BATCH_FILE))
    _check_files(batch, record.get("questions"))
    return batch


def _fields(record: object, file: Path) -> dict:
    """``batch.json``'s fields, each of its type and within its bounds, else one line naming the first that is not."""
    kinds = {"name": str, "per_question": int, "annotators": int, "seed": int, "draw": str, "source": str,
             "created": str}  # fmt: skip
    record = record if isinstance(record, dict) else {}
    wrong = [key for key, kind in kinds.items() if type(record.get(key)) is not kind]  # a bool is no count
    if wrong:
        raise WorkbenchError(
            f"{file} lacks {', '.join(wrong)} (or holds another kind of value): the batch folder is "
            "damaged; restore batch.json from a copy"
        )
    fields = {key: record[key] for key in kinds}
    check_label(fields["name"], f"the name in {file}")
    bounds = {
        "annotators": (1 <= fields["annotators"] <= ANNOTATORS_LIMIT, f"1 to {ANNOTATORS_LIMIT:,}"),
        "per_question": (1 <= fields["per_question"] <= fields["annotators"], "1 to its annotators"),
        "seed": (0 <= fields["seed"] < SEED_LIMIT, f"0 to {SEED_LIMIT - 1}"),
        "draw": (fields["draw"] in ("questions", "clusters"), "questions or clusters"),
        "source": (len(fields["source"]) <= SOURCE_LIMIT, f"a path of {SOURCE_LIMIT:,} characters at most"),
        "created": (_timestamp(fields["created"]), "an ISO date and time"),
    }
    for key, (held, allowed) in bounds.items():
        if not held:
            raise WorkbenchError(f"{file}: {key} is {str(fields[key])[:80]!r}, not {allowed}: the batch was edited "
                                 "by hand or damaged; restore batch.json from a copy")  # fmt: skip
    return fields


def _timestamp(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _check_files(batch: Batch, count: object) -> None:
    """Refuse a batch whose questions and assignments do not agree with each other or with ``batch.json``."""
    questions, table = batch.questions, batch.assignments
    where = f"{batch.folder}: the batch's files disagree"
    fix = "restore the batch folder from a copy (its votes are in votes.sqlite)"
    if questions.is_empty() or questions["id"].n_unique() != questions.height:
        raise WorkbenchError(f"{where}: {QUESTIONS} is empty or holds a question id twice; {fix}")
    if type(count) is int and count != questions.height:
        raise WorkbenchError(f"{where}: {BATCH_FILE} says {count:,} questions, {QUESTIONS} holds "
                             f"{questions.height:,}; {fix}")  # fmt: skip
    sizes = questions.select("id", n=pl.col("choices").list.len())
    joined = table.join(sizes, on="id", how="left")
    per_question = table.group_by("id").agg(places=pl.col("place").n_unique(), rows=pl.len())
    problems = {
        f"an assignment names a question {QUESTIONS} does not hold": joined["n"].null_count() > 0,
        f"an assignment's place is outside 0 to {batch.annotators - 1} (annotators {batch.annotators})": (
            table.filter(~pl.col("place").is_between(0, batch.annotators - 1)).height > 0
        ),
        f"a question is not assigned to exactly {batch.per_question} distinct places (per_question)": (
            per_question.height != questions.height
            or per_question.filter((pl.col("places") != batch.per_question) | (pl.col("rows") != pl.col("places")))
            .height > 0
        ),
        "a choice order is not a permutation of its question's choices": (
            joined.drop_nulls("n")
            .filter(pl.col("order").list.sort() != pl.int_ranges(0, pl.col("n"), dtype=pl.Int64))
            .height > 0
        ),
    }  # fmt: skip
    for problem, found in problems.items():
        if found:
            raise WorkbenchError(f"{where}: {problem}; {fix}")
    with connect(batch.votes_path) as db:
        people = db.execute("SELECT place, name FROM annotators").fetchall()
    for place, name in people:  # a person's name reaches pages and terminals: held to what `annotate link` takes
        if type(place) is not int or not 0 <= place < batch.annotators or not NAME.fullmatch(str(name)):
            raise WorkbenchError(f"{batch.votes_path}: the annotator {str(name)[:64]!r} at place {place} is not one "
                                 f"`annotate link` gives (annotators {batch.annotators}); {fix}")  # fmt: skip


def batches(home: Path | None = None) -> list[Batch]:
    """The annotation batches of the workspace (``<workspace>/annotation/*``), by name; a damaged one is passed over
    with a warning naming it, so the others' links still open."""
    from workbench.paths import workspace_path

    root = workspace_path("annotation", home)
    found = []
    for folder in sorted(path.parent for path in root.glob(f"*/{BATCH_FILE}")) if root.is_dir() else []:
        try:
            found.append(open_batch(folder))
        except WorkbenchError as err:
            warnings.warn(f"an annotation batch is passed over: {err}", stacklevel=2)
    return found
