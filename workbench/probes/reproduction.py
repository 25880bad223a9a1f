"""Our probe build beside the released data, on the concepts both contain (docs/REPRODUCTION.md).

Each table has one row per value with the count and share in ``ours`` and in ``released``, so a large
difference shows at a glance; ``gold_overlap`` says how often our gold answers for a (concept, hop) are
among the released ones.
"""

from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError

TABLES = ("hops", "families", "cluster_sizes", "answer_positions", "gold_overlap")


def _side_by_side(ours: pl.DataFrame, released: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    def counted(frame: pl.DataFrame, name: str) -> pl.DataFrame:
        counts = frame.group_by(keys).agg(pl.len().alias(name))
        return counts.with_columns((pl.col(name) / pl.col(name).sum()).round(4).alias(f"{name}_share"))

    joined = counted(ours, "ours").join(counted(released, "released"), on=keys, how="full", coalesce=True)
    return joined.fill_null(0).sort(keys)


def _gold_overlap(ours: pl.DataFrame, released: pl.DataFrame) -> pl.DataFrame:
    def golds(frame: pl.DataFrame, name: str) -> pl.DataFrame:
        return frame.group_by("concept", "hops").agg(pl.col("gold_concept").unique().alias(name))

    pairs = golds(released, "released").join(golds(ours, "ours"), on=["concept", "hops"], how="inner")
    hit = pl.col("released").list.set_intersection(pl.col("ours")).list.len() > 0
    return (
        pairs.with_columns(hit.alias("coincide"))
        .group_by("hops")
        .agg(pl.len().alias("pairs"), pl.col("coincide").mean().round(4).alias("share_coinciding"))
        .sort("hops")
    )


def compare_with_released(ours: pl.DataFrame, released: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """``TABLES`` comparing ``ours`` with ``released`` (both probe frames of one probe) on their shared concepts.

    >>> tables = compare_with_released(
    ...     build_probes(ProbeSpec.paper("hyponymy")), read_probes("hyponymy_test.jsonl")
    ... )  # doctest: +SKIP
    >>> tables["families"]  # doctest: +SKIP
    """
    shared = set(ours["concept"].unique()) & set(released["concept"].unique())
    if not shared:
        raise WorkbenchError(
            "the two probe sets share no concept; compare builds of the same probe (e.g. hyponymy with hyponymy)"
        )
    ours = ours.filter(pl.col("concept").is_in(list(shared)))
    released = released.filter(pl.col("concept").is_in(list(shared)))

    def sizes(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.group_by("cluster_id").agg(pl.len().clip(upper_bound=20).alias("cluster_size"))

    return {
        "hops": _side_by_side(ours, released, ["hops"]),
        "families": _side_by_side(ours, released, ["distractor_family", "distractor_depth"]),
        "cluster_sizes": _side_by_side(sizes(ours), sizes(released), ["cluster_size"]),
        "answer_positions": _side_by_side(ours, released, ["answer"]),
        "gold_overlap": _gold_overlap(ours, released),
    }


def to_markdown(frame: pl.DataFrame) -> str:
    """A frame as a Markdown table (for docs/REPRODUCTION.md), through polars' own table formatting."""
    with pl.Config(
        tbl_formatting="MARKDOWN",
        tbl_hide_column_data_types=True,
        tbl_hide_dataframe_shape=True,
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=400,
        fmt_str_lengths=200,
    ):
        return str(frame)


def reproduction_tables(released_dir: str | Path, seed: int = 0, progress: bool = True) -> str:
    """Markdown for docs/REPRODUCTION.md: Table 4 and ``TABLES`` of the paper preset against every released file.

    Each probe found in ``released_dir`` (ARC-style JSONL, all splits together) is compared with
    ``build_probes(ProbeSpec.paper(probe, seed=seed))`` on the concepts both contain.
    """
    from workbench.probes import ProbeSpec, build_probes
    from workbench.probes.formats import read_probes
    from workbench.probes.stats import table4

    files = sorted(Path(released_dir).glob("*.jsonl"))
    if not files:
        raise WorkbenchError(f"no .jsonl files in {released_dir}; pass the folder of the released probe data")
    released = pl.concat([read_probes(path) for path in files], how="vertical_relaxed")
    sections = []
    for probe in sorted(released["probe"].unique()):
        theirs = released.filter(pl.col("probe") == probe)
        ours = build_probes(ProbeSpec.paper(probe, seed=seed), progress=progress)
        sections.append(f"### {probe}\n\nTable 4, whole sets (ours: the paper preset; released: the files at hand)\n")
        sections.append(
            to_markdown(
                pl.concat(
                    [table4(ours).with_columns(set=pl.lit("ours")), table4(theirs).with_columns(set=pl.lit("released"))]
                )
            )
        )
        for name, table in compare_with_released(ours, theirs).items():
            sections.append(f"\n{name} (shared concepts)\n")
            sections.append(to_markdown(table))
        sections.append("")
    return "\n".join(sections)
