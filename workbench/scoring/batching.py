"""Running the model once per unique unit of work: cache look-up, length buckets, padding, progress.

A scorer reduces a probe frame to *units* (a text, a question-choice pair, a masked statement with
its candidates), each a tuple of strings; ``compute`` runs only the units the cache lacks and returns every
unit's output, whatever the order it ran in. The units are ranked longest text first and cut into chunks of a
few batches; a background thread tokenises the next chunks (``PREFETCH``) while the model runs this one, and
orders each chunk's units by token length (or a scorer's own order, e.g. the language-model scorers keep the
choices of one prompt together) into batches of similar length (little padding), with the token arrays that
``pad`` joins a unit, not a token, at a time (units are hashed only for a cache). A batch's outputs are read
back from the device once the next batch is launched. Outputs are committed to the cache every ``COMMIT_EVERY``
batches and when the run stops, even by an error, so an interrupted run resumes and a
killed one loses at most the batches since the last commit. The batch size is fixed or ``"auto"``
(``batch_sizes``: halved on out-of-memory, remembered). A scorer that batches inside its ``run`` (the
language-model scorers: prompts once, then continuations across questions) takes several batches' worth of
units per call (``Work.batches``) and cuts them with ``length_batches``.
"""

import contextlib
import hashlib
import itertools
import operator
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from workbench.progress import ProgressBar
from workbench.scoring.batch_sizes import BatchSize
from workbench.scoring.cache import PredictionCache, item_key
from workbench.scoring.models import Model, ScoringWarning

Unit = tuple[str, ...]
Features = dict[str, Any]  # "input_ids" (list[int]), "truncated" (bool), maybe "token_type_ids", extras

PREFETCH = 2
"""Chunks tokenised ahead of the model, on one background thread (0: tokenise in the calling thread)."""
CHUNK_STEPS = 4
"""Batches per tokenised chunk (the units sorted by token length together), or one ``run`` call's where it takes more
(``Work.batches``): the model starts after the first chunk, and the next ones are tokenised while it runs."""
COMMIT_EVERY = 8
"""``run`` calls between cache commits (one SQLite transaction each)."""


@dataclass(frozen=True)
class Work:
    """One kind of unit a scorer needs: ``encode`` turns units into features (one per unit, with
    ``input_ids`` and ``truncated``), ``run`` maps a batch of features and the batch size to one float vector each
    (a list of float32 arrays, or one tensor with a row each, which may stay on the device: it is read back after the
    next batch is launched, so the device does not wait on the host in between);
    ``order`` gives the order of a chunk's features for batching (default: ``longest_tokens_first``; it runs on the
    tokenising thread); ``rank`` the order of the units before they are tokenised (default: ``longest_text_first``);
    both return indices, computed over all the items at once; ``batches``: how many batches of units one ``run``
    call receives (a ``run`` that re-batches them itself, by the size it is given)."""

    kind: str
    encode: Callable[[list[Unit]], list[Features]]
    run: Callable[[list[Features], int], list[np.ndarray]]
    order: Callable[[list[Features]], np.ndarray] | None = None
    rank: Callable[[list[Unit]], np.ndarray] | None = None
    batches: int = 1


def compute(
    model: Model,
    work: Work,
    units: Sequence[Unit],
    batch_size: int | str,
    cache: PredictionCache | None,
    progress: bool = True,
    prefetch: int | None = None,
) -> dict[Unit, np.ndarray]:
    """Every unit's output: cached ones read back, the rest computed in length-sorted batches.

    ``batch_size``: a whole number, or ``"auto"``; ``prefetch``: chunks tokenised ahead on a background thread
    (default ``PREFETCH``; 0: none; the batches, and so the outputs, are the same either way).
    """
    prefetch = PREFETCH if prefetch is None else prefetch
    unique = list(dict.fromkeys(units))
    values: dict[Unit, np.ndarray] = {}
    keys: dict[Unit, str] = {}  # only with a cache: the units' hashes (one SHA-256 each) are the cache's
    namespace = hashlib.sha256(f"{model.fingerprint}\x1f{work.kind}\x1f{model.max_length}".encode()).hexdigest()
    if cache is not None:
        keys = {unit: item_key(work.kind, unit) for unit in unique}
        found = cache.get(namespace, keys.values())
        values = {unit: found[key] for unit, key in keys.items() if key in found}
        unique = [unit for unit, key in keys.items() if key not in found]
    if not unique:
        return values
    missing = list(map(unique.__getitem__, (work.rank or longest_text_first)(unique).tolist()))
    size = BatchSize(batch_size, _memory_key(model, work), model.device)
    order_of = work.order or longest_tokens_first
    chunk = size.value * max(work.batches, CHUNK_STEPS)
    chunks = [missing[start : start + chunk] for start in range(0, len(missing), chunk)]
    truncated, launched = 0, None  # launched: the last batch's units and outputs, maybe still on the device
    bar = ProgressBar(total=len(missing), unit="item", desc=f"{model.scorer} {work.kind}", disable=not progress)
    kept = _Outputs(cache, namespace, keys, values, bar)

    def prepare(todo: list[Unit]) -> tuple[list[Features], list[int], int]:
        """A chunk's features, the order its batches take them in, and how many were truncated (on the
        tokenising thread, with ``prefetch``)."""
        features = with_arrays(work.encode(todo))
        return features, order_of(features).tolist(), sum(map(operator.itemgetter("truncated"), features))

    def release(prepared: tuple[list[Features], list[int], int]) -> None:
        prepared[0].clear()

    with bar, _ahead(prepare, chunks, prefetch, release) as prepared, attention_kernels(model.device):
        try:
            for (features, order, cut), todo in zip(prepared, chunks):  # asked first: the last chunk is released too
                truncated += cut
                while order:
                    batch = order[: size.value * work.batches]
                    with torch.inference_mode():
                        outputs = size.run(work.run, list(map(features.__getitem__, batch)))
                    if outputs is None:  # out of memory: the size was halved, cut the batch again
                        continue
                    order = order[len(batch) :]
                    if launched is not None:  # read back the batch before, while the device runs this one
                        kept.keep(*launched)
                    launched = (list(map(todo.__getitem__, batch)), outputs)
            if launched is not None:
                kept.keep(*launched)
                launched = None
        finally:  # an error, or an interrupt, keeps what was computed
            if launched is not None:
                with contextlib.suppress(Exception):  # the error that stopped the run is the one to report
                    kept.keep(*launched)
            kept.commit()
    size.remember()
    _report_truncation(work.kind, truncated, len(missing), model.max_length)
    return values


class _Outputs:
    """Outputs as they come: read back from the device, added to ``values``, committed to ``cache`` every
    ``COMMIT_EVERY`` batches (``commit`` writes the rest)."""

    def __init__(self, cache: PredictionCache | None, namespace: str, keys: dict, values: dict, bar: ProgressBar):
        self.cache, self.namespace, self.keys, self.values, self.bar = cache, namespace, keys, values, bar
        self.pending: dict[str, np.ndarray] = {}
        self.batches = 0

    def keep(self, units: list[Unit], outputs: torch.Tensor | list[np.ndarray]) -> None:
        if isinstance(outputs, torch.Tensor):  # one array for the batch, its rows views of it
            rows = outputs.cpu().numpy().astype(np.float32, copy=False)
        else:  # float32 already (``Work.run``): a read back from the cache is the same array
            rows = outputs
        self.values.update(zip(units, rows))
        if self.cache is not None:
            self.pending.update(zip(map(self.keys.__getitem__, units), rows))
        self.batches += 1
        if self.batches % COMMIT_EVERY == 0:
            self.commit()
        self.bar.update(len(units))

    def commit(self) -> None:
        if self.cache is not None and self.pending:
            self.cache.put(self.namespace, self.pending)
        self.pending = {}


@contextlib.contextmanager
def _ahead(
    encode: Callable[[list[Unit]], Any], chunks: list[list[Unit]], prefetch: int, release: Callable[[Any], None]
) -> Iterator[Iterator[Any]]:
    """``encode`` of each chunk in turn, up to ``prefetch`` chunks computed ahead on one background thread, which
    also ``release``s each chunk's encoding once the next is asked for (a chunk's features are tens of thousands of
    Python objects: freeing them is work off the thread that runs the model)."""
    if prefetch == 0:
        yield (encode(chunk) for chunk in chunks)
        return
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tokenise")
    upcoming = iter(chunks)

    def results() -> Iterator[list[Features]]:
        queued = deque(pool.submit(encode, chunk) for chunk in itertools.islice(upcoming, prefetch))
        while queued:
            done = queued.popleft().result()
            queued.extend(pool.submit(encode, chunk) for chunk in itertools.islice(upcoming, 1))
            yield done
            pool.submit(release, done)

    try:
        yield results()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def longest_text_first(units: list[Unit]) -> np.ndarray:
    """The order of ``units`` by their texts' total length in characters, longest first (ties in their order).

    >>> longest_text_first([("a", "bb"), ("ccc", "dddd"), ("ee", "f")]).tolist()
    [1, 0, 2]
    """
    sizes = np.fromiter(map(len, itertools.chain.from_iterable(units)), dtype=np.int64)
    arity = np.fromiter(map(len, units), dtype=np.int64, count=len(units))
    totals = np.add.reduceat(sizes, np.cumsum(arity) - arity)
    return np.argsort(-totals, kind="stable")


def longest_tokens_first(features: list[Features]) -> np.ndarray:
    """The order of ``features`` by their number of tokens, longest first (ties in their order)."""
    lengths = np.fromiter(map(len, map(operator.itemgetter("input_ids"), features)), np.int64, count=len(features))
    return np.argsort(-lengths, kind="stable")


def _memory_key(model: Model, work: Work) -> str:
    """What decides a batch's memory: the weights, where and in what dtype they run, the work, the longest input."""
    return "\x1f".join((model.fingerprint, model.device, model.dtype, model.scorer, work.kind, str(model.max_length)))


def length_batches(lengths: Sequence[int] | np.ndarray, batch_size: int) -> list[list[int]]:
    """Indices of ``lengths`` longest first (ties in their order), cut into batches of ``batch_size`` (similar
    lengths, little padding).

    >>> length_batches([3, 30, 1, 28, 2], 2)
    [[1, 3], [0, 4], [2]]
    """
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable").tolist()
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def padded_tokens(lengths: Sequence[int] | np.ndarray, batch_size: int) -> int:
    """Token positions ``length_batches`` runs, padding included (a batch costs its rows times its longest).

    >>> padded_tokens([3, 30, 1, 28, 2], 2)
    67
    """
    ordered = np.sort(np.asarray(lengths, dtype=np.int64))[::-1]
    starts = np.arange(0, len(ordered), batch_size)
    return int((ordered[starts] * np.minimum(batch_size, len(ordered) - starts)).sum())


def encode_texts(model: Model, first: list[str], second: list[str] | None = None) -> list[Features]:
    """Tokenize texts (or text pairs) with special tokens; only over-long ones are truncated, and flagged."""
    tokenizer, limit = model.tokenizer, model.max_length
    if tokenizer.is_fast:
        features = _encode_fast(tokenizer, first, second)
    else:
        encoded = tokenizer(first, second, truncation=False, verbose=False)
        columns = [name for name in ("input_ids", "token_type_ids") if name in encoded]
        features = [{**{name: encoded[name][row] for name in columns}, "truncated": False} for row in range(len(first))]
    long = [index for index, item in enumerate(features) if len(item["input_ids"]) > limit]
    if long:
        clipped = tokenizer(
            [first[index] for index in long],
            [second[index] for index in long] if second is not None else None,
            truncation=True,
            max_length=limit,
        )
        columns = [name for name in ("input_ids", "token_type_ids") if name in clipped]
        for row, index in enumerate(long):
            features[index] = {**{name: clipped[name][row] for name in columns}, "truncated": True}
    return features


def _encode_fast(tokenizer, first: list[str], second: list[str] | None) -> list[Features]:
    """The Rust tokenizer called directly, without the per-text dictionaries transformers builds (most of the host
    time of scoring a small model on a GPU); the same ids as ``tokenizer(first, second, truncation=False)``."""
    backend = tokenizer.backend_tokenizer
    if backend.truncation is not None:  # left by a truncating call; transformers' next call would reset it too
        backend.no_truncation()
    if backend.padding is not None:
        backend.no_padding()
    split = getattr(tokenizer, "split_special_tokens", False)  # as transformers sets it before each call
    if backend.encode_special_tokens != split:
        backend.encode_special_tokens = split
    types = "token_type_ids" in tokenizer.model_input_names
    encodings = backend.encode_batch(first if second is None else list(zip(first, second)))
    if types:
        return [{"input_ids": item.ids, "token_type_ids": item.type_ids, "truncated": False} for item in encodings]
    return [{"input_ids": item.ids, "truncated": False} for item in encodings]


def attention_kernels(device: str) -> contextlib.AbstractContextManager:
    """The attention kernels scoring runs under: on a GPU, every backend of PyTorch's scaled-dot-product attention
    but cuDNN's, which builds a plan for each new shape (2.6 ms of host time a call on an H100 in bfloat16, and
    length-bucketed batches are nearly all new shapes: bfloat16 scored slower than float32, bench/README.md)."""
    if not device.startswith("cuda"):
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


@dataclass(frozen=True)
class Tokens:
    """A chunk's token lists end to end (``ids``, and ``types`` for models with token type ids), where each unit's
    start, and how many it has: the features of a chunk name their ``row`` here, so ``pad`` gathers a batch with
    NumPy, without a pass over its units' tokens."""

    ids: np.ndarray
    types: np.ndarray | None
    starts: np.ndarray
    lengths: np.ndarray


def with_arrays(features: list[Features]) -> list[Features]:
    """``features`` with their ``row`` in one ``Tokens`` of them all (``tokens``), unless ``encode`` gave them rows of
    its own: made on the tokenising thread, off the one that runs the model."""
    if not features or "row" in features[0]:
        return features
    tokens = tokens_of(features)
    for row, item in enumerate(features):
        item["row"], item["tokens"] = row, tokens
    return features


def tokens_of(features: list[Features]) -> Tokens:
    """The ``input_ids`` (and ``token_type_ids``, where the features have them) of ``features`` end to end."""
    ids = list(map(operator.itemgetter("input_ids"), features))
    lengths = np.fromiter(map(len, ids), np.int64, count=len(ids))
    count = int(lengths.sum())
    flat = np.fromiter(itertools.chain.from_iterable(ids), np.int64, count=count)
    types = None
    if "token_type_ids" in features[0]:
        typed = map(operator.itemgetter("token_type_ids"), features)
        types = np.fromiter(itertools.chain.from_iterable(typed), np.int64, count=count)
    return Tokens(flat, types, np.cumsum(lengths) - lengths, lengths)


def gathered(flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, fill: int) -> tuple[np.ndarray, np.ndarray]:
    """The runs of ``flat`` from ``starts``, ``lengths`` long, right-padded with ``fill`` into one [runs x longest]
    array, and the mask of their tokens.

    >>> gathered(np.array([5, 6, 7, 8]), np.array([1, 0]), np.array([3, 1]), 0)
    (array([[6, 7, 8],
           [5, 0, 0]]), array([[ True,  True,  True],
           [ True, False, False]]))
    """
    mask = np.arange(lengths.max()) < lengths[:, None]
    return np.where(mask, flat.take(starts[:, None] + np.arange(mask.shape[1]), mode="clip"), fill), mask


def pad(features: list[Features], model: Model) -> dict[str, torch.Tensor]:
    """Right-pad ``input_ids`` (and ``token_type_ids``) into tensors on the model's device, with the attention mask
    (gathered from their ``Tokens`` where ``with_arrays`` gave them one)."""
    fill = model.tokenizer.pad_token_id or 0
    if "tokens" in features[0]:  # all of one chunk
        tokens = features[0]["tokens"]
        rows = np.fromiter(map(operator.itemgetter("row"), features), np.int64, count=len(features))
        starts, lengths = tokens.starts[rows], tokens.lengths[rows]
        ids, mask = gathered(tokens.ids, starts, lengths, fill)
        batch = {"input_ids": ids}
        if tokens.types is not None:
            batch["token_type_ids"] = gathered(tokens.types, starts, lengths, 0)[0]
    else:
        batch = {}
        for name in ("input_ids", "token_type_ids"):
            if name in features[0]:
                rows = [np.array(item[name], dtype=np.int64) for item in features]
                batch[name], mask = padded(rows, fill if name == "input_ids" else 0)
    batch["attention_mask"] = mask.astype(np.int64)
    return {name: torch.from_numpy(array).to(model.device) for name, array in batch.items()}


def padded(rows: list[np.ndarray], fill: int, lengths: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` (int64 token arrays; ``lengths``, theirs if known) right-padded with ``fill`` into one
    [rows x longest] array, and the mask of their tokens.

    >>> padded([np.array([5, 6, 7]), np.array([8])], 0)
    (array([[5, 6, 7],
           [8, 0, 0]]), array([[ True,  True,  True],
           [ True, False, False]]))
    """
    if lengths is None:
        lengths = np.fromiter(map(len, rows), np.int64, count=len(rows))
    mask = np.arange(lengths.max()) < lengths[:, None]  # row r keeps its first lengths[r] positions
    filled = np.full(mask.shape, fill, dtype=np.int64)
    filled[mask] = np.concatenate(rows)
    return filled, mask


def _report_truncation(kind: str, count: int, total: int, max_length: int) -> None:
    if count:
        warnings.warn(
            f"{count} of {total} {kind} inputs were longer than {max_length} tokens and were truncated; "
            "their scores only see the kept tokens (pass a larger max_length if the model allows it).",
            ScoringWarning,
            stacklevel=4,
        )
