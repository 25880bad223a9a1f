"""How to score (``ScoreSpec``): the scorer, its rule and control, the batching and device, the way of asking; and
the check that a model passed in was loaded with those settings."""

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import SpecError
from workbench.scoring.asking import Asking
from workbench.scoring.scorers import (
    AUTO,
    LM_SCORERS,
    MAX_NEW_TOKENS,
    PROMPT_SCORERS,
    SCORER_RULES,
    check_control,
    check_device_map,
)

if TYPE_CHECKING:
    from workbench.scoring.models import Model

ASKED_MAX_LENGTH = 4096
"""The default max_length of a model asked with shots, a chat template or lettered choices (or less where the model
allows less): 512 would cut a five-shot prompt of definitions; the other scorers keep 512."""
RULES = {name: ("auto", *rules, *(("all",) if name in LM_SCORERS else ())) for name, rules in SCORER_RULES.items()}


@dataclass(frozen=True)
class ScoreSpec:
    """How to score: the scorer, its rule (``auto``: the scorer's default, per question for mlm;
    ``all``: every rule of causal/seq2seq), the control, the seed of anything initialised rather than
    loaded, the batching (``batch_size="auto"``: halved on out-of-memory, remembered), the device, the weights'
    ``dtype`` (float32, bfloat16, float16; scores are float32), ``device_map="auto"`` (a model larger than one
    device, spread by accelerate) and (causal, seq2seq) a prompt template file (None: the packaged default) and
    the way of asking (``workbench.scoring.asking``): ``format`` (cloze, letters), ``shots`` worked examples from
    ``shots_from`` (a probe file or folder; or a frame passed to ``score``), drawn once for all questions or
    ``shots_per_question``, seeded by ``shot_seed``; ``chat_template`` ("auto": the tokenizer's) and ``system``.
    ``generate`` (free answers, cloze only) decodes up to ``max_new_tokens`` (default ``scorers.MAX_NEW_TOKENS``).

    >>> ScoreSpec("mlm", rule="pll-sum", batch_size=16)  # doctest: +ELLIPSIS
    ScoreSpec(scorer='mlm', rule='pll-sum', ...)
    """

    scorer: str = "similarity"
    rule: str = "auto"
    control: str = "none"
    seed: int = 0
    batch_size: int | str = 32
    max_length: int | None = None
    threads: int | None = None
    device: str | None = None
    prompts: str | Path | None = None
    dtype: str | None = None
    device_map: str | None = None
    format: str = "cloze"
    shots: int = 0
    shots_from: str | Path | None = None
    shots_per_question: bool = False
    shot_seed: int = 0
    chat_template: str = "none"
    system: str | None = None
    max_new_tokens: int | None = None

    def __post_init__(self) -> None:
        check_control(self.scorer, self.control)
        if not self.asking.default and self.scorer not in PROMPT_SCORERS:
            raise SpecError(
                f"ways of asking (format, shots, chat_template, system) are for the scorers {list(PROMPT_SCORERS)}, "
                f"not scorer={self.scorer!r}; leave them out"
            )
        if self.max_new_tokens is not None and self.scorer != "generate":
            raise SpecError(
                f"max_new_tokens={self.max_new_tokens!r} is only used by scorer='generate', not "
                f"scorer={self.scorer!r}; leave it out"
            )
        if self.prompts is not None and self.scorer not in PROMPT_SCORERS:
            raise SpecError(
                f"prompts={str(self.prompts)!r} is only used by the scorers {list(PROMPT_SCORERS)}, "
                f"not scorer={self.scorer!r}; "
                "leave it out (probe templates are set when the probes are built)"
            )
        if self.device is not None or self.dtype is not None:  # torch says what this machine has
            from workbench.scoring.models import check_device, check_dtype

            device = check_device(self.device)
            if self.dtype is not None:
                check_dtype(self.dtype, device)
        check_device_map(self.device_map, self.device, self.control)
        if self.rule not in RULES[self.scorer]:
            raise SpecError(
                f"rule={self.rule!r} is not allowed for scorer={self.scorer!r}; "
                f"choose one of {list(RULES[self.scorer])}"
            )
        limits = (
            ("seed", 0, 2**32 - 1), ("batch_size", 1, 4096), ("max_length", 8, 100_000), ("threads", 1, 1024),
            ("max_new_tokens", 1, 1024),
        )  # fmt: skip
        for name, low, high in limits:
            value = getattr(self, name)
            optional = name in ("max_length", "threads", "max_new_tokens")
            if (value is None and optional) or (name == "batch_size" and value == AUTO):
                continue
            if not isinstance(value, int) or not low <= value <= high:
                also = " or 'auto'" if name == "batch_size" else ""
                raise SpecError(f"{name}={value!r} is out of range; use a whole number from {low} to {high}{also}")

    @property
    def asking(self) -> Asking:
        """The way of asking these settings name (validated when the spec is made)."""
        return Asking(self.format, self.shots, self.shots_per_question, self.shot_seed, self.chat_template, self.system)

    @property
    def new_tokens(self) -> int:
        """The most tokens a free answer (``generate``) may have."""
        return self.max_new_tokens or MAX_NEW_TOKENS


def check_loaded(model: "Model", spec: ScoreSpec) -> None:
    """A ``Model`` passed in must have been loaded with the settings this call asks for."""
    loaded = {"scorer": model.scorer, "control": model.control, "seed": model.seed}
    loaded.update(max_length=model.max_length, device=model.device, dtype=model.dtype, device_map=model.device_map)
    clashes = [
        f"{name}={getattr(spec, name)!r} (loaded with {value!r})"
        for name, value in loaded.items()
        if getattr(spec, name) not in (None, value)
    ]
    if clashes:
        raise SpecError(f"the model passed in does not match {', '.join(clashes)}; load it again with load_model")
