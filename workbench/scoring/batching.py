"""Running the model once per unique unit of work: cache look-up, length buckets, padding, progress.

A scorer reduces a probe frame to *units* (a text, a question-choice pair, a masked statement with
its candidates), each a tuple of strings; ``compute`` runs only the units the cache lacks, longest
first in batches of similar length (little padding; a scorer may order them otherwise, e.g. the
language-model scorers keep the choices of one prompt together), commits every batch to the cache (so an
interrupted run resumes) and returns every unit's output, whatever the order it ran in. A scorer that
batches inside its ``run`` (the language-model scorers: prompts once, then continuations across
questions) takes several batches' worth of units per call (``Work.batches``) and cuts them with
``length_batches``.
"""

import hashlib
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from workbench.progress import ProgressBar
from workbench.scoring.cache import PredictionCache, item_key
from workbench.scoring.models import Model, ScoringWarning

Unit = tuple[str, ...]
Features = dict[str, Any]  # "input_ids" (list[int]), "truncated" (bool), maybe "token_type_ids", extras


@dataclass(frozen=True)
class Work:
    """One kind of unit a scorer needs: ``encode`` turns units into features (one per unit, with
    ``input_ids`` and ``truncated``), ``run`` maps a batch of features to one float vector each;
    ``order`` sorts the features before batching (default: longest first); ``batches``: how many
    batches of units one ``run`` call receives (a ``run`` that re-batches them itself)."""

    kind: str
    encode: Callable[[list[Unit]], list[Features]]
    run: Callable[[list[Features]], list[np.ndarray]]
    order: Callable[[Features], Any] | None = None
    batches: int = 1


def compute(
    model: Model,
    work: Work,
    units: Sequence[Unit],
    batch_size: int,
    cache: PredictionCache | None,
    progress: bool = True,
) -> dict[Unit, np.ndarray]:
    """Every unit's output: cached ones read back, the rest computed in length-sorted batches."""
    namespace = hashlib.sha256(f"{model.fingerprint}\x1f{work.kind}\x1f{model.max_length}".encode()).hexdigest()
    keys = {unit: item_key(work.kind, unit) for unit in dict.fromkeys(units)}
    found = cache.get(namespace, keys.values()) if cache is not None else {}
    values = {unit: found[key] for unit, key in keys.items() if key in found}
    missing = [unit for unit, key in keys.items() if key not in found]
    if not missing:
        return values
    features = work.encode(missing)
    _report_truncation(work.kind, features, model.max_length)
    sort_key = work.order or (lambda item: -len(item["input_ids"]))
    order = sorted(range(len(missing)), key=lambda index: sort_key(features[index]))
    with ProgressBar(total=len(missing), unit="item", desc=f"{model.scorer} {work.kind}", disable=not progress) as bar:
        step = batch_size * work.batches
        for start in range(0, len(order), step):
            batch = order[start : start + step]
            with torch.inference_mode():
                outputs = work.run([features[index] for index in batch])
            done = {missing[index]: np.asarray(output, dtype=np.float32) for index, output in zip(batch, outputs)}
            if cache is not None:
                cache.put(namespace, {keys[unit]: value for unit, value in done.items()})
            values.update(done)
            bar.update(len(batch))
    return values


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices of ``lengths`` longest first, cut into batches of ``batch_size`` (similar lengths, little padding).

    >>> length_batches([3, 30, 1, 28, 2], 2)
    [[1, 3], [0, 4], [2]]
    """
    order = sorted(range(len(lengths)), key=lambda index: -lengths[index])
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def padded_tokens(lengths: Sequence[int], batch_size: int) -> int:
    """Token positions ``length_batches`` runs, padding included (a batch costs its rows times its longest).

    >>> padded_tokens([3, 30, 1, 28, 2], 2)
    67
    """
    return sum(len(batch) * lengths[batch[0]] for batch in length_batches(lengths, batch_size))


def encode_texts(model: Model, first: list[str], second: list[str] | None = None) -> list[Features]:
    """Tokenize texts (or text pairs) with special tokens; only over-long ones are truncated, and flagged."""
    tokenizer, limit = model.tokenizer, model.max_length
    encoded = tokenizer(first, second, truncation=False, verbose=False)
    columns = [name for name in ("input_ids", "token_type_ids") if name in encoded]
    features = [{**{name: encoded[name][index] for name in columns}, "truncated": False} for index in range(len(first))]
    long = [index for index, item in enumerate(features) if len(item["input_ids"]) > limit]
    if long:
        clipped = tokenizer(
            [first[index] for index in long],
            [second[index] for index in long] if second is not None else None,
            truncation=True,
            max_length=limit,
        )
        for row, index in enumerate(long):
            features[index] = {**{name: clipped[name][row] for name in columns}, "truncated": True}
    return features


def pad(features: list[Features], model: Model) -> dict[str, torch.Tensor]:
    """Right-pad ``input_ids`` (and ``token_type_ids``) into tensors on the model's device, with the attention mask."""
    lengths = np.fromiter((len(item["input_ids"]) for item in features), dtype=np.int64, count=len(features))
    mask = np.arange(lengths.max()) < lengths[:, None]  # row r keeps its first lengths[r] positions
    columns = [name for name in ("input_ids", "token_type_ids") if name in features[0]]
    batch = {"attention_mask": torch.from_numpy(mask.astype(np.int64))}
    for name in columns:
        filled = np.full(mask.shape, (model.tokenizer.pad_token_id or 0) if name == "input_ids" else 0, dtype=np.int64)
        filled[mask] = np.fromiter(
            (token for item in features for token in item[name]), dtype=np.int64, count=int(lengths.sum())
        )
        batch[name] = torch.from_numpy(filled)
    return {name: tensor.to(model.device) for name, tensor in batch.items()}


def _report_truncation(kind: str, features: list[Features], max_length: int) -> None:
    count = sum(item["truncated"] for item in features)
    if count:
        warnings.warn(
            f"{count} of {len(features)} {kind} inputs were longer than {max_length} tokens and were truncated; "
            "their scores only see the kept tokens (pass a larger max_length if the model allows it).",
            ScoringWarning,
            stacklevel=4,
        )
