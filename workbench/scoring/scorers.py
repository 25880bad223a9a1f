"""The scorers by name: their rules, the model controls they take, and the checks of a spec that need no model.

Nothing here imports torch or transformers, and nor does the way to a served model (``serving``, ``served``,
``lm``'s rules, ``answers``): a run that asks a server starts without them. A scorer's own module, which runs a
local model, is imported when it is used (``scorer_module``).
"""

import importlib
import importlib.util
from types import ModuleType

from workbench.errors import SpecError, WorkbenchError

SCORERS = ("mcqa", "mlm", "similarity", "causal", "seq2seq", "generate")
LM_SCORERS = ("causal", "seq2seq")  # scorers that read a language model's likelihood of each choice
PROMPT_SCORERS = (*LM_SCORERS, "generate")  # scorers that ask a language model through prompt templates
MODEL_CONTROLS = ("none", "random-weights", "static-embeddings")
"""Model controls (SPEC §4): the trained weights, the same architecture untrained, the input embeddings alone.
Language controls, which change the probe's text instead, are ``workbench.probes.language_controls``."""
LM_RULES = ("sum", "mean-token", "mean-char", "mi")
"""How a language model's log-likelihoods of a choice's tokens become its score (``workbench.scoring.lm``)."""
SCORER_RULES = {
    "mcqa": ("logit",),
    "mlm": ("mc-mlm", "pll-sum", "pll-mean"),
    "similarity": ("cosine",),
    "causal": LM_RULES,
    "seq2seq": LM_RULES,
    "generate": ("match",),
}
"""Each scorer's rules, its default first."""
MAX_NEW_TOKENS = 16
"""Tokens decoded per free answer by default (``generate``): a lemma or a short phrase (a gloss gets cut, see
``answers``)."""
AUTO = "auto"
"""``batch_size="auto"``: halved on out-of-memory, remembered (``batch_sizes``)."""


class ScoringWarning(UserWarning):
    """Scores were computed, but something about them needs the user's attention."""


def scorer_module(scorer: str) -> ModuleType:
    """The module that runs ``scorer`` on a local model (``workbench.scoring.mcqa``, ...), imported on first use."""
    if scorer not in SCORERS:
        raise SpecError(f"scorer={scorer!r} is not allowed; choose one of {list(SCORERS)}")
    return importlib.import_module(f"workbench.scoring.{scorer}")


def check_control(scorer: str, control: str) -> None:
    """Raise a ``SpecError`` unless ``scorer`` and ``control`` are known and go together."""
    if scorer not in SCORERS:
        raise SpecError(f"scorer={scorer!r} is not allowed; choose one of {list(SCORERS)}")
    if control not in MODEL_CONTROLS:
        raise SpecError(f"control={control!r} is not allowed; choose one of {list(MODEL_CONTROLS)}")
    if control == "static-embeddings" and scorer in PROMPT_SCORERS:
        raise SpecError(
            f"control='static-embeddings' does not work with scorer={scorer!r}: a choice's likelihood needs "
            "the model's next-token distribution, and the input embedding table alone predicts nothing. "
            "Use control='random-weights' (same architecture, untrained), or scorer='similarity' for static embeddings."
        )
    if control == "static-embeddings" and scorer != "similarity":
        raise SpecError(
            f"control='static-embeddings' does not work with scorer={scorer!r}: without context the "
            f"{'[CLS]' if scorer == 'mcqa' else '[MASK]'} vector its head reads is the same for every input. "
            "Use scorer='similarity' for the static-embeddings control, or control='random-weights'."
        )


def check_device_map(device_map: str | None, device: str | None, control: str) -> None:
    """Refuse a ``device_map`` other than None or ``auto``, one beside ``device``, one for random weights, and
    ``auto`` without accelerate (an optional extra)."""
    if device_map is None:
        return
    if device_map != "auto":
        raise SpecError(f"device_map={device_map!r} is not supported; use 'auto' or leave it out")
    if device is not None:
        raise SpecError(
            f"device={device!r} and device_map='auto' both place the model; pass one (device_map='auto' spreads "
            "the weights over every GPU, then the CPU)"
        )
    if control == "random-weights":
        raise SpecError(
            "device_map='auto' places a checkpoint's weights as they load; the random-weights control builds them "
            "in memory instead: use device='cuda' (or a smaller model) for that control"
        )
    if importlib.util.find_spec("accelerate") is None:
        raise WorkbenchError(
            "device_map='auto' needs accelerate, which is not installed; install the GPU extra: "
            "pip install 'probe-workbench[gpu]'"
        )
