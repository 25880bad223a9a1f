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
import itertools
import operator
from dataclasses import dataclass

import numpy as np
import polars as pl
import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from workbench.scoring import lm
from workbench.scoring.batching import Features, Unit, Work, gathered, length_batches, padded, padded_tokens, tokens_of
from workbench.scoring.cache import PredictionCache
from workbench.scoring.models import Model

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


@dataclass(frozen=True)
class Block:
    """Units as arrays, one row each, over the ``tokens`` of all of them (prompt + continuation, end to end): where a
    unit's tokens start, its ``prefix`` (a number that units share when their prompts agree but for the last token),
    ``prefix_length`` (the prompt's tokens less one) and ``length`` (its tokens less the last: what it runs from
    scratch)."""

    tokens: np.ndarray
    starts: np.ndarray
    prefix: np.ndarray
    prefix_length: np.ndarray
    length: np.ndarray

    def take(self, rows: np.ndarray) -> "Block":
        """The block of units ``rows`` (the tokens shared)."""
        return Block(self.tokens, self.starts[rows], self.prefix[rows], self.prefix_length[rows], self.length[rows])


def encode(model: Model, units: list[Unit]) -> list[Features]:
    """``lm.encode_units`` for a decoder, with the arrays the runs read, made here on the tokenising thread rather
    than on the thread that runs the model: each unit's feature names its ``row`` in the ``block`` of all of them
    (``block_of`` reads a run's units from it without a pass over their tokens)."""
    features = lm.encode_units(model, units, joint_limit=True, prompt_special=False)
    tokens = tokens_of(features)
    prompts = list(map(operator.itemgetter("prompt"), features))
    numbers: dict[tuple[int, ...], int] = {}
    prefix = np.fromiter((numbers.setdefault(prompt[:-1], len(numbers)) for prompt in prompts), np.int64, len(prompts))
    prefix_length = np.fromiter(map(len, prompts), np.int64, count=len(prompts)) - 1
    block = Block(tokens.ids, tokens.starts, prefix, prefix_length, tokens.lengths - 1)
    for row, item in enumerate(features):
        item["row"], item["block"] = row, block
    return features


def block_of(features: list[Features]) -> Block:
    """The ``Block`` of ``features`` (from one ``encode`` call), in their order."""
    return features[0]["block"].take(np.fromiter(map(operator.itemgetter("row"), features), np.int64, len(features)))


def prefix_saving(block: Block, batch_size: int) -> float:
    """Padded token positions from scratch over those with the shared prefix, both length-batched.

    >>> # 5 units of one 40-token prompt and 2 to 6 tokens: 5 rows x 45 against 39 + 5 x 6
    >>> lengths = np.array([41, 42, 43, 44, 45])
    >>> round(prefix_saving(Block(None, None, np.zeros(5, int), np.full(5, 39), lengths), 8), 2)
    3.26
    """
    firsts = block.prefix_length[_prefixes(block.prefix)[0]]
    continuations = padded_tokens(block.length - block.prefix_length, batch_size)
    return padded_tokens(block.length, batch_size) / (padded_tokens(firsts[firsts > 0], batch_size) + continuations)


def prefers_shared(block: Block, batch_size: int, device: str) -> bool:
    """Whether a block runs its prefixes once: ``prefix_saving`` reaches ``MIN_SAVING`` and, on a GPU (``device``
    "cuda..."), batches hold at least ``GPU_MIN_BATCH`` rows."""
    if device.startswith("cuda") and batch_size < GPU_MIN_BATCH:
        return False
    return prefix_saving(block, batch_size) >= MIN_SAVING


def token_logprobs(model: Model, features: list[Features], batch_size: int, path: str = "auto") -> list[np.ndarray]:
    """Log-probability of each continuation token (``features`` from one ``encode`` call). ``path``: "shared"
    (prefix once per prompt), "scratch" (prompt + choice per unit) or "auto" (``prefers_shared``)."""
    block = block_of(features)
    if path == "shared" or (path == "auto" and prefers_shared(block, batch_size, str(model.device))):
        firsts, group = _prefixes(block.prefix)
        starts, sizes = block.starts[firsts].tolist(), block.prefix_length[firsts].tolist()
        layers = prefix_cache(model, [block.tokens[at : at + size] for at, size in zip(starts, sizes)], batch_size)
        if layers is not None:
            return continuation_logprobs(model, block, batch_size, (layers, group))
    return continuation_logprobs(model, block, batch_size)


def _prefixes(numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first unit of each distinct prefix ``numbers``, in the order they first come, and each unit's prefix by
    that order."""
    _, firsts, inverse = np.unique(numbers, return_index=True, return_inverse=True)
    order = np.argsort(firsts, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return firsts[order], rank[inverse.reshape(-1)]


def prefix_cache(model: Model, prefixes: list[np.ndarray], batch_size: int) -> list | None:
    """Each prefix (an int64 token array) run once: per layer (keys, values) of shape [prefixes, heads, longest, dim],
    right-padded; ``None`` if the model's cache is not a plain key/value cache per layer.

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
    for batch in length_batches(np.fromiter(map(len, prefixes), np.int64, len(prefixes)), batch_size):
        if not len(prefixes[batch[0]]):
            break  # one-token prompts: their prefix is empty, and length_batches puts them last
        rests = [prefixes[row][len(head) :] for row in batch] if head else list(map(prefixes.__getitem__, batch))
        ids, mask = padded(rests, model.tokenizer.pad_token_id or 0)
        padded_batch = {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask.astype(np.int64))}
        padded_batch = {name: tensor.to(device) for name, tensor in padded_batch.items()}
        if head_cache is not None:  # the rest of each prefix, after the shared head's keys and values
            width = ids.shape[1]
            padded_batch["position_ids"] = (len(head) + torch.arange(width, device=device)).expand(len(batch), -1)
            padded_batch["attention_mask"] = torch.cat(
                [padded_batch["attention_mask"].new_ones(len(batch), len(head)), padded_batch["attention_mask"]], dim=1
            )
            padded_batch[past_name] = DynamicCache(
                [
                    (keys.expand(len(batch), -1, -1, -1), kept.expand(len(batch), -1, -1, -1))
                    for keys, kept in head_cache
                ]
            )
        cache = _plain_cache(model.network(**padded_batch, use_cache=True, **keep))
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


def shared_head(prefixes: list) -> tuple[int, ...]:
    """The tokens all ``prefixes`` (token sequences) start with, if at least ``MIN_HEAD`` and one short of the
    shortest (each prefix keeps a token of its own); else ().

    >>> shots = tuple(range(100, 140))  # 40 tokens before every question
    >>> shared_head([shots + (1, 2), shots + (3, 4, 5)]) == shots, shared_head([(1, 2, 3), (1, 2, 4)])
    (True, ())
    """
    filled = [np.asarray(prefix, dtype=np.int64) for prefix in prefixes if len(prefix)]
    if len(filled) < 2:
        return ()
    starts, mask = padded(filled, -1)
    shortest = int(mask.sum(axis=1).min())
    same = (starts[:, :shortest] == starts[0, :shortest]).all(axis=0)
    size = min(shortest if same.all() else int(same.argmin()), shortest - 1)
    return tuple(starts[0, :size].tolist()) if size >= MIN_HEAD else ()


def _plain_cache(out) -> list[tuple[torch.Tensor, torch.Tensor]] | None:
    """The forward's cache as (keys, values) per layer, or None if it is not a plain key/value cache."""
    cache = getattr(out, "cache", None) or out.past_key_values
    if not isinstance(cache, DynamicCache) or any(type(layer) is not DynamicLayer for layer in cache.layers):
        return None
    return [(layer.keys, layer.values) for layer in cache.layers]


def continuation_logprobs(
    model: Model, block: Block, batch_size: int, past: tuple[list, np.ndarray] | None = None
) -> list[np.ndarray]:
    """Run each unit of ``block`` in length-sorted batches: from scratch, or with ``past`` (the prefixes' cache from
    ``prefix_cache`` and each unit's row in it) after its prefix's keys and values; its continuation tokens are the
    last ones its input predicts. The output head runs only on the positions from the batch's first predicting one
    (``logits_to_keep``, where the model takes it)."""
    device = model.device
    parameters = inspect.signature(model.network.forward).parameters
    # transformers 5.2x renamed the past key/values argument to ``cache`` (the old name warns, then goes)
    past_name = "cache" if "cache" in parameters else "past_key_values"
    sizes = block.length - block.prefix_length  # continuation tokens, each predicted by one input
    begins = block.starts if past is None else block.starts + block.prefix_length
    lengths = block.length if past is None else sizes
    batches = [np.asarray(batch) for batch in length_batches(lengths, batch_size)]
    pad_id = model.tokenizer.pad_token_id or 0
    done = []
    for batch in batches:
        ends, counts = lengths[batch], sizes[batch]
        ids, mask = gathered(block.tokens, begins[batch], ends, pad_id)
        width, start, cache = ids.shape[1], np.zeros(len(batch), dtype=np.int64), None
        if past is not None:
            layers, group = past
            start = block.prefix_length[batch]
            reach = int(start.max())  # the longest prefix of the batch
            if reach:
                rows = torch.from_numpy(group[batch]).to(device)
                cache = DynamicCache([(keys[rows, :, :reach], kept[rows, :, :reach]) for keys, kept in layers])
                mask = np.concatenate([np.arange(reach) < start[:, None], mask], axis=1)
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
        tokens = block.tokens[(block.starts + block.prefix_length + 1)[batch, None] + steps]
        where, tokens = torch.from_numpy(where).to(device), torch.from_numpy(tokens).to(device)
        done.append(gathered_logprobs(logits, where, tokens))
    # read back after every batch is queued (the device never waits on the host); each unit's row cut to its tokens
    rows = itertools.chain.from_iterable(scores.cpu().numpy() for scores in done)
    order = np.concatenate(batches)
    cut = list(map(operator.getitem, rows, map(slice, sizes[order].tolist())))
    return list(map(cut.__getitem__, np.argsort(order).tolist()))


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
