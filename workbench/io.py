"""Atomic writes (a reader sees the old file or the new one, never half of one), and reading predictions back."""

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError
from workbench.schema import PREDICTION_SCHEMA, conform


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


def read_predictions(*paths: str | Path) -> pl.DataFrame:
    """One or more prediction Parquet files (as ``workbench score`` writes them), stacked and checked.

    >>> read_predictions("preds.parquet", "random.parquet")  # doctest: +SKIP
    """
    if not paths:
        raise WorkbenchError("no prediction file given; score a probe set first (workbench score ... --out FILE)")
    frames = []
    for path in map(Path, paths):
        if not path.is_file():
            raise WorkbenchError(f"no prediction file at {path}; score a probe set first (it writes Parquet).")
        try:
            frame = pl.read_parquet(path)
        except (pl.exceptions.PolarsError, OSError) as err:
            raise WorkbenchError(f"{path} is not a readable Parquet file: {err}") from err
        frames.append(conform(frame, PREDICTION_SCHEMA, what=f"prediction file {path}"))
    return pl.concat(frames)
