"""The prediction cache: model outputs on disk, keyed by model fingerprint and item hash.

One SQLite file in the workspace (``predictions/predictions.sqlite``). A row holds what the model
computed for one unit of work (an embedding, a logit, the log-probabilities of a choice's tokens)
under one fingerprint, so re-scoring the same items never runs the model again, and a run that is
interrupted resumes from the last committed batch. A different model, control, seed or tokenizer
gives a different fingerprint, so its outputs are never mixed up with another's.

Every value carries a digest of its fingerprint, item and bytes: a damaged entry (bytes changed on disk) is
never used, but deleted, recomputed and reported. A damaged file (not a database any more) is set aside as
``predictions.sqlite.damaged`` and a fresh cache started, with a warning; a full disk is an error that keeps
the cache.
"""

import hashlib
import os
import sqlite3
import warnings
from collections.abc import Callable, Iterable, Mapping
from contextlib import closing
from pathlib import Path
from typing import TypeVar

import numpy as np

from workbench.errors import DataSourceError
from workbench.paths import cache_dir

T = TypeVar("T")
_CHUNK = 500  # keys per SELECT (SQLite's parameter limit is 999 on old builds)


def item_key(kind: str, unit: tuple[str, ...]) -> str:
    """The hash that names one unit of work of one kind (e.g. ``("mcqa", (question, choice))``)."""
    return hashlib.sha256("\x1f".join((kind, *unit)).encode()).hexdigest()  # one call: the same bytes hashed


class PredictionCache:
    """Model outputs (float32 vectors) stored by ``(fingerprint, item key)`` in one SQLite file, each with a digest.

    >>> cache = PredictionCache("/tmp/predictions.sqlite")  # doctest: +SKIP
    >>> cache.put("f00d", {"k": np.array([1.0])}); cache.get("f00d", ["k"])  # doctest: +SKIP
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else cache_dir("predictions") / "predictions.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._use(lambda db: None)

    def _use(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(db)`` in one transaction; a damaged file is set aside once and the work done on a fresh one."""
        try:
            return self._transaction(work)
        except sqlite3.DatabaseError as err:
            if _read_only(err, self.path):  # not damage: setting the file aside would fail too
                raise DataSourceError(
                    f"cannot write the prediction cache {self.path} ({err}): make the workspace writable (or set "
                    "WORKBENCH_HOME to a writable one), or score without the cache (--no-cache)"
                ) from err
            if _disk_full(err):
                raise DataSourceError(
                    f"the disk holding the prediction cache {self.path} is full ({err}); free some space and rerun "
                    "(the cache is kept)"
                ) from err
            aside = self.path.with_name(self.path.name + ".damaged")
            for suffix in ("", "-wal", "-shm"):
                if Path(f"{self.path}{suffix}").exists():
                    Path(f"{self.path}{suffix}").replace(f"{aside}{suffix}")
            warnings.warn(f"the prediction cache {self.path} was damaged ({err}); it is set aside as {aside} and a "
                          "fresh one started: outputs are computed again")  # fmt: skip
            return self._transaction(work)

    def _transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with closing(sqlite3.connect(self.path, timeout=60)) as db:
            db.execute("PRAGMA journal_mode=WAL")
            with db:  # one transaction: committed on success, rolled back on error
                db.execute(
                    "CREATE TABLE IF NOT EXISTS checked (fingerprint TEXT, item TEXT, value BLOB, digest BLOB, "
                    "PRIMARY KEY (fingerprint, item)) WITHOUT ROWID"
                )
                return work(db)

    def get(self, fingerprint: str, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached outputs among ``keys`` for ``fingerprint`` (missing keys are left out, and so are damaged
        entries: deleted, with a warning, so that they are computed again)."""
        keys = list(keys)

        def read(db: sqlite3.Connection) -> tuple[dict[str, np.ndarray], list[str]]:
            found, damaged = {}, []
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT item, value, digest FROM checked WHERE fingerprint = ? AND item IN ({marks})",
                    [fingerprint, *chunk],
                )
                for item, value, digest in rows:
                    sound = isinstance(value, bytes) and len(value) % 4 == 0
                    if sound and digest == _digest(fingerprint, item, value):
                        found[item] = np.frombuffer(value, dtype=np.float32)
                    else:
                        damaged.append(item)
            db.executemany(
                "DELETE FROM checked WHERE fingerprint = ? AND item = ?", [(fingerprint, k) for k in damaged]
            )
            return found, damaged

        found, damaged = self._use(read)
        if damaged:
            warnings.warn(f"{len(damaged)} entries of the prediction cache {self.path} were damaged; they are "
                          "computed again, not used")  # fmt: skip
        return found

    def put(self, fingerprint: str, values: Mapping[str, np.ndarray]) -> None:
        """Store ``values`` under ``fingerprint`` and commit."""
        rows = []
        for key, value in values.items():
            data = np.asarray(value, dtype=np.float32).tobytes()
            rows.append((fingerprint, key, data, _digest(fingerprint, key, data)))
        self._use(lambda db: db.executemany("INSERT OR REPLACE INTO checked VALUES (?, ?, ?, ?)", rows))

    def __len__(self) -> int:
        return self._use(lambda db: db.execute("SELECT COUNT(*) FROM checked").fetchone()[0])


def open_cache(cache: "bool | str | Path | PredictionCache") -> "PredictionCache | None":
    """The cache a ``cache=`` argument names: True the workspace's, a path another SQLite file, False none."""
    if isinstance(cache, PredictionCache):
        return cache
    if cache is True:
        return PredictionCache()
    if cache is False:
        return None
    return PredictionCache(cache)


def _digest(fingerprint: str, item: str, value: bytes) -> bytes:
    """What ties a stored value to its key: 16 bytes of BLAKE2b over fingerprint, item and value."""
    return hashlib.blake2b(f"{fingerprint}\x1f{item}\x1f".encode() + value, digest_size=16).digest()


def _read_only(err: sqlite3.DatabaseError, path: Path) -> bool:
    code = getattr(err, "sqlite_errorcode", 0) & 0xFF
    return code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM) or not os.access(
        path.parent, os.W_OK
    )


def _disk_full(err: sqlite3.DatabaseError) -> bool:
    return "full" in str(err) or getattr(err, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
