"""Several phrasings of each question: the same concept, context, word and choices under other templates.

The generator phrases each question in one template, drawn per concept, and the paper's released files in one
form; template sensitivity (``analysis.consistency``) needs the same question asked in two or more. ``rephrase``
finds each question's arguments (context, word, definition) by matching it against its template (or, for a
question of an unknown template, against every template of its probe, and failing that takes its ``context`` and
``word`` columns, as for the released files) and fills other templates of the probe with them; everything else
(choices, gold, cluster, split) is kept.

    >>> both = rephrase(probes, phrasings=3)  # each question, and two other phrasings of it  # doctest: +SKIP
    >>> wb.template_consistency(wb.score(both, model, "similarity"))  # doctest: +SKIP
"""

import re
import warnings
from pathlib import Path

import polars as pl

from workbench.errors import SpecError
from workbench.probes.templates import FIELD, load_templates
from workbench.schema import PROBE_SCHEMA, PROBES, conform

ARGUMENTS = ("context", "word", "definition")


def rephrase(
    probes: pl.DataFrame, phrasings: int = 3, seed: int = 0, templates: str | Path | None = None
) -> pl.DataFrame:
    """``probes`` with each question also asked in up to ``phrasings - 1`` other templates of its probe.

    Parameters
    ----------
    probes : polars.DataFrame
        A probe frame (``PROBE_SCHEMA``) of the WordNetQA and DictionaryQA probes.
    phrasings : int
        Phrasings per question at most, its own included (the others drawn by ``seed`` from the templates that
        use only arguments the question has).
    seed : int
        Seeds which other templates each question gets.
    templates : path, optional
        The template file the probes were built with (None: the packaged default).

    Returns
    -------
    polars.DataFrame
        The original rows, then the new ones: ``template`` the new template's id, ``question`` its text, ``id`` the
        original id + ``~`` + that template. A question whose arguments cannot be found keeps its one phrasing (a
        warning counts them).

    Examples
    --------
    >>> rephrase(probes, phrasings=2).group_by("concept", "choices").agg(pl.col("template").n_unique())
    """
    if isinstance(phrasings, bool) or not isinstance(phrasings, int) or phrasings < 1:
        raise SpecError(f"phrasings={phrasings!r} is out of range; use a whole number >= 1 (1: the questions alone)")
    probes = conform(probes, PROBE_SCHEMA, "probe frame")
    if phrasings == 1:
        return probes
    new = [probes.clear().with_columns(_rank=pl.lit(0, pl.UInt64))]
    for probe in sorted(set(probes["probe"]) & set(PROBES)):
        texts = load_templates(probe, templates).questions
        found = _arguments(probes.filter(pl.col("probe") == probe), texts)
        missing = found.filter(pl.col("_from").is_null()).height
        if missing:
            warnings.warn(
                f"{missing} {probe} question(s) match no template of the probe and keep their one phrasing; "
                "pass the template file the probes were built with",
                stacklevel=2,
            )
        for template_id, text in texts.items():
            pieces = FIELD.split(text)
            needs = [pl.col(f"_{name}").is_not_null() for name in pieces[1::2]]
            question = pl.concat_str([pl.lit(p) if i % 2 == 0 else pl.col(f"_{p}") for i, p in enumerate(pieces)])
            others = found.filter(pl.col("_from").is_not_null(), pl.col("template") != template_id, *needs)
            new.append(
                others.with_columns(
                    question=question,
                    template=pl.lit(template_id),
                    id=pl.col("id") + "~" + template_id,
                    _rank=(pl.col("id") + "~" + template_id).hash(seed),
                ).select(*PROBE_SCHEMA, "_rank")
            )
    drawn = pl.concat(new).with_columns(_origin=pl.col("id").str.replace(r"~[^~]*$", ""))
    kept = drawn.filter(pl.col("_rank").rank("ordinal").over("_origin") <= phrasings - 1)
    return pl.concat([probes, kept.sort("_origin", "_rank").select(list(PROBE_SCHEMA))])


def _arguments(rows: pl.DataFrame, texts: dict[str, str]) -> pl.DataFrame:
    """``rows`` with ``_context``, ``_word``, ``_definition`` (what each question fills in) and ``_from`` (the template
    they were read with; null when none matched): the question's own template first, any template for the others,
    and failing that the row's ``context`` and ``word`` columns (the released files phrase questions in forms of
    their own)."""
    rows = rows.with_columns(pl.lit(None, pl.String).alias(f"_{name}") for name in ("from", *ARGUMENTS))
    for template_id, text in texts.items():
        pieces = FIELD.split(text)
        if len(pieces) == 1:
            continue  # a template without arguments: nothing to read
        pattern = "".join(re.escape(p) if i % 2 == 0 else f"(?P<g{i // 2}>.+?)" for i, p in enumerate(pieces))
        groups = pl.col("question").str.extract_groups(f"(?s)^{pattern}$")
        own = (pl.col("template") == template_id) | ~pl.col("template").is_in(list(texts))
        applies = pl.col("_from").is_null() & own & groups.struct.field("g0").is_not_null()
        first = {name: k for k, name in reversed(list(enumerate(pieces[1::2])))}  # a field's first group
        rows = rows.with_columns(
            *(
                pl.when(applies).then(groups.struct.field(f"g{k}")).otherwise(pl.col(f"_{name}")).alias(f"_{name}")
                for name, k in first.items()
                if name in ARGUMENTS
            ),
            _from=pl.when(applies).then(pl.lit(template_id)).otherwise(pl.col("_from")),
        )
    columns = pl.col("_from").is_null() & (pl.col("context") != "") & (pl.col("word") != "")  # released phrasings
    return rows.with_columns(
        _context=pl.when(columns).then(pl.col("context")).otherwise(pl.col("_context")),
        _word=pl.when(columns).then(pl.col("word")).otherwise(pl.col("_word")),
        _from=pl.when(columns).then(pl.lit("columns")).otherwise(pl.col("_from")),
    )
