"""Text quality of probe questions: glued words, unbalanced brackets, truncated definitions, leftover markup.

The check reads the text a model sees, a question's context and its answer choices (definitions, for word
sense), and flags the measurable defects of ``workbench.knowledge.defects``:

* ``glued``: two words run together where a line break or a tag was removed (``perceiveStrange``,
  ``a daya yeara yard``), against the vocabulary of the knowledge source the probes came from;
* ``unbalanced``: a ``(`` or ``[`` never closed, or a closer never opened;
* ``truncated``: an answer choice ending in an open bracket, ``--``, a comma, colon or semicolon, or a
  dangling article or conjunction;
* ``markup``: leftover tags, entities, escapes or sense references (``<``, ``&amp;``, ``\\'d8``, ``{2}``).
"""

import polars as pl

from workbench.knowledge.defects import Vocabulary, first_unbalanced, glued_words, markup, truncation

KINDS = ("glued", "unbalanced", "truncated", "markup", "also-right", "undiscriminating")
"""Text defects, and ``also-right``: a choice people flagged as right too, held across annotators
(``workbench.annotation.flag_problems``; docs/ANNOTATION.md)."""
PROBLEMS_SCHEMA = {"id": pl.String, "field": pl.String, "kind": pl.String, "detail": pl.String, "text": pl.String}


def source_vocabulary(*sources: str) -> Vocabulary:
    """The words of the knowledge sources' graphs (default: all): their lemmas and every word seen three
    times or more in their glosses and examples."""
    from workbench.knowledge import load_graph
    from workbench.knowledge.cache import SOURCES

    graphs = [load_graph(source) for source in sources or SOURCES]
    headwords = [lemma for graph in graphs for lemma in graph.lemmas["lemma"].unique().to_list()]
    texts = [text for graph in graphs for text in (*graph.concepts["gloss"], *graph.examples["example"])]
    return Vocabulary.of_texts(headwords, texts)


def problems_of(text: str, vocabulary: Vocabulary, definition: bool = True) -> list[tuple[str, str]]:
    """``(kind, detail)`` for each kind of defect in ``text``; only a definition is checked for truncation.

    >>> problems_of("In each; to or for each", Vocabulary(["each"]))
    []
    >>> problems_of("treble staff. -- A sharp (A", Vocabulary([]))
    [('unbalanced', '('), ('truncated', '(A')]
    """
    opened = first_unbalanced(text)
    found = [
        ("glued", " ".join(glued_words(text, vocabulary))),
        ("unbalanced", text[opened] if opened >= 0 else ""),
        ("truncated", truncation(text) if definition else ""),
        ("markup", " ".join(markup(text))),
    ]
    return [(kind, detail) for kind, detail in found if detail]


def text_problems(probes: pl.DataFrame, vocabulary: Vocabulary | None = None) -> pl.DataFrame:
    """One row per defect found in a probe set's contexts and answer choices.

    Parameters
    ----------
    probes : polars.DataFrame
        A probe frame (``PROBE_SCHEMA``).
    vocabulary : Vocabulary, optional
        The known words of the glued-word check; by default those of the knowledge sources the probes
        came from (``source_vocabulary``).

    Returns
    -------
    polars.DataFrame
        Columns id, field (``context`` or ``choice``), kind (one of ``KINDS``), detail (what was found:
        the glued tokens, the bracket, the cut end, the markup) and text.

    Examples
    --------
    >>> problems = text_problems(read_probes("probes/wordsense"))  # doctest: +SKIP
    >>> problems.group_by("kind").agg(pl.col("id").n_unique())  # doctest: +SKIP
    """
    if vocabulary is None:
        from workbench.knowledge.cache import SOURCES

        vocabulary = source_vocabulary(*[name for name in probes["source"].unique().sort() if name in SOURCES])
    seen: dict[tuple[str, bool], list[tuple[str, str]]] = {}  # a definition is a choice of many questions

    def found(text: str, definition: bool) -> list[tuple[str, str]]:
        if (text, definition) not in seen:
            seen[text, definition] = problems_of(text, vocabulary, definition)
        return seen[text, definition]

    rows = []
    for qid, context, choices in probes.select("id", "context", "choices").iter_rows():
        rows += [(qid, "context", kind, detail, context) for kind, detail in found(context or "", False)]
        for choice in choices or ():
            rows += [(qid, "choice", kind, detail, choice) for kind, detail in found(choice, True)]
    return pl.DataFrame(rows, schema=PROBLEMS_SCHEMA, orient="row")


def problem_counts(problems: pl.DataFrame, questions: int) -> pl.DataFrame:
    """Questions flagged per kind of defect (a question counts once per kind), ``any`` kind, and their share.

    >>> problems = pl.DataFrame({"id": ["q1", "q1", "q2"], "kind": ["glued", "markup", "glued"]})
    >>> problem_counts(problems, 10).rows()  # doctest: +NORMALIZE_WHITESPACE
    [('glued', 2, 0.2), ('unbalanced', 0, 0.0), ('truncated', 0, 0.0), ('markup', 1, 0.1), ('also-right', 0, 0.0),
     ('undiscriminating', 0, 0.0), ('any', 2, 0.2)]
    """
    counts = problems.group_by("kind").agg(pl.col("id").n_unique().cast(pl.Int64).alias("questions"))
    counts = pl.concat([counts, pl.DataFrame({"kind": ["any"], "questions": [problems["id"].n_unique()]})])
    return (
        pl.DataFrame({"kind": [*KINDS, "any"]})
        .join(counts, on="kind", how="left", maintain_order="left")
        .with_columns(pl.col("questions").fill_null(0))
        .with_columns((pl.col("questions") / max(questions, 1)).round(4).alias("share"))
    )


def problem_examples(problems: pl.DataFrame, per_kind: int = 3) -> pl.DataFrame:
    """The first ``per_kind`` distinct flagged texts of each kind, in the order of ``KINDS``.

    >>> problems = pl.DataFrame({"kind": ["markup", "glued", "glued"], "text": ["x{2}", "daya", "daya"]})
    >>> problem_examples(problems, 1)["text"].to_list()
    ['daya', 'x{2}']
    """
    return pl.concat(
        problems.filter(pl.col("kind") == kind).unique("text", keep="first", maintain_order=True).head(per_kind)
        for kind in KINDS
    )
