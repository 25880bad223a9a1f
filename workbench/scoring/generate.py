"""Free answers (the ``generate`` scorer): a causal LM's greedy answer after the question's prompt, matched
against the gold (``workbench.scoring.answers``), so that accuracy is *recall* (producing the answer) where the
choice scorers measure *recognition* (picking it among the choices).

The prompt is the one the causal scorer would run (``asking.render``: the same templates, shots and chat
template; in cloze only, so each shot's answer is its gold's text and the model sees the form of an answer). The
model decodes greedily (``generate``, no sampling, one beam) up to ``max_new_tokens``, batched with left padding,
and a row stops at the first token holding a newline, or any special token (EOS, the chat's end of turn); the
answer is the decoded text's first line. The generated token ids are kept in the prediction cache (one unit per
prompt and ``max_new_tokens``), so a rerun decodes nothing again and an interrupted run resumes.

Each question's ``scores`` hold 1 for the choice its answer names (``pred``; null when it names none) and 0 for the
others; ``generated``, ``matched`` and ``match`` say what was answered and how it matched.
"""

import numpy as np
import polars as pl
import torch
from transformers import LogitsProcessor, LogitsProcessorList

from workbench.scoring.answers import answered
from workbench.scoring.batching import Features, Unit, Work, compute, length_batches
from workbench.scoring.cache import PredictionCache
from workbench.scoring.lm import _leading_bos
from workbench.scoring.models import Model

KIND = "causal-greedy"

_STOPS: dict[str, list[int]] = {}


def question_scores(
    model: Model,
    probes: pl.DataFrame,
    prompts: list[str],
    max_new_tokens: int,
    batch_size: int | str,
    cache: PredictionCache | None,
    progress: bool,
    letters: bool = False,
) -> pl.DataFrame:
    """One row per question of ``probes`` (its ``prompts``, in order): ``row``, ``rule``, ``scores``, ``prompt``,
    ``generated``, ``matched``, ``match`` and ``pred`` (``letters``: the answer names a choice by its letter)."""
    said = generate_answers(model, prompts, max_new_tokens, batch_size, cache, progress)
    broken = pl.Series([text is None for text in said])
    frame = answered(probes, prompts, [text or "" for text in said], letters)
    # a decoding that met a NaN logit scores NaN: the run is refused as any damaged model's (questions.check_finite)
    return frame.with_columns(
        scores=pl.when(broken).then(pl.col("scores").list.eval(pl.element() * float("nan"))).otherwise("scores")
    )


def generate_answers(
    model: Model,
    prompts: list[str],
    max_new_tokens: int,
    batch_size: int | str,
    cache: PredictionCache | None = None,
    progress: bool = False,
) -> list[str | None]:
    """The greedy answer (first line, stripped) of ``model`` after each prompt, None where decoding met a NaN logit;
    each unique prompt decoded once."""
    stops = stop_tokens(model)
    work = Work(
        KIND,
        encode=lambda units: encode_prompts(model, units, max_new_tokens),
        run=lambda features, size: decode(model, features, size, max_new_tokens, stops),
    )
    units = [(prompt, str(max_new_tokens)) for prompt in prompts]
    values = compute(model, work, units, batch_size, cache, progress)
    texts = {
        unit: None if np.isnan(values[unit]).any() else answer_text(model, values[unit])
        for unit in dict.fromkeys(units)
    }
    return [texts[unit] for unit in units]


def encode_prompts(model: Model, units: list[Unit], max_new_tokens: int) -> list[Features]:
    """Each prompt's tokens (a BOS first where the tokenizer adds one itself), cut from the left (after any leading
    special token) to leave ``max_new_tokens`` of ``max_length``."""
    tokenizer = model.tokenizer
    encoded = tokenizer([prompt for prompt, _ in units], add_special_tokens=False, verbose=False)["input_ids"]
    lead = _leading_bos(model)
    room = max(1, model.max_length - max_new_tokens)
    special = set(tokenizer.all_special_ids)
    features = []
    for ids in encoded:
        ids = lead + ids or [tokenizer.bos_token_id or tokenizer.eos_token_id or 0]
        truncated = len(ids) > room
        if truncated:
            keep = min(next((index for index, token in enumerate(ids) if token not in special), 0), room - 1)
            ids = ids[:keep] + ids[len(ids) - (room - keep) :]
        features.append({"input_ids": ids, "truncated": truncated})
    return features


def decode(
    model: Model, features: list[Features], batch_size: int, max_new_tokens: int, stops: list[int]
) -> list[np.ndarray]:
    """Greedy new tokens of each prompt, up to and including the first stop token, as float32 ids (the cache's
    type; exact below 2**24); a prompt whose decoding met a NaN (or +inf) logit gets ``[nan]`` instead: greedy
    search would have taken the NaN's token as the best, an answer of damaged weights."""
    pad = model.tokenizer.pad_token_id
    pad = pad if pad is not None else stops[0]
    values: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(features)
    for batch in length_batches([len(item["input_ids"]) for item in features], batch_size):
        width = len(features[batch[0]]["input_ids"])
        ids = torch.full((len(batch), width), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for position, row in enumerate(batch):  # left padding: every prompt ends where decoding starts
            tokens = features[row]["input_ids"]
            ids[position, width - len(tokens) :] = torch.tensor(tokens)
            mask[position, width - len(tokens) :] = 1
        watch = NonFinite(len(batch))
        out = (
            model.network.generate(
                input_ids=ids.to(model.device),
                attention_mask=mask.to(model.device),
                max_new_tokens=max_new_tokens,
                do_sample=False,
                num_beams=1,
                eos_token_id=stops,
                pad_token_id=pad,
                temperature=None,
                top_p=None,
                top_k=None,
                logits_processor=LogitsProcessorList([watch]),
            )[:, width:]
            .cpu()
            .numpy()
        )
        stopping = np.isin(out, stops)
        for position, row in enumerate(batch):
            hits = np.flatnonzero(stopping[position])
            end = int(hits[0]) + 1 if hits.size else out.shape[1]
            values[row] = out[position, :end].astype(np.float32)
            if watch.seen[position]:
                values[row] = np.full(1, np.nan, dtype=np.float32)
    return values


class NonFinite(LogitsProcessor):
    """Marks the rows of a batch whose next-token logits held a NaN or +inf at any step (-inf is a masked token)."""

    def __init__(self, rows: int) -> None:
        self.seen = np.zeros(rows, dtype=bool)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        self.seen |= (torch.isnan(scores) | torch.isposinf(scores)).any(dim=-1).cpu().numpy()
        return scores


def answer_text(model: Model, ids: np.ndarray) -> str:
    """The decoded answer's first line, stripped (special tokens dropped)."""
    text = model.tokenizer.decode(ids.astype(np.int64).tolist(), skip_special_tokens=True)
    return text.split("\n", 1)[0].strip()


def stop_tokens(model: Model) -> list[int]:
    """Where an answer ends: the tokenizer's special tokens, the model's EOS tokens and every token whose text holds
    a newline (found once per tokenizer)."""
    key = model.fingerprint
    if key not in _STOPS:
        tokenizer = model.tokenizer
        size = len(tokenizer)
        texts = tokenizer.batch_decode([[index] for index in range(size)])
        ends = getattr(getattr(model.network, "generation_config", None), "eos_token_id", None)
        ends = [] if ends is None else [ends] if isinstance(ends, int) else list(ends)
        newline = [index for index, text in enumerate(texts) if "\n" in text]
        special = [index for index in tokenizer.all_special_ids if index != tokenizer.pad_token_id]
        _STOPS[key] = sorted({*ends, *special, *newline, tokenizer.eos_token_id} - {None})
    return _STOPS[key]
