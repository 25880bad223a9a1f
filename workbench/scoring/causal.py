"""Causal-LM scoring (``AutoModelForCausalLM``): each choice scored by the log-likelihood of its tokens
as the continuation of the question's prompt, under the rules of ``workbench.scoring.lm``.

Shared prefix, in two phases over a block of units (``BLOCK`` batches; ``lm.by_prompt`` keeps one
question's choices together):

1. every unique prompt of the block, less its last token (the *prefix*), runs once, in batches of
   similar length (right-padded), and its key/value cache is kept, padded into one tensor per layer;
2. the continuations (the prompt's last token, then the choice's tokens but the last) run in batches
   across questions, sorted by length; each row's past is its own prefix's cache, gathered by index
   and cut to the longest prefix of the batch, under the mask [prefix | prefix padding | continuation
   | padding], with position ids that continue from the prefix's true length.

The log-probabilities equal those of scoring each prompt + choice string from scratch
(``tests/test_scoring_lm.py``); the prompt's tokens run once per question instead of once per choice,
and never through the output head. The saving is bounded by the token ratio: from scratch a block
runs ``sum(prompt + choice)`` positions, with the shared prefix ``sum over prompts(prompt) +
sum(choice)``. ``prefers_shared`` decides per block: where that ratio, counted with padding
(``prefix_saving``), is below ``MIN_SAVING`` (short prompts, long choices, questions that share no
prompt), or on a GPU with batches under ``GPU_MIN_BATCH`` (forwards too small to be bound by their
tokens: the extra prompt forwards and cache gathers cost more than the tokens saved), the block is
scored from scratch in length-sorted batches, as it is for a model whose cache is not a plain
per-layer key/value cache (sliding-window, recurrent and hybrid layers). The rule is deterministic
(no timing), so a run gives the same scores byte for byte. Figures: bench/README.md, "Shared prefix".
"""

import inspect
import operator

import numpy as np
import polars as pl
import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from workbench.scoring import lm
from workbench.scoring.batching import Features, Unit, Work, length_batches, pad, padded, padded_tokens
from workbench.scoring.cache import PredictionCache
from workbench.scoring.models import Model

RULES = lm.RULES
BLOCK = 16
"""Batches of units per block: the prefixes of one block share its continuation batches."""
MIN_SAVING = 1.25
"""The shared prefix runs when scratch / shared padded tokens reaches this; below it, from scratch
(the gather and the second kind of forward cost about this much; see bench/README.md, "Shared prefix")."""
MIN_HEAD = 32
"""Tokens every prefix of a block must share before they run once for all (``shared_head``): the shots."""
GPU_MIN_BATCH = 64
"""On a GPU the shared prefix needs batches at least this large (H100: 0.8x at 32 rows, 1.4x at 128)."""
LOGPROB_BYTES = 2**28
"""The float32 log-probabilities computed at once: rows of the batch are taken a few at a time to stay under it."""


def choice_scores(
    model: Model, pairs: pl.DataFrame, rule: str, batch_size: int | str, cache: PredictionCache | None, progress: bool
) -> pl.DataFrame:
    """``pairs`` (``row``, ``choice``, ``prompt``, ``neutral``, ``continuation``) with ``score`` and ``rule``."""
    work = Work(
        "causal-logprobs",
        encode=lambda units: encode(model, units),
        run=lambda features, size: token_logprobs(model, features, size),
        order=lm.by_prompt,
        rank=lm.by_prompt_text,
        batches=BLOCK,
    )
    return lm.choice_scores(model, pairs, rule, batch_size, cache, progress, work)


def encode(model: Model, units: list[Unit]) -> list[Features]:
    """``lm.encode_units`` for a decoder, with the arrays the runs read, made here on the tokenising thread rather
    than on the thread that runs the model: ``input_array`` (prompt + continuation, int64) and its views
    ``scratch_input`` (all but the last token), ``shared_input`` (the prompt's last token, then the continuation's
    but the last: what runs after the prefix's cache) and ``targets`` (the continuation); ``prefix_length`` (the
    prompt's tokens less one) and ``prefix``, a number that units of one call share when their prompts agree but
    for the last token."""
    features = lm.encode_units(model, units, joint_limit=True, prompt_special=False)
    numbers: dict[tuple[int, ...], int] = {}
    for item in features:
        prompt, tokens = item["prompt"], np.array(item["input_ids"], dtype=np.int64)
        size = len(prompt) - 1
        item.update(
            input_array=tokens, scratch_input=tokens[:-1], shared_input=tokens[size:-1], targets=tokens[size + 1 :],
            prefix_length=size, prefix=numbers.setdefault(prompt[:-1], len(numbers)),
        )  # fmt: skip
    return features


def prefix_saving(features: list[Features], batch_size: int) -> float:
    """Padded token positions from scratch over those with the shared prefix, both length-batched.

    >>> def unit(prompt, choice):  # what ``encode`` gives a prompt and a choice of these tokens
    ...     return {"scratch_input": np.array([*prompt, *choice])[:-1], "prefix_length": len(prompt) - 1, "prefix": 0}
    >>> # 5 rows x 45 against 39 + 5 x 6
    >>> round(prefix_saving([unit(range(40), [7] * n) for n in (2, 3, 4, 5, 6)], 8), 2)
    3.26
    """
    prefixes, _ = _prefixes(features)
    sizes = _column(features, "prefix_length")
    inputs = np.fromiter(map(len, map(operator.itemgetter("scratch_input"), features)), np.int64, len(features))
    firsts = sizes[prefixes]
    shared = padded_tokens(firsts[firsts > 0], batch_size) + padded_tokens(inputs - sizes, batch_size)
    return padded_tokens(inputs, batch_size) / shared


def prefers_shared(features: list[Features], batch_size: int, device: str) -> bool:
    """Whether a block runs its prefixes once: ``prefix_saving`` reaches ``MIN_SAVING`` and, on a
    GPU (``device`` "cuda..."), batches hold at least ``GPU_MIN_BATCH`` rows."""
    if device.startswith("cuda") and batch_size < GPU_MIN_BATCH:
        return False
    return prefix_saving(features, batch_size) >= MIN_SAVING


def token_logprobs(model: Model, features: list[Features], batch_size: int, path: str = "auto") -> list[np.ndarray]:
    """Log-probability of each continuation token (``features`` from ``encode``). ``path``: "shared" (prefix once
    per prompt), "scratch" (prompt + choice per unit) or "auto" (``prefers_shared``)."""
    targets = list(map(operator.itemgetter("targets"), features))
    if path == "shared" or (path == "auto" and prefers_shared(features, batch_size, str(model.device))):
        prefixes, group = _prefixes(features)
        layers = prefix_cache(model, [features[row]["prompt"][:-1] for row in prefixes.tolist()], batch_size)
        if layers is not None:
            inputs = list(map(operator.itemgetter("shared_input"), features))
            past = (layers, group, _column(features, "prefix_length"))
            return continuation_logprobs(model, inputs, targets, batch_size, past)
    return continuation_logprobs(model, list(map(operator.itemgetter("scratch_input"), features)), targets, batch_size)


def _column(features: list[Features], name: str) -> np.ndarray:
    return np.fromiter(map(operator.itemgetter(name), features), np.int64, count=len(features))


def _prefixes(features: list[Features]) -> tuple[np.ndarray, np.ndarray]:
    """The first unit of each distinct ``prefix``, in the order they first come, and each unit's prefix by that
    order."""
    _, firsts, inverse = np.unique(_column(features, "prefix"), return_index=True, return_inverse=True)
    order = np.argsort(firsts, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return firsts[order], rank[inverse.reshape(-1)]


def prefix_cache(model: Model, prefixes: list[tuple[int, ...]], batch_size: int) -> list | None:
    """Each prefix run once: per layer (keys, values) of shape [prefixes, heads, longest, dim], right-padded;
    ``None`` if the model's cache is not a plain key/value cache per layer.

    The tokens every prefix of the block starts with (``shared_head``: the instruction and the shots, the same
    text before every question) run once, and each prefix's rest runs after their cache."""
    device = model.device
    parameters = inspect.signature(model.network.forward).parameters
    keep = {"logits_to_keep": 1} if "logits_to_keep" in parameters else {}
    past_name = "cache" if "cache" in parameters else "past_key_values"
    head = shared_head(prefixes)
    head_cache = None
    if head:
        out = model.network(input_ids=torch.tensor([head], device=device), use_cache=True, **keep)
        head_cache = _plain_cache(out)
        if head_cache is None:
            return None
    layers: list[tuple[torch.Tensor, torch.Tensor]] = []
    for batch in length_batches([len(prefix) for prefix in prefixes], batch_size):
        if not prefixes[batch[0]]:
            break  # one-token prompts: their prefix is empty, and length_batches puts them last
        padded = pad([{"input_ids": list(prefixes[row][len(head) :])} for row in batch], model)
        if head_cache is not None:  # the rest of each prefix, after the shared head's keys and values
            width = padded["input_ids"].shape[1]
            padded["position_ids"] = (len(head) + torch.arange(width, device=device)).expand(len(batch), -1)
            padded["attention_mask"] = torch.cat(
                [padded["attention_mask"].new_ones(len(batch), len(head)), padded["attention_mask"]], dim=1
            )
            padded[past_name] = DynamicCache(
                [
                    (keys.expand(len(batch), -1, -1, -1), kept.expand(len(batch), -1, -1, -1))
                    for keys, kept in head_cache
                ]
            )
        cache = _plain_cache(model.network(**padded, use_cache=True, **keep))
        if cache is None:
            return None
        rows = torch.tensor(batch, device=device)
        for number, (keys, kept) in enumerate(cache):
            if len(layers) <= number:
                shape = (len(prefixes), keys.shape[1], len(prefixes[batch[0]]), keys.shape[3])
                layers.append((keys.new_zeros(shape), kept.new_zeros(shape)))
            width = keys.shape[2]
            layers[number][0][rows, :, :width] = keys
            layers[number][1][rows, :, :width] = kept
    return layers


def shared_head(prefixes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The tokens all ``prefixes`` start with, if at least ``MIN_HEAD`` and one short of the shortest (each prefix
    keeps a token of its own); else ().

    >>> shots = tuple(range(100, 140))  # 40 tokens before every question
    >>> shared_head([shots + (1, 2), shots + (3, 4, 5)]) == shots, shared_head([(1, 2, 3), (1, 2, 4)])
    (True, ())
    """
    filled = [prefix for prefix in prefixes if prefix]
    if len(filled) < 2:
        return ()
    first, last = min(filled), max(filled)  # the common prefix of all is that of the two extremes in order
    size = next((at for at, (a, b) in enumerate(zip(first, last)) if a != b), min(len(first), len(last)))
    size = min(size, min(len(prefix) for prefix in filled) - 1)
    return first[:size] if size >= MIN_HEAD else ()


def _plain_cache(out) -> list[tuple[torch.Tensor, torch.Tensor]] | None:
    """The forward's cache as (keys, values) per layer, or None if it is not a plain key/value cache."""
    cache = getattr(out, "cache", None) or out.past_key_values
    if not isinstance(cache, DynamicCache) or any(type(layer) is not DynamicLayer for layer in cache.layers):
        return None
    return [(layer.keys, layer.values) for layer in cache.layers]


def continuation_logprobs(
    model: Model,
    inputs: list[np.ndarray],
    targets: list[np.ndarray],
    batch_size: int,
    past: tuple[list, np.ndarray, np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Run ``inputs`` in length-sorted batches; each unit's ``targets`` are the tokens its last inputs predict.
    With ``past`` (the prefixes' cache from ``prefix_cache``, each unit's row in it, each unit's prefix length),
    a unit runs after its prefix's keys and values. The output head runs only on the positions from the batch's first
    predicting one (``logits_to_keep``, where the model takes it)."""
    device = model.device
    parameters = inspect.signature(model.network.forward).parameters
    # transformers 5.2x renamed the past key/values argument to ``cache`` (the old name warns, then goes)
    past_name = "cache" if "cache" in parameters else "past_key_values"
    lengths = np.fromiter(map(len, inputs), np.int64, count=len(inputs))
    sizes = np.fromiter(map(len, targets), np.int64, count=len(targets))
    values: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(inputs)
    done: list[tuple[list[int], np.ndarray, torch.Tensor]] = []
    for batch in length_batches(lengths, batch_size):
        ids, mask = padded(list(map(inputs.__getitem__, batch)), model.tokenizer.pad_token_id or 0)
        width, start, cache = ids.shape[1], np.zeros(len(batch), dtype=np.int64), None
        if past is not None:
            layers, group, prefix_lengths = past
            start = prefix_lengths[batch]
            reach = int(start.max())  # the longest prefix of the batch
            if reach:
                rows = torch.from_numpy(group[batch]).to(device)
                cache = DynamicCache([(keys[rows, :, :reach], kept[rows, :, :reach]) for keys, kept in layers])
                mask = np.concatenate([np.arange(reach) < start[:, None], mask], axis=1)
        counts, ends = sizes[batch], lengths[batch]
        keep = {"logits_to_keep": width - int((ends - counts).min())} if "logits_to_keep" in parameters else {}
        logits = model.network(
            input_ids=torch.from_numpy(ids).to(device),
            attention_mask=torch.from_numpy(mask.astype(np.int64)).to(device),
            position_ids=torch.from_numpy(start[:, None] + np.arange(width)).to(device),
            use_cache=False,
            **{past_name: cache},
            **keep,
        ).logits
        # the kept position that predicts each target token, and the token (the last one repeated as padding)
        steps = np.minimum(np.arange(counts.max()), counts[:, None] - 1)
        where = ends[:, None] - counts[:, None] + steps - (width - logits.shape[1])
        tokens = np.concatenate(list(map(targets.__getitem__, batch)))[(np.cumsum(counts) - counts)[:, None] + steps]
        where, tokens = torch.from_numpy(where).to(device), torch.from_numpy(tokens).to(device)
        done.append((batch, counts, gathered_logprobs(logits, where, tokens)))
    for batch, counts, scores in done:  # read back after every batch is queued: the device never waits on the host
        for row, count, line in zip(batch, counts.tolist(), scores.cpu().numpy()):
            values[row] = line[:count]
    return values


def gathered_logprobs(logits: torch.Tensor, where: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """``log_softmax(logits.float())[b, where[b, j], ids[b, j]]``, a few rows at a time: the float32
    log-probabilities in hand never pass ``LOGPROB_BYTES`` (one fused log-softmax per slice, casting as it reads).

    >>> logits = torch.randn(3, 5, 70000, dtype=torch.bfloat16)
    >>> where, ids = torch.tensor([[1, 4], [0, 0], [2, 3]]), torch.tensor([[7, 69999], [3, 3], [0, 1]])
    >>> full = torch.log_softmax(logits.float(), dim=-1)[torch.arange(3)[:, None], where, ids]
    >>> bool(torch.equal(gathered_logprobs(logits, where, ids), full))
    True
    """
    step = max(1, LOGPROB_BYTES // (logits.shape[1] * logits.shape[2] * 4))
    rows = torch.arange(min(step, len(logits)), device=where.device).unsqueeze(1)
    parts = []
    for start in range(0, len(logits), step):
        part = torch.log_softmax(logits[start : start + step], dim=-1, dtype=torch.float32)
        parts.append(part[rows[: len(part)], where[start : start + step], ids[start : start + step]])
    return torch.cat(parts)
