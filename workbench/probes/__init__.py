"""Multiple-choice probes built from knowledge graphs (SPEC §2-3).

>>> from workbench.probes import ProbeSpec, build_probes
>>> probes = build_probes(ProbeSpec("hypernymy", max_hops=2, seed=0))  # doctest: +SKIP
"""

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import polars as pl

from workbench.knowledge import Graph, load_graph
from workbench.probes.assemble import assemble
from workbench.probes.dictionaryqa import draft_wordsense
from workbench.probes.spec import ProbeSpec
from workbench.probes.splits import split_by_concept
from workbench.probes.wordnetqa import draft_wordnetqa
from workbench.specs import resolve_spec


def build_probes(
    spec: ProbeSpec | str | None = None, graph: Graph | None = None, progress: bool = True, **overrides
) -> pl.DataFrame:
    """Build a probe set from WordNet or GCIDE, split by concept into train/dev/test.

    Each question asks about one concept (its hypernym, hyponym, synonym, definition or word sense) with
    a gold answer read from the graph and distractors drawn from the families the spec names; the
    questions of one concept form its cluster.

    Parameters
    ----------
    spec : ProbeSpec or str
        The settings (``ProbeSpec``), or a probe name (``"hypernymy"``, ``"hyponymy"``, ``"synonymy"``,
        ``"definitions"``, ``"wordsense"``) with the other settings as ``overrides``.
    graph : Graph, optional
        The knowledge graph; by default the cached graph of the spec's source (WordNet, or GCIDE for word sense).
    progress : bool
        Show a progress bar.
    **overrides
        ``ProbeSpec`` fields that replace the spec's (``max_hops``, ``families``, ``seed``, ...).

    Returns
    -------
    polars.DataFrame
        One row per question, ``PROBE_SCHEMA``: id, probe, cluster_id, question, choices, answer, hops,
        distractor family and depth, split, ...

    Examples
    --------
    >>> probes = build_probes("hypernymy", max_hops=2, seed=0)  # doctest: +SKIP
    >>> probes.group_by("split").len()  # doctest: +SKIP
    """
    spec = resolve_spec(ProbeSpec, spec, overrides)
    graph = graph or load_graph(spec.source)
    with _no_cycle_collection():
        if spec.probe == "wordsense":
            drafts = draft_wordsense(graph, spec, progress=progress)
        else:
            drafts = draft_wordnetqa(graph, spec, progress=progress)
        frame = assemble(drafts, spec.probe, graph.source, spec.seed)
    return split_by_concept(
        frame, spec.train_size, spec.seed, train_pool=spec.train_pool, held_out_golds=spec.held_out_golds
    )


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Pause Python's cycle collector: a build makes millions of small objects that form no cycle (a collection
    after the paper preset's builds finds none), and the collector walked them again and again, 7 % of the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


__all__ = ["ProbeSpec", "build_probes"]
