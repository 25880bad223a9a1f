"""Masked-LM scoring (SPEC §4; oLMpics §2), with a rule per question.

- ``mc-mlm`` (oLMpics MC-MLM): when every choice is one token in context, the statement holds one
  mask (the question's own ``[MASK]``, or one appended: ``question + " " + [MASK]``) and a choice's
  score is its log-probability under the MLM softmax restricted to the question's candidates.
- ``pll-sum`` / ``pll-mean``: for multi-token choices, the choice is written into the statement and
  each of its tokens is masked in turn (Salazar et al. 2020's pseudo-log-likelihood, over the
  choice's tokens, the question being the shared context); the score is the sum of their
  log-probabilities, or the mean (which does not penalise long choices).

``rule="auto"`` takes mc-mlm where it applies and pll-mean elsewhere. Over-long inputs lose tokens
from the start of the question, never the mask or the choice.
"""

import numpy as np
import polars as pl
import torch

from workbench.errors import WorkbenchError
from workbench.scoring.batching import Features, Unit, Work, compute, pad
from workbench.scoring.cache import PredictionCache
from workbench.scoring.models import Model

_MASK = "[MASK]"


def choice_scores(
    model: Model, pairs: pl.DataFrame, rule: str, batch_size: int | str, cache: PredictionCache | None, progress: bool
) -> pl.DataFrame:
    """``pairs`` (``row``, ``question``, ``choice``) with ``score`` and the ``rule`` each row used."""
    if not model.tokenizer.is_fast:
        raise WorkbenchError(f"the mlm scorer needs a fast tokenizer (with offsets); {model.name} has none")
    prefixes, suffixes = _split_at_mask(model, pairs["question"].to_list())
    units = list(zip(prefixes, pairs["choice"].to_list(), suffixes))
    filled = _filled(model, units)
    rules = _rules(pairs.with_columns(tokens=pl.Series([len(filled[unit]["targets"]) for unit in units])), rule)
    is_mc = (rules == "mc-mlm").to_numpy()
    scores = np.empty(len(pairs))
    if is_mc.any():
        mc_units = [unit for unit, keep in zip(units, is_mc) if keep]
        scores[is_mc] = _mc_mlm(model, pairs.filter(is_mc), mc_units, filled, batch_size, cache, progress)
    if not is_mc.all():
        pll_units = [unit for unit, keep in zip(units, is_mc) if not keep]
        work = Work(
            "pll", encode=lambda todo: [filled[unit] for unit in todo], run=lambda items, size: _pll(model, items, size)
        )
        values = compute(model, work, pll_units, batch_size, cache, progress)
        reduce = {"pll-sum": np.sum, "pll-mean": np.mean}
        pll_rules = rules.filter(pl.Series(~is_mc))
        scores[~is_mc] = [float(reduce[name](values[unit])) for unit, name in zip(pll_units, pll_rules)]
    return pairs.with_columns(score=pl.Series(scores), rule=rules)


def _split_at_mask(model: Model, questions: list[str]) -> tuple[list[str], list[str]]:
    """Each question's text before and after its mask (one appended after the question if it has none)."""
    mask = model.tokenizer.mask_token
    prefixes, suffixes = [], []
    for question in questions:
        parts = question.replace(_MASK, mask).split(mask)
        if len(parts) > 2:
            raise WorkbenchError(
                f"the mlm scorer takes at most one {mask} per question; this one has more: {question!r}"
            )
        prefixes.append(parts[0] if len(parts) == 2 else question.rstrip() + " ")
        suffixes.append(parts[1] if len(parts) == 2 else "")
    return prefixes, suffixes


def _filled(model: Model, units: list[Unit]) -> dict[Unit, Features]:
    """Each unique (prefix, choice, suffix) statement with the choice written in; its tokens are the targets."""
    unique = list(dict.fromkeys(units))
    encoded = model.tokenizer(
        [prefix + choice + suffix for prefix, choice, suffix in unique],
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
        verbose=False,
    )
    features = {}
    for row, (prefix, choice, suffix) in enumerate(unique):
        start, end = len(prefix), len(prefix) + len(choice)
        spans, special = encoded["offset_mapping"][row], encoded["special_tokens_mask"][row]
        targets = [
            position
            for position, (left, right) in enumerate(spans)
            if not special[position] and right > left and left >= start and right <= end
        ]
        features[(prefix, choice, suffix)] = _clip(model, encoded["input_ids"][row], targets)
    return features


def _clip(model: Model, ids: list[int], targets: list[int]) -> Features:
    """Drop tokens after the first (special) one until ``ids`` fits; ``targets`` must survive."""
    excess = len(ids) - model.max_length
    if excess > 0:
        if min(targets, default=1) - excess < 1:
            raise WorkbenchError(
                f"a statement is {len(ids)} tokens and its mask or choice lies beyond the last "
                f"{model.max_length}; shorten the text after the mask or raise max_length"
            )
        ids, targets = ids[:1] + ids[1 + excess :], [position - excess for position in targets]
    return {"input_ids": ids, "targets": targets, "truncated": excess > 0}


def _rules(pairs: pl.DataFrame, rule: str) -> pl.Series:
    """The rule of each pair's question: mc-mlm needs every choice of the question to be one token."""
    single = pairs.select((pl.col("tokens") == 1).all().over("row")).to_series()
    if rule == "auto":
        return pl.Series("rule", np.where(single.to_numpy(), "mc-mlm", "pll-mean"))
    if rule == "mc-mlm" and not single.all():
        example = pairs.filter(pl.col("tokens") != 1).row(0, named=True)
        raise WorkbenchError(
            f"rule='mc-mlm' needs every choice to be one token; {pairs.filter(~single)['row'].n_unique()} "
            f"questions have other choices (e.g. {example['choice']!r}: {example['tokens']} tokens). "
            "Use rule='auto', 'pll-sum' or 'pll-mean'."
        )
    return pl.Series("rule", [rule] * len(pairs))


def _mc_mlm(
    model: Model,
    pairs: pl.DataFrame,
    units: list[Unit],
    filled: dict[Unit, Features],
    batch_size: int | str,
    cache: PredictionCache | None,
    progress: bool,
) -> np.ndarray:
    """Restricted-softmax log-probabilities of ``pairs`` (whole questions, in order)."""
    mask = model.tokenizer.mask_token
    candidates = pairs.with_columns(
        statement=pl.Series([prefix + mask + suffix for prefix, _, suffix in units]),
        candidate=pl.Series([str(filled[unit]["input_ids"][filled[unit]["targets"][0]]) for unit in units]),
    )
    questions = candidates.group_by("row", maintain_order=True).agg(pl.col("statement").first(), "candidate")
    statements = [
        (statement, " ".join(ids)) for statement, ids in questions.select("statement", "candidate").iter_rows()
    ]
    work = Work("mc-mlm", encode=lambda todo: _statements(model, todo), run=lambda items, _: _mask_logits(model, items))
    values = compute(model, work, statements, batch_size, cache, progress)
    return np.concatenate([_log_softmax(values[unit]) for unit in statements])


def _statements(model: Model, units: list[Unit]) -> list[Features]:
    encoded = model.tokenizer([statement for statement, _ in units], verbose=False)["input_ids"]
    features = []
    for ids, (_, candidates) in zip(encoded, units):
        item = _clip(model, ids, [ids.index(model.tokenizer.mask_token_id)])
        features.append({**item, "candidates": [int(token) for token in candidates.split()]})
    return features


def _mask_logits(model: Model, features: list[Features]) -> list[np.ndarray]:
    """The MLM logits of each statement's candidates at its mask."""
    logits = model.network(**pad(features, model)).logits
    return [
        logits[row, item["targets"][0], item["candidates"]].float().cpu().numpy() for row, item in enumerate(features)
    ]


def _pll(model: Model, features: list[Features], batch_size: int) -> list[np.ndarray]:
    """Log-probability of each target token with that token masked, per statement."""
    copies = []
    for item in features:
        for position in item["targets"]:
            ids = list(item["input_ids"])
            ids[position] = model.tokenizer.mask_token_id
            copies.append(({"input_ids": ids}, position, item["input_ids"][position]))
    scores = []
    for start in range(0, len(copies), batch_size):
        chunk = copies[start : start + batch_size]
        logits = model.network(**pad([copy for copy, _, _ in chunk], model)).logits
        rows = torch.arange(len(chunk), device=logits.device)
        positions, tokens = [position for _, position, _ in chunk], [token for _, _, token in chunk]
        scores.append(torch.log_softmax(logits[rows, positions].float(), dim=-1)[rows, tokens])
    flat = torch.cat(scores).cpu().numpy() if scores else np.empty(0, dtype=np.float32)
    return np.split(flat, np.cumsum([len(item["targets"]) for item in features])[:-1])


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits.astype(np.float64) - logits.max()
    return shifted - np.log(np.exp(shifted).sum())
