"""The explanatory model: each question's difficulty as the sum of its design factors' effects (the linear logistic
test model, fitted inside the IRT model by ``fit_irt(..., explain=FACTORS)``), and difficulties predicted for
questions no member answered.

A numeric factor's effect is the change in difficulty (logits of ability) per unit (one more hop); a categorical
factor's level is set against a reference level (``REFERENCE``, else the most frequent), named in the term. The
factors of ``GRAPH_FACTORS`` are not in the files: they are read from WordNet for each question's concept and word
(``knowledge.measures.concept_measures``, as ``analysis.difficulty`` reads them).

>>> fit = fit_irt(answers, explain=("hops", "distractor_family", "concept_depth"))  # doctest: +SKIP
>>> predict_difficulty(fit, read_probes("probes/new"))                             # doctest: +SKIP
"""

import numpy as np
import polars as pl

from workbench.errors import WorkbenchError
from workbench.irt.model import Z95

GRAPH_FACTORS = ("concept_depth", "polysemy")
"""Factors read from WordNet: the concept's fewest ISA links up to a root, and how many concepts of its part of
speech the lemma asked about names (``knowledge.measures``)."""
FACTORS = ("hops", "distractor_family", "distractor_depth", "probe", "choices", *GRAPH_FACTORS)
"""The design factors: those every probe and prediction file carries, then ``GRAPH_FACTORS``."""
CATEGORICAL = ("distractor_family", "probe")
REFERENCE = {"distractor_family": "random"}


def with_graph_factors(questions: pl.DataFrame, factors: tuple[str, ...], graph=None) -> pl.DataFrame:
    """``questions`` (rows with ``concept`` and ``word``) with the ``GRAPH_FACTORS`` among ``factors`` added as
    columns, from ``graph`` (default: WordNet). Refused: a question whose concept WordNet lacks (a GCIDE sense)."""
    wanted = [name for name in factors if name in GRAPH_FACTORS]
    if not wanted:
        return questions
    from workbench.knowledge import load_graph
    from workbench.knowledge.measures import concept_measures

    graph = graph if graph is not None else load_graph("wordnet")
    measures = concept_measures(graph, questions).select("concept", "word", *wanted)
    added = questions.drop(wanted, strict=False).join(
        measures, on=["concept", "word"], how="left", nulls_equal=True, maintain_order="left"
    )
    for name in wanted:
        if (lacking := added.filter(pl.col(name).is_null())).height:
            concept = lacking["concept"][0]
            raise WorkbenchError(f"{lacking.height} question(s) have no {name} ({concept!r} is not a {graph.source} "
                                 f"concept: GCIDE's senses are not); explain without {name}")  # fmt: skip
    return added


def design_matrix(items: pl.DataFrame, factors: tuple[str, ...], levels: dict | None = None):
    """Questions x terms: an intercept, each numeric factor, each categorical level but the reference.

    ``levels`` (term list from a fit) rebuilds the same columns for other questions; returns (matrix, terms).
    """
    terms = levels if levels is not None else _terms(items, factors)
    columns = []
    for term in terms:
        name, _, level = term.partition("=")
        if name == "intercept":
            columns.append(np.ones(items.height))
        elif level:
            columns.append((items[name] == level).cast(pl.Float64).fill_null(0).to_numpy())
        else:
            if items[name].null_count():
                raise WorkbenchError(f"{items[name].null_count()} question(s) lack {name}; explain without it")
            columns.append(items[name].cast(pl.Float64).to_numpy())
    return np.column_stack(columns), terms


def _terms(items: pl.DataFrame, factors: tuple[str, ...]) -> list[str]:
    terms = ["intercept"]
    for name in factors:
        if name in CATEGORICAL:
            counts = items[name].value_counts(sort=True)
            levels = counts[name].to_list()
            if len(levels) < 2:
                continue  # one level: nothing to tell apart
            reference = REFERENCE.get(name) if REFERENCE.get(name) in levels else levels[0]
            terms += [f"{name}={level}" for level in sorted(levels) if level != reference]
        elif items[name].n_unique() > 1:
            terms.append(name)
    return terms


def predict_difficulty(fit, questions: pl.DataFrame, graph=None) -> pl.DataFrame:
    """Predicted difficulty (with a 95 % interval) of ``questions`` (probe or prediction rows) from ``fit``'s
    factor effects: a freshly built set's difficulties before any model answered it. ``graph``: where the
    ``GRAPH_FACTORS`` are read (default: WordNet)."""
    if fit.effects.is_empty():
        raise WorkbenchError("the fit has no factor effects; fit with --explain (explain=FACTORS) first")
    frame = questions.with_columns(choices=pl.col("choices").list.len().cast(pl.Int64))
    frame = with_graph_factors(frame, fit.spec.explain, graph)
    terms = fit.effects["term"].to_list()
    for term in terms:
        name, _, level = term.partition("=")
        if level and level not in set(fit.items[name].unique()):
            raise WorkbenchError(f"the fit does not know {term}; refit with questions of that kind")
    design, _ = design_matrix(frame, fit.spec.explain, levels=terms)
    beta = fit.effects["effect"].to_numpy()
    se = fit.effects["se"].to_numpy()
    b = design @ beta
    b_se = np.sqrt((design**2) @ se**2)  # effects taken as independent: an approximation, docs/IRT.md
    return questions.select("id", "probe", "question").with_columns(
        b_predicted=b, b_lo=b - Z95 * b_se, b_hi=b + Z95 * b_se
    )
