"""Prompt templates of the language-model scorers (causal, seq2seq): data a user can read and edit.

A template file (JSON, see ``prompt_templates/default.json``) holds one entry per probe type and a
``default`` for any other: ``prompt`` renders the question (``{question}``), ``neutral`` is the
question-free prompt of the mutual-information rule, ``choice`` renders the continuation
(``{choice}``, with its leading space); ``letters`` (optional; the ``default``'s for a probe without one) asks
with lettered choices: its ``prompt`` renders the question and the listed ``{choices}``, each a ``line``
(``{letter}``, ``{choice}``; ``{letters}`` in its prompt lists the letters, ``A,B,C``), and its ``choice`` the
letter scored (``{letter}``). Fields are filled by
``workbench.probes.templates.fill`` (plain substitution, no code); an unknown field is an error when the file is loaded.

>>> templates = load_prompts()
>>> templates.render("hyponymy", "Which is a type of dog?", "poodle")
('Question: Which is a type of dog?\\nAnswer:', 'Answer:', ' poodle')
"""

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import polars as pl

from workbench.probes.templates import TemplateError, check_template, fill

PARTS = {"prompt": {"question"}, "neutral": set(), "choice": {"choice"}}
LETTER_PARTS = {"prompt": {"question", "choices", "letters"}, "line": {"letter", "choice"}, "choice": {"letter"}}
LETTERS_DEFAULT = {
    "prompt": "Question: {question}\n{choices}\nAnswer:",
    "line": "{letter}. {choice}",
    "choice": " {letter}",
}
"""The lettered form of a template file whose ``default`` has none (files written before it existed)."""


@dataclass(frozen=True)
class PromptTemplates:
    """Per probe type (and ``default``): the prompt, neutral and choice templates; ``letters``: the lettered
    form's prompt, line and choice templates per probe type (and ``default``); ``digest`` names the cloze
    templates, ``letters_digest`` the lettered ones."""

    probes: dict[str, dict[str, str]]
    default: dict[str, str]
    digest: str
    letters: dict[str, dict[str, str]]
    letters_digest: str

    def entry(self, probe: str | None) -> dict[str, str]:
        """The prompt, neutral and choice templates of a probe type (the ``default`` for one without its own)."""
        return self.probes.get(probe or "", self.default)

    def render(self, probe: str | None, question: str, choice: str) -> tuple[str, str, str]:
        """The (prompt, neutral prompt, continuation) of one question-choice pair."""
        entry = self.entry(probe)
        return (
            fill(entry["prompt"], {"question": question}),
            fill(entry["neutral"], {}),
            fill(entry["choice"], {"choice": choice}),
        )

    def render_letters(self, probe: str | None, question: str, choices: list[str]) -> tuple[str, list[str]]:
        """The lettered prompt of a question (its choices listed "A. ...") and each choice's continuation."""
        entry = self.letters.get(probe or "", self.letters["default"])
        letters = [chr(ord("A") + index) for index in range(len(choices))]
        listed = "\n".join(
            fill(entry["line"], {"letter": letter, "choice": choice}) for letter, choice in zip(letters, choices)
        )
        return (
            fill(entry["prompt"], {"question": question, "choices": listed, "letters": ",".join(letters)}),
            [fill(entry["choice"], {"letter": letter}) for letter in letters],
        )


def load_prompts(path: str | Path | None = None) -> PromptTemplates:
    """The prompt templates in ``path`` (a JSON file like the packaged default), or the packaged default."""
    if path is None:
        text, where = (
            resources.files("workbench.scoring").joinpath("prompt_templates", "default.json").read_text(),
            "default prompts",
        )
    else:
        try:
            text, where = Path(path).read_text(encoding="utf-8"), str(path)
        except OSError as err:
            raise TemplateError(f"cannot read the prompt template file {path}: {err}") from err
    try:
        data = json.loads(text)
        default, probes = data["default"], data.get("probes", {})
        entries = {"default": default, **probes}
        checked = {
            name: {part: check_template(entry[part], PARTS[part], f"{where}: {name}.{part}") for part in PARTS}
            for name, entry in entries.items()
        }
        letters = {
            name: {
                part: check_template(form[part], LETTER_PARTS[part], f"{where}: {name}.letters.{part}")
                for part in LETTER_PARTS
            }
            for name, entry in entries.items()
            if (form := entry.get("letters", LETTERS_DEFAULT if name == "default" else None)) is not None
        }
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise TemplateError(
            f"{where}: expected JSON with 'default' and 'probes' -> <probe> -> 'prompt', 'neutral', 'choice' "
            "(and optionally 'letters' -> 'prompt', 'line', 'choice') "
            f"(see the packaged workbench/scoring/prompt_templates/default.json); problem: {err!r}"
        ) from err
    digest = hashlib.sha256(json.dumps(checked, sort_keys=True).encode()).hexdigest()[:16]
    return PromptTemplates(
        probes={name: checked[name] for name in probes},
        default=checked["default"],
        digest=digest,
        letters=letters,
        letters_digest=hashlib.sha256(json.dumps(letters, sort_keys=True).encode()).hexdigest()[:16],
    )


def render_prompts(pairs: pl.DataFrame, templates: PromptTemplates) -> pl.DataFrame:
    """``pairs`` (``probe``, ``question``, ``choice``) with ``prompt``, ``neutral`` and ``continuation`` columns."""
    rendered = [templates.render(*row) for row in pairs.select("probe", "question", "choice").iter_rows()]
    prompt, neutral, continuation = zip(*rendered) if rendered else ((), (), ())
    return pairs.with_columns(
        prompt=pl.Series(prompt, dtype=pl.String),
        neutral=pl.Series(neutral, dtype=pl.String),
        continuation=pl.Series(continuation, dtype=pl.String),
    )
