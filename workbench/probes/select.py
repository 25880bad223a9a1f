"""Choose questions from a probe (or prediction) frame: toggles, the counts they select, one concept's cluster.

``ProbeFilter`` holds the toggles of a probe set (probe, split, hop range, distractor families, depth
range); ``select`` applies them, ``counts`` tallies what they keep per hop count x distractor cell,
``options`` lists the values a frame offers. ``cluster_of`` and ``cluster_verdicts`` give the semantic
cluster of one concept, with a model's picks when the frame holds predictions.

    >>> chosen = select(probes, ProbeFilter(hops=(1, 2), families=("sister",)))
    >>> counts(chosen)                                  # hops, distractor_family, distractor_depth, n, clusters
"""

from dataclasses import dataclass

import polars as pl

from workbench.errors import SpecError
from workbench.schema import DISTRACTOR_FAMILIES, PROBES, SPLITS

COUNT_KEYS = ("hops", "distractor_family", "distractor_depth")


def _check_range(name: str, value: tuple[int, int] | None) -> None:
    if value is None:
        return
    if len(value) != 2 or not all(isinstance(v, int) for v in value) or value[0] > value[1] or value[0] < 0:
        raise SpecError(f"{name}={value!r} is not a range; give (low, high) whole numbers with 0 <= low <= high")


@dataclass(frozen=True)
class ProbeFilter:
    """Toggles over a probe frame; ``None`` keeps everything along that axis.

    ``hops`` and ``depths`` are inclusive (low, high) ranges; ``families`` are distractor families
    of ``workbench.schema.DISTRACTOR_FAMILIES``.

    >>> ProbeFilter(probe="hypernymy", split="test", hops=(1, 2), families=("sister", "random"))  # doctest: +ELLIPSIS
    ProbeFilter(probe='hypernymy', ...)
    """

    probe: str | None = None
    split: str | None = None
    hops: tuple[int, int] | None = None
    families: tuple[str, ...] | None = None
    depths: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if self.probe is not None and self.probe not in PROBES:
            raise SpecError(f"probe={self.probe!r} is not allowed; choose one of {list(PROBES)} or None")
        if self.split is not None and self.split not in SPLITS:
            raise SpecError(f"split={self.split!r} is not allowed; choose one of {list(SPLITS)} or None")
        _check_range("hops", self.hops)
        _check_range("depths", self.depths)
        if self.families is not None:
            object.__setattr__(self, "families", tuple(self.families))
            unknown = [f for f in self.families if f not in DISTRACTOR_FAMILIES]
            if unknown:
                raise SpecError(
                    f"families={list(self.families)!r} has unknown {unknown}; choose from {list(DISTRACTOR_FAMILIES)}"
                )


def select(frame: pl.DataFrame, where: ProbeFilter) -> pl.DataFrame:
    """The rows of ``frame`` (probe or prediction schema) that ``where`` keeps, in their order.

    A depth range never drops depth-0 families (random, senses), which have no depth.

    >>> select(probes, ProbeFilter(hops=(2, 3))).height <= probes.height
    True
    """
    return frame.filter(_predicate(where))


def counts(frame: pl.DataFrame) -> pl.DataFrame:
    """Questions and clusters per hop count x distractor family x depth, in hop then family order.

    >>> counts(select(probes, ProbeFilter(hops=(1, 1))))["hops"].unique().to_list()
    [1]
    """
    family_rank = pl.col("distractor_family").replace_strict(
        DISTRACTOR_FAMILIES, range(len(DISTRACTOR_FAMILIES)), default=len(DISTRACTOR_FAMILIES)
    )
    return (
        frame.group_by(*COUNT_KEYS)
        .agg(n=pl.len().cast(pl.Int64), clusters=pl.col("cluster_id").n_unique().cast(pl.Int64))
        .sort("hops", family_rank, "distractor_depth")
    )


def options(frame: pl.DataFrame) -> dict[str, list]:
    """The values a frame offers for each toggle: probes, splits, families, hop and depth bounds.

    >>> options(probes)["hops"]
    [1, 5]
    """
    if frame.is_empty():
        return {"probes": [], "splits": [], "families": [], "hops": [0, 0], "depths": [0, 0]}
    present = set(frame["distractor_family"].unique().to_list())
    return {
        "probes": [p for p in PROBES if p in set(frame["probe"].unique().to_list())],
        "splits": [s for s in SPLITS if s in set(frame["split"].unique().to_list())],
        "families": [f for f in DISTRACTOR_FAMILIES if f in present],
        "hops": [int(frame["hops"].min()), int(frame["hops"].max())],
        "depths": [int(frame["distractor_depth"].min()), int(frame["distractor_depth"].max())],
    }


def cluster_of(frame: pl.DataFrame, concept: str) -> pl.DataFrame:
    """Every question about ``concept``: its semantic cluster(s), by cluster, hops, family, depth.

    >>> cluster_of(probes, "dog.n.01")["cluster_id"].unique().to_list()
    ['definitions:dog.n.01:the dog barked all night']
    """
    family_rank = pl.col("distractor_family").replace_strict(
        DISTRACTOR_FAMILIES, range(len(DISTRACTOR_FAMILIES)), default=len(DISTRACTOR_FAMILIES)
    )
    return frame.filter(pl.col("concept") == concept).sort("cluster_id", "hops", family_rank, "distractor_depth", "id")


def cluster_verdicts(preds: pl.DataFrame) -> pl.DataFrame:
    """Per model and cluster: questions, how many were right, and whether all were (strict cluster).

    >>> cluster_verdicts(cluster_of(preds, "dog.n.01"))["all_right"].to_list()
    [False]
    """
    return (
        preds.group_by("model", "fingerprint", "cluster_id", maintain_order=True)
        .agg(n=pl.len().cast(pl.Int64), n_correct=pl.col("correct").sum().cast(pl.Int64))
        .with_columns(all_right=pl.col("n") == pl.col("n_correct"))
    )


def _predicate(where: ProbeFilter) -> pl.Expr:
    parts = [pl.lit(True)]
    if where.probe is not None:
        parts.append(pl.col("probe") == where.probe)
    if where.split is not None:
        parts.append(pl.col("split") == where.split)
    if where.hops is not None:
        parts.append(pl.col("hops").is_between(*where.hops))
    if where.families is not None:
        parts.append(pl.col("distractor_family").is_in(list(where.families)))
    if where.depths is not None:
        parts.append((pl.col("distractor_depth") == 0) | pl.col("distractor_depth").is_between(*where.depths))
    return pl.all_horizontal(parts)


def sample_clusters(frame: pl.DataFrame, max_questions: int | None, seed: int = 0) -> pl.DataFrame:
    """A seeded sample of whole semantic clusters holding at most ``max_questions`` questions (all when None).

    Evaluation samples clusters, never questions: strict cluster accuracy on a cluster cut short is meaningless.
    Clusters are taken in a seeded random order until the next one would not fit; at least one is always kept.

    >>> sample_clusters(probes, 400, seed=0)["cluster_id"].n_unique()  # doctest: +SKIP
    """
    if max_questions is not None and (
        isinstance(max_questions, bool) or not isinstance(max_questions, int) or max_questions < 1
    ):
        raise SpecError(f"max_questions={max_questions!r} is out of range; use a whole number >= 1, or None for all")
    if max_questions is None or max_questions >= frame.height:
        return frame
    sizes = frame.group_by("cluster_id").len().sort("cluster_id").sample(fraction=1.0, shuffle=True, seed=seed)
    fits = (sizes["len"].cum_sum() <= max_questions) | (pl.int_range(sizes.height, eager=True) == 0)
    kept = sizes.filter(fits)["cluster_id"]
    return frame.filter(pl.col("cluster_id").is_in(kept.implode()))
