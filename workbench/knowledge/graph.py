"""A knowledge source as frames over compact integer concept ids (SPEC §1).

``Graph`` holds four frames:
  concepts  id, name, pos, gloss, lexname
  lemmas    id, rank, lemma            (W, relation ``lemma``)
  examples  id, rank, example, surface (S, relation ``ex``; surface: the word as it appears)
  isa       child, parent, instance    (``isa_up`` child->parent; ``isa_down`` the reverse)
``triples`` gives the SPEC's (relation, concept, target) view; ``Taxonomy`` walks ISA links.
"""

from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

import polars as pl

CONCEPTS_SCHEMA = {
    "id": pl.Int32(),
    "name": pl.String(),
    "pos": pl.String(),
    "gloss": pl.String(),
    "lexname": pl.String(),
}
LEMMAS_SCHEMA = {"id": pl.Int32(), "rank": pl.Int32(), "lemma": pl.String()}
EXAMPLES_SCHEMA = {"id": pl.Int32(), "rank": pl.Int32(), "example": pl.String(), "surface": pl.String()}
ISA_SCHEMA = {"child": pl.Int32(), "parent": pl.Int32(), "instance": pl.Boolean()}
FRAMES = {"concepts": CONCEPTS_SCHEMA, "lemmas": LEMMAS_SCHEMA, "examples": EXAMPLES_SCHEMA, "isa": ISA_SCHEMA}


@dataclass(frozen=True)
class Graph:
    """A knowledge source: concepts, their words, examples, glosses and ISA links."""

    source: str
    version: str
    checksum: str
    concepts: pl.DataFrame
    lemmas: pl.DataFrame
    examples: pl.DataFrame
    isa: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=ISA_SCHEMA))

    @property
    def key(self) -> str:
        """Cache key: source, version and data checksum."""
        return f"{self.source}-{self.version}-{self.checksum}"

    @cached_property
    def taxonomy(self) -> "Taxonomy":
        """ISA walks over every ISA link of this graph, instance links included (SPEC §1)."""
        return Taxonomy(self.isa, len(self.concepts))

    @cached_property
    def class_taxonomy(self) -> "Taxonomy":
        """ISA walks over class links only: no instance-hypernym links, as the released probe data."""
        return Taxonomy(self.isa.filter(~pl.col("instance")), len(self.concepts))

    def taxonomy_for(self, instance_links: bool) -> "Taxonomy":
        """``taxonomy`` with instance-hypernym links, else ``class_taxonomy``."""
        return self.taxonomy if instance_links else self.class_taxonomy

    @cached_property
    def names(self) -> list[str]:
        """Concept name by id."""
        return self.concepts["name"].to_list()

    @cached_property
    def ids(self) -> dict[str, int]:
        """Concept id by name."""
        return dict(zip(self.names, self.concepts["id"].to_list(), strict=True))

    def id_of(self, name: str) -> int:
        """The integer id of a concept name such as ``dog.n.01``."""
        hit = self.concepts.filter(pl.col("name") == name)
        if hit.is_empty():
            raise KeyError(f"no concept named {name!r} in {self.key}")
        return int(hit["id"][0])


def triples(graph: Graph) -> pl.DataFrame:
    """The SPEC §1 triple view: relation, concept, target (targets as text or concept names)."""
    names = graph.concepts.select("id", pl.col("name").alias("concept"))
    parts = [
        graph.concepts.select(
            pl.lit("def").alias("relation"), pl.col("name").alias("concept"), pl.col("gloss").alias("target")
        ),
        graph.examples.join(names, on="id").select(
            pl.lit("ex").alias("relation"), "concept", pl.col("example").alias("target")
        ),
        graph.lemmas.join(names, on="id").select(
            pl.lit("lemma").alias("relation"), "concept", pl.col("lemma").alias("target")
        ),
    ]
    if not graph.isa.is_empty():
        edges = graph.isa.join(names.rename({"id": "child", "concept": "child_name"}), on="child").join(
            names.rename({"id": "parent", "concept": "parent_name"}), on="parent"
        )
        parts.append(
            edges.select(
                pl.lit("isa_up").alias("relation"),
                pl.col("child_name").alias("concept"),
                pl.col("parent_name").alias("target"),
            )
        )
        parts.append(
            edges.select(
                pl.lit("isa_down").alias("relation"),
                pl.col("parent_name").alias("concept"),
                pl.col("child_name").alias("target"),
            )
        )
    return pl.concat(parts)


class Taxonomy:
    """Breadth-first ISA walks (HOPS of SPEC §2) over adjacency lists of integer ids."""

    def __init__(self, isa: pl.DataFrame, n_concepts: int) -> None:
        self.parents: list[list[int]] = [[] for _ in range(n_concepts)]
        self.children: list[list[int]] = [[] for _ in range(n_concepts)]
        for child, parent in zip(isa["child"].to_list(), isa["parent"].to_list()):
            self.parents[child].append(parent)
            self.children[parent].append(child)
        self._ancestors: dict[int, frozenset[int]] = {}
        self._groups: dict[tuple[frozenset[int], int], tuple[tuple[frozenset[int], ...], dict[int, list]]] = {}

    def hops(self, concept: int, direction: str, max_hops: int) -> dict[int, int]:
        """Shortest ISA distance (1..max_hops) to every concept reachable in ``direction`` ('up'/'down')."""
        links = self.parents if direction == "up" else self.children
        seen = {concept: 0}
        frontier = deque([concept])
        while frontier:
            node = frontier.popleft()
            depth = seen[node]
            if depth == max_hops:
                continue
            for nxt in links[node]:
                if nxt not in seen:
                    seen[nxt] = depth + 1
                    frontier.append(nxt)
        del seen[concept]
        return seen

    def layer_sizes(self, concept: int, direction: str, max_hops: int) -> list[int]:
        """How many concepts ``hops`` finds at each distance 1..``max_hops``, without a dict of them."""
        links = self.parents if direction == "up" else self.children
        seen, frontier, sizes = {concept}, [concept], []
        for _ in range(max_hops):
            layer = []
            for node in frontier:
                for nxt in links[node]:
                    if nxt not in seen:
                        seen.add(nxt)
                        layer.append(nxt)
            sizes.append(len(layer))
            frontier = layer
        return sizes

    def path(self, concept: int, target: int, direction: str) -> list[int]:
        """One shortest ISA path from ``concept`` to ``target`` (both included)."""
        links = self.parents if direction == "up" else self.children
        previous = {concept: -1}
        frontier = deque([concept])
        while frontier and target not in previous:
            node = frontier.popleft()
            for nxt in links[node]:
                if nxt not in previous:
                    previous[nxt] = node
                    frontier.append(nxt)
        if target not in previous:
            raise ValueError(f"{target} is not reachable from {concept} going {direction}")
        chain = [target]
        while chain[-1] != concept:
            chain.append(previous[chain[-1]])
        return chain[::-1]

    def ancestors(self, concept: int) -> frozenset[int]:
        """Every concept above ``concept`` at any distance (memoised)."""
        cached = self._ancestors.get(concept)
        if cached is None:
            found: set[int] = set()
            for parent in self.parents[concept]:
                found.add(parent)
                found |= self.ancestors(parent)
            cached = self._ancestors[concept] = frozenset(found)
        return cached

    def is_descendant(self, candidate: int, concept: int) -> bool:
        """True when ``candidate`` lies below ``concept`` at any distance."""
        return concept in self.ancestors(candidate)

    def sisters(self, concept: int, depth: int) -> set[int]:
        """SISTER_l: concepts exactly ``depth`` levels below a parent of ``concept``, through a sibling.

        R&S 2020 §3.1: SISTER_l(c) takes HOPS_{l-1}(c~, down) of each sibling c~, so l = 1 gives the
        siblings, l = 2 their children, and so on: a concept's depth is its shortest distance below the
        siblings plus one (the released data have 2 plain siblings among 4,503 sister-2/3 distractors).
        """
        return self.sister_levels(concept, depth)[depth - 1]

    def sister_levels(self, concept: int, max_depth: int) -> list[set[int]]:
        """SISTER_1 .. SISTER_``max_depth`` of ``concept``: a node's l is one more than its shortest distance below
        any sibling. Read off the walk its parents' children share (``_sister_group``), less the concept's own
        nodes, each moved to its level below the other siblings, or dropped."""
        levels, owned = self._sister_group(concept, max_depth)
        found = [set(level) for level in levels]
        for node, distance, other in owned.get(concept, ()):
            found[distance].discard(node)
            if other < max_depth and node != concept:
                found[other].add(node)
        return found

    def sister_sizes(self, concept: int, max_depth: int) -> list[int]:
        """The size of each of ``sister_levels(concept, max_depth)``, counted without building them."""
        levels, owned = self._sister_group(concept, max_depth)
        sizes = [len(level) for level in levels]
        for node, distance, other in owned.get(concept, ()):
            sizes[distance] -= 1
            if other < max_depth and node != concept:
                sizes[other] += 1
        return sizes

    def _sister_group(
        self, concept: int, max_depth: int
    ) -> tuple[tuple[frozenset[int], ...], dict[int, list[tuple[int, int, int]]]]:
        """The walk shared by every concept with ``concept``'s parents (memoised): the nodes at each level
        1..``max_depth`` below any child of those parents (a child itself at level 1), and per child the nodes
        nearest to it alone, as (node, its distance, its distance below any other child; ``max_depth``: none).
        A concept's sisters are these levels less the nodes it alone is nearest to, itself among them."""
        key = (frozenset(self.parents[concept]), max_depth)
        group = self._groups.get(key)
        if group is not None:
            return group
        children = {child for parent in key[0] for child in self.children[parent]}
        nearest: dict[int, tuple[int, int, int]] = {}  # node -> (distance, from child, distance from any other)
        for child in children:
            for node, distance in [(child, 0), *self.hops(child, "down", max_depth - 1).items()]:
                best, source, other = nearest.get(node, (max_depth, -1, max_depth))
                if distance < best:
                    nearest[node] = (distance, child, best)
                elif distance < other:
                    nearest[node] = (best, source, distance)
        levels: list[set[int]] = [set() for _ in range(max_depth)]
        owned: dict[int, list[tuple[int, int, int]]] = {}
        for node, (distance, source, other) in nearest.items():
            levels[distance].add(node)
            if other != distance:
                owned.setdefault(source, []).append((node, distance, other))
        group = self._groups[key] = (tuple(frozenset(level) for level in levels), owned)
        return group
