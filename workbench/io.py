"""Atomic writes (a reader sees the old file or the new one, never half of one), exclusive locks on outputs,
and reading predictions back."""

import contextlib
import fcntl
import glob
import io
import json
import os
import shutil
import socket
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError
from workbench.schema import PREDICTION_SCHEMA, conform


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; move it into place only if the block succeeds.

    The temporary file is ``.NAME.HOST-PID.*.tmp``; those of killed writers are removed by the next write.
    """
    path = Path(path)
    _refuse_special(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(path.parent, f".{path.name}.", ".tmp")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{_writer()}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; written files are meant to be shared
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except OSError as err:  # a full disk, a quota, a vanished folder: nothing was replaced
        raise WorkbenchError(f"cannot write {path}: {err.strerror or err}; free some space or write elsewhere "
                             "(the old file, if any, is untouched)") from err  # fmt: skip
    except pl.exceptions.PolarsError as err:
        if "os error" not in str(err).lower():
            raise
        raise WorkbenchError(f"cannot write {path}: {_one_line(err)}; free some space or write elsewhere "
                             "(the old file, if any, is untouched)") from err  # fmt: skip
    finally:
        tmp_path.unlink(missing_ok=True)


def read_parquet(path: str | Path, **options) -> pl.DataFrame:
    """``pl.read_parquet`` of the file as it is at one moment: its bytes taken in one read. polars opens a path
    more than once, so a file that ``atomic_path`` replaces meanwhile is read half old and half new (a "wrong page
    size" error or a panic, in about one read in six racing a writer: ``tests/test_crash_safety.py``); the files a
    running job rewrites (trials, predictions, results) are read with this."""
    return pl.read_parquet(io.BytesIO(Path(path).read_bytes()), **options)


def _one_line(err: Exception) -> str:
    return " ".join(str(err).split())


@contextlib.contextmanager
def staged_folder(path: str | Path) -> Iterator[Path]:
    """Yield an empty staging folder beside ``path``; on success it replaces ``path`` whole, in one rename.

    A reader sees the old folder or the new one (or, for an instant between two renames, none), never a
    mix of old and new files; a failed or killed block leaves ``path`` as it was. Leftovers of killed
    writers (``.NAME.staging-HOST-PID``, ``.NAME.old-HOST-PID``) are removed by the next writer, a live
    writer's are not; readers skip dot-folders.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(path.parent, f".{path.name}.staging-")
    _remove_leftovers(path.parent, f".{path.name}.old-")
    staging = path.parent / f".{path.name}.staging-{_writer()}"
    shutil.rmtree(staging, ignore_errors=True)  # a killed writer's whose pid this process now has
    staging.mkdir()
    try:
        yield staging
        old = path.parent / f".{path.name}.old-{_writer()}"
        shutil.rmtree(old, ignore_errors=True)
        if path.exists():
            os.rename(path, old)
        os.rename(staging, path)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _writer() -> str:
    """``HOST-PID`` of this process, in the names of its temporary files and folders."""
    return f"{socket.gethostname()}-{os.getpid()}"


def _remove_leftovers(folder: Path, prefix: str, suffix: str = "") -> None:
    """Remove ``folder``'s ``PREFIX<HOST>-<PID>...SUFFIX`` entries left by writers of this host that are gone.

    A live writer's are kept, and so are another host's (its pids mean nothing here)."""
    mine = f"{prefix}{socket.gethostname()}-"
    for leftover in folder.glob(f"{glob.escape(mine)}*{suffix}"):
        pid = leftover.name[len(mine) :].split(".", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


OUTPUT_SUFFIXES = {"predictions": (".parquet",), "report": (".html", ".htm")}
"""The file names each kind of output may have: a suffix says what the file holds, so another is refused."""
REPORT_MARKER = '<meta name="generator" content="Probe Workbench report">'
"""The line in every HTML report ``workbench report --html`` writes: what it may replace without ``--force``."""


def check_output(
    path: str | Path,
    folder: bool = False,
    *,
    inputs: tuple[str | Path | None, ...] = (),
    kind: str | None = None,
    force: bool = False,
) -> Path:
    """Fail before any work when ``path`` cannot take the output; returns ``path``.

    Refused: a file where a folder is wanted (or the reverse), a place this process cannot write, a device,
    socket or FIFO, one of the command's own ``inputs``, a name whose suffix is not the ``kind``'s
    (``OUTPUT_SUFFIXES``), and (unless ``force``) an existing file that is not an output of that ``kind``
    (``written_kind``): replacing a prediction file with a report, or a probe file with predictions, loses data.
    """
    path = Path(path)
    _refuse_special(path)
    for given in (Path(item) for item in inputs if item is not None):
        if _same(path, given) or (given.is_dir() and given.resolve() in path.resolve().parents):
            raise WorkbenchError(f"the output {path} is also an input of this command; write the output elsewhere")
    if folder and path.exists() and not path.is_dir():
        raise WorkbenchError(f"the output {path} is a file; give a folder (new, or the one an earlier run wrote)")
    if not folder and path.is_dir():
        raise WorkbenchError(f"the output {path} is a folder; give a file name, e.g. {path / 'out'}{path.suffix or ''}")
    existing = next((parent for parent in [path, *path.parents] if parent.exists()), None)
    if existing is not None and not existing.is_dir():
        if existing != path:
            raise WorkbenchError(f"cannot write {path}: {existing} is a file, not a folder; choose another path")
    elif existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise WorkbenchError(f"cannot write {path}: {existing} is not writable by this user; choose another path")
    if kind is not None:
        found = written_kind(path) if path.is_file() and path.stat().st_size else kind
        if found != kind and not force:
            raise WorkbenchError(
                f"{path} already holds {found or 'a file the workbench did not write as ' + kind}; "
                "choose another name, or pass --force to replace it"
            )
        if path.suffix.lower() not in (suffixes := OUTPUT_SUFFIXES[kind]):
            raise WorkbenchError(
                f"the output {path} should end in {' or '.join(suffixes)}, the format written; "
                f"name it e.g. {path.with_suffix(suffixes[0])}"
            )
    return path


def written_kind(path: str | Path) -> str | None:
    """What the workbench wrote at ``path``: ``predictions``, ``probes``, ``table`` (other Parquet), ``report``
    (an HTML report, by ``REPORT_MARKER``), or None (not a file the workbench writes)."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
        if head.startswith(b"PAR1"):
            columns = set(pl.read_parquet_schema(path))
        elif REPORT_MARKER.encode() in head or b"<title>Probe Workbench report</title>" in head:  # or an older one
            return "report"
        else:
            return None
    except (OSError, pl.exceptions.PolarsError):
        return None
    if {"scores", "pred", "fingerprint"} <= columns:
        return "predictions"
    if {"choices", "answer", "cluster_id"} <= columns:
        return "probes"
    return "table"


def _refuse_special(path: Path) -> None:
    """Devices, sockets and FIFOs are no outputs: the atomic rename would replace them with a regular file."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise WorkbenchError(f"the output {path} is a device, socket or pipe, not a file; give a file name")


def _same(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


class LockedError(WorkbenchError):
    """Another process is writing the same output."""


@contextlib.contextmanager
def exclusive(path: str | Path, wait: bool = False) -> Iterator[None]:
    """Hold an exclusive lock on the output ``path`` (a run folder, a probe set) for the block.

    A second writer gets ``LockedError`` at once, naming the holder (pid, host, start time), instead of two
    processes overwriting each other's results; with ``wait`` it waits for the holder to finish instead (for a
    cache the second writer then finds made). The lock file ``.NAME.lock`` sits beside ``path``; the lock
    itself is the kernel's (``flock``), so a killed holder never leaves a stale lock behind.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.parent / f".{path.name}.lock"
    with open(lock, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise LockedError(
                f"{path} is being written by {holder}; wait for it to finish (or stop it), or write somewhere else"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(
            json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S")})
        )
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_parquet(frame: pl.DataFrame, path: str | Path, metadata: dict[str, str] | None = None) -> Path:
    """Write ``frame`` to ``path`` as Parquet, atomically (``metadata``: the file's key-value metadata)."""
    with atomic_path(path) as tmp:
        frame.write_parquet(tmp, statistics=False, metadata=metadata)
    return Path(path)


def write_text(text: str, path: str | Path) -> Path:
    """Write ``text`` to ``path`` (UTF-8), atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def read_predictions(*paths: str | Path) -> pl.DataFrame:
    """One or more prediction Parquet files (as ``workbench score`` writes them), stacked and checked.

    Parameters
    ----------
    *paths : str or Path
        Prediction files; several models stack into one frame, drawn side by side by the charts.

    Returns
    -------
    polars.DataFrame
        ``PREDICTION_SCHEMA`` rows of every file.

    Examples
    --------
    >>> read_predictions("preds.parquet", "random.parquet")  # doctest: +SKIP
    """
    if not paths:
        raise WorkbenchError("no prediction file given; score a probe set first (workbench score ... --out FILE)")
    frames = []
    for path in map(Path, paths):
        if not path.is_file():
            raise WorkbenchError(f"no prediction file at {path}; score a probe set first (it writes Parquet).")
        try:
            frame = read_parquet(path)
        except (pl.exceptions.PolarsError, OSError) as err:
            raise WorkbenchError(f"{path} is not a readable Parquet file: {err}") from err
        frames.append(_checked_predictions(conform(frame, PREDICTION_SCHEMA, what=f"prediction file {path}"), path))
    return pl.concat(frames)


def _checked_predictions(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    """``frame`` if every row is a consistent prediction, else a one-line error naming the file and the first bad row:
    a damaged file must not be reported as numbers."""
    if frame.is_empty():
        raise WorkbenchError(f"{path} holds no predictions; score a probe set again (workbench score ... --out FILE)")
    size = pl.col("choices").list.len()
    problems = {
        "answer is not the index of a choice": ~pl.col("answer").is_between(0, size - 1),
        "pred is not the index of a choice": ~pl.col("pred").is_between(0, size - 1),
        "correct is not pred == answer": pl.col("correct") != (pl.col("pred") == pl.col("answer")),
        "no model named": pl.col("model").is_null() | pl.col("fingerprint").is_null(),
    }
    flagged = frame.select(*(expr.fill_null(True).alias(name) for name, expr in problems.items()))
    for name in problems:
        if (bad := flagged[name].arg_true()).len():
            raise WorkbenchError(
                f"{path}, row {bad[0] + 1}: {name} ({bad.len()} rows like it); the file is damaged: score again"
            )
    return frame
