"""The prediction cache: model outputs on disk, keyed by model fingerprint and item hash.

One SQLite file in the workspace (``predictions/predictions.sqlite``). A row holds what the model
computed for one unit of work (an embedding, a logit, the log-probabilities of a choice's tokens)
under one fingerprint, so re-scoring the same items never runs the model again, and a run that is
interrupted resumes from the last committed batch. A different model, control, seed or tokenizer
gives a different fingerprint, so its outputs are never mixed up with another's.
"""

import hashlib
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing, contextmanager
from pathlib import Path

import numpy as np

from workbench.errors import DataSourceError
from workbench.paths import cache_dir

_CHUNK = 500  # keys per SELECT (SQLite's parameter limit is 999 on old builds)


def item_key(kind: str, unit: tuple[str, ...]) -> str:
    """The hash that names one unit of work of one kind (e.g. ``("mcqa", (question, choice))``)."""
    digest = hashlib.sha256(kind.encode())
    for part in unit:
        digest.update(b"\x1f" + part.encode())
    return digest.hexdigest()


class PredictionCache:
    """Model outputs (float32 vectors) stored by ``(fingerprint, item key)`` in one SQLite file.

    >>> cache = PredictionCache("/tmp/predictions.sqlite")  # doctest: +SKIP
    >>> cache.put("f00d", {"k": np.array([1.0])}); cache.get("f00d", ["k"])  # doctest: +SKIP
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else cache_dir("predictions") / "predictions.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS outputs (fingerprint TEXT, item TEXT, value BLOB, "
                "PRIMARY KEY (fingerprint, item)) WITHOUT ROWID"
            )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            with closing(sqlite3.connect(self.path, timeout=60)) as db:
                db.execute("PRAGMA journal_mode=WAL")
                with db:  # one transaction: committed on success, rolled back on error
                    yield db
        except sqlite3.DatabaseError as err:
            raise DataSourceError(
                f"the prediction cache {self.path} cannot be used ({err}); delete the file to start afresh"
            ) from err

    def get(self, fingerprint: str, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached outputs among ``keys`` for ``fingerprint`` (missing keys are left out)."""
        keys = list(keys)
        found: dict[str, np.ndarray] = {}
        with self._connect() as db:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT item, value FROM outputs WHERE fingerprint = ? AND item IN ({marks})",
                    [fingerprint, *chunk],
                )
                found.update((item, np.frombuffer(value, dtype=np.float32)) for item, value in rows)
        return found

    def put(self, fingerprint: str, values: Mapping[str, np.ndarray]) -> None:
        """Store ``values`` under ``fingerprint`` and commit."""
        rows = [(fingerprint, key, np.asarray(value, dtype=np.float32).tobytes()) for key, value in values.items()]
        with self._connect() as db:
            db.executemany("INSERT OR REPLACE INTO outputs VALUES (?, ?, ?)", rows)

    def __len__(self) -> int:
        with self._connect() as db:
            return db.execute("SELECT COUNT(*) FROM outputs").fetchone()[0]
