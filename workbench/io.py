"""Atomic writes: a reader sees the old file or the new one, never half of one."""

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import polars as pl


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; move it into place only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; written files are meant to be shared
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        tmp_path.unlink(missing_ok=True)


def write_parquet(frame: pl.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` to ``path`` as Parquet, atomically."""
    with atomic_path(path) as tmp:
        frame.write_parquet(tmp, statistics=False)
    return Path(path)


def write_text(text: str, path: str | Path) -> Path:
    """Write ``text`` to ``path`` (UTF-8), atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)
