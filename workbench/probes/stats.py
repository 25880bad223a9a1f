"""Probe-set statistics: SPEC Table 4 and the probe x hops by distractor family x depth counts."""

import polars as pl

from workbench.schema import DISTRACTOR_FAMILIES

TABLE4_SCHEMA: dict[str, pl.DataType] = {
    "probe": pl.String(),
    "unique_questions": pl.Int64(),  # distinct (question, gold choice text): Table 4's "unique (Q, A) pairs"
    "with_perturbations": pl.Int64(),  # all rows
    "avg_cluster_size": pl.Float64(),  # rows per distinct cluster_id
    "concepts": pl.Int64(),  # distinct concept
}
HOPS_INDEX = ("probe", "hops")
MEASURES = {  # a probe set's marginals -> the expression each is read from (adjective satellites count as adjectives)
    "pos": pl.col("pos").replace("s", "a"),
    "hops": pl.col("hops").cast(pl.String),
    "kind": pl.when(pl.col("distractor_depth") == 0)
    .then(pl.col("distractor_family"))
    .otherwise(pl.format("{}_{}", pl.col("distractor_family"), pl.col("distractor_depth"))),
}


def table4(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per probe with the statistics of R&S 2020 Table 4 (``TABLE4_SCHEMA``), sorted by probe.

    Parameters
    ----------
    frame : polars.DataFrame
        Probe rows (``build_probes``, ``read_probes``), of one probe or several.

    Returns
    -------
    polars.DataFrame
        One row per probe:

        - ``unique_questions``: distinct (``question``, gold choice text), Table 4's "unique (Q, A) pairs", so a
          question is counted once whatever distractors it was perturbed with (one concept asked in two sentences,
          or in two phrasings: two questions);
        - ``with_perturbations``: all rows (every distractor perturbation of every question);
        - ``avg_cluster_size``: rows per distinct ``cluster_id``;
        - ``concepts``: distinct ``concept`` (the paper's "synsets").

    Examples
    --------
    >>> import workbench as wb
    >>> wb.table4(wb.build_probes(wb.ProbeSpec.paper("synonymy", train_pool=None, held_out_golds=False)))
    ... # doctest: +SKIP
    probe     unique_questions  with_perturbations  avg_cluster_size  concepts
    synonymy  60959             91069               2.57              35373
    """
    gold = pl.col("choices").list.get(pl.col("answer"))
    return (
        frame.group_by("probe")
        .agg(
            unique_questions=pl.struct(pl.col("question"), gold.alias("gold")).n_unique(),
            with_perturbations=pl.len(),
            avg_cluster_size=pl.len() / pl.col("cluster_id").n_unique(),
            concepts=pl.col("concept").n_unique(),
        )
        .select(pl.col(name).cast(dtype) for name, dtype in TABLE4_SCHEMA.items())
        .sort("probe")
    )


def hops_by_family(frame: pl.DataFrame) -> pl.DataFrame:
    """Question counts: rows probe x hops, one column per distractor family x depth, zero-filled.

    A column is named ``{family}_{depth}`` (``sister_2``, ``isa_up_1``), or ``{family}`` where the depth
    is 0 (``random``, ``senses``); columns follow ``DISTRACTOR_FAMILIES`` order, then depth.
    The counts of a row sum to the questions of that probe at that hop count.

    >>> hops_by_family(probes).columns  # doctest: +SKIP
    ['probe', 'hops', 'random', 'sister_1', 'sister_2', 'isa_down_1']
    """
    family = pl.col("distractor_family")
    depth = pl.col("distractor_depth")
    counts = frame.group_by(*HOPS_INDEX, family, depth).agg(n=pl.len().cast(pl.Int64))
    counts = counts.with_columns(
        column=pl.when(depth == 0).then(family).otherwise(pl.format("{}_{}", family, depth)),
        order=family.replace_strict(
            DISTRACTOR_FAMILIES, list(range(len(DISTRACTOR_FAMILIES))), default=len(DISTRACTOR_FAMILIES)
        ),
    )
    columns = counts.unique("column").sort("order", "distractor_family", "distractor_depth")["column"].to_list()
    wide = counts.pivot("column", on_columns=columns, index=list(HOPS_INDEX), values="n", aggregate_function="sum")
    return wide.with_columns(pl.col(columns).fill_null(0)).sort(*HOPS_INDEX)
