"""VecSimilarity (SPEC §4): a choice's score is the cosine between the question's and the choice's
mean token embeddings. No head, no training.

Contextual: the mean of the last hidden states over the attention mask (special tokens included,
as sentence-transformers pools). Static-embeddings control: the mean of the input embedding
table's vectors over the text's tokens, special tokens left out (without context they are the same
vectors in every text). Each unique question and choice text is embedded once.
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
    """``pairs`` (``row``, ``question``, ``choice``) with ``score`` (cosine) and ``rule``."""
    texts = pl.concat([pairs["question"], pairs["choice"]]).unique(maintain_order=True).to_list()
    work = Work(
        "embedding",
        encode=lambda units: encode_texts(model, [unit[0] for unit in units]),
        run=lambda features, _: embed(model, features),
    )
    values = compute(model, work, [(text,) for text in texts], batch_size, cache, progress)
    matrix = np.stack([values[(text,)] for text in texts]).astype(np.float64)
    questions, choices = (
        matrix[pairs[column].replace_strict(texts, range(len(texts)), return_dtype=pl.Int64).to_numpy()]
        for column in ("question", "choice")
    )
    return pairs.with_columns(score=pl.Series(_cosine(questions, choices)), rule=pl.lit(rule))


def embed(model: Model, features: list[Features]) -> torch.Tensor:
    """Mean token embeddings of a batch (contextual, or static for the static-embeddings control), float32."""
    batch = pad(features, model)
    mask = batch["attention_mask"]
    if model.control == "static-embeddings":
        vectors = model.network(batch["input_ids"])
        special = torch.tensor(model.tokenizer.all_special_ids, dtype=torch.long, device=mask.device)
        mask = mask * ~torch.isin(batch["input_ids"], special)
    else:
        vectors = model.network(**batch).last_hidden_state
    vectors = vectors.float()  # pooled in float32 whatever the weights' dtype
    weights = mask.unsqueeze(-1).to(vectors.dtype)
    return (vectors * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)


def _cosine(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    dots = np.einsum("ij,ij->i", left, right)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
