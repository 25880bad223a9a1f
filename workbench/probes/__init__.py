"""Multiple-choice probes built from knowledge graphs (SPEC §2-3).

>>> from workbench.probes import ProbeSpec, build_probes
>>> probes = build_probes(ProbeSpec("hypernymy", max_hops=2, seed=0))  # doctest: +SKIP
"""

import gc
import multiprocessing
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from workbench.knowledge import Graph, load_graph
from workbench.knowledge.cache import graph_dir
from workbench.probes.assemble import assemble
from workbench.probes.dictionaryqa import draft_wordsense
from workbench.probes.spec import BELOW_BINS, ProbeSpec
from workbench.probes.splits import split_by_concept
from workbench.probes.wordnetqa import draft_wordnetqa
from workbench.schema import SPLITS
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
    split = split_by_concept(
        frame,
        spec.train_size,
        spec.seed,
        train_pool=spec.train_pool,
        held_out_golds=spec.held_out_golds,
        test_size=spec.test_size,
        test_pool=spec.test_pool,
        test_mix=spec.test_mix,
        test_leave_out=general_golds(graph, frame, spec),
        test_measures=gold_generality(graph, frame, spec),
    )
    populations = {name: spec.population_of(name) for name in SPLITS}
    return split.with_columns(population=pl.col("split").replace_strict(populations, default=""))


def general_golds(graph: Graph, frame: pl.DataFrame, spec: ProbeSpec) -> pl.Expr | None:
    """With ``test_max_below``, the questions whose gold answer has more concepts below it than that (rule
    ``test_max_below``: the gold-like test does not draw them); else None."""
    if spec.test_size is None or spec.test_max_below is None or spec.source != "wordnet":
        return None
    taxonomy, ids = graph.taxonomy_for(spec.instance_links), graph.ids
    golds, cap = frame["gold_concept"].unique().to_list(), spec.test_max_below
    general = [gold for gold in golds if _count_below(taxonomy.children, ids[gold], cap) > cap]
    return pl.col("gold_concept").is_in(general)


def gold_generality(graph: Graph, frame: pl.DataFrame, spec: ProbeSpec) -> dict[str, pl.Expr] | None:
    """With a ``test_mix`` that names ``below``, the measure it is read from: each question's gold answer's number of
    concepts below it, as a ``BELOW_BINS`` label (rule ``test_mix``, generality); else None."""
    named = any(key.startswith("below:") for key, _ in spec.test_mix)
    if spec.test_size is None or spec.source != "wordnet" or not named:
        return None
    taxonomy, ids = graph.taxonomy_for(spec.instance_links), graph.ids
    golds = frame["gold_concept"].unique().to_list()
    cap = BELOW_BINS[-1]
    labels = {gold: below_bin(_count_below(taxonomy.children, ids[gold], cap)) for gold in golds}
    return {"below": pl.col("gold_concept").replace_strict(labels, return_dtype=pl.String)}


def below_bin(count: int) -> str:
    """The ``BELOW_BINS`` label of a number of concepts below a gold: ``"0-1"``, ``"2-3"``, ..., ``"2001+"``."""
    low = 0
    for high in BELOW_BINS:
        if count <= high:
            return f"{low}-{high}"
        low = high + 1
    return f"{low}+"


def _count_below(children: list[list[int]], concept: int, cap: int) -> int:
    """How many concepts lie below ``concept``, counted up to ``cap + 1`` (a walk that stops once it passes ``cap``)."""
    seen, frontier = {concept}, [concept]
    while frontier:
        found = []
        for node in frontier:
            for child in children[node]:
                if child not in seen:
                    seen.add(child)
                    found.append(child)
        if len(seen) > cap + 1:
            return cap + 1
        frontier = found
    return len(seen) - 1


# CPU seconds of each probe's paper-preset build (bench/README.md): the longest are handed out first
BUILD_COST = {"synonymy": 19.5, "definitions": 10.9, "hypernymy": 8.0, "hyponymy": 6.0, "wordsense": 3.0}


def build_probe_sets(specs: Sequence[ProbeSpec], workers: int = 1, progress: bool = True) -> dict[str, pl.DataFrame]:
    """Build several probe sets, each as ``build_probes(spec)`` does, on up to ``workers`` processes.

    Parameters
    ----------
    specs : sequence of ProbeSpec
        One spec per set (distinct probes).
    workers : int
        Processes building at once (at most one per set; 1: all in this process, the default). Each set depends on
        its spec alone, so the frames are the same for any number; the paper preset's five sets take 0.47 of 05bcb50's
        time on two processes, with 1.32 GB in all against 0.96 GB on one (bench/README.md). The workers hand their
        frames back as Arrow files, read once they are gone.
    progress : bool
        A progress bar over the sets (with one worker, each build's own bar).

    Returns
    -------
    dict of str to polars.DataFrame
        Probe name -> its frame, in the order of ``specs``.

    Examples
    --------
    >>> sets = build_probe_sets([ProbeSpec.paper(probe) for probe in ("hypernymy", "synonymy")])  # doctest: +SKIP
    """
    from workbench.progress import ProgressBar

    workers = min(len(specs), workers)
    if workers <= 1:
        return {spec.probe: build_probes(spec, progress=progress) for spec in specs}
    for source in dict.fromkeys(spec.source for spec in specs):
        if not graph_dir(source).is_dir():  # cached once here, not by every worker at once
            load_graph(source)
    order = sorted(specs, key=lambda spec: BUILD_COST.get(spec.probe, 0.0), reverse=True)
    context = multiprocessing.get_context("spawn")  # polars' threads make forking unsafe
    with tempfile.TemporaryDirectory(prefix="probe-sets-") as folder:
        with (
            ProcessPoolExecutor(workers, mp_context=context) as pool,
            ProgressBar(total=len(specs), desc="probe sets", unit="set", disable=not progress) as bar,
        ):
            for future in as_completed([pool.submit(_build_to_file, spec, Path(folder)) for spec in order]):
                future.result()  # a worker's error is raised here
                bar.update(1)
        # read once the workers are gone, so that the frames are never held beside two builds
        return {spec.probe: pl.read_ipc((Path(folder) / f"{spec.probe}.arrow").read_bytes()) for spec in specs}


def _build_to_file(spec: ProbeSpec, folder: Path) -> None:
    """``build_probes(spec)`` written to ``folder/<probe>.arrow`` (Arrow IPC): handed back through a file, not a
    pickle, a frame is never held twice, as bytes and as a frame (bench/README.md)."""
    build_probes(spec, progress=False).write_ipc(folder / f"{spec.probe}.arrow")


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


__all__ = ["ProbeSpec", "build_probe_sets", "build_probes"]
