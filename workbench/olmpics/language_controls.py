"""The oLMpics language controls (SPEC §5; oLMpics §3.3), built from any ``OLMPICS_SCHEMA`` frame.

- NO-LANG keeps only the ``[MASK]`` and the task's arguments, in the order they appear
  ("24 [MASK] 55"). Candidates that form one closed set for the whole probe (younger/older,
  not/very, first/second/third) are words of the language too, so each is replaced by a fixed
  nonsense word (the first, second... of ``NONSENSE``); open candidates (hypernyms) are the task's
  content and stay.
- PERTURBED-LANG replaces each key word of the template with a nonsense word drawn, per row and
  seeded, from ``NONSENSE`` (never one already in the statement or the candidates).

>>> no_lang(frame); perturbed_lang(frame, seed=0)  # doctest: +SKIP
"""

import random
import re

import polars as pl

from workbench.errors import ProbeFormatError
from workbench.olmpics.probes import MASK, OLMPICS_SCHEMA, row_id
from workbench.probes.language_controls import NONSENSE_WORDS as NONSENSE
from workbench.schema import conform

_EDGE = ".,;:!?\"'()"


def _words(statement: str) -> list[str]:
    return statement.split()


def no_lang_statement(statement: str, args: list[str]) -> str:
    """``statement`` reduced to its arguments and the mask, in their order of appearance.

    >>> no_lang_statement("He was [MASK] fast, he was very slow.", ["fast", "slow"])
    '[MASK] fast slow'
    """
    words = [word.strip(_EDGE) for word in _words(statement)]
    used: set[int] = set()
    found = [(next(i for i, word in enumerate(words) if MASK in word), MASK)]
    for arg in args:
        parts = arg.split()
        starts = [
            i for i in range(len(words) - len(parts) + 1)
            if i not in used and [w.lower() for w in words[i : i + len(parts)]] == [p.lower() for p in parts]
        ]  # fmt: skip
        if not starts:
            raise ProbeFormatError(
                f"the argument {arg!r} does not appear in the statement {statement!r}; fix its 'args'"
            )
        used.add(starts[0])
        found.append((starts[0], arg))
    return " ".join(text for _, text in sorted(found))


def no_lang(frame: pl.DataFrame) -> pl.DataFrame:
    """The NO-LANG control of every row (``control`` = ``no-lang``; ids change with it)."""
    frame = _check(frame, "no-lang", "args")
    closed = frame.group_by("probe").agg(pl.col("choices").n_unique().alias("sets"))
    closed_probes = set(closed.filter(pl.col("sets") == 1)["probe"])
    rows = []
    for row in frame.iter_rows(named=True):
        choices = row["choices"]
        if row["probe"] in closed_probes:
            if len(choices) > len(NONSENSE):
                raise ProbeFormatError(
                    f"probe {row['probe']!r} has {len(choices)} candidates; NO-LANG maps at most {len(NONSENSE)}"
                )
            choices = list(NONSENSE[: len(choices)])
        rows.append({**row, "statement": no_lang_statement(row["statement"], row["args"]), "choices": choices})
    return _finish(rows, "no-lang")


def perturbed_lang(frame: pl.DataFrame, seed: int = 0) -> pl.DataFrame:
    """The PERTURBED-LANG control of every row: each key word replaced by a seeded nonsense word."""
    frame = _check(frame, "perturbed-lang", "keywords")
    rows = []
    for row in frame.iter_rows(named=True):
        rng = random.Random(f"{seed}\x1f{row['id']}")
        present = {word.strip(_EDGE).lower() for word in _words(row["statement"])} | {c.lower() for c in row["choices"]}
        pool = [word for word in NONSENSE if word not in present]
        statement = row["statement"]
        for keyword in row["keywords"]:
            if not pool:
                break
            word = pool.pop(rng.randrange(len(pool)))
            statement = re.sub(rf"(?<![\w\[]){re.escape(keyword)}(?![\w\]])", word, statement, flags=re.IGNORECASE)
        rows.append({**row, "statement": statement})
    return _finish(rows, "perturbed-lang")


def with_controls(frame: pl.DataFrame, seed: int = 0) -> pl.DataFrame:
    """``frame`` with its NO-LANG and PERTURBED-LANG rows appended."""
    frame = conform(frame, OLMPICS_SCHEMA, "oLMpics frame")
    base = frame.filter(pl.col("control") == "none")
    return pl.concat([base, no_lang(base), perturbed_lang(base, seed)])


def _check(frame: pl.DataFrame, control: str, column: str) -> pl.DataFrame:
    frame = conform(frame, OLMPICS_SCHEMA, "oLMpics frame")
    if not frame.filter(pl.col("control") != "none").is_empty():
        raise ProbeFormatError(
            f"the {control} control is built from original rows (control 'none'); filter the frame first"
        )
    empty = frame.filter(pl.col(column).list.len() == 0)
    if not empty.is_empty():
        raise ProbeFormatError(
            f"{empty.height} rows have no '{column}' (first: {empty['statement'][0]!r}); the {control} control "
            f"needs them: list the {'task arguments' if column == 'args' else 'template key words'} of each row"
        )
    return frame


def _finish(rows: list[dict], control: str) -> pl.DataFrame:
    for row in rows:
        row["control"] = control
        row["id"] = row_id(row["probe"], row["split"], row["id"], control)
    return conform(pl.DataFrame(rows, schema_overrides=OLMPICS_SCHEMA), OLMPICS_SCHEMA, "oLMpics control")
