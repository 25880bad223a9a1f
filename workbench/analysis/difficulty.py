"""What makes an item hard: a mixed-effects logistic regression of correctness on the properties of the items.

Each question gets its properties (``item_properties``): the hop count to the gold answer, the distractor family
and depth, the polysemy of the target word, the concept's depth in the hierarchy, the word's sense-tagged count
and the question template. ``fit_difficulty`` regresses the model's correctness on them with the concept (the
semantic cluster) as a random intercept, since the questions about one concept are not independent:

    logit P(right) = b0 + sum_j b_j x_j + u_concept,    u_concept ~ N(0, s^2)

Continuous properties are standardised (an estimate is the change in log-odds per standard deviation; the
``scale`` column holds that SD in the property's own units, for per-unit readings); categorical ones are coded
against a reference level (random distractors, else the most frequent level). The fit is statsmodels'
``BinomialBayesMixedGLM`` by variational Bayes (``fit_vb``): estimates are posterior means and ``std_error`` the
posterior SDs of a Gaussian approximation, under normal priors on the coefficients (SD ``prior_sd``) and on the
log SD of the concepts' intercepts (SD 1). Its intervals are mean +/- z SD: credible intervals, not maximum
likelihood confidence intervals, and variational Bayes tends to make them too narrow (docs/ANALYSES.md).

    >>> props = item_properties(preds)            # one row per model and question
    >>> fit_difficulty(props).select("term_label", "odds_ratio", "odds_lo", "odds_hi")  # doctest: +SKIP
"""

import math
import warnings
from collections.abc import Sequence

import numpy as np
import polars as pl

from workbench import metrics
from workbench.errors import SpecError, WorkbenchError
from workbench.knowledge import Graph, load_graph
from workbench.knowledge.measures import concept_measures

TERMS = (
    "hops",
    "distractor_family",
    "distractor_depth",
    "polysemy",
    "concept_depth",
    "lemma_frequency",
    "template",
    "probe",
)
"""The item properties ``fit_difficulty`` regresses on by default, in the order of its table."""
CATEGORICAL = {"distractor_family": "random", "template": None, "probe": None}
"""Categorical properties and their preferred reference level (None: the most frequent level)."""
NAMES = {
    "hops": "hops",
    "distractor_family": "distractor family",
    "distractor_depth": "distractor depth",
    "polysemy": "polysemy",
    "concept_depth": "concept depth",
    "lemma_frequency": "log2(1 + sense count)",
    "template": "template",
    "probe": "probe",
}
UNITS = {
    "hops": "each extra hop to the gold answer",
    "distractor_depth": "each level deeper distractor",
    "polysemy": "each extra sense of the word",
    "concept_depth": "each level deeper in the hierarchy",
    "lemma_frequency": "each doubling of the word's sense-tagged count (plus one)",
}
PREDICTION_COLUMNS = ("id", "probe", "cluster_id", "concept", "correct", "hops", "distractor_family",
                      "distractor_depth", "template")  # fmt: skip
MIN_QUESTIONS = 100
MIN_CLUSTERS = 10

PROPERTIES_SCHEMA: dict[str, pl.DataType] = {
    "id": pl.String(),
    "probe": pl.String(),
    "cluster_id": pl.String(),  # the random effect's groups
    "concept": pl.String(),
    "lemma": pl.String(),  # the target word's lemma (knowledge.measures)
    "correct": pl.Boolean(),
    "hops": pl.Int64(),
    "distractor_family": pl.String(),
    "distractor_depth": pl.Int64(),
    "polysemy": pl.Int64(),  # concepts of the same part of speech with that lemma
    "concept_depth": pl.Int64(),  # fewest ISA links up to a root
    "lemma_frequency": pl.Int64(),  # WordNet's sense-tagged count of the lemma in this sense
    "template": pl.String(),
}
COEFFICIENT_SCHEMA: dict[str, pl.DataType] = {
    "term": pl.String(),  # intercept, a property, property=level, or concept_sd
    "term_label": pl.String(),  # readable: "distractor family: sister (vs random)"
    "kind": pl.String(),  # fixed, random (the concepts' SD), dropped
    "estimate": pl.Float64(),  # posterior mean, log-odds (per SD of a continuous property)
    "std_error": pl.Float64(),  # posterior SD
    "lo": pl.Float64(),
    "hi": pl.Float64(),
    "odds_ratio": pl.Float64(),  # exp(estimate), and its interval
    "odds_lo": pl.Float64(),
    "odds_hi": pl.Float64(),
    "scale": pl.Float64(),  # one SD of a continuous property in its own units (log2 units for lemma_frequency)
    "n": pl.Int64(),  # questions fitted
    "n_clusters": pl.Int64(),
    "note": pl.String(),  # why a term was dropped
}


def item_properties(predictions: pl.DataFrame, graph: Graph | None = None) -> pl.DataFrame:
    """One row per model and question: its correctness and the properties ``fit_difficulty`` regresses on.

    Parameters
    ----------
    predictions : polars.DataFrame
        Predictions (``PREDICTION_SCHEMA``), one model or several.
    graph : Graph, optional
        The knowledge graph the concepts come from (default: WordNet, ``load_graph("wordnet")``). Properties
        that need it (``lemma``, ``polysemy``, ``concept_depth``, ``lemma_frequency``) are null for concepts it
        lacks; ``lemma_frequency`` (WordNet's sense-tagged count, ``Lemma.count()``) is null for other graphs.

    Returns
    -------
    polars.DataFrame
        The model identity columns, then ``PROPERTIES_SCHEMA``.

    Examples
    --------
    >>> item_properties(preds).select("concept", "polysemy", "concept_depth", "lemma_frequency")  # doctest: +SKIP
    """
    missing = [name for name in (*PREDICTION_COLUMNS, "word") if name not in predictions.columns]
    if missing:
        raise WorkbenchError(f"the predictions lack the columns {missing}; pass a prediction frame (PREDICTION_SCHEMA)")
    graph = graph if graph is not None else load_graph("wordnet")
    keys = _keys(predictions)
    measures = concept_measures(graph, predictions).rename({"sense_count": "lemma_frequency"})
    joined = predictions.join(measures, on=["concept", "word"], how="left", nulls_equal=True)
    return joined.select(*keys, *(pl.col(name).cast(dtype) for name, dtype in PROPERTIES_SCHEMA.items()))


def fit_difficulty(
    properties: pl.DataFrame,
    terms: Sequence[str] = TERMS,
    *,
    level: float = 0.95,
    prior_sd: float = 2.0,
    seed: int = 0,
) -> pl.DataFrame:
    """A mixed-effects logistic model of correctness on item properties, the concept as a random intercept.

    Fitted per model identity by variational Bayes (statsmodels ``BinomialBayesMixedGLM.fit_vb``). A term
    constant in the questions, missing for all of them, or collinear with the terms before it is dropped (a
    ``dropped`` row says why); questions missing a kept property are left out with a warning.

    Parameters
    ----------
    properties : polars.DataFrame
        ``item_properties`` (or any frame with ``correct``, ``cluster_id`` and the ``terms``).
    terms : sequence of str
        The properties to regress on; categorical ones (``CATEGORICAL``) are coded against a reference level.
    level : float
        Coverage of the intervals (posterior mean +/- z posterior SD).
    prior_sd : float
        SD of the normal prior on each coefficient (log-odds).
    seed : int
        Seeds the variational fit's random starting point, so the same questions give the same table.

    Returns
    -------
    polars.DataFrame
        The identity columns, then ``COEFFICIENT_SCHEMA``: the intercept, one row per fixed effect, the SD of
        the concepts' intercepts (``kind`` "random") and the dropped terms.

    Examples
    --------
    >>> coefs = fit_difficulty(item_properties(preds))  # doctest: +SKIP
    >>> coefs.filter(pl.col("kind") == "fixed").select("term_label", "odds_ratio", "odds_hi")  # doctest: +SKIP
    """
    if not 0 < level < 1:
        raise SpecError(f"level={level!r} is out of range; use a coverage between 0 and 1, such as 0.95")
    if not prior_sd > 0:
        raise SpecError(f"prior_sd={prior_sd!r} is out of range; use a positive SD in log-odds, such as 2.0")
    unknown = [term for term in terms if term not in properties.columns]
    if unknown or not terms:
        raise SpecError(f"terms={list(terms)!r}: {unknown or 'none'} not in the frame; choose from {list(TERMS)}")
    missing = [name for name in ("correct", "cluster_id") if name not in properties.columns]
    if missing:
        raise WorkbenchError(f"the frame lacks {missing}; pass item_properties(predictions)")
    keys = _keys(properties)
    if not keys:
        return _fit_one(properties, terms, level, prior_sd, seed)
    parts = [
        _fit_one(part, terms, level, prior_sd, seed).select(
            *(pl.lit(value).alias(key) for key, value in zip(keys, ids)), pl.all()
        )
        for ids, part in properties.group_by(keys, maintain_order=True)
    ]
    return pl.concat(parts).with_columns(pl.col(key).cast(properties.schema[key]) for key in keys)


def fit_models(preds: pl.DataFrame) -> tuple[pl.DataFrame | None, str]:
    """``fit_difficulty`` of each model in ``preds`` with enough questions, with its ``label``
    (``metrics.model_labels``); or None and why not (too few questions, no WordNet). What the report and the
    dashboard show.

    >>> coefficients, why_not = fit_models(preds)  # doctest: +SKIP
    """
    keys = metrics.identity_keys(preds)
    sizes = preds.group_by(keys).agg(n=pl.len(), clusters=pl.col("cluster_id").n_unique())
    enough = sizes.filter((pl.col("n") >= MIN_QUESTIONS) & (pl.col("clusters") >= MIN_CLUSTERS))
    if enough.is_empty():
        return None, (
            f"Too few questions for the difficulty model (it needs {MIN_QUESTIONS} questions in "
            f"{MIN_CLUSTERS} concepts per model)."
        )
    try:
        kept = preds.join(enough.select(keys), on=keys, how="semi", nulls_equal=True)
        coefficients = fit_difficulty(item_properties(kept))
    except WorkbenchError as err:  # DataSourceError included: WordNet not installed
        return None, f"No difficulty model: {err}"
    return metrics.model_labels(preds).join(coefficients, on=keys, nulls_equal=True, maintain_order="right"), ""


def reading(coefficients: pl.DataFrame) -> list[str]:
    """A few sentences reading one model's ``fit_difficulty`` table: the clear effects per unit of each
    property, the unclear ones, and how much the concepts differ.

    >>> reading(coefs)  # doctest: +SKIP
    ['Each extra hop to the gold answer multiplies the odds of a right answer by 0.80 [0.71, 0.90].', ...]
    """
    fixed = coefficients.filter((pl.col("kind") == "fixed") & (pl.col("term") != "intercept"))
    lines, unclear = [], []
    for row in fixed.iter_rows(named=True):
        if row["lo"] <= 0 <= row["hi"]:
            unclear.append(row["term_label"])
            continue
        scale = row["scale"] if row["scale"] is not None else 1.0
        low, high = sorted((math.exp(row["lo"] / scale), math.exp(row["hi"] / scale)))
        factor = f"{math.exp(row['estimate'] / scale):.2f} [{low:.2f}, {high:.2f}]"
        what = UNITS.get(row["term"], row["term_label"]) if row["scale"] is not None else row["term_label"]
        lines.append(f"{what[0].upper()}{what[1:]} multiplies the odds of a right answer by {factor}.")
    if unclear:
        lines.append(f"No clear effect (the interval of the odds ratio holds 1): {'; '.join(unclear)}.")
    for row in coefficients.filter(pl.col("kind") == "random").iter_rows(named=True):
        lines.append(
            f"Concepts differ beyond these properties: their intercepts have an SD of {row['estimate']:.2f} "
            f"[{row['lo']:.2f}, {row['hi']:.2f}] in log-odds."
        )
    return lines


def _keys(frame: pl.DataFrame) -> list[str]:
    """The model identity columns ``frame`` has."""
    return [key for key in metrics.identity_keys(frame) if key in frame.columns]


def _fit_one(frame: pl.DataFrame, terms: Sequence[str], level: float, prior_sd: float, seed: int) -> pl.DataFrame:
    """``fit_difficulty`` on one model's questions."""
    from scipy import sparse
    from scipy.stats import norm
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    dropped: list[dict] = []
    available = []
    for term in terms:
        if frame[term].null_count() == frame.height:
            dropped.append(_dropped(term, "not available for these questions"))
        else:
            available.append(term)
    complete = frame.filter(pl.all_horizontal(pl.col([*available, "correct", "cluster_id"]).is_not_null()))
    if complete.height < frame.height:
        warnings.warn(
            f"{frame.height - complete.height} of {frame.height} questions lack one of {available} and are left out",
            stacklevel=3,
        )
    _check_size(complete)
    design, columns = _design(complete, available, dropped)
    clusters, codes = np.unique(complete["cluster_id"].to_numpy(), return_inverse=True)
    n = complete.height
    random = sparse.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, len(clusters)))
    model = BinomialBayesMixedGLM(
        complete["correct"].cast(pl.Float64).to_numpy(), design, random, np.zeros(len(clusters), dtype=int),
        vcp_p=1.0, fe_p=prior_sd,
    )  # fmt: skip
    # L-BFGS-B: the same optimum as BFGS, ten times faster with many concepts; fit_vb starts its posterior SDs at
    # random points, from fresh entropy unless seeded (the last digits of a table then changed from run to run)
    result = model.fit_vb(fit_method="L-BFGS-B", rng=seed)
    if not result.optim_retvals.success:
        warnings.warn(f"the variational fit did not converge: {result.optim_retvals.message}", stacklevel=3)
    z = float(norm.ppf(0.5 + level / 2))
    mean, sd = np.asarray(result.fe_mean), np.asarray(result.fe_sd)
    rows = [
        {**column, "kind": "fixed", "estimate": m, "std_error": s, "lo": m - z * s, "hi": m + z * s}
        for column, m, s in zip(columns, mean, sd)
    ]
    log_sd, log_sd_sd = float(result.vcp_mean[0]), float(result.vcp_sd[0])
    rows.append(
        {
            "term": "concept_sd",
            "term_label": "concept SD (random intercept, log-odds)",
            "kind": "random",
            "estimate": math.exp(log_sd),
            "std_error": math.exp(log_sd) * log_sd_sd,  # the delta method on the log SD's posterior SD
            "lo": math.exp(log_sd - z * log_sd_sd),
            "hi": math.exp(log_sd + z * log_sd_sd),
        }
    )
    rows += [{**term, "kind": "dropped"} for term in dropped]
    table = pl.DataFrame(rows, infer_schema_length=None).with_columns(
        odds_ratio=pl.when(pl.col("kind") == "fixed").then(pl.col("estimate").exp()),
        odds_lo=pl.when(pl.col("kind") == "fixed").then(pl.col("lo").exp()),
        odds_hi=pl.when(pl.col("kind") == "fixed").then(pl.col("hi").exp()),
        n=pl.lit(n),
        n_clusters=pl.lit(len(clusters)),
    )
    return table.select(
        pl.col(name).cast(dtype) if name in table.columns else pl.lit(None, dtype).alias(name)
        for name, dtype in COEFFICIENT_SCHEMA.items()
    )


def _dropped(term: str, note: str) -> dict:
    """A dropped term's row: its name, label and why."""
    return {"term": term, "term_label": NAMES.get(term, term), "note": note}


def _check_size(frame: pl.DataFrame) -> None:
    """Raise when ``frame`` is too small, or too one-sided, for the model."""
    clusters = frame["cluster_id"].n_unique()
    if frame.height < MIN_QUESTIONS or clusters < MIN_CLUSTERS:
        raise WorkbenchError(
            f"{frame.height} questions in {clusters} concepts are too few for the difficulty model; it needs at "
            f"least {MIN_QUESTIONS} questions in {MIN_CLUSTERS} concepts: score more of the probe set"
        )
    if frame["correct"].n_unique() < 2:
        raise WorkbenchError("every question is answered the same way (all right or all wrong): nothing to explain")


def _design(frame: pl.DataFrame, terms: list[str], dropped: list[dict]) -> tuple[np.ndarray, list[dict]]:
    """The fixed-effects design (intercept, standardised continuous terms, treatment-coded categorical ones) and
    a description of each column; constant and collinear terms go to ``dropped``."""
    columns = [np.ones(frame.height)]
    described = [
        {"term": "intercept", "term_label": "intercept (log-odds at the reference levels, average properties)"}
    ]
    for term in terms:
        if term in CATEGORICAL:
            counts = frame[term].cast(pl.String).value_counts(sort=True).sort(["count", term], descending=[True, False])
            levels = counts[term].to_list()
            if len(levels) < 2:
                dropped.append(_dropped(term, f"constant in these questions ({levels[0]})"))
                continue
            reference = CATEGORICAL[term] if CATEGORICAL[term] in levels else levels[0]
            values = frame[term].cast(pl.String).to_numpy()
            for value in sorted(set(levels) - {reference}):
                columns.append((values == value).astype(float))
                label = f"{NAMES.get(term, term)}: {value} (vs {reference})"
                described.append({"term": f"{term}={value}", "term_label": label})
            continue
        values = frame[term].cast(pl.Float64).to_numpy()
        if term == "lemma_frequency":
            values = np.log2(1 + values)
        scale = float(values.std())
        if scale == 0:
            dropped.append(_dropped(term, f"constant in these questions ({frame[term][0]})"))
            continue
        columns.append((values - values.mean()) / scale)
        described.append({"term": term, "term_label": f"{NAMES.get(term, term)} (+1 SD = {scale:.2g})", "scale": scale})
    return _independent(np.column_stack(columns), described, dropped)


def _independent(design: np.ndarray, described: list[dict], dropped: list[dict]) -> tuple[np.ndarray, list[dict]]:
    """Keep the columns of ``design`` that are not linear combinations of the ones kept before them."""
    kept: list[int] = []
    for index in range(design.shape[1]):
        if np.linalg.matrix_rank(design[:, [*kept, index]]) > len(kept):
            kept.append(index)
        else:
            dropped.append({**described[index], "note": "collinear with the terms before it"})
    return design[:, kept], [described[index] for index in kept]
