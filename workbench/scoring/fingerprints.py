"""Model fingerprints from the model's files, so that naming a model's weights never reads them into memory.

A fingerprint must change whenever a model's outputs could: its weight files, its config and tokenizer files, the
head a scorer puts on it, the control, the dtype of the weights, and the seed (with the transformers version) of
any weight initialised here rather than loaded (a fresh head, the random-weights control, which reads no weight
file at all). Each file is digested once (SHA-256 of its bytes; for safetensors that covers the header, which
names every tensor with its dtype and shape) and the digest is cached by (path, size, mtime_ns) in the workspace
(``predictions/file_digests.json``), so loading a known model again costs a few ``stat`` calls, not a pass over
gigabytes of tensors. A hub name resolves to its snapshot folder in the local Hugging Face cache.

The fingerprint keys the prediction and representation caches: when it changes (new weights, another dtype, or
this scheme itself changing), old entries are simply not found and are computed again; nothing is reused wrongly.
"""

import hashlib
import json
import warnings
from pathlib import Path

import torch
import transformers

from workbench.errors import WorkbenchError
from workbench.io import write_text
from workbench.paths import cache_dir

WEIGHT_SUFFIXES = (".safetensors", ".bin")
OTHER_SUFFIXES = (".json", ".txt", ".model", ".tiktoken")  # config, tokenizer, generation and index files
DIGESTS = "file_digests.json"
GGUF_RECORD = "gguf.json"
"""Written beside weights dequantised from a GGUF file (``workbench.scoring.gguf``): it holds the file's digest,
which then stands for the weights in the fingerprint."""


def model_folder(source: str | Path) -> Path | None:
    """The folder holding ``source``'s files: itself if a folder, else a hub name's snapshot folder in the local
    Hugging Face cache (None if it is not there)."""
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    from huggingface_hub import try_to_load_from_cache

    config = try_to_load_from_cache(str(source), "config.json")
    return Path(config).parent if isinstance(config, str) else None


def model_files(folder: Path, weights: bool = True) -> list[Path]:
    """The files that decide a model's outputs: config and tokenizer files, and (``weights``) the weight files
    transformers loads (the ``*.safetensors`` if there are any, else the ``*.bin``; for weights dequantised from a
    GGUF file, its ``GGUF_RECORD``, which names the file's digest, stands for them)."""
    files = sorted(path for path in folder.iterdir() if path.is_file() and not path.name.startswith("."))
    chosen = [path for path in files if path.name.endswith(OTHER_SUFFIXES)]
    if weights and not (folder / GGUF_RECORD).exists():
        safetensors = [path for path in files if path.name.endswith(".safetensors")]
        chosen += safetensors or [path for path in files if path.name.endswith(".bin")]
    return sorted(chosen)


def file_digests(paths: list[Path], store: Path | None = None) -> dict[Path, str]:
    """The SHA-256 of each file, read from ``store`` (default: the workspace's) where its ``stamp`` is unchanged,
    computed (and stored) otherwise."""
    store = store or cache_dir("predictions") / DIGESTS
    known = _stored_digests(store)
    digests, changed = {}, False
    for path in paths:
        key, stamp = str(path.resolve()), file_stamp(path)
        entry = known.get(key)
        if not _sound(entry) or entry[:-1] != stamp:
            with path.open("rb") as handle:
                entry = [*stamp, hashlib.file_digest(handle, "sha256").hexdigest()]
            known[key], changed = entry, True
        digests[path] = entry[-1]
    if changed:
        try:
            write_text(json.dumps(known, indent=0, sort_keys=True), store)
        except WorkbenchError as err:  # a read-only workspace: the store only saves reading files again
            warnings.warn(f"the model files' digests are not kept ({err})", stacklevel=2)
    return digests


def _stored_digests(store: Path) -> dict:
    """The digests kept in ``store``; a damaged store (truncated, not JSON, not a mapping) is dropped with a warning
    and rebuilt by the next write: it only saves reading files again."""
    if not store.exists():
        return {}
    try:
        known = json.loads(store.read_text(encoding="utf-8"))
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        known = None
    if not isinstance(known, dict):
        warnings.warn(f"{store} was damaged; the model files' digests are computed afresh and stored again")
        return {}
    return known


def file_stamp(path: Path) -> list[int]:
    """What tells a file changed without reading it: size, modification time, inode and status-change time.

    A file rewritten in place with its size and modification time put back (``touch -d``, ``rsync -t``, a tool
    that keeps times) still gets a new status-change time, which no user can set; a file replaced by another gets
    a new inode. Size and mtime alone let such a file be scored from the old digest (issue 53)."""
    status = path.stat()
    return [status.st_size, status.st_mtime_ns, status.st_ino, status.st_ctime_ns]


def _sound(entry: object) -> bool:
    """A stored digest entry: [size, mtime_ns, inode, ctime_ns, sha256 hex]."""
    return (
        isinstance(entry, list) and len(entry) == 5 and all(isinstance(part, int) for part in entry[:4])
        and isinstance(entry[4], str) and len(entry[4]) == 64 and set(entry[4]) <= set("0123456789abcdef")
    )  # fmt: skip


def model_fingerprint(
    folder: Path,
    head: str,
    control: str,
    dtype: torch.dtype,
    seed: int | None = None,
    store: Path | None = None,
) -> str:
    """The fingerprint of a model loaded from ``folder``: its files (no weight files for random weights), the
    ``head`` class, the control, the dtype, and ``seed`` when some weights were drawn from it (None otherwise).

    >>> model_fingerprint(Path("models/minilm"), "BertModel", "none", torch.float32)  # doctest: +SKIP
    '3f1c...'
    """
    parts = [f"files-v1\x1f{head}\x1f{control}\x1f{dtype}"]
    if seed is not None:
        parts.append(f"seed={seed}\x1ftransformers={transformers.__version__}")
    digests = file_digests(model_files(folder, weights=control != "random-weights"), store)
    parts += [f"{path.name}\x1e{digest}" for path, digest in sorted(digests.items())]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
