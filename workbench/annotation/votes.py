"""The votes of an annotation batch in SQLite: the annotators (a personal token each, kept as its SHA-256) and one
row per vote, append-only.

Each vote is committed before the page moves on (``workbench.annotation.store``). A double submission (a second
click, a resent request, the same question answered from two tabs) counts once: the first vote of a person on a
question is kept.

>>> token = add_annotator(batch, "alice")  # doctest: +SKIP
>>> record_vote(batch, Vote(annotator="alice", question="hypernymy-00a1", choice=2, shown=1, order=[2, 0, 1, 3, 4]))
... # doctest: +SKIP
"""

import hashlib
import json
import re
import secrets
import warnings
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from workbench.annotation.batch import Batch, batches
from workbench.annotation.store import NAME, connect
from workbench.errors import WorkbenchError

FLAGS = {
    "also-right": "another choice is also right",
    "none-right": "no choice is right",
    "unclear": "the question is unclear",
}
"""The flags an annotator may raise on a question, by key."""
COMMENT_LIMIT = 2000
"""The most characters of a vote's comment (from the app or an import)."""
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""The control characters a comment may not hold: all but line breaks and tabs."""
VOTE_SCHEMA = {
    "annotator": pl.String, "place": pl.Int64, "id": pl.String, "choice": pl.Int64, "shown": pl.Int64,
    "order": pl.List(pl.Int64), "flags": pl.List(pl.String), "comment": pl.String, "seconds": pl.Float64,
    "at": pl.String, "source": pl.String,
}  # fmt: skip
"""A frame of votes: ``choice`` indexes the question's choices as stored (not as shown); ``shown`` is the 1-based
position the person clicked; ``order`` the choice order they saw; ``source`` ``app``, ``library`` or an import's."""


@dataclass(frozen=True)
class Annotator:
    """A person of a batch: their place (which questions they get) and name."""

    batch: Batch
    place: int
    name: str


@dataclass(frozen=True)
class Vote:
    """One person's answer to one question; ``choice`` indexes the stored choices."""

    annotator: str
    question: str
    choice: int
    shown: int
    order: list[int]
    flags: list[str] = field(default_factory=list)
    comment: str = ""
    seconds: float | None = None
    source: str = "library"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_annotator(batch: Batch, name: str) -> str:
    """Give ``name`` the batch's next free place and a new personal token, returned (only its digest is kept).

    A name already in the batch keeps its place and votes and gets a new token: the old link stops working.
    """
    if not NAME.fullmatch(name):
        raise WorkbenchError(
            f"{name!r} is not a usable annotator name; use letters, digits, '.', '_', '-' or '@' (64 at most)"
        )
    token = secrets.token_urlsafe(18)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    with connect(batch.votes_path) as db:
        db.execute("BEGIN IMMEDIATE")
        try:
            known = db.execute("SELECT place FROM annotators WHERE name = ?", (name,)).fetchone()
            if known:
                db.execute("UPDATE annotators SET token_sha256 = ? WHERE name = ?", (digest(token), name))
            else:
                taken = db.execute("SELECT COUNT(*) FROM annotators").fetchone()[0]
                if taken >= batch.annotators:
                    raise WorkbenchError(
                        f"the batch {batch.name} has {batch.annotators} annotator places and all are taken; "
                        "draw a batch with more --annotators, or give a new link to a name already in it"
                    )
                db.execute("INSERT INTO annotators VALUES (?, ?, ?, ?)", (taken, name, digest(token), now))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return token


def annotators(batch: Batch) -> pl.DataFrame:
    """The batch's annotators: place, name, when their place was taken."""
    with connect(batch.votes_path) as db:
        rows = db.execute("SELECT place, name, created FROM annotators ORDER BY place").fetchall()
    return pl.DataFrame(rows, schema={"place": pl.Int64, "name": pl.String, "created": pl.String}, orient="row")


def find_annotator(token: str, home: Path | None = None) -> Annotator | None:
    """The annotator whose personal token is ``token``, in any batch of the workspace (None if none)."""
    if not token:
        return None
    held = digest(token)
    for batch in batches(home):
        try:
            with connect(batch.votes_path) as db:
                row = db.execute("SELECT place, name FROM annotators WHERE token_sha256 = ?", (held,)).fetchone()
        except WorkbenchError as err:  # one damaged batch must not close every other batch's links
            warnings.warn(f"an annotation batch is passed over: {err}", stacklevel=2)
            continue
        if row:
            return Annotator(batch, *row)
    return None


def known_votes(questions: pl.DataFrame, votes: pl.DataFrame) -> pl.DataFrame:
    """``votes``, refused where some are for no question of ``questions`` (a batch's questions file replaced by
    another's would otherwise drop those votes without a word)."""
    strangers = votes.filter(~pl.col("id").is_in(questions["id"].implode()))
    if strangers.height:
        raise WorkbenchError(
            f"{strangers.height:,} of {votes.height:,} votes are for questions the batch does not hold (first: id "
            f"{strangers['id'][0]!r}): its questions.parquet was replaced; restore the batch folder from a copy"
        )
    return votes


def annotator(batch: Batch, name: str) -> Annotator:
    """The annotator ``name`` of ``batch``."""
    with connect(batch.votes_path) as db:
        row = db.execute("SELECT place FROM annotators WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise WorkbenchError(f"{name!r} is not an annotator of {batch.name}; add them with `workbench annotate link`")
    return Annotator(batch, row[0], name)


def check_comment(comment: str, where: str = "the comment") -> str:
    """``comment`` if it is at most ``COMMENT_LIMIT`` characters without control characters (line breaks and tabs
    aside: an escape sequence in a comment would drive the terminal of whoever runs ``annotate flags``), else one line
    saying so."""
    if len(comment) > COMMENT_LIMIT:
        raise WorkbenchError(f"{where}: a comment of {len(comment):,} characters; keep it to {COMMENT_LIMIT:,}")
    if CONTROL.search(comment):
        raise WorkbenchError(f"{where}: a comment holds a control character ({CONTROL.search(comment)[0]!r}); "
                             "write it as plain text")  # fmt: skip
    return comment


def record_vote(batch: Batch, vote: Vote) -> bool:
    """Store ``vote`` for good; False if the person had already answered the question (the first vote stands)."""
    unknown = sorted(set(vote.flags) - set(FLAGS))
    if unknown:
        raise WorkbenchError(f"unknown flags {unknown}; use any of {sorted(FLAGS)}")
    check_comment(vote.comment)
    with connect(batch.votes_path) as db:  # one connection: the person, then the vote
        row = db.execute("SELECT place FROM annotators WHERE name = ?", (vote.annotator,)).fetchone()
        if row is None:
            raise WorkbenchError(
                f"{vote.annotator!r} is not an annotator of {batch.name}; add them with `workbench annotate link`"
            )
        assigned = batch.assignments.filter((pl.col("place") == row[0]) & (pl.col("id") == vote.question))
        if assigned.is_empty():
            raise WorkbenchError(f"question {vote.question!r} is not one of {vote.annotator}'s in {batch.name}")
        order = assigned["order"][0].to_list()
        if not 0 <= vote.choice < len(order) or order.index(vote.choice) + 1 != vote.shown or list(vote.order) != order:
            raise WorkbenchError(
                f"choice {vote.choice} shown at {vote.shown} does not match the order {order} {vote.annotator} saw"
            )
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        values = (
            vote.annotator, row[0], vote.question, vote.choice, vote.shown, json.dumps(order),
            json.dumps(sorted(vote.flags)), vote.comment, vote.seconds, now, vote.source,
        )  # fmt: skip
        cursor = db.execute("INSERT OR IGNORE INTO votes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
    return cursor.rowcount == 1


def read_votes(batch: Batch) -> pl.DataFrame:
    """Every vote of ``batch`` in the order they were cast (``VOTE_SCHEMA``), each held to its question: a choice
    among its choices, clicked where the order it saw puts it, flags of ``FLAGS``. A database edited by hand is
    refused in one line (a vote for choice 9 of five was an unexpected error in the app's review)."""
    with connect(batch.votes_path) as db:
        rows = db.execute("SELECT * FROM votes ORDER BY at, rowid").fetchall()
    if not rows:
        return pl.DataFrame(schema=VOTE_SCHEMA)
    decode = {name: pl.col(name).str.json_decode(dtype) for name, dtype in (("order", VOTE_SCHEMA["order"]),
                                                                          ("flags", VOTE_SCHEMA["flags"]))}  # fmt: skip
    fix = "the database was edited; restore votes.sqlite from a copy"
    try:
        frame = pl.DataFrame(rows, orient="row", schema=list(VOTE_SCHEMA), infer_schema_length=None)
        frame = frame.with_columns(**decode).cast(VOTE_SCHEMA)
    except (pl.exceptions.PolarsError, TypeError, ValueError) as err:
        raise WorkbenchError(f"{batch.votes_path} holds a vote of another shape ({' '.join(str(err).split())[:120]}); "
                             f"{fix}") from err  # fmt: skip
    sizes = batch.questions.select("id", n=pl.col("choices").list.len())
    wrong = frame.join(sizes, on="id", how="inner").filter(
        ~pl.col("choice").is_between(0, pl.col("n") - 1)
        | ~pl.col("shown").is_between(1, pl.col("n"))
        | (pl.col("order").list.len() != pl.col("n"))
        | (pl.col("order").list.get(pl.col("shown") - 1, null_on_oob=True) != pl.col("choice"))
        | ~pl.col("flags").list.eval(pl.element().is_in(list(FLAGS))).list.all()
        | pl.col("comment").str.contains(CONTROL.pattern)
        | (pl.col("comment").str.len_chars() > COMMENT_LIMIT)
    )
    if wrong.height:
        raise WorkbenchError(
            f"{batch.votes_path}: {wrong['annotator'][0]!r}'s vote on {wrong['id'][0]!r} is not one the app or an "
            f"import records (choice {wrong['choice'][0]} shown at {wrong['shown'][0]}: a choice the question showed, "
            f"where its order put it, known flags, a plain comment of {COMMENT_LIMIT:,} characters at most); {fix}"
        )
    return frame


def todo(member: Annotator) -> pl.DataFrame:
    """The assignments ``member`` has not answered yet, in their order (``ASSIGNMENT_SCHEMA`` rows)."""
    with connect(member.batch.votes_path) as db:
        done = [row[0] for row in db.execute("SELECT question FROM votes WHERE annotator = ?", (member.name,))]
    mine = member.batch.assignments.filter(pl.col("place") == member.place)
    return mine.filter(~pl.col("id").is_in(pl.Series(done, dtype=pl.String).implode())).sort("position")


def export_votes(batch: Batch, path: str | Path) -> Path:
    """Write the votes with each question's gold and cell (probe, hops, distractor) as Parquet or CSV (by suffix)."""
    from workbench.io import atomic_path, check_output

    path = Path(path)
    if path.suffix.lower() not in (".parquet", ".csv"):
        raise WorkbenchError(f"{path}: write votes as .parquet or .csv")
    check_output(path, inputs=(batch.folder,))
    cells = batch.questions.select("id", "probe", "cluster_id", "hops", "distractor_family", "answer")
    frame = (
        read_votes(batch).join(cells, on="id", how="left").with_columns(correct=pl.col("choice") == pl.col("answer"))
    )
    with atomic_path(path) as tmp:
        if path.suffix.lower() == ".csv":
            flat = frame.with_columns(
                order=pl.col("order").cast(pl.List(pl.String)).list.join(" "), flags=pl.col("flags").list.join(" ")
            )
            flat.write_csv(tmp)
        else:
            frame.write_parquet(tmp)
    return path


def review(member: Annotator, predictions: pl.DataFrame | None = None) -> pl.DataFrame:
    """``member``'s answers beside the gold (and each model's pick in ``predictions``, a column per model label),
    one row per question they answered, in their order: what the app shows a person after their last answer."""
    from workbench.metrics import identity_keys, model_labels

    mine = read_votes(member.batch).filter(pl.col("annotator") == member.name)
    questions = member.batch.questions.select("id", "question", "choices", "answer")
    rows = mine.select("id", "choice", "at").join(questions, on="id").sort("at")
    frame = rows.select(
        "id", "question",
        yours=pl.col("choices").list.get(pl.col("choice")), gold=pl.col("choices").list.get(pl.col("answer")),
        right=pl.col("choice") == pl.col("answer"),
    )  # fmt: skip
    if predictions is None or predictions.is_empty():
        return frame
    keys = identity_keys(predictions)
    picks = (
        predictions.filter(pl.col("id").is_in(frame["id"].implode()))
        .join(model_labels(predictions), on=keys, nulls_equal=True)
        .select("id", "label", pick=pl.col("choices").list.get(pl.col("pred"), null_on_oob=True))
    )
    if picks.is_empty():
        return frame
    wide = picks.unique(["id", "label"]).pivot("label", index="id", values="pick")
    return frame.join(wide, on="id", how="left")
