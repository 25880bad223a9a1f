"""The SQLite file of an annotation batch (``votes.sqlite``): its tables, and connections that wait for each other.

``label_studio_users`` maps a Label Studio user id to the batch's annotator it is (``annotate label-studio-import
--voter ID=NAME``), once and for good: an import never names voters on the export's word.

Many visitors' kernels write at once: the database is in WAL mode, each vote is one transaction committed with
``synchronous=FULL`` (a submitted vote survives a ``kill -9`` of the server or the browser), and triggers refuse
every update or deletion of a vote.
"""

import contextlib
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from workbench.errors import WorkbenchError

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
"""An annotator's name: what ``annotate link`` and ``--voter`` take (no markup, no control or bidi character)."""
BUSY_TIMEOUT_MS = 10_000
SCHEMA = """
CREATE TABLE IF NOT EXISTS annotators (
    place INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, token_sha256 TEXT NOT NULL UNIQUE, created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS votes (
    annotator TEXT NOT NULL, place INTEGER NOT NULL, question TEXT NOT NULL, choice INTEGER NOT NULL,
    shown INTEGER NOT NULL, choice_order TEXT NOT NULL, flags TEXT NOT NULL, comment TEXT NOT NULL,
    seconds REAL, at TEXT NOT NULL, source TEXT NOT NULL,
    PRIMARY KEY (annotator, question)
);
CREATE TABLE IF NOT EXISTS label_studio_users (
    user_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE REFERENCES annotators (name), created TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS votes_no_update BEFORE UPDATE ON votes
BEGIN SELECT RAISE(ABORT, 'votes are append-only'); END;
CREATE TRIGGER IF NOT EXISTS votes_no_delete BEFORE DELETE ON votes
BEGIN SELECT RAISE(ABORT, 'votes are append-only'); END;
"""


@contextlib.contextmanager
def connect(path: str | Path) -> Iterator[sqlite3.Connection]:
    """A connection to the votes database at ``path`` (WAL, FULL sync, a 10 s wait for another writer's lock)."""
    path = Path(path)
    if not path.is_file():
        raise WorkbenchError(f"{path} is missing: the batch has no votes database; make the batch again")
    connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        yield connection
    except sqlite3.DatabaseError as err:
        raise WorkbenchError(f"the votes database {path} failed: {err}") from err
    finally:
        connection.close()


def create_store(path: str | Path) -> Path:
    """A new, empty votes database at ``path`` (in WAL mode, which it keeps)."""
    path = Path(path)
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.executescript(SCHEMA)
    finally:
        connection.close()
    return path
