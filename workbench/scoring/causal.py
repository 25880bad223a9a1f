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

import numpy as np
import polars as pl
import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from workbench.scoring import lm
from workbench.scoring.batching import Features, Work, length_batches, pad, padded_tokens
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
        encode=lambda units: lm.encode_units(model, units, joint_limit=True, prompt_special=False),
        run=lambda features, size: token_logprobs(model, features, size),
        order=lm.by_prompt,
        rank=lm.by_prompt_text,
        batches=BLOCK,
    )
    return lm.choice_scores(model, pairs, rule, batch_size, cache, progress, work)


def prefix_saving(features: list[Features], batch_size: int) -> float:
    """Padded token positions from scratch over those with the shared prefix, both length-batched.

    >>> item = lambda prompt, choice: {"prompt": tuple(prompt), "continuation": choice, "input_ids": [*prompt, *choice]}
    >>> # 5 rows x 45 against 39 + 5 x 6
    >>> round(prefix_saving([item(range(40), [7] * n) for n in (2, 3, 4, 5, 6)], 8), 2)
    3.26
    """
    scratch = padded_tokens([len(item["input_ids"]) - 1 for item in features], batch_size)
    prefixes = [len(prefix) for prefix in dict.fromkeys(item["prompt"][:-1] for item in features) if prefix]
    shared = padded_tokens(prefixes, batch_size) + padded_tokens(
        [len(item["continuation"]) for item in features], batch_size
    )
    return scratch / shared


def prefers_shared(features: list[Features], batch_size: int, device: str) -> bool:
    """Whether a block runs its prefixes once: ``prefix_saving`` reaches ``MIN_SAVING`` and, on a
    GPU (``device`` "cuda..."), batches hold at least ``GPU_MIN_BATCH`` rows."""
    if device.startswith("cuda") and batch_size < GPU_MIN_BATCH:
        return False
    return prefix_saving(features, batch_size) >= MIN_SAVING


def token_logprobs(model: Model, features: list[Features], batch_size: int, path: str = "auto") -> list[np.ndarray]:
    """Log-probability of each continuation token. ``path``: "shared" (prefix once per prompt),
    "scratch" (prompt + choice per unit) or "auto" (``prefers_shared``)."""
    if path == "shared" or (path == "auto" and prefers_shared(features, batch_size, str(model.device))):
        prefixes = list(dict.fromkeys(item["prompt"][:-1] for item in features))
        past = prefix_cache(model, prefixes, batch_size)
        if past is not None:
            index = {prefix: row for row, prefix in enumerate(prefixes)}
            group = [index[item["prompt"][:-1]] for item in features]
            inputs = [[item["prompt"][-1], *item["continuation"][:-1]] for item in features]
            return continuation_logprobs(model, inputs, features, batch_size, past, group)
    inputs = [list(item["input_ids"][:-1]) for item in features]
    return continuation_logprobs(model, inputs, features, batch_size)


def prefix_cache(model: Model, prefixes: list[tuple[int, ...]], batch_size: int) -> tuple[list, torch.Tensor] | None:
    """Each prefix run once: per layer (keys, values) of shape [prefixes, heads, longest, dim], right-padded,
    and the prefixes' lengths; ``None`` if the model's cache is not a plain key/value cache per layer.

    The tokens every prefix of the block starts with (``shared_head``: the instruction and the shots, the same
    text before every question) run once, and each prefix's rest runs after their cache."""
    device = model.device
    lengths = torch.tensor([len(prefix) for prefix in prefixes], device=device)
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
            padded["position_ids"] = len(head) + torch.arange(width, device=device).expand(len(batch), -1)
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
    return layers, lengths


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
    inputs: list[list[int]],
    features: list[Features],
    batch_size: int,
    past: tuple[list, torch.Tensor] | None = None,
    group: list[int] | None = None,
) -> list[np.ndarray]:
    """Run ``inputs`` in length-sorted batches, after their prefix's cache (``past``, row ``group``) if
    given; each unit's continuation tokens are the last ones its input predicts. The output head runs only
    on the positions from the batch's first predicting one (``logits_to_keep``, where the model takes it)."""
    device = model.device
    parameters = inspect.signature(model.network.forward).parameters
    # transformers 5.2x renamed the past key/values argument to ``cache`` (the old name warns, then goes)
    past_name = "cache" if "cache" in parameters else "past_key_values"
    values: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(features)
    for batch in length_batches([len(ids) for ids in inputs], batch_size):
        padded = pad([{"input_ids": inputs[row]} for row in batch], model)
        mask, width = padded["attention_mask"], padded["input_ids"].shape[1]
        start = torch.zeros(len(batch), dtype=torch.long, device=device)
        cache = None
        if past is not None:
            layers, lengths = past
            start = lengths[torch.tensor([group[row] for row in batch], device=device)]
            reach = int(start.max())
            if reach:
                rows = torch.tensor([group[row] for row in batch], device=device)
                cache = DynamicCache([(keys[rows, :, :reach], kept[rows, :, :reach]) for keys, kept in layers])
                mask = torch.cat([(torch.arange(reach, device=device) < start.unsqueeze(1)).long(), mask], dim=1)
        targets = [features[row]["continuation"] for row in batch]
        first = min(len(inputs[row]) - len(tokens) for row, tokens in zip(batch, targets))
        keep = {"logits_to_keep": width - first} if "logits_to_keep" in parameters else {}
        logits = model.network(
            input_ids=padded["input_ids"],
            attention_mask=mask,
            position_ids=start.unsqueeze(1) + torch.arange(width, device=device),
            use_cache=False,
            **{past_name: cache},
            **keep,
        ).logits
        skipped = width - logits.shape[1]
        count = max(len(tokens) for tokens in targets)
        # the kept position that predicts each target token (repeating the last one as padding)
        where = torch.tensor(
            [
                [len(inputs[row]) - len(tokens) + min(step, len(tokens) - 1) - skipped for step in range(count)]
                for row, tokens in zip(batch, targets)
            ],
            device=device,
        )
        ids = torch.tensor([tokens + tokens[-1:] * (count - len(tokens)) for tokens in targets], device=device)
        scores = gathered_logprobs(logits, where, ids).cpu().numpy()
        for position, (row, tokens) in enumerate(zip(batch, targets)):
            values[row] = scores[position, : len(tokens)]
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
