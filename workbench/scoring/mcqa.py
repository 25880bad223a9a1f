"""MCQA (SPEC §4): each choice rendered as ``[CLS] q [SEP] a_i [SEP]`` (the tokenizer's pair
encoding), one logit per choice from a multiple-choice head.

transformers' multiple-choice models encode every choice on its own and apply one linear head to
each, so a (question, choice) pair's logit does not depend on the other choices: we score each
unique pair once, batching pairs from different questions together, and a question's scores are
exactly those of one forward over all its choices.
"""

import numpy as np
import polars as pl
import torch

from workbench.scoring.batching import Features, Work, compute, encode_texts, pad
from workbench.scoring.cache import PredictionCache
from workbench.scoring.models import Model


def choice_scores(
    model: Model, pairs: pl.DataFrame, rule: str, batch_size: int | str, cache: PredictionCache | None, progress: bool
) -> pl.DataFrame:
    """``pairs`` (``row``, ``question``, ``choice``) with ``score`` (the head's logit) and ``rule``."""
    units = list(zip(pairs["question"].to_list(), pairs["choice"].to_list()))
    work = Work(
        "mcqa-logit",
        encode=lambda todo: encode_texts(model, [unit[0] for unit in todo], [unit[1] for unit in todo]),
        run=lambda features, _: _logits(model, features),
    )
    values = compute(model, work, units, batch_size, cache, progress)
    scores = np.concatenate(list(map(values.__getitem__, units))).astype(np.float64)  # one logit a unit
    return pairs.with_columns(score=pl.Series(scores), rule=pl.lit(rule))


def _logits(model: Model, features: list[Features]) -> torch.Tensor:
    """The head's logit of each pair, ``[pairs, 1]``, float32, left on the model's device."""
    batch = pad(features, model)
    return model.network(**{name: tensor.unsqueeze(1) for name, tensor in batch.items()}).logits.float()
