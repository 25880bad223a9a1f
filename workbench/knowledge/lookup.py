"""Look concepts up in a knowledge graph: prefix search by word, a concept's card, its hypernym paths.

What a concept picker needs, as pure functions over a ``Graph``'s frames.

    >>> hits = search_concepts(graph, "dog", pos="n")       # name, pos, lemma, gloss
    >>> card = concept_card(graph, "dog.n.01")              # gloss, examples, lemmas
    >>> tree_lines(hypernym_paths(graph, "dog.n.01"))       # [(0, 'entity.n.01'), (1, ...), ...]
"""

from dataclasses import dataclass

import polars as pl

from workbench.errors import SpecError
from workbench.knowledge.graph import Graph

POS_NAMES = {"n": "noun", "v": "verb", "a": "adjective", "s": "adjective satellite", "r": "adverb"}
SEARCH_SCHEMA = {"name": pl.String(), "pos": pl.String(), "lemma": pl.String(), "gloss": pl.String()}


def search_concepts(graph: Graph, prefix: str, pos: str | None = None, limit: int = 20) -> pl.DataFrame:
    """Concepts with a lemma starting with ``prefix`` (case and ``_``/space blind), best first.

    Exact lemma matches come first, then shorter lemmas, then the sense order of the source.
    One row per concept (its best matching lemma). ``pos`` keeps one part of speech (``n``, ``v``, ...).

    >>> search_concepts(graph, "dog", pos="n")["name"][0]
    'dog.n.01'
    """
    if pos is not None and pos not in graph.concepts["pos"].unique().to_list():
        raise SpecError(f"pos={pos!r} is not in {graph.source}; choose one of {sorted(graph.concepts['pos'].unique())}")
    needle = _normal(prefix)
    if not needle:
        return pl.DataFrame(schema=SEARCH_SCHEMA)
    lemma = pl.col("lemma").str.to_lowercase().str.replace_all("_", " ")
    hits = graph.lemmas.filter(lemma.str.starts_with(needle)).join(graph.concepts, on="id")
    if pos is not None:
        hits = hits.filter(pl.col("pos") == pos)
    return (
        hits.with_columns(exact=(lemma != needle), length=pl.col("lemma").str.len_chars())
        .sort("exact", "length", "rank", "id")
        .unique("id", keep="first", maintain_order=True)
        .head(limit)
        .select(*SEARCH_SCHEMA)
    )


@dataclass(frozen=True)
class ConceptCard:
    """What a concept is: its name, part of speech, gloss, lemmas and example sentences."""

    name: str
    pos: str
    gloss: str
    lemmas: tuple[str, ...]
    examples: tuple[str, ...]


def concept_card(graph: Graph, name: str) -> ConceptCard:
    """The card of concept ``name`` (raises ``KeyError`` for an unknown name).

    >>> concept_card(graph, "dog.n.01").lemmas[:2]
    ('dog', 'domestic dog')
    """
    index = graph.id_of(name)
    row = graph.concepts.filter(pl.col("id") == index).row(0, named=True)
    lemmas = graph.lemmas.filter(pl.col("id") == index).sort("rank")["lemma"].to_list()
    examples = graph.examples.filter(pl.col("id") == index).sort("rank")["example"].to_list()
    return ConceptCard(name, row["pos"], row["gloss"], tuple(lemmas), tuple(examples))


def hypernym_paths(graph: Graph, name: str, limit: int = 8) -> list[list[str]]:
    """Every ISA path from a root down to concept ``name`` (at most ``limit``), shortest first.

    A concept without parents has the single path ``[name]``.

    >>> hypernym_paths(graph, "dog.n.01")[0][:2]
    ['entity.n.01', 'physical_entity.n.01']
    """
    parents, names = graph.taxonomy.parents, graph.names
    paths: list[list[int]] = []
    stack = [[graph.id_of(name)]]
    while stack and len(paths) < limit:
        path = stack.pop()
        above = parents[path[-1]]
        if not above:
            paths.append(path)
        stack.extend(path + [parent] for parent in reversed(above) if parent not in path)
    paths.sort(key=len)
    return [[names[node] for node in reversed(path)] for path in paths]


def tree_lines(paths: list[list[str]]) -> list[tuple[int, str]]:
    """Merge root-to-concept paths into one tree, as (depth, name) lines in display order.

    Shared prefixes are written once, so two paths through ``animal.n.01`` print it once.

    >>> tree_lines([["a", "b", "d"], ["a", "c", "d"]])
    [(0, 'a'), (1, 'b'), (2, 'd'), (1, 'c'), (2, 'd')]
    """
    lines: list[tuple[int, str]] = []
    seen: set[tuple[str, ...]] = set()
    for path in paths:
        for depth in range(len(path)):
            prefix = tuple(path[: depth + 1])
            if prefix not in seen:
                seen.add(prefix)
                lines.append((depth, path[depth]))
    return lines


def _normal(text: str) -> str:
    return " ".join(text.lower().replace("_", " ").split())
