"""What a model is asked: each question-choice pair rendered in the spec's way of asking (shots drawn, a chat template
applied, or messages for a server that applies its own), the way's label, and an instruction too long to keep."""

import hashlib
import json
from typing import TYPE_CHECKING

import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.probes.formats import read_probes
from workbench.schema import model_label
from workbench.scoring import served
from workbench.scoring.asking import Asking, Shots, chats, draw_shots, render
from workbench.scoring.prompts import PromptTemplates, load_prompts
from workbench.scoring.scorers import PROMPT_SCORERS
from workbench.scoring.spec import ScoreSpec

if TYPE_CHECKING:
    from workbench.scoring.models import Model


def rendered(
    model: "Model | served.Server", spec: ScoreSpec, probes: pl.DataFrame, pool
) -> tuple[pl.DataFrame, PromptTemplates | None, Shots | None]:
    """The question-choice pairs of ``probes`` (``row``, ``probe``, ``question``, ``choice``) with the texts the model
    is asked (``asking.render``; for a server that applies its own chat template, each question's messages as JSON in
    ``prompt``), the templates and the shots."""
    pairs = probes.select(
        pl.int_range(pl.len()).alias("row"), "probe", "question", pl.col("choices").alias("choice")
    ).explode("choice")
    templates = load_prompts(spec.prompts) if spec.scorer in PROMPT_SCORERS else None
    shots = drawn_shots(spec, probes, pool)
    if server_chat(model, spec):
        conversations = [json.dumps(chat, ensure_ascii=False) for chat in chats(probes, templates, spec.asking, shots)]
        pairs = pairs.with_columns(prompt=pl.Series(conversations, dtype=pl.String).gather(pairs["row"]))
    elif templates is not None:
        pairs = render(pairs, probes, templates, spec.asking, shots, model.tokenizer)
    return pairs, templates, shots


def server_chat(model: "Model | served.Server", spec: ScoreSpec) -> bool:
    """Whether the server renders the chat (a served model asked for free answers with a chat template)."""
    return isinstance(model, served.Server) and spec.scorer == "generate" and spec.chat_template == "auto"


def drawn_shots(spec: ScoreSpec, probes: pl.DataFrame, pool: pl.DataFrame | None) -> Shots | None:
    """The shots the spec asks for, from ``pool`` or the file ``spec.shots_from``."""
    if spec.shots == 0:
        return None
    if pool is None:
        if spec.shots_from is None:
            raise SpecError(
                f"shots={spec.shots} needs a source of worked examples: pass shots_from (a probe file or folder, "
                "e.g. the train split; --shots-from on the command line)"
            )
        pool = read_probes(spec.shots_from)
    return draw_shots(pool, probes, spec.asking, source=str(spec.shots_from or "the shot pool"))


def asking_label(asking: Asking, shots: Shots | None) -> str:
    """The ``asking`` column: the way's label, with digests of its shots and system instruction.

    >>> asking_label(Asking(), None)
    'cloze/0-shot/plain'
    """
    label = asking.label
    if shots is not None:
        label += f"/shots={shots.digest[:12]}"
    if asking.system is not None:
        label += f"/system={hashlib.sha256(asking.system.encode()).hexdigest()[:12]}"
    return label


def check_instruction(model: "Model | served.Server", spec: ScoreSpec) -> None:
    """Refuse an instruction (``--system``) that fills the model's context alone: truncation keeps a prompt's end,
    so every prompt would lose it, and each would be tokenised whole for every choice (120 KB took 4.5 minutes and
    2.5 GB for two questions)."""
    system = spec.asking.system
    if system is None or isinstance(model, served.Server) or spec.scorer not in PROMPT_SCORERS:
        return
    tokens = len(model.tokenizer(system, add_special_tokens=False)["input_ids"])
    if tokens >= model.max_length:
        raise WorkbenchError(
            f"the instruction (--system) is {tokens:,} tokens, as long as {model_label(model.name)}'s context of "
            f"{model.max_length:,} or longer: every prompt would lose it to truncation; shorten it (or raise "
            "--max-length within what the model was trained on)"
        )
