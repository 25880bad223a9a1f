"""oLMpics language controls of a probe set (SPEC §5): the same questions without, or with nonsense, language.

A learning curve only says something about knowledge when it rises above the curve of its control:
a model that learns a probe as fast without the template's words is reading the arguments, not the
question. Two controls rewrite each question stem and leave everything else as it was (the choices,
the gold answer, the cluster, the split), so the control set inoculates and scores exactly like the probe:

- ``no-lang``: only the task's arguments, in order, separated by spaces (definitions and hypernymy:
  the context sentence and the word; synonymy: the definition). ``In the sentence 'the dog barked',
  the word 'dog' is best defined as:`` becomes ``the dog barked dog``.
- ``perturbed-lang``: every word of the template (not of the arguments) is replaced by a nonsense word
  from ``blah ya foo snap woo boo da wee foe fee``, chosen by a seeded hash of the word, so one template
  stays one (nonsense) template across the set: ``Boo snap woo 'the dog barked', blah ...``.

The arguments are found by matching each question against its template (templates are data:
``workbench.probes.templates``); questions phrased by an unknown template (the paper's released files,
a custom template file not passed here) are matched against every template of the probe, and failing
that their ``context`` and ``word`` columns are located in the text, or else their quoted spans.

>>> language_control(probes, ControlSpec("perturbed-lang", seed=0))  # doctest: +SKIP
"""

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.probes.templates import FIELD, load_templates
from workbench.schema import PROBE_SCHEMA, PROBES, conform

NONSENSE_WORDS = ("blah", "ya", "foo", "snap", "woo", "boo", "da", "wee", "foe", "fee")
LANGUAGE_CONTROLS = ("no-lang", "perturbed-lang")
WORD = re.compile(r"[^\W\d_]+")
OPENING_QUOTE = re.compile(r"(?<![^\s(])'(?=\S)")  # after a space or "(": not the apostrophe of "goats' milk"


@dataclass(frozen=True)
class ControlSpec:
    """Which control (``no-lang`` or ``perturbed-lang``), the seed of the nonsense words, and the
    template file the probes were built with (None: the packaged default)."""

    kind: str
    seed: int = 0
    templates: str | Path | None = None

    def __post_init__(self) -> None:
        if self.kind not in LANGUAGE_CONTROLS:
            raise SpecError(f"kind={self.kind!r} is not a language control; choose one of {list(LANGUAGE_CONTROLS)}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise SpecError(f"seed={self.seed!r} is out of range; use a whole number >= 0")


def nonsense(word: str, seed: int = 0) -> str:
    """The nonsense word that stands for ``word`` under ``seed`` (same word, same stand-in; capitalisation kept).

    >>> nonsense("sentence", 0) in NONSENSE_WORDS
    True
    """
    digest = hashlib.sha1(f"{seed}:{word.lower()}".encode()).digest()
    stand_in = NONSENSE_WORDS[int.from_bytes(digest[:8], "big") % len(NONSENSE_WORDS)]
    return stand_in.capitalize() if word[:1].isupper() else stand_in


def perturb(text: str, seed: int = 0) -> str:
    """``text`` with every word replaced by its nonsense stand-in; spaces, digits and punctuation kept."""
    return WORD.sub(lambda match: nonsense(match.group(0), seed), text)


def language_control(probes: pl.DataFrame, spec: ControlSpec) -> pl.DataFrame:
    """The control version of ``probes``: question stems rewritten, ``id`` and ``template`` tagged with the kind.

    Raises ``WorkbenchError`` naming a question whose arguments cannot be found.
    """
    probes = conform(probes, PROBE_SCHEMA, "probe frame")
    unknown = sorted(set(probes["probe"].unique()) - set(PROBES))
    if unknown:
        raise WorkbenchError(
            f"language controls are for the probes {list(PROBES)}; these rows are {unknown} "
            "(their templates are not known)"
        )
    frame = probes.with_row_index("_row").with_columns(_new=pl.lit(None, pl.String))
    arguments: dict[str, set[str]] = {}  # probe -> the fields its templates fill (context, word, definition)
    for probe in probes["probe"].unique().sort():
        templates = load_templates(probe, spec.templates).questions
        arguments[probe] = {name for text in templates.values() for name in FIELD.findall(text)}
        for template_id, text in templates.items():
            if not FIELD.search(text):
                continue  # a template without arguments has nothing to keep
            own = pl.col("template") == template_id
            anonymous = ~pl.col("template").is_in(list(templates))
            groups = pl.col("question").str.extract_groups(_regex(text))
            applies = (
                pl.col("_new").is_null()
                & (pl.col("probe") == probe)
                & (own | anonymous)
                & groups.struct.field("f0").is_not_null()
            )
            frame = frame.with_columns(
                _new=pl.when(applies).then(_rewrite(text, groups, spec)).otherwise(pl.col("_new"))
            )
    rest = frame.filter(pl.col("_new").is_null())
    if not rest.is_empty():  # the last resort, row by row: only questions no template matched
        columns = [
            pl.when(pl.col("probe").is_in([p for p, fields in arguments.items() if name in fields]))
            .then(pl.col(name))
            .otherwise(pl.lit(""))
            .alias(name)
            for name in ("context", "word")
        ]  # a column counts only where the probe's templates use it (synonymy asks about a definition, not a word)
        located = pl.struct("question", *columns).map_elements(
            lambda row: _by_columns(row, spec), return_dtype=pl.String
        )
        frame = pl.concat([frame.filter(pl.col("_new").is_not_null()), rest.with_columns(_new=located)]).sort("_row")
    lost = frame.filter(pl.col("_new").is_null())
    if not lost.is_empty():
        raise WorkbenchError(
            f"{lost.height} question(s) match no template of their probe and contain neither their context, "
            "their word nor a quoted argument "
            f"(first: {lost['id'][0]!r}: {lost['question'][0]!r}); pass the template file the probes were built with"
        )
    return frame.with_columns(
        question=pl.col("_new"), id=pl.col("id") + f":{spec.kind}", template=pl.col("template") + f"+{spec.kind}"
    ).select(list(PROBE_SCHEMA))


def _pieces(template: str) -> list[str]:
    """Literal text and field names, alternating (even positions literal, odd positions fields)."""
    return FIELD.split(template)


def _regex(template: str) -> str:
    pieces = _pieces(template)
    body = "".join(re.escape(piece) if i % 2 == 0 else f"(?P<f{i // 2}>.+?)" for i, piece in enumerate(pieces))
    return f"(?s)^{body}$"


def _rewrite(template: str, groups: pl.Expr, spec: ControlSpec) -> pl.Expr:
    pieces = _pieces(template)
    fields = [groups.struct.field(f"f{i // 2}") for i in range(1, len(pieces), 2)]
    if spec.kind == "no-lang":
        return pl.concat_str(fields, separator=" ")
    parts = [pl.lit(perturb(piece, spec.seed)) if i % 2 == 0 else fields[i // 2] for i, piece in enumerate(pieces)]
    return pl.concat_str(parts)


def _by_columns(row: dict, spec: ControlSpec) -> str | None:
    """Rewrite a question by locating its ``context`` and ``word`` values, or else its quoted spans (the
    templates quote every argument); None if there are none."""
    question, spans = row["question"], []
    for value in (row["context"], row["word"]):
        if not value:
            continue
        start = question.find(value)
        while start >= 0 and any(start < end and start + len(value) > begin for begin, end in spans):
            start = question.find(value, start + 1)
        if start >= 0:
            spans.append((start, start + len(value)))
    spans = spans or _quoted(question)
    if not spans:
        return None
    spans.sort()
    if spec.kind == "no-lang":
        return " ".join(question[begin:end] for begin, end in spans)
    out, cursor = [], 0
    for begin, end in spans:
        out += [perturb(question[cursor:begin], spec.seed), question[begin:end]]
        cursor = end
    return "".join([*out, perturb(question[cursor:], spec.seed)])


def _quoted(question: str) -> list[tuple[int, int]]:
    """Spans inside quotes: from each opening quote to the last quote before the next opening one."""
    starts = [match.end() for match in OPENING_QUOTE.finditer(question)]
    spans = []
    for start, following in zip(starts, [*starts[1:], len(question) + 1]):
        end = question.rfind("'", start, following - 1)
        if end > start:
            spans.append((start, end))
    return spans
