"""Strict cluster accuracy over the WordNet hierarchy: which regions of the taxonomy a model knows (issue #16).

Each scored cluster sits at its concept's node of one tree drawn over WordNet's ISA links (instance links
included, so a city sits under its class): ``ROOT`` ("all"), then one node per part of speech ("noun", "verb",
"adjective", "adverb"), then the synsets. WordNet is a lattice (``dog.n.01`` is both a canine and a domestic
animal); the tree keeps, for every synset, the parent closest to the top (the first-listed one on a tie), so
each concept's tree path is one of its shortest hypernym paths and every synset has exactly one place: the
clusters below a node add up. A node aggregates every cluster at or below it, with
``metrics.cluster_accuracy`` (a cluster is right only if all its questions are).

Only concepts of WordNet count: GCIDE senses (DictionaryQA, ``source == "gcide"``) and names the graph lacks are
left out (``wordnet_rows`` keeps the rest; ``taxonomy_accuracy`` fails, naming the fix, when nothing is left).

    >>> table = taxonomy_accuracy(preds, min_clusters=5, max_depth=8)  # one row per model x node
    >>> table.filter(pl.col("node") == "animal.n.01").select("n_clusters", "cluster_accuracy")
    >>> concepts_under(preds, "canine.n.02")                            # its concepts and their verdicts
"""

from collections.abc import Iterable, Sequence

import polars as pl

from workbench import metrics
from workbench.errors import DataSourceError, SpecError, WorkbenchError
from workbench.knowledge import Graph, load_graph
from workbench.probes.select import cluster_verdicts

ROOT = "all"
"""The node above every part of speech: its accuracy is the strict cluster accuracy of every placed cluster."""
POS_NODES = {"n": "noun", "v": "verb", "a": "adjective", "s": "adjective", "r": "adverb"}
"""The second level: a synset's part of speech (satellite adjectives join the adjectives)."""
PATH_SCHEMA = {"concept": pl.String(), "node": pl.String(), "parent": pl.String(), "depth": pl.Int64()}


def wordnet_graph(graph: Graph | None = None) -> Graph:
    """``graph`` when it is WordNet, else the workspace's WordNet graph (``load_graph("wordnet")``)."""
    return graph if graph is not None and graph.source == "wordnet" else load_graph("wordnet")


def tree_paths(graph: Graph, concepts: Iterable[str]) -> pl.DataFrame:
    """Each concept's path down the tree: one row per concept x node on it (``ROOT`` first, the concept last).

    Columns ``concept``, ``node``, ``parent`` (null for ``ROOT``), ``depth`` (0 for ``ROOT``, 1 for the part of
    speech, 2 for a WordNet top such as ``entity.n.01``). Names ``graph`` lacks get no row.

    >>> tree_paths(graph, ["dog.n.01"])["node"].to_list()[:4]
    ['all', 'noun', 'entity.n.01', 'physical_entity.n.01']
    """
    parents, names, ids, pos = graph.taxonomy.parents, graph.names, graph.ids, graph.concepts["pos"]
    height: dict[int, int] = {}  # shortest distance up to a synset without parents (WordNet's ISA links have no cycle)

    def level(node: int) -> int:
        if node not in height:
            height[node] = 1 + min(map(level, parents[node])) if parents[node] else 0
        return height[node]

    def path(node: int) -> tuple[str, ...]:  # through the parent closest to the top (the first listed on a tie)
        if node not in paths:
            parent = min(parents[node], key=level, default=None)
            above = path(parent) if parent is not None else (ROOT, POS_NODES.get(pos[node], pos[node]))
            paths[node] = (*above, names[node])
        return paths[node]

    paths: dict[int, tuple[str, ...]] = {}
    rows: list[tuple[str, str, str | None, int]] = []
    for concept in dict.fromkeys(concepts):
        if concept in ids:
            chain = path(ids[concept])
            rows += [(concept, node, chain[d - 1] if d else None, d) for d, node in enumerate(chain)]
    return pl.DataFrame(rows, schema=PATH_SCHEMA, orient="row")


def wordnet_rows(preds: pl.DataFrame, graph: Graph | None = None) -> pl.DataFrame:
    """The rows of ``preds`` whose concept is a WordNet synset of ``graph``. GCIDE senses are left out: those of a
    ``gcide`` source and every ``wordsense`` (DictionaryQA) question, whose sense ids such as ``tone.n.10`` can
    spell a WordNet name by chance."""
    graph = wordnet_graph(graph)
    return preds.filter(*_not_gcide(), pl.col("concept").is_in(graph.concepts["name"].implode()))


ATLAS_SKIPPED = (
    "No taxonomy atlas: none of the concepts is a WordNet synset (GCIDE senses, as DictionaryQA's, have no place in "
    "WordNet's taxonomy; or WordNet is not installed: workbench data setup)"
)
"""What a report or site says in place of the atlas when ``placed`` finds nothing to place."""


def _not_gcide() -> list[pl.Expr]:
    return [pl.col("source") != "gcide", pl.col("probe") != "wordsense"]


def placed(preds: pl.DataFrame) -> tuple[Graph, pl.DataFrame] | None:
    """WordNet and the rows of ``preds`` it places (``wordnet_rows``), or None when there are none or WordNet is not
    installed: what an optional atlas (a report key, a site section) asks before drawing one."""
    if preds.filter(*_not_gcide()).is_empty():
        return None  # GCIDE senses only: no need to load WordNet
    try:
        graph = wordnet_graph()
    except DataSourceError:
        return None
    rows = wordnet_rows(preds, graph)
    return None if rows.is_empty() else (graph, rows)


def concept_verdicts(rows: pl.DataFrame, by: Sequence[str] = ()) -> pl.DataFrame:
    """Per ``by`` and concept of ``rows`` (one row per cluster verdict with its ``concept``: ``all_right``, ``n``,
    ``n_correct``): ``clusters``, ``right``, ``questions``, ``questions_right``, the worst known first."""
    return (
        rows.group_by(*by, "concept")
        .agg(
            clusters=pl.len().cast(pl.Int64),
            right=pl.col("all_right").sum().cast(pl.Int64),
            questions=pl.col("n").sum(),
            questions_right=pl.col("n_correct").sum(),
        )
        .sort(pl.col("right") / pl.col("clusters"), "concept")
    )


def taxonomy_accuracy(
    preds: pl.DataFrame,
    graph: Graph | None = None,
    *,
    min_clusters: int = 1,
    max_depth: int | None = None,
    by: Sequence[str] = (),
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> pl.DataFrame:
    """Strict cluster accuracy of every WordNet node above the scored concepts: the taxonomy atlas's table.

    Parameters
    ----------
    preds : polars.DataFrame
        Predictions (``PREDICTION_SCHEMA``), one model or several; rows whose concept is not a WordNet
        synset (GCIDE senses) are left out.
    graph : Graph, optional
        The WordNet graph (default, or when another source is given: ``load_graph("wordnet")``).
    min_clusters : int
        Keep the nodes with at least this many clusters at or below them (per model and ``by`` group).
    max_depth : int, optional
        Keep the nodes at most this deep (``ROOT`` is 0, a part of speech 1, ``entity.n.01`` 2).
    by : sequence of str
        Columns to split by besides the model identity (e.g. ``("probe",)``): one tree per group.
    n_boot, seed, ci
        Bootstrap resamples of whole clusters per node (``metrics.cluster_accuracy``), their seed and coverage.

    Returns
    -------
    polars.DataFrame
        One row per model identity x ``by`` x kept node, in tree order (depth first, bigger subtrees first):
        the identity keys, ``by``, ``node``, ``parent``, ``depth``, ``n_clusters`` (clusters at or below),
        ``n`` (questions), ``cluster_accuracy``, ``cluster_lo``, ``cluster_hi``, ``instance_accuracy`` and
        ``concepts``: the scored concepts drawn at this node (its own, and those of pruned nodes below it).

    Examples
    --------
    >>> table = taxonomy_accuracy(preds, min_clusters=5, max_depth=6)
    >>> table.filter(pl.col("depth") == 0)["cluster_accuracy"].item() == metrics.summary(preds)["cluster_accuracy"]
    True
    """
    if min_clusters < 1:
        raise SpecError(f"min_clusters={min_clusters!r} must be at least 1.")
    if max_depth is not None and max_depth < 0:
        raise SpecError(f"max_depth={max_depth!r} must be 0 (the root alone) or more, or None (every level).")
    by = (by,) if isinstance(by, str) else tuple(by)
    graph = wordnet_graph(graph)
    kept = wordnet_rows(preds, graph)
    if kept.is_empty():
        raise WorkbenchError(
            "none of the predictions' concepts is a WordNet synset (GCIDE senses have no place in WordNet's "
            "taxonomy); score a WordNet probe set (workbench probes build --probe hypernymy) for the atlas."
        )
    paths = tree_paths(graph, kept["concept"].unique().sort())
    groups = [*metrics.identity_keys(kept), *(key for key in by if key not in metrics.identity_keys(kept))]
    rows = kept.select(*groups, "cluster_id", "concept", "correct").join(paths.select("concept", "node"), on="concept")
    nodes = (
        rows.group_by(*groups, "node")
        .agg(n_clusters=pl.col("cluster_id").n_unique().cast(pl.Int64))
        .join(paths.select("node", "parent", "depth").unique("node"), on="node")
        .filter(pl.col("n_clusters") >= min_clusters)
    )
    if max_depth is not None:
        nodes = nodes.filter(pl.col("depth") <= max_depth)
    accuracy = metrics.cluster_accuracy(
        rows.join(nodes.select(*groups, "node"), on=[*groups, "node"], nulls_equal=True),
        by=(*by, "node"),
        n_boot=n_boot,
        seed=seed,
        ci=ci,
    ).drop("n_clusters", "gap", "gap_lo", "gap_hi")
    drawn = (  # each concept is drawn at the deepest kept node of its path
        kept.select(*groups, "concept")
        .unique()
        .join(paths.select("concept", "node", "depth"), on="concept")
        .join(nodes.select(*groups, "node"), on=[*groups, "node"], nulls_equal=True)
        .filter(pl.col("depth") == pl.col("depth").max().over(*groups, "concept"))
        .group_by(*groups, "node")
        .agg(pl.col("concept").sort())
        .rename({"concept": "concepts"})
    )
    table = (
        nodes.join(accuracy, on=[*groups, "node"], nulls_equal=True)
        .join(drawn, on=[*groups, "node"], how="left", nulls_equal=True)
        .with_columns(pl.col("concepts").fill_null(pl.lit([], pl.List(pl.String))))
    )
    order = _tree_order(table, groups)
    return (
        table.join(order, on=[*groups, "node"], nulls_equal=True)
        .sort(*groups, "order", nulls_last=True)
        .select(
            *groups,
            "node",
            "parent",
            "depth",
            "n_clusters",
            "n",
            "cluster_accuracy",
            "cluster_lo",
            "cluster_hi",
            "instance_accuracy",
            "concepts",
        )
    )


def concepts_under(preds: pl.DataFrame, node: str, graph: Graph | None = None) -> pl.DataFrame:
    """The scored WordNet concepts at or below ``node`` of the atlas's tree, the worst known first.

    One row per concept: ``concept``, ``clusters`` (model x cluster verdicts), ``right`` (those with every
    question right: ``probes.select.cluster_verdicts``), ``questions``, ``questions_right``; sorted by the share
    of verdicts right, then by name.

    >>> concepts_under(preds, "canine.n.02")["concept"].to_list()  # doctest: +SKIP
    ['wolf.n.01', 'dog.n.01']
    """
    graph = wordnet_graph(graph)
    kept = wordnet_rows(preds, graph)
    paths = tree_paths(graph, kept["concept"].unique().sort())
    below = paths.filter(pl.col("node") == node)["concept"]
    verdicts = cluster_verdicts(kept.filter(pl.col("concept").is_in(below.implode())))
    concept_of = kept.select("cluster_id", "concept").unique()
    return concept_verdicts(verdicts.join(concept_of, on="cluster_id"))


def _tree_order(table: pl.DataFrame, groups: list[str]) -> pl.DataFrame:
    """Depth-first order of each group's nodes, bigger subtrees first (then by name): columns groups, node, order."""
    parts = []
    for key, part in table.group_by(groups, maintain_order=True):
        children: dict[str | None, list[tuple[int, str]]] = {}
        for node, parent, size in part.select("node", "parent", "n_clusters").iter_rows():
            children.setdefault(parent, []).append((-size, node))
        order, stack = [], [node for _, node in sorted(children.get(None, []), reverse=True)]
        while stack:
            node = stack.pop()
            order.append(node)
            stack += [child for _, child in sorted(children.get(node, []), reverse=True)]
        parts.append(pl.DataFrame({"node": order, "order": range(len(order))}).with_columns(
            pl.lit(value).alias(name) for name, value in zip(groups, key, strict=True)
        ))  # fmt: skip
    schema = {name: table.schema[name] for name in groups}
    if not parts:  # no node holds enough clusters
        return pl.DataFrame(schema={"node": pl.String, "order": pl.Int64, **schema})
    return pl.concat(parts).cast(schema)
