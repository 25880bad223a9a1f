"""The frames every display draws, one function per view: charts encode them, widgets and reports show them.

Each function takes a prediction frame (or a run's curve, an oLMpics curve frame, a PLS fit) and returns
the tidy rows one view needs: the heat map's cells, the cluster bars with their intervals, the dashboard's
first questions, a learning curve in long form. Charts (``workbench.charts``) call these and only
encode; the dashboard calls them directly and memoises them per filter, so the numbers a chart shows
and the numbers a panel lists come from one place.

    >>> cells = heatmap_data(preds)  # one row per model x cell: label, row, column, n, n_correct, accuracy
    >>> bars = cluster_bar_data(preds, n_boot=200)  # instance and strict cluster accuracy with intervals
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from workbench import metrics
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.analysis import PLSResult

PROBE, ORIGINAL = "probe (S_new)", "original task (S_orig)"
"""The two measures of a learning curve, as its legend names them."""
CURVE_COLUMNS = ("k", "S_new", "S_new_std", "S_orig", "S_orig_std", "n_seeds")
SMALL_CELL = 20
"""A heat-map cell of fewer questions than this is marked small: its accuracy is too uncertain to colour
(at n = 20 a 95% interval still spans about ±20 points)."""


def heatmap_data(preds: pl.DataFrame) -> pl.DataFrame:
    """The rows ``heatmap`` draws: ``metrics.breakdown`` with the model ``label`` and ``panel`` columns,
    each cell's place in the paper's order (``row_order``, ``column_order``: ``metrics.cell_order``), whether
    it is too ``small`` to read (fewer than ``SMALL_CELL`` questions) and its ``cell_text`` ("62%", or "n=7").

    With several models, each cell of a model after the first also says whether it differs significantly from
    the first model's (``significance_marks``: ``reference``, ``p_holm``, ``significant``; its text gets a ``*``).

    >>> heatmap_data(preds).select("label", "row", "column", "n", "accuracy")  # doctest: +SKIP
    """
    cells = labelled(metrics.breakdown(preds), preds)
    rows, columns = metrics.cell_order(cells)
    small = pl.col("n") < SMALL_CELL
    percent = (pl.col("accuracy") * 100).round(0).cast(pl.Int64).cast(pl.String) + "%"
    marks = significance_marks(preds).select("label", "row", "column", "reference", "p_holm", "significant")
    return (
        cells.join(marks, on=["label", "row", "column"], how="left", maintain_order="left")
        .with_columns(
            row_order=pl.col("row").replace_strict(rows, range(len(rows)), return_dtype=pl.Int64),
            column_order=pl.col("column").replace_strict(columns, range(len(columns)), return_dtype=pl.Int64),
            small=small,
            cell_text=pl.when(small).then(pl.format("n={}", pl.col("n"))).otherwise(percent),
        )
        .with_columns(
            cell_text=pl.when(pl.col("significant")).then(pl.col("cell_text") + "*").otherwise(pl.col("cell_text"))
        )
    )


def significance_marks(preds: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Per model after the first in ``preds`` and heat-map cell: is its accuracy different from the first
    model's (the ``reference``) on the questions both scored? Exact McNemar per cell, Holm across the cells
    (``workbench.analysis.comparison.compare`` without its bootstrap); ``p_holm`` and ``significant``.

    Empty with one model, with inoculation stages (a stage is compared in ``workbench compare``), or where a
    model shares no question with the reference.

    >>> significance_marks(pl.concat([minilm, minilm_random])).filter("significant")  # doctest: +SKIP
    """
    schema = {name: pl.String() for name in ("label", "reference", "row", "column")}
    schema |= {"p_holm": pl.Float64(), "significant": pl.Boolean()}
    keys = metrics.identity_keys(preds)
    if any(key in preds.columns for key in metrics.STAGE_KEYS):
        return pl.DataFrame(schema=schema)
    labels = metrics.model_labels(preds)
    identities = preds.select(keys).unique(maintain_order=True).join(labels, on=keys, nulls_equal=True)
    if identities.height < 2:
        return pl.DataFrame(schema=schema)
    # here: scipy.stats, a second of a dashboard kernel's start, only if used
    from workbench.analysis.comparison import compare

    frames = preds.partition_by(keys, maintain_order=True, as_dict=True)
    first, *others = identities.iter_rows(named=True)
    reference = frames[tuple(first[k] for k in keys)]
    parts = [pl.DataFrame(schema=schema)]
    for other in others:
        frame = frames[tuple(other[k] for k in keys)]
        if not frame.join(reference, on=["probe", "id"], how="semi").is_empty():  # compare pairs by probe and id
            table = compare(reference, frame, n_boot=0, alpha=alpha).filter(pl.col("scope") == "cell")
            names = pl.lit(other["label"]).alias("label"), pl.lit(first["label"]).alias("reference")
            parts.append(table.select(*names, *list(schema)[2:]))
    return pl.concat(parts, how="vertical_relaxed")


def cluster_bar_data(preds: pl.DataFrame, n_boot: int = 1000, seed: int = 0) -> pl.DataFrame:
    """The rows ``cluster_bars`` draws: per model x probe x ``measure``, ``accuracy``, ``lo``, ``hi``, ``n``.

    >>> cluster_bar_data(preds, n_boot=200).select("probe", "measure", "accuracy", "lo", "hi")
    """
    keys = metrics.identity_keys(preds)
    inst = metrics.instance_accuracy(preds, by=("probe",), n_boot=n_boot, seed=seed)
    clus = metrics.cluster_accuracy(preds, by=("probe",), n_boot=n_boot, seed=seed)
    bars = pl.concat(
        [
            inst.select(*keys, "probe", "n", "accuracy", "lo", "hi", measure=pl.lit("instance")),
            clus.select(
                *keys,
                "probe",
                "n_clusters",
                "cluster_accuracy",
                "cluster_lo",
                "cluster_hi",
                measure=pl.lit("strict cluster"),
            ).rename({"n_clusters": "n", "cluster_accuracy": "accuracy", "cluster_lo": "lo", "cluster_hi": "hi"}),
        ]
    )
    return labelled(bars, preds)


def labelled(frame: pl.DataFrame, preds: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the model ``label`` and the ``panel`` label (the model without its stage)."""
    keys = metrics.identity_keys(preds)
    stages = [key for key in metrics.STAGE_KEYS if key in preds.columns]
    panels = metrics.model_labels(preds.drop(stages)).rename({"label": "panel"})
    return frame.join(metrics.model_labels(preds), on=keys, nulls_equal=True, maintain_order="left").join(
        panels, on=list(metrics.MODEL_KEYS), nulls_equal=True, maintain_order="left"
    )


def point_estimates(preds: pl.DataFrame, cells: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``cluster_bar_data(preds)`` with accuracies only (``lo``, ``hi`` empty), in milliseconds.

    Instance accuracy comes from the heat map's ``cells`` (``heatmap_data(preds)``), strict cluster
    accuracy from one group-by; no resampling, so the bars can be drawn before their intervals.
    """
    keys = metrics.identity_keys(preds)
    names = cells.select(*keys, "label", "panel").unique(maintain_order=True)
    instance = cells.group_by(*keys, "probe", maintain_order=True).agg(pl.col("n").sum(), pl.col("n_correct").sum())
    strict = (
        preds.group_by(*keys, "probe", "cluster_id")
        .agg(pl.col("correct").all())
        .group_by(*keys, "probe")
        .agg(n=pl.len().cast(pl.Int64), accuracy=pl.col("correct").cast(pl.Float64).mean())
    )
    strict = strict.sort(*keys, "probe", nulls_last=True)
    bars = pl.concat([
        instance.select(*keys, "probe", "n", accuracy=pl.col("n_correct") / pl.col("n"), measure=pl.lit("instance")),
        strict.select(*keys, "probe", "n", "accuracy", measure=pl.lit("strict cluster")),
    ])  # fmt: skip
    bars = bars.with_columns(lo=pl.lit(None, pl.Float64), hi=pl.lit(None, pl.Float64))
    return bars.join(names, on=keys, nulls_equal=True, maintain_order="left").select(
        *keys, "probe", "n", "accuracy", "lo", "hi", "measure", "label", "panel"
    )


def first_questions(preds: pl.DataFrame, n: int, labels: pl.DataFrame | None = None) -> pl.DataFrame:
    """The first ``n`` rows of ``metrics.drilldown(preds)`` without ordering every question.

    Ranks questions alone (most models wrong first, then probe, cluster, id, as ``drilldown`` does) and
    drills down only into the first ``n``. ``labels``: ``metrics.model_labels`` of the whole frame, so
    a model keeps its label when the page shows only some of its rows.

    >>> first_questions(preds, 30).equals(metrics.drilldown(preds).head(30))
    True
    """
    wrong = pl.col("correct").not_().sum()
    ranked = preds.group_by("id").agg(wrong, pl.col("probe").first(), pl.col("cluster_id").first())
    top = ranked.top_k(
        n, by=["correct", "probe", "cluster_id", "id"], reverse=[False, True, True, True]
    )  # ids are unique: a total order
    page = metrics.drilldown(preds.filter(pl.col("id").is_in(top["id"].implode()))).head(n)
    if labels is None:
        return page
    keys = metrics.identity_keys(preds)
    return page.drop("label").join(labels, on=keys, nulls_equal=True, maintain_order="left").select(page.columns)


def questions_in_cells(preds: pl.DataFrame, cells: list[tuple[str, str]]) -> pl.DataFrame:
    """The rows of ``preds`` in the heat-map ``cells``, given as (row, column) labels ("hypernymy k=2", "sister 1").

    >>> questions_in_cells(preds, [("hypernymy k=1", "random")])  # doctest: +SKIP
    """
    keys = [f"{row}\x1f{column}" for row, column in cells]
    return preds.filter(pl.concat_str(*metrics.cell_labels(), separator="\x1f").is_in(keys))


def curve_points(curve: pl.DataFrame, series: str = "model") -> pl.DataFrame:
    """The curve in long form: one row per (k, measure) with accuracy, low and high (± one std); a
    curve per rule (column ``rule``) becomes series "``series`` · rule". Empty accuracies are left out."""
    missing = [name for name in CURVE_COLUMNS if name not in curve.columns]
    if missing:
        raise WorkbenchError(
            f"the curve frame lacks the columns {missing}; pass what workbench.inoculation.learning_curve returns"
        )
    name = pl.lit(series) + " · " + pl.col("rule") if "rule" in curve.columns else pl.lit(series)
    parts = [
        curve.select(
            "k",
            "n_seeds",
            series=name,
            measure=pl.lit(label),
            accuracy=pl.col(column),
            std=pl.col(f"{column}_std").fill_null(0.0),
        )  # fmt: skip
        for label, column in ((PROBE, "S_new"), (ORIGINAL, "S_orig"))
    ]
    return (
        pl.concat(parts)
        .drop_nulls("accuracy")
        .with_columns(low=pl.col("accuracy") - pl.col("std"), high=pl.col("accuracy") + pl.col("std"))
        .sort("series", "measure", "k")
    )


def path_layout(result: PLSResult) -> pl.DataFrame:
    """Node positions: x is the latent's depth (longest path from an exogenous latent), y spreads
    the latents of one depth evenly; columns latent, x, y, r2 (null for exogenous latents)."""
    model = result.model
    depth: dict[str, int] = {}
    for name in model.latents:  # topological order: predecessors come first
        depth[name] = max((depth[p] + 1 for p in model.predecessors(name)), default=0)
    r2 = dict(result.r2.select("latent", "r2").iter_rows())
    rows = []
    for level in sorted(set(depth.values())):
        names = [n for n in model.latents if depth[n] == level]
        for i, name in enumerate(names):
            rows.append({"latent": name, "x": float(level), "y": (len(names) - 1) / 2 - i, "r2": r2.get(name)})
    return pl.DataFrame(rows, schema={"latent": pl.String, "x": pl.Float64, "y": pl.Float64, "r2": pl.Float64})


def reliability_points(preds: pl.DataFrame, bins: int = 10) -> pl.DataFrame:
    """The rows ``charts.reliability_diagram`` draws: per model ``label`` and confidence bin, the bin's mean
    ``confidence``, its ``accuracy`` and ``n`` (``workbench.analysis.calibration.reliability``)."""
    from workbench.analysis.calibration import reliability

    return labelled(reliability(preds, bins), preds)


def learning_curve_points(
    curve: pl.DataFrame, control: pl.DataFrame | None = None, zero_shot: pl.DataFrame | None = None
) -> pl.DataFrame:
    """The rows ``charts.inoculation_curves`` draws: ``curve`` (series "model") and ``control`` in long form.

    ``zero_shot``: zero-shot points (``workbench.scoring.zero_shot_accuracy``) as the k=0 of both curves,
    one curve per rule (``workbench.inoculation.curves.with_zero_shot``).
    """
    if zero_shot is not None:
        from workbench.inoculation.curves import with_zero_shot  # here: the inoculation package imports torch

        curve = with_zero_shot(curve, zero_shot)
        control = with_zero_shot(control, zero_shot) if control is not None else None
    points = curve_points(curve, "model")
    return points if control is None else pl.concat([points, curve_points(control, "control")])


def olmpics_curve_points(curves: pl.DataFrame) -> pl.DataFrame:
    """oLMpics curves (``CURVE_SCHEMA``) as the mean, min and max over seeds per N, with the zero-shot
    accuracy of the same model, probe and control in ``zero_shot`` (empty without a zero-shot row)."""
    points = (
        curves.filter(pl.col("n") > 0)
        .group_by("model", "probe", "control", "setting", "n")
        .agg(
            accuracy=pl.col("accuracy").mean(),
            low=pl.col("accuracy").min(),
            high=pl.col("accuracy").max(),
            seeds=pl.len(),
        )
        .sort("probe", "control", "setting", "n")
    )
    zero = curves.filter(pl.col("setting") == "zero-shot").select(
        "model", "probe", "control", zero_shot=pl.col("accuracy")
    )
    return points.join(zero, on=["model", "probe", "control"], how="left")


def language_sensitivity_points(curves: pl.DataFrame, setting: str = "mlp") -> pl.DataFrame:
    """oLMpics LANGSENSE (``workbench.olmpics.language_sensitivity``) of one ``setting``, in points."""
    from workbench.olmpics.curves import language_sensitivity  # here: the olmpics package imports torch

    sense = language_sensitivity(curves).filter(pl.col("setting") == setting)
    return sense.with_columns(points=pl.col("LANGSENSE") * 100)


ATLAS_LABEL_WIDTH = 0.08
"""A node of the taxonomy atlas narrower than this share of the width shows no name (its tooltip has it)."""


def taxonomy_layout(table: pl.DataFrame, root: str | None = None, levels: int | None = None) -> pl.DataFrame:
    """The icicle ``charts.taxonomy_atlas`` draws from ``atlas.taxonomy_accuracy``'s ``table``, rooted at ``root``.

    Per model ``label`` and node at or below ``root`` (default: the table's top, ``atlas.ROOT``), less than
    ``levels`` levels down: the rectangle ``x0``-``x1`` (``root`` spans 0-1; a child's width is its share of
    its parent's clusters, children side by side, bigger first), ``y0``-``y1`` (``level``: depth below ``root``),
    the text at its centre (``xm``, ``ym``; ``text`` empty when narrower than ``ATLAS_LABEL_WIDTH``), the
    table's accuracies and ``examples`` (a few of the concepts drawn there). Zoom is a new ``root``.

    >>> taxonomy_layout(table, root="animal.n.01", levels=4).select("node", "x0", "x1", "level")  # doctest: +SKIP
    """
    keys = metrics.identity_keys(table)
    if table.select(*keys, "node").is_duplicated().any():
        raise WorkbenchError("the table holds a node twice for one model: keep one `by` group (e.g. one probe) first.")
    tops = table.filter(pl.col("parent").is_null())["node"].unique()
    root = root if root is not None else (tops[0] if len(tops) else None)
    if root is None or root not in table["node"]:
        raise WorkbenchError(f"root={root!r} is not a node of the table; pick one of its `node` column.")
    if levels is not None and levels < 1:
        raise WorkbenchError(f"levels={levels!r} must be at least 1 (the root alone), or None for every level.")
    placed = []
    for _, part in table.group_by(keys, maintain_order=True):
        rows = {row["node"]: row for row in part.iter_rows(named=True)}
        children: dict[str, list[str]] = {}
        for node, row in rows.items():  # the table is in tree order: bigger subtrees first
            children.setdefault(row["parent"], []).append(node)
        if root not in rows:
            continue
        stack = [(root, 0.0, 1.0, 0)]
        while stack:
            node, x0, width, level = stack.pop()
            placed.append({**rows[node], "x0": x0, "x1": x0 + width, "level": level})
            if levels is not None and level + 1 >= levels:
                continue
            left = x0
            for child in children.get(node, []):
                share = width * rows[child]["n_clusters"] / rows[node]["n_clusters"]
                stack.append((child, left, share, level + 1))
                left += share
    frame = pl.DataFrame(placed, schema={**table.schema, "x0": pl.Float64, "x1": pl.Float64, "level": pl.Int64})
    wide = (pl.col("x1") - pl.col("x0")) >= ATLAS_LABEL_WIDTH
    name = pl.col("node").str.replace(r"\.[a-z]\.\d+$", "").str.replace_all("_", " ")
    examples = pl.col("concepts").list.head(5).list.join(", ") + pl.when(pl.col("concepts").list.len() > 5).then(
        pl.lit(", ...")
    ).otherwise(pl.lit(""))
    return labelled(
        frame.with_columns(
            y0=pl.col("level").cast(pl.Float64),
            y1=pl.col("level").cast(pl.Float64) + 1,
            xm=(pl.col("x0") + pl.col("x1")) / 2,
            ym=pl.col("level") + 0.5,
            text=pl.when(wide).then(name).otherwise(pl.lit("")),
            examples=examples,
        ).drop("concepts"),
        table,
    )


def coefficient_points(coefficients: pl.DataFrame) -> pl.DataFrame:
    """The rows ``charts.coefficient_plot`` draws: the fixed effects of ``workbench.analysis.difficulty.fit_difficulty``
    without the intercept, in the table's order, each with its model's ``label``."""
    points = coefficients.filter((pl.col("kind") == "fixed") & (pl.col("term") != "intercept"))
    if not all(key in coefficients.columns for key in metrics.MODEL_KEYS):
        return points.with_columns(label=pl.lit("model"))
    keys = [key for key in metrics.identity_keys(coefficients) if key in coefficients.columns]
    labels = metrics.model_labels(coefficients.select(keys).unique())
    return points.join(labels, on=keys, nulls_equal=True, maintain_order="left")


def way_difference_points(table: pl.DataFrame) -> pl.DataFrame:
    """The rows ``way_difference_heatmap`` draws: the cells of ``analysis.ways.way_difference`` (or ``compare``,
    already in the paper's order: ``row_order``, ``column_order``) with ``cell_text``, B − A in points with a ``*``
    where significant (Holm-adjusted McNemar), or ``n=`` for a cell of fewer than ``SMALL_CELL`` questions."""
    cells = table.filter(pl.col("scope") == "cell")
    rows, columns = (cells[name].unique(maintain_order=True).to_list() for name in ("row", "column"))
    points = (pl.col("diff") * 100).round(0).cast(pl.Int64)
    text = pl.when(points > 0).then(pl.lit("+")).otherwise(pl.lit("")) + points.cast(pl.String)
    small = pl.col("n") < SMALL_CELL
    return cells.with_columns(
        row_order=pl.col("row").replace_strict(rows, range(len(rows)), return_dtype=pl.Int64),
        column_order=pl.col("column").replace_strict(columns, range(len(columns)), return_dtype=pl.Int64),
        small=small,
        cell_text=pl.when(small)
        .then(pl.format("n={}", pl.col("n")))
        .otherwise(pl.when(pl.col("significant")).then(text + "*").otherwise(text)),
    )
