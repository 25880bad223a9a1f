"""Inoculating a causal language model: the loss is −log p(gold answer | prompt), with the causal scorer's prompt.

A question becomes one sequence, its prompt then its gold choice, tokenised as the causal scorer tokenises them
(``workbench.scoring.lm.encode_units``: apart, the prompt cut from the left, never the choice); the loss of a
question is the summed negative log-likelihood of the choice's tokens, the mean over the questions of a step. That
is the ``sum`` rule's score of the gold answer, so training raises exactly what S_new then reads: S_new and S_orig
are the causal scorer's ``sum`` rule (``score_causal``), on the probe dev sample and on the science QA sets.

>>> items = causal_items(network, tokenizer, frame, max_length=128)  # doctest: +SKIP
"""

import numpy as np
import polars as pl
import torch

from workbench.scoring.lm import encode_units
from workbench.scoring.models import Model
from workbench.scoring.prompts import load_prompts, render_prompts

IGNORED = -100  # a position whose next token is no target (prompt, padding)


def is_causal_lm(network: torch.nn.Module) -> bool:
    """Whether ``network`` is a transformers causal LM (``*ForCausalLM``), not a multiple-choice model."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return type(network).__name__ in set(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values())


def as_model(network: torch.nn.Module, tokenizer, max_length: int, name: str = "inoculated") -> Model:
    """``network`` wrapped for the causal scorer (fingerprinted from its tensors: a trained network is new)."""
    from workbench.scoring.models import fingerprint

    return Model(
        name=name, scorer="causal", control="none", network=network, tokenizer=tokenizer, max_length=max_length,
        fingerprint=fingerprint(network, tokenizer, "none"), device=str(next(network.parameters()).device),
    )  # fmt: skip


def causal_items(network: torch.nn.Module, tokenizer, frame: pl.DataFrame, max_length: int) -> list[dict]:
    """One item per question of ``frame``: ``ids`` (prompt then gold choice) and ``targets`` (the choice's tokens
    at their positions, ``IGNORED`` elsewhere)."""
    gold = frame.select("probe", "question", choice=pl.col("choices").list.get(pl.col("answer")))
    pairs = render_prompts(gold, load_prompts())
    model = Model("training", "causal", "none", network, tokenizer, max_length, fingerprint="")
    features = encode_units(model, list(zip(pairs["prompt"], pairs["continuation"])), True, False)
    items = []
    for item in features:
        ids = np.array(item["input_ids"], dtype=np.int64)
        targets = np.full_like(ids, IGNORED)
        targets[len(item["prompt"]) :] = item["continuation"]
        items.append({"ids": ids, "targets": targets})
    return items


def causal_collate(items: list[dict], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-pad a batch: ``input_ids``, ``attention_mask``, ``targets`` ([questions, longest])."""
    width = max(len(item["ids"]) for item in items)
    ids = np.full((len(items), width), pad_id, dtype=np.int64)
    targets = np.full((len(items), width), IGNORED, dtype=np.int64)
    for row, item in enumerate(items):
        ids[row, : len(item["ids"])] = item["ids"]
        targets[row, : len(item["ids"])] = item["targets"]
    lengths = np.array([len(item["ids"]) for item in items])
    attention = (np.arange(width) < lengths[:, None]).astype(np.int64)
    return {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(attention),
            "targets": torch.from_numpy(targets)}  # fmt: skip


def causal_loss(network: torch.nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean over the batch's questions of −log p(gold choice | prompt) (the choice's summed token NLL)."""
    logits = network(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1]
    targets = batch["targets"][:, 1:]
    nll = torch.nn.functional.cross_entropy(
        logits.float().transpose(1, 2), targets, ignore_index=IGNORED, reduction="none"
    )
    return nll.sum(dim=1).mean()


def score_causal(network: torch.nn.Module, tokenizer, frame: pl.DataFrame, max_length: int, name: str, progress: bool):
    """``frame`` scored by the causal scorer's ``sum`` rule with ``network`` (no cache: a trained network is new);
    the empty choices that pad the science sets to five are dropped first (a likelihood has no masked slot)."""
    from workbench.scoring import score

    network.eval()
    real = frame.with_columns(choices=pl.col("choices").list.eval(pl.element().filter(pl.element() != "")))
    model = as_model(network, tokenizer, max_length, name)
    return score(real, model, "causal", rule="sum", batch_size=32, cache=False, progress=progress)
