"""Encoder-decoder scoring (``AutoModelForSeq2SeqLM``): the encoder reads the question's prompt, and a
choice's score comes from the decoder's log-likelihood of its tokens (rules of ``workbench.scoring.lm``).

Shared prefix: each unique prompt in a batch is encoded once; its encoder states, gathered to one
row per choice, feed one decoder forward over all the choices (the decoder starts from the model's
``decoder_start_token_id``; no end-of-sequence token is scored). Prompts keep the tokenizer's
special tokens (T5's ``</s>``, BART's ``<s> ... </s>``); each of prompt and choice may use up to
``max_length`` tokens.
"""

import numpy as np
import polars as pl
import torch
from transformers.modeling_outputs import BaseModelOutput

from workbench.errors import WorkbenchError
from workbench.scoring import lm
from workbench.scoring.batching import Features, Work, pad
from workbench.scoring.cache import PredictionCache
from workbench.scoring.models import Model

RULES = lm.RULES


def choice_scores(
    model: Model, pairs: pl.DataFrame, rule: str, batch_size: int, cache: PredictionCache | None, progress: bool
) -> pl.DataFrame:
    """``pairs`` (``row``, ``choice``, ``prompt``, ``neutral``, ``continuation``) with ``score`` and ``rule``."""
    start = decoder_start(model)
    work = Work(
        "seq2seq-logprobs",
        encode=lambda units: lm.encode_units(model, units, joint_limit=False, prompt_special=True),
        run=lambda features: token_logprobs(model, features, start),
        order=lm.by_prompt,
    )
    return lm.choice_scores(model, pairs, rule, batch_size, cache, progress, work)


def decoder_start(model: Model) -> int:
    """The token the decoder starts from (config, else generation config)."""
    network = model.network
    for source in (network.config, getattr(network, "generation_config", None)):
        token = getattr(source, "decoder_start_token_id", None)
        if token is not None:
            return int(token)
    raise WorkbenchError(
        f"{model.name} names no decoder_start_token_id in its config or generation config, so its decoder "
        "cannot be started; set it in config.json (T5 uses the pad token, BART the EOS token)"
    )


def token_logprobs(model: Model, features: list[Features], start: int) -> list[np.ndarray]:
    """Log-probability of each continuation token, each unique ``prompt`` encoded once."""
    prompts = list(dict.fromkeys(item["prompt"] for item in features))
    index = {prompt: row for row, prompt in enumerate(prompts)}
    group = torch.tensor([index[item["prompt"]] for item in features], device=model.device)
    batch = pad([{"input_ids": list(prompt)} for prompt in prompts], model)
    states = model.network.get_encoder()(**batch).last_hidden_state
    decoder = pad([{"input_ids": [start, *item["continuation"][:-1]]} for item in features], model)
    logits = model.network(
        encoder_outputs=BaseModelOutput(last_hidden_state=states[group]),
        attention_mask=batch["attention_mask"][group],
        decoder_input_ids=decoder["input_ids"],
        decoder_attention_mask=decoder["attention_mask"],
        use_cache=False,
    ).logits.float()
    width = logits.shape[1]
    targets = torch.tensor(
        [item["continuation"] + [0] * (width - len(item["continuation"])) for item in features], device=model.device
    )
    values = torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1).cpu().numpy()
    return [values[row, : len(item["continuation"])] for row, item in enumerate(features)]
