"""Atomic writes (a reader sees the old file or the new one, never half of one), exclusive locks on outputs,
and reading predictions back."""

import contextlib
import errno
import fcntl
import glob
import io
import json
import os
import re
import shutil
import socket
import stat
import tempfile
import time
import unicodedata
from collections.abc import Iterator, Sequence
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
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(path.parent, f".{path.name}.", ".tmp")
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{_writer()}.", suffix=".tmp", dir=path.parent)
    except OSError as err:  # a read-only or full place: name the file asked for, not the temporary one
        raise WorkbenchError(f"cannot write {path}: {_unwritable(err)} (the old file, if any, is untouched)") from err
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; written files are meant to be shared
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except OSError as err:  # a full disk, a quota, a vanished folder: nothing was replaced
        raise WorkbenchError(f"cannot write {path}: {_unwritable(err)} (the old file, if any, is untouched)") from err
    except pl.exceptions.PolarsError as err:
        if "os error" not in str(err).lower():
            raise
        raise WorkbenchError(f"cannot write {path}: {_one_line(err)}; free some space or write elsewhere "
                             "(the old file, if any, is untouched)") from err  # fmt: skip
    finally:
        tmp_path.unlink(missing_ok=True)


def _unwritable(err: OSError) -> str:
    """Why a write failed, and the fix: a read-only place is not a full disk."""
    if err.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"{err.strerror}; make the folder writable (or set WORKBENCH_HOME to a writable workspace) or write " \
            "elsewhere"  # fmt: skip
    return f"{err.strerror or err}; free some space or write elsewhere"


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


OUTPUT_SUFFIXES = {
    "predictions": (".parquet",), "report": (".html", ".htm"), "table": (".parquet",),
    "population": (".parquet", ".csv"), "markdown": (".md", ".txt"), "votes": (".parquet", ".csv"),
    "gold": (".jsonl",), "inspect-log": (".eval", ".json"),
}  # fmt: skip
"""The file names each kind of output file may have: a suffix says what the file holds, so another is refused."""
FOLDER_KINDS = {
    "probes": "a probe set ({train,dev,test}.parquet or .jsonl, or folders of them)",
    "site": "a published site (site.json)",
    "sweep": "a sweep (units/, predictions/)",
    "source": "a train-source run (config.json, model/, metrics.json)",
    "inoculation": "an inoculation run (config.json with a grid, trials.parquet)",
    "tasks": "lm-eval tasks (workbench_*.yaml, workbench_*.jsonl)",
    "edge-task": "an edge-probing task ({train,dev,test}.jsonl with targets)",
    "edge-results": "edge-probing results (summary, predictions, audit .parquet)",
    "olmpics": "oLMpics probes (<probe>.jsonl)",
    "mcqa": "a science QA set ({train,dev,test}.jsonl without probe notes)",
    "annotation": "an annotation batch (batch.json, questions.parquet, assignments.parquet, votes.sqlite)",
    "label-studio": "a Label Studio project (label_config.xml, tasks.json)",
    "course": "a built course (course.json, index.html, one page per notebook)",
    "course-cache": "a course's executed notebooks (NOTEBOOK.SIZES.KEY.ipynb, listed in its .workbench.json)",
    "irt": "an IRT fit (fit.json, items.parquet, members.parquet, effects.parquet)",
    "inspect-task": "an Inspect task (task.py, workbench_*.jsonl, prompts.json, workbench_inspect.json)",
}
"""The kinds of output folders: an existing folder is written into only when it holds the same kind (or nothing)."""
OWN_MARKER = "cluster_id"
"""A notes key only our ARC JSONL writes (``probes.formats.OWN_MARKER``): a gold test of ours, not a released one."""
REPORT_MARKER = '<meta name="generator" content="Probe Workbench report">'
"""The line in every HTML report ``workbench report --html`` writes: what it may replace without ``--force``."""


def check_output(
    path: str | Path,
    folder: bool = False,
    *,
    inputs: tuple[str | Path | None, ...] = (),
    kind: str | None = None,
    force: bool = False,
    can_force: bool = True,
) -> Path:
    """Fail before any work when ``path`` cannot take the output; returns ``path``.

    Refused: a file where a folder is wanted (or the reverse), a place this process cannot write, a device,
    socket or FIFO, one of the command's own ``inputs`` (by device and inode, however spelt; an output inside an
    input folder, or an input inside an output folder, too), a name whose suffix is not the ``kind``'s
    (``OUTPUT_SUFFIXES``), an existing file that is not an output of that ``kind`` (``written_kind``) unless
    ``force``, and an existing folder holding anything but that kind of output (``folder_kind``; ``FOLDER_KINDS``).
    ``can_force``: whether the command has a ``--force`` to name in the message.
    """
    path = Path(path)
    folder = folder or kind in FOLDER_KINDS
    _refuse_special(path)
    for given in (Path(item) for item in inputs if item is not None):
        if _same(path, given):
            raise WorkbenchError(f"the output {path} is also an input of this command ({given}); write it elsewhere")
        if _within(path, given):
            raise WorkbenchError(f"the output {path} lies inside the input folder {given}; write it elsewhere")
        if folder and _within(given, path):
            raise WorkbenchError(f"the output folder {path} holds the input {given}; write the output elsewhere")
    if folder and path.exists() and not path.is_dir():
        raise WorkbenchError(f"the output {path} is a file; give a folder (new, or the one an earlier run wrote)")
    if not folder and path.is_dir():
        suffix = OUTPUT_SUFFIXES[kind][0] if kind in OUTPUT_SUFFIXES else path.suffix
        raise WorkbenchError(f"the output {path} is a folder; give a file name, e.g. {path / 'out'}{suffix}")
    existing = next((parent for parent in [path, *path.parents] if parent.exists()), None)
    if existing is not None and not existing.is_dir():
        if existing != path:
            raise WorkbenchError(f"cannot write {path}: {existing} is a file, not a folder; choose another path")
    elif existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise WorkbenchError(f"cannot write {path}: {existing} is not writable by this user; choose another path")
    if kind in FOLDER_KINDS:
        found = folder_kind(path)
        if found not in (None, kind):
            held = FOLDER_KINDS.get(found, "files the workbench did not write")
            raise WorkbenchError(f"{path} already holds {held}, not {FOLDER_KINDS[kind]}; writing there would replace "
                                 "or mix with them: give a new folder (or an empty one)")  # fmt: skip
    elif kind is not None:
        found = written_kind(path) if path.is_file() and path.stat().st_size else kind
        if found != kind and not force:
            fix = "pass --force to replace it" if can_force else "delete it first if it may go"
            raise WorkbenchError(
                f"{path} already holds {found or 'a file the workbench did not write as ' + kind}; "
                f"choose another name, or {fix}"
            )
        if path.suffix.lower() not in (suffixes := OUTPUT_SUFFIXES[kind]):
            raise WorkbenchError(
                f"the output {path} should end in {' or '.join(suffixes)}, the format written; "
                f"name it e.g. {path.with_suffix(suffixes[0])}"
            )
    return path


def written_kind(path: str | Path) -> str | None:
    """What the workbench wrote at ``path``: ``predictions``, ``probes``, ``population`` (Parquet or CSV),
    ``table`` (other Parquet), ``report`` (an HTML report, by ``REPORT_MARKER``), ``markdown`` (of
    ``probes reproduce``), or None (not a file the workbench writes)."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
        if head.startswith(b"PAR1"):
            columns = set(pl.read_parquet_schema(path))
        elif path.suffix.lower() in (".eval", ".json") and _inspect_log_of_ours(path, head):
            return "inspect-log"
        elif REPORT_MARKER.encode() in head or b"<title>Probe Workbench report</title>" in head:  # or an older one
            return "report"
        elif head.startswith(b"unit,origin,model,scorer,"):
            return "population"
        elif head.startswith(b"annotator,place,id,choice,"):
            return "votes"
        elif head.startswith(b"{"):
            notes = _first_record(path).get("notes")
            return "gold" if isinstance(notes, dict) and {"turk_vote", OWN_MARKER} <= set(notes) else None
        elif head.startswith(b"### ") and MARKDOWN_MARKER.encode() in head:
            return "markdown"
        else:
            return None
    except (OSError, pl.exceptions.PolarsError):
        return None
    if {"scores", "pred", "fingerprint"} <= columns:
        return "predictions"
    if {"choices", "answer", "cluster_id"} <= columns:
        return "probes"
    if {"unit", "origin", "model", "scorer", "control"} <= columns:
        return "population"
    if {"annotator", "place", "choice", "order"} <= columns:
        return "votes"
    return "table"


INSPECT_LOG_MARKER = b"workbench export inspect-log"
"""In the header of every Inspect log ``workbench export inspect-log`` writes: what it may replace without
``--force`` (a log of the user's own Inspect runs is theirs)."""


def _inspect_log_of_ours(path: Path, head: bytes) -> bool:
    """Whether ``path`` is an Inspect log we wrote: a ``.eval`` (zip) whose header, or a ``.json`` whose first
    64 KB, names our writer."""
    import zipfile

    if head.startswith(b"PK"):
        try:  # Inspect compresses its members with zstd, which zipfile reads once zipfile_zstd (its dependency) is in
            import zipfile_zstd  # noqa: F401
        except ImportError:
            pass
        try:
            with zipfile.ZipFile(path) as archive:
                return INSPECT_LOG_MARKER in archive.read("header.json")
        except (OSError, KeyError, NotImplementedError, zipfile.BadZipFile):  # unreadable: not known to be ours
            return False
    with open(path, "rb") as handle:
        return head.startswith(b"{") and INSPECT_LOG_MARKER in handle.read(65536)


MARKDOWN_MARKER = "Table 4, whole sets (ours: the paper preset"
"""A line of what ``workbench probes reproduce --out`` writes: what it may replace without ``--force``."""


DISPOSABLE = frozenset({".ipynb_checkpoints", ".DS_Store"})
"""Dot-entries tools leave in any folder, that replacing a folder may take with it."""
_OURS = re.compile(r"^\..+\.(tmp|lock)$|^\..+\.(staging|old)-.+$")
RECORD_BYTES = 64 << 20
"""The largest marker or manifest read (a site's ``site.json`` lists every file it wrote: a few hundred kB)."""
MARKER = ".workbench.json"
"""The file a writer leaves in a folder it owns, naming the folder's kind and every file it wrote there (issue 60):
a folder is the workbench's only by this marker, never by its file names, which a user's own files can share."""


def hidden_but_ours(name: str) -> bool:
    """Whether a folder's entry is a dot-entry the workbench itself leaves (a temporary file, a lock, a staging
    folder of a killed writer) or a tool's cache: what a folder replaced whole may lose. A user's other dot-files
    (``.git``, ``.notes``) are theirs, and make the folder foreign (issue 53: they were deleted without a word)."""
    return name.startswith(".") and (name in DISPOSABLE or name == MARKER or bool(_OURS.match(name)))


def mark_folder(folder: str | Path, kind: str, files: list[str]) -> Path:
    """Write ``folder``'s marker: it is the workbench's, of ``kind``, holding ``files`` (paths relative to it).
    Hold the folder's lock (``exclusive``) while a read-modify-write of the list is under way."""
    record = {"generator": "Probe Workbench", "kind": kind, "files": sorted(set(files))}
    return write_text(json.dumps(record, indent=1) + "\n", Path(folder) / MARKER)


def marked_files(folder: str | Path, kind: str) -> list[str] | None:
    """The files ``folder``'s marker says the workbench wrote there as ``kind``; None where it has no marker of that
    kind (a folder without one is never the workbench's to delete from)."""
    record = _json_record(Path(folder) / MARKER)
    files = record.get("files")
    if record.get("generator") != "Probe Workbench" or record.get("kind") != kind or not isinstance(files, list):
        return None
    return [name for name in files if isinstance(name, str)]


def _marked_kind(folder: Path) -> str:
    """The kind a folder's marker names when every file in it is one the marker lists, else ``other``."""
    record = _json_record(folder / MARKER)
    kind = record.get("kind")
    if kind not in FOLDER_KINDS or marked_files(folder, kind) is None:
        return "other"
    return "other" if unlisted_files(folder, MARKER) else kind


def folder_kind(path: str | Path) -> str | None:
    """What the workbench wrote in the folder ``path``: a key of ``FOLDER_KINDS``, ``other`` (anything else), or
    None (no folder, or nothing but the workbench's own leftovers: free to write)."""
    path = Path(path)
    if not path.is_dir():
        return None
    if (path / MARKER).is_file():
        return _marked_kind(path)
    children = {child.name: child for child in path.iterdir() if not hidden_but_ours(child.name)}
    names = set(children)
    if not names:
        return None
    splits = {f"{split}.{fmt}" for split in ("train", "dev", "test") for fmt in ("parquet", "jsonl")}
    jsonl = [children[name] for name in sorted(names & splits) if name.endswith(".jsonl")]
    sniffed = {_jsonl_kind(file) for file in jsonl}
    if "batch.json" in names:
        return "annotation" if names <= {"batch.json", "questions.parquet", "assignments.parquet", "votes.sqlite",
                                         "votes.sqlite-wal", "votes.sqlite-shm"} else "other"  # fmt: skip
    if "tasks.json" in names and names <= {"label_config.xml", "tasks.json"}:  # before the marker: ours by content
        tasks = _json_record_list(children["tasks.json"])
        ours = bool(tasks) and all(isinstance(task, dict) and isinstance(task.get("data"), dict)
                                   and isinstance(task["data"].get("workbench_id"), str) for task in tasks)  # fmt: skip
        return "label-studio" if ours else "other"
    if "course.json" in names:
        return "course" if _json_record(children["course.json"]).get("generator") == "workbench course" else "other"
    if "fit.json" in names:
        ours = names <= {"fit.json", "items.parquet", "members.parquet", "effects.parquet"}
        return "irt" if ours and _json_record(children["fit.json"]).get("generator") == "workbench irt" else "other"
    if "site.json" in names:
        return "site" if not unlisted_files(path, "site.json") else "other"
    if "workbench_inspect.json" in names:  # Inspect writes __pycache__ beside the task.py it imports
        theirs = [
            name for name in unlisted_files(path, "workbench_inspect.json") if name.split("/")[0] != "__pycache__"
        ]
        return "inspect-task" if not theirs else "other"
    if names <= {"units", "predictions", "ray"} and all(child.is_dir() for child in children.values()):
        return "sweep"
    if {"trials.parquet", "config.json"} & names:
        return "inoculation" if "trials.parquet" in names or "grid" in _json_keys(children["config.json"]) else "source"
    if all(name.startswith("workbench_") and name.endswith((".yaml", ".jsonl")) for name in names):
        return "tasks"
    if names <= {"summary.parquet", "predictions.parquet", "audit.parquet"}:
        return "edge-results"
    if names <= splits and len(sniffed) == 1 and sniffed != {"probes"}:
        return sniffed.pop()
    if _probe_tree(path):
        return "probes"
    if all(name.endswith(".jsonl") for name in names) and {_jsonl_kind(children[n]) for n in names} == {"olmpics"}:
        return "olmpics"
    return "other"


def unlisted_files(folder: str | Path, manifest: str) -> list[str]:
    """The files under ``folder`` (relative paths, dot-files aside) that its ``manifest`` (a JSON file there whose
    ``files`` lists what its writer wrote) does not list: a user's own files, which a writer replacing the folder
    whole would delete. A manifest without the list (written before it) allows its writer's layout only: itself,
    ``index.html``, ``assets/`` and ``data/``."""
    folder = Path(folder)
    record = _json_record(folder / manifest)
    listed = record.get("files")
    names = (str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())
    found = sorted(name for name in names if not any(hidden_but_ours(part) for part in name.split("/")))
    if isinstance(listed, list):
        return [name for name in found if name not in {*map(str, listed), manifest}]
    layout = (manifest, "index.html")
    return [name for name in found if name not in layout and name.split("/")[0] not in ("assets", "data")]


def _json_record(file: Path) -> dict:
    """The JSON object in ``file`` (a marker, a manifest), or {}: a regular file of at most ``RECORD_BYTES`` only, so
    that a marker made a link to ``/dev/zero`` or a FIFO by hand is no record, not a read without end (issue 60)."""
    try:
        if not file.is_file():
            return {}
        with open(file, "rb") as handle:
            data = handle.read(RECORD_BYTES + 1)
        record = json.loads(data.decode("utf-8")) if len(data) <= RECORD_BYTES else {}
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _first_record(file: Path) -> dict:
    try:
        with open(file, encoding="utf-8") as handle:
            record = json.loads(handle.readline() or "null")
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _json_record_list(file: Path) -> list:
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return record if isinstance(record, list) else []


def _json_keys(file: Path) -> set[str]:
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return set(record) if isinstance(record, dict) else set()


def _probe_tree(folder: Path) -> bool:
    splits = {f"{split}.{fmt}" for split in ("train", "dev", "test") for fmt in ("parquet", "jsonl")}
    children = [child for child in folder.iterdir() if not hidden_but_ours(child.name)]
    return all((child.name in splits and (not child.name.endswith(".jsonl") or _jsonl_kind(child) == "probes"))
               or (child.is_dir() and _probe_tree(child)) for child in children)  # fmt: skip


def _jsonl_kind(file: Path) -> str | None:
    """Which JSONL a file's first record is: ``probes`` (ARC-style with notes), ``edge-task`` (jiant), ``mcqa``
    (ARC-style), ``olmpics``, or None."""
    record = _first_record(file)
    if not record:
        return None
    if "targets" in record:
        return "edge-task"
    if "notes" in record:
        return "probes"
    if "question" in record:
        return "mcqa"
    if "statement" in record or "masked" in record:
        return "olmpics"
    return None


def check_input(path: str | Path, option: str) -> None:
    """Refuse, in one line, an input that exists but is no file or folder: a device (``/dev/zero`` is read without
    end), a FIFO (a read waits for ever for a writer) or a socket (issue 60). A value that names no file (a hub name,
    a URL, a missing file) passes: the command says what it expected."""
    try:
        mode = Path(path).stat().st_mode
    except (OSError, ValueError):
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise WorkbenchError(f"{option} {path} is a device, socket or pipe, not a file or folder; give a file")


def _refuse_special(path: Path) -> None:
    """Devices, sockets and FIFOs are no outputs: the atomic rename would replace them with a regular file."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise WorkbenchError(f"the output {path} is a device, socket or pipe, not a file; give a file name")


def _same(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file or folder: the same device and inode (symlinks, ``..``, hard links)."""
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` lies inside the folder ``folder`` (by device and inode of each existing parent)."""
    if not folder.is_dir():
        return False
    try:
        target = os.stat(folder)
    except OSError:
        return False
    for parent in Path(os.path.abspath(path)).parents:
        try:
            found = os.stat(parent)
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == (target.st_dev, target.st_ino):
            return True
    return folder.resolve() in path.resolve().parents


class LockedError(WorkbenchError):
    """Another process is writing the same output."""


@contextlib.contextmanager
def exclusive(path: str | Path, wait: bool = False) -> Iterator[None]:
    """Hold an exclusive lock on the output ``path`` (a run folder, a probe set) for the block.

    A second writer gets ``LockedError`` at once, naming the holder (pid, host, start time), instead of two
    processes overwriting each other's results; with ``wait`` it waits for the holder to finish instead (for a
    cache the second writer then finds made). The lock file ``.NAME.lock`` sits beside ``path`` in its parent folder
    after symlinks and ``..`` are resolved, so every spelling of one output (a symlink, ``a/../a``, another mount
    of the folder) takes the same lock file: the same device and inode; the lock
    itself is the kernel's (``flock``), so a killed holder never leaves a stale lock behind.
    """
    path = Path(os.path.realpath(path))  # the lock file sits in the real parent folder, however the path is spelt
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
    _each_answer_once(frames, [Path(path) for path in paths])
    return pl.concat(frames)


def prediction_files(paths: Sequence[str | Path]) -> list[Path]:
    """The prediction files ``paths`` name: each file as it is, each folder's ``*.parquet`` (recursively, sorted);
    a folder holding none, or a path that is neither, is one line."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            if not (inside_folder := sorted(path.rglob("*.parquet"))):
                raise WorkbenchError(
                    f"{path} holds no .parquet prediction files; give the files `workbench score --out` wrote"
                )
            found.extend(inside_folder)
        elif path.is_file():
            found.append(path)
        else:
            raise WorkbenchError(f"no prediction file or folder at {path}")
    return found


ANSWER_KEYS = ("model", "scorer", "rule", "control", "fingerprint", "asking", "id", "question", "choices")
"""One model's (one way of asking's) answer to one question (released files reuse an id for other questions): what
prediction files must hold once."""


def _each_answer_once(frames: list[pl.DataFrame], paths: list[Path]) -> None:
    """Refuse files that hold one model's answer to one question twice: counted twice (the same file given twice, a
    file of two runs stacked), or, where the two disagree on the question's answer key (the probe set changed between
    the runs), reported as that many more questions with a cluster gap made of the disagreement (issue 53)."""
    keyed = pl.concat(
        [frame.select("id", "model", "answer", key=pl.struct(ANSWER_KEYS).hash(), file=pl.lit(i))
         for i, frame in enumerate(frames)]
    )  # fmt: skip
    twice = keyed.filter(pl.col("key").is_duplicated())
    if twice.is_empty():
        return
    first = twice.filter(pl.col("key") == twice["key"][0])
    a, b = (paths[i] for i in first["file"].head(2))
    question, model = first["id"][0], first["model"][0]
    n = twice["key"].n_unique()
    where = f"{a} holds" if a == b else f"{a} and {b} hold"
    if first["answer"].n_unique() > 1:
        raise WorkbenchError(
            f"{where} {model}'s answers to question {question!r} with different answer keys ({n:,} question(s) "
            "twice): the probe set changed between the runs; rescore one of them"
        )
    raise WorkbenchError(
        f"{where} {model}'s answers to the same {n:,} question(s) twice (first: {question!r}): they would count "
        "twice; give each model's answers once (the same file twice? two runs stacked in one file?)"
    )


def _checked_predictions(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    """``frame`` if every row is a consistent prediction, else a one-line error naming the file and the first bad row:
    a damaged file must not be reported as numbers."""
    if frame.is_empty():
        raise WorkbenchError(f"{path} holds no predictions; score a probe set again (workbench score ... --out FILE)")
    size = pl.col("choices").list.len()
    problems = {
        "answer is not the index of a choice": ~pl.col("answer").is_between(0, size - 1),
        # a free answer (scorer generate) that names no choice has no pred, and is not correct
        "pred is not the index of a choice": ~pl.col("pred").is_between(0, size - 1)
        & ~(pl.col("pred").is_null() & (pl.col("scorer") == "generate")),
        "correct is not pred == answer": pl.col("correct") != (pl.col("pred") == pl.col("answer")).fill_null(False),
        "no model named": pl.col("model").is_null() | pl.col("fingerprint").is_null(),
        "a score is NaN or infinite": pl.col("scores").list.eval(~pl.element().is_finite()).list.any(),
        "a score is missing (or the scores are not one per choice)": pl.col("scores")
        .list.eval(pl.element().is_null())
        .list.any()
        | (pl.col("scores").list.len() != size),
    }
    flagged = frame.select(*(expr.fill_null(True).alias(name) for name, expr in problems.items()))
    for name in problems:
        if (bad := flagged[name].arg_true()).len():
            raise WorkbenchError(
                f"{path}, row {bad[0] + 1}: {name} ({bad.len()} rows like it); the file is damaged: score again"
            )
    for label in frame["model"].unique():  # names every page shows: a file from outside passes the names' check
        check_label(label, f"{path}: the model label")
    for label in frame.filter(pl.col("asking") != "")["asking"].unique():
        check_label(label, f"{path}: the way-of-asking label")
    return frame


IGNORABLE = r"\p{Default_Ignorable_Code_Point}"
"""Characters a page shows as nothing (zero-width spaces and joiners, bidi controls, soft hyphens, the combining
grapheme joiner, Hangul fillers, variation selectors): Unicode's Default_Ignorable_Code_Point, as polars' regular
expressions know it."""


def invisible(text: str) -> list[str]:
    """The distinct characters of ``text`` that show as nothing (``IGNORABLE``) or are format characters (Cf)."""
    found = pl.Series([text]).str.extract_all(IGNORABLE)[0].to_list()
    return sorted({*found, *(char for char in text if unicodedata.category(char) == "Cf")})


LABEL_LIMIT = 100
"""The most characters of a model label, a run or probe-set name: they become file names and chart labels."""


def check_label(label: str | None, option: str, *, file_name: bool = False) -> str | None:
    """``label`` if it is a usable name, else a one-line error naming ``option``: at most ``LABEL_LIMIT``
    characters, no control characters, and (``file_name``: it becomes part of a file name) no ``/``, no leading
    dot, not empty."""
    if label is None:
        return None
    if not label.strip():
        raise WorkbenchError(f"{option} is empty; give a name, e.g. minilm")
    if len(label) > LABEL_LIMIT:
        raise WorkbenchError(f"{option} is {len(label)} characters long; give at most {LABEL_LIMIT}")
    if any(ord(char) < 32 or 0x7F <= ord(char) < 0xA0 or char in "\u2028\u2029" for char in label):
        raise WorkbenchError(f"{option} {label!r} holds a control character or line break; give a plain name")
    if formats := invisible(label):
        named = ", ".join(f"U+{ord(char):04X} {unicodedata.name(char, 'format character')}" for char in formats)
        raise WorkbenchError(f"{option} {label!r} holds an invisible or format character ({named}), which can make it "
                             "show as another name or reorder the page around it; give a plain name")  # fmt: skip
    if file_name and ("/" in label or label.startswith(".") or "\\" in label):
        raise WorkbenchError(f"{option} {label!r} cannot be part of a file name (a / or \\, or a leading dot); "
                             "give a plain name like minilm")  # fmt: skip
    return label


def inside(folder: str | Path, name: str) -> Path:
    """``folder / name`` for a file name derived from data, refused unless it stays a plain name inside ``folder``."""
    folder = Path(folder)
    path = folder / name
    if (Path(name).name != name or name in ("", ".", "..") or "\x00" in name
            or Path(os.path.normpath(folder.resolve() / name)).parent != folder.resolve()):  # fmt: skip
        raise WorkbenchError(f"the file name {name!r} (from the data) would leave {folder}; rename it in the data")
    return path
