"""Causal-LM scoring (``AutoModelForCausalLM``): each choice scored by the log-likelihood of its tokens
as the continuation of the question's prompt, under the rules of ``workbench.scoring.lm``.

Shared prefix: a batch holds the choices of a few prompts (``lm.by_prompt`` keeps them together).
Each unique prompt runs once (right-padded, ``use_cache=True``); its last position gives the first
choice token's distribution, and its key/value cache, gathered to one row per choice, is the past of
one more forward over the choices' remaining tokens (explicit position ids continue each prompt,
the attention mask hides the prompt's padding). The log-probabilities equal those of scoring each
prompt + choice string from scratch (``tests/test_scoring_lm.py`` checks it) at the cost of one
prompt per question instead of one per choice. Choices of one question differ much in length, so the
second forward runs in sub-batches of similar length (``length_chunks``): padding every choice to
the batch's longest would cost more than the prompt saves.
"""

import copy

import numpy as np
import polars as pl
import torch

from workbench.scoring import lm
from workbench.scoring.batching import Features, Work, pad
from workbench.scoring.cache import PredictionCache
from workbench.scoring.models import Model

RULES = lm.RULES


def choice_scores(
    model: Model, pairs: pl.DataFrame, rule: str, batch_size: int, cache: PredictionCache | None, progress: bool
) -> pl.DataFrame:
    """``pairs`` (``row``, ``choice``, ``prompt``, ``neutral``, ``continuation``) with ``score`` and ``rule``."""
    work = Work(
        "causal-logprobs",
        encode=lambda units: lm.encode_units(model, units, joint_limit=True, prompt_special=False),
        run=lambda features: token_logprobs(model, features),
        order=lm.by_prompt,
    )
    return lm.choice_scores(model, pairs, rule, batch_size, cache, progress, work)


def token_logprobs(model: Model, features: list[Features]) -> list[np.ndarray]:
    """Log-probability of each continuation token, the prompt of each unique ``prompt`` run once."""
    prompts = list(dict.fromkeys(item["prompt"] for item in features))
    index = {prompt: row for row, prompt in enumerate(prompts)}
    device = model.device
    group = torch.tensor([index[item["prompt"]] for item in features], device=device)
    first_tokens = torch.tensor([item["continuation"][0] for item in features], device=device)
    batch = pad([{"input_ids": list(prompt)} for prompt in prompts], model)
    out = model.network(**batch, use_cache=True)
    lengths = batch["attention_mask"].sum(dim=1)
    last = out.logits[torch.arange(len(prompts), device=device), lengths - 1].float()
    first = torch.log_softmax(last, dim=-1)[group, first_tokens].cpu().numpy()
    values = [[value] for value in first]
    for chunk in length_chunks([len(item["continuation"]) - 1 for item in features]):
        rows = torch.tensor(chunk, device=device)
        past = copy.deepcopy(out.past_key_values)
        past.batch_select_indices(group[rows])
        follow = pad([{"input_ids": features[row]["continuation"][:-1]} for row in chunk], model)
        width = follow["input_ids"].shape[1]
        logits = model.network(
            input_ids=follow["input_ids"],
            attention_mask=torch.cat([batch["attention_mask"][group[rows]], follow["attention_mask"]], dim=1),
            position_ids=lengths[group[rows]].unsqueeze(1) + torch.arange(width, device=device),
            past_key_values=past,
            use_cache=False,
        ).logits.float()
        targets = [features[row]["continuation"][1:] for row in chunk]
        padded = torch.tensor([target + [0] * (width - len(target)) for target in targets], device=device)
        rest = torch.log_softmax(logits, dim=-1).gather(-1, padded.unsqueeze(-1)).squeeze(-1).cpu().numpy()
        for position, (row, target) in enumerate(zip(chunk, targets)):
            values[row].extend(rest[position, : len(target)])
    return [np.asarray(value, dtype=np.float32) for value in values]


def length_chunks(lengths: list[int], slack: float = 1.25) -> list[list[int]]:
    """Indices of ``lengths`` (continuations after their first token) in sub-batches of similar length:
    longest first, a sub-batch closed when padding it to its longest would exceed ``slack`` times its
    real tokens. One-token continuations need no second forward and are left out.

    >>> length_chunks([3, 30, 0, 28, 2])
    [[1, 3], [0, 4]]
    """
    chunks: list[list[int]] = []
    real = 0
    for row in sorted((row for row, length in enumerate(lengths) if length > 0), key=lambda row: -lengths[row]):
        if chunks and chunks[-1] and (len(chunks[-1]) + 1) * lengths[chunks[-1][0]] <= slack * (real + lengths[row]):
            chunks[-1].append(row)
            real += lengths[row]
        else:
            chunks.append([row])
            real = lengths[row]
    return chunks
