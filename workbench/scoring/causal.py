"""Causal-LM scoring (``AutoModelForCausalLM``): each choice scored by the log-likelihood of its tokens
as the continuation of the question's prompt, under the rules of ``workbench.scoring.lm``.

Shared prefix: a batch holds the choices of a few prompts (``lm.by_prompt`` keeps them together).
Each unique prompt runs once (right-padded, ``use_cache=True``); its last position gives the first
choice token's distribution, and its key/value cache, gathered to one row per choice, is the past of
one more forward over the choices' remaining tokens (explicit position ids continue each prompt,
the attention mask hides the prompt's padding). The log-probabilities equal those of scoring each
prompt + choice string from scratch (``tests/test_scoring_lm.py`` checks it) at the cost of one
prompt per question instead of one per choice.
"""

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
    first = torch.log_softmax(last, dim=-1)[group, first_tokens]
    rests = [item["continuation"][1:] for item in features]
    width = max(len(rest) for rest in rests)
    if width == 0:
        return [value.reshape(1) for value in first.cpu().numpy()]
    follow = pad([{"input_ids": item["continuation"][:-1] or [0]} for item in features], model)  # [0]: a placeholder
    past = out.past_key_values
    past.batch_select_indices(group)
    mask = torch.cat([batch["attention_mask"][group], follow["attention_mask"]], dim=1)
    positions = lengths[group].unsqueeze(1) + torch.arange(width, device=device)
    logits = model.network(
        input_ids=follow["input_ids"], attention_mask=mask, position_ids=positions, past_key_values=past, use_cache=False
    ).logits.float()
    targets = torch.tensor([rest + [0] * (width - len(rest)) for rest in rests], device=device)
    rest = torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    values = torch.cat([first.unsqueeze(1), rest], dim=1).cpu().numpy()
    return [values[row, : len(item["continuation"])] for row, item in enumerate(features)]
