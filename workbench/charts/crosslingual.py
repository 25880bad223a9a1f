"""Charts of the cross-lingual paired comparison (``analysis.crosslingual``): take its frames, return chart values.

>>> known_chart(concepts) | accuracy_dumbbell(summary)  # doctest: +SKIP
"""

import altair as alt
import polars as pl

KNOWN_ORDER = ("both", "English only", "other only", "neither")


def accuracy_dumbbell(summary: pl.DataFrame) -> alt.LayerChart:
    """Strict cluster accuracy in English (A) and in the other language (B) of each pair of ``language_summary``, a
    line between them per model and language: how much of the English taxonomy a model knows in another language."""
    long = pl.concat(
        [
            summary.select("model", "b", pl.lit(side).alias("side"), pl.col(column).alias("cluster_accuracy"))
            for side, column in (("English", "cluster_accuracy_a"), ("the language", "cluster_accuracy_b"))
        ]
    ).rename({"b": "language"})
    base = alt.Chart(long).encode(
        y=alt.Y("language:N", title=None), x=alt.X("cluster_accuracy:Q", title="strict cluster accuracy")
    )
    lines = base.mark_line(color="#999").encode(detail="language:N")
    points = base.mark_point(filled=True, size=70).encode(
        color=alt.Color("side:N", title=None), tooltip=["model", "language", "side", "cluster_accuracy"]
    )
    return (lines + points).facet(column=alt.Column("model:N", title=None))


def known_chart(concepts: pl.DataFrame) -> alt.Chart:
    """Concepts known (every paired question right) in both languages, in English only, in the other only, or in
    neither, per pair: the rows of ``concept_table`` stacked with a ``pair`` column."""
    counts = (
        concepts.with_columns(
            side=pl.when(pl.col("known_a") & pl.col("known_b"))
            .then(pl.lit("both"))
            .when(pl.col("known_a"))
            .then(pl.lit("English only"))
            .when(pl.col("known_b"))
            .then(pl.lit("other only"))
            .otherwise(pl.lit("neither"))
        )
        .group_by("pair", "side")
        .len("concepts")
    )
    return (
        alt.Chart(counts)
        .mark_bar()
        .encode(
            y=alt.Y("pair:N", title=None),
            x=alt.X("concepts:Q", stack="normalize", title="share of concepts"),
            color=alt.Color("side:N", sort=list(KNOWN_ORDER), title="known in"),
            order=alt.Order("order:Q"),
            tooltip=["pair", "side", "concepts"],
        )
        .transform_calculate(order=f"indexof({list(KNOWN_ORDER)}, datum.side)")
    )


def language_chart(summary: pl.DataFrame, concepts: pl.DataFrame) -> alt.VConcatChart:
    """The cross-lingual view of the dashboard and the static site: the accuracy dumbbell over the concepts known in
    one language only (``analysis.crosslingual.language_report``'s frames)."""
    return alt.vconcat(accuracy_dumbbell(summary), known_chart(concepts))
