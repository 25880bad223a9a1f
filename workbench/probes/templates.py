"""Question and choice templates: data a user can read, add to or edit, filled safely.

A template file (JSON, see ``templates/default.json``) holds context phrases and, per probe, the
Table 2 form, suffixes (crossed with every context phrase) or whole questions, and a choice format.
Fields are ``{name}`` placeholders filled by plain substitution: no attribute access, no code;
an unknown placeholder is an error when the file is loaded, a missing value when it is filled.
"""

import functools
import itertools
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError

FIELD = re.compile(r"\{([^{}]*)\}")
QUESTION_FIELDS = {"context", "word", "definition"}
CHOICE_FIELDS = {"word", "synonyms", "event", "definition", "lemmas"}  # event: " event" after a verb (choice_words)


class TemplateError(WorkbenchError):
    """A template names an unknown field, or a value is missing when it is filled."""


@dataclass(frozen=True)
class Templates:
    """The question templates (id -> text) and the choice format of one probe."""

    probe: str
    questions: dict[str, str]
    choice: str


def fill(template: str, values: dict[str, str]) -> str:
    """Substitute ``{field}`` placeholders from ``values``; a missing field raises ``TemplateError``.

    >>> fill("the word '{word}'", {"word": "dog"})
    "the word 'dog'"
    """
    literals, names = _parsed(template)
    try:
        filled = [values[name] for name in names]
    except KeyError as err:
        raise TemplateError(
            f"template {template!r} needs a value for {{{err.args[0]}}}; it has only {sorted(values)}"
        ) from None
    if len(filled) == 1:  # the common case (a question, a choice), without building the pieces
        return literals[0] + filled[0] + literals[1]
    return "".join(itertools.chain.from_iterable(zip(literals, filled))) + literals[-1]


def fill_column(template: str, values: dict[str, pl.Expr]) -> pl.Expr:
    """``fill`` over whole columns: ``template`` with each ``{field}`` replaced by the expression ``values`` gives it.

    >>> pl.select(fill_column(" {choice}.", {"choice": pl.Series(["dog", "cat"])})).to_series().to_list()
    [' dog.', ' cat.']
    """
    literals, names = _parsed(template)
    missing = [name for name in names if name not in values]
    if missing:
        raise TemplateError(f"template {template!r} needs a value for {{{missing[0]}}}; it has only {sorted(values)}")
    pieces = [pl.lit(literals[0]), *itertools.chain.from_iterable((values[name], pl.lit(text)) for name, text in
                                                                 zip(names, literals[1:]))]  # fmt: skip
    return pl.concat_str(pieces)


@functools.lru_cache(maxsize=4096)
def _parsed(template: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The text around the fields of ``template`` (one more than the fields) and the fields' names, in order:
    a template is parsed once, however many times it is filled."""
    parts = FIELD.split(template)
    return tuple(parts[0::2]), tuple(parts[1::2])


def check_template(text: str, allowed: set[str], where: str) -> str:
    """``text`` if it is a non-empty string whose ``{fields}`` are all in ``allowed``; else a ``TemplateError``
    naming ``where``. The one check of probe templates and LM prompt templates alike."""
    if not isinstance(text, str) or not text.strip():
        raise TemplateError(f"{where}: a template must be a non-empty string, got {text!r}")
    unknown = set(FIELD.findall(text)) - allowed
    if unknown:
        raise TemplateError(
            f"{where}: unknown field(s) {sorted(unknown)} in {text!r}; allowed: {sorted(allowed) or 'none'}"
        )
    return text


def _check_shape(where: str, probe: str, contexts, entry) -> None:
    """Name the field of the wrong shape (a string where a list belongs would be read one character at a time)."""

    def strings(value) -> bool:
        return isinstance(value, list) and all(isinstance(item, str) for item in value)

    fields = [("contexts", contexts, strings)]
    if not isinstance(entry, dict):
        raise TemplateError(f"{where}: probes.{probe} must be an object with 'table2', 'choice' and optional lists")
    fields += [(f"probes.{probe}.{name}", entry.get(name, []), strings) for name in ("suffixes", "questions")]
    fields += [
        (f"probes.{probe}.{name}", entry.get(name), lambda v: isinstance(v, str)) for name in ("table2", "choice")
    ]
    for name, value, ok in fields:
        if not ok(value):
            wanted = "a list of strings" if name.split(".")[-1] in ("contexts", "suffixes", "questions") else "a string"
            raise TemplateError(f"{where}: {name} must be {wanted}, not {type(value).__name__} {str(value)[:40]!r}")


def load_templates(probe: str, path: str | Path | None = None) -> Templates:
    """The templates of ``probe`` from ``path`` (a JSON file like the packaged default) or the default."""
    if path is None:
        text = resources.files("workbench.probes").joinpath("templates", "default.json").read_text()
        where = "default templates"
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as err:
            raise TemplateError(f"cannot read template file {path}: {err}") from err
        where = str(path)
    try:
        data = json.loads(text)
        entry = data["probes"][probe]
        contexts = data.get("contexts", [])
    except (ValueError, KeyError, TypeError) as err:
        raise TemplateError(
            f"{where}: expected JSON with 'contexts' and 'probes' -> '{probe}' (see the packaged "
            f"workbench/probes/templates/default.json); problem: {err!r}"
        ) from err
    _check_shape(where, probe, contexts, entry)
    questions = {"table2": check_template(entry["table2"], QUESTION_FIELDS, where)}
    for j, suffix in enumerate(entry.get("suffixes", [])):
        check_template(suffix, QUESTION_FIELDS, where)
        for i, context in enumerate(contexts):
            questions[f"c{i}s{j}"] = f"{check_template(context, QUESTION_FIELDS, where)} {suffix}"
    for j, question in enumerate(entry.get("questions", [])):
        questions[f"q{j}"] = check_template(question, QUESTION_FIELDS, where)
    return Templates(probe=probe, questions=questions, choice=check_template(entry["choice"], CHOICE_FIELDS, where))
