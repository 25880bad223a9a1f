"""Multiple-choice probes built from knowledge graphs (SPEC §2-3).

>>> from workbench.probes import ProbeSpec, build_probes
>>> probes = build_probes(ProbeSpec("hypernymy", max_hops=2, seed=0))  # doctest: +SKIP
"""

import polars as pl

from workbench.knowledge import Graph, load_graph
from workbench.probes.assemble import assemble
from workbench.probes.dictionaryqa import draft_wordsense
from workbench.probes.spec import ProbeSpec
from workbench.probes.splits import split_by_concept
from workbench.probes.wordnetqa import draft_wordnetqa


def build_probes(spec: ProbeSpec, graph: Graph | None = None, progress: bool = True) -> pl.DataFrame:
    """Build the probe set ``spec`` describes, split by concept into train/dev/test.

    ``graph`` defaults to the cached graph of the spec's source (WordNet, or GCIDE for word sense).
    """
    graph = graph or load_graph(spec.source)
    if spec.probe == "wordsense":
        drafts = draft_wordsense(graph, spec, progress=progress)
    else:
        drafts = draft_wordnetqa(graph, spec, progress=progress)
    frame = assemble(drafts, spec.probe, graph.source, spec.seed)
    return split_by_concept(frame, train_size=spec.train_size, seed=spec.seed)


__all__ = ["ProbeSpec", "build_probes"]
