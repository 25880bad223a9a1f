"""Encoder-decoder scoring (``AutoModelForSeq2SeqLM``): the encoder reads the question's prompt, and a
choice's score comes from the decoder's log-likelihood of its tokens (rules of ``workbench.scoring.lm``).

Shared prefix: each unique prompt of a block (``BLOCK`` batches of units) is encoded once, in batches
of similar length, and its states kept (right-padded into one tensor); the decoder then runs the
choices in batches across questions, sorted by length, each row reading its own prompt's states
gathered by index (cut to the batch's longest prompt, under that prompt's mask). The decoder starts
from the model's ``decoder_start_token_id``; no end-of-sequence token is scored. Prompts keep the tokenizer's
special tokens (T5's ``</s>``, BART's ``<s> ... </s>``); each of prompt and choice may use up to
``max_length`` tokens.
"""

import numpy as np
import polars as pl
import torch
from transformers.modeling_outputs import BaseModelOutput

from workbench.errors import WorkbenchError
from workbench.scoring import lm
from workbench.scoring.batching import Features, Work, length_batches, pad
from workbench.scoring.cache import PredictionCache
from workbench.scoring.models import Model

BLOCK = 16
"""Batches of units per block: the prompts of one block share its decoder batches."""


def choice_scores(
    model: Model, pairs: pl.DataFrame, rule: str, batch_size: int | str, cache: PredictionCache | None, progress: bool
) -> pl.DataFrame:
    """``pairs`` (``row``, ``choice``, ``prompt``, ``neutral``, ``continuation``) with ``score`` and ``rule``."""
    start = decoder_start(model)
    work = Work(
        "seq2seq-logprobs",
        encode=lambda units: lm.encode_units(model, units, joint_limit=False, prompt_special=True),
        run=lambda features, size: token_logprobs(model, features, start, size),
        order=lm.by_prompt,
        rank=lm.by_prompt_text,
        batches=BLOCK,
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


def token_logprobs(model: Model, features: list[Features], start: int, batch_size: int) -> list[np.ndarray]:
    """Log-probability of each continuation token, each unique ``prompt`` encoded once."""
    device = model.device
    prompts = list(dict.fromkeys(item["prompt"] for item in features))
    index = {prompt: row for row, prompt in enumerate(prompts)}
    lengths = torch.tensor([len(prompt) for prompt in prompts], device=device)
    states: torch.Tensor | None = None
    for batch in length_batches([len(prompt) for prompt in prompts], batch_size):
        encoded = model.network.get_encoder()(
            **pad([{"input_ids": list(prompts[row])} for row in batch], model)
        ).last_hidden_state
        if states is None:
            states = encoded.new_zeros((len(prompts), encoded.shape[1], encoded.shape[2]))
        states[torch.tensor(batch, device=device), : encoded.shape[1]] = encoded
    values: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(features)
    for batch in length_batches([len(item["continuation"]) for item in features], batch_size):
        rows = torch.tensor([index[features[row]["prompt"]] for row in batch], device=device)
        reach = int(lengths[rows].max())
        decoder = pad([{"input_ids": [start, *features[row]["continuation"][:-1]]} for row in batch], model)
        logits = model.network(
            encoder_outputs=BaseModelOutput(last_hidden_state=states[rows, :reach]),
            attention_mask=(torch.arange(reach, device=device) < lengths[rows].unsqueeze(1)).long(),
            decoder_input_ids=decoder["input_ids"],
            decoder_attention_mask=decoder["attention_mask"],
            use_cache=False,
        ).logits.float()
        width = logits.shape[1]
        targets = torch.tensor(
            [features[row]["continuation"] + [0] * (width - len(features[row]["continuation"])) for row in batch],
            device=device,
        )
        scores = torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1).cpu().numpy()
        for position, row in enumerate(batch):
            values[row] = scores[position, : len(features[row]["continuation"])]
    return values
