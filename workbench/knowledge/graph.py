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
        self._below: dict[tuple[int, int], tuple[frozenset[int], ...]] = {}
        self._groups: dict[tuple[frozenset[int], int], tuple[list[int], dict[int, list[int]]]] = {}

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
        """SISTER_1 .. SISTER_``max_depth`` of ``concept`` (one walk for every depth): a node's l is one more than its
        shortest distance below any sibling."""
        siblings = {s for parent in self.parents[concept] for s in self.children[parent]} - {concept}
        levels, seen = [siblings], set(siblings)
        below = [self._layers(sibling, max_depth - 1) for sibling in siblings] if max_depth > 1 else []
        for distance in range(1, max_depth):
            layer = set().union(*(layers[distance] for layers in below)) - seen
            seen |= layer
            levels.append(layer)
        for layer in levels:
            layer.discard(concept)
        return levels

    def sister_sizes(self, concept: int, max_depth: int) -> list[int]:
        """The size of each of ``sister_levels(concept, max_depth)``, from one walk shared by every concept with the
        same parents (memoised): counting a concept's sisters builds no set of them."""
        key = (frozenset(self.parents[concept]), max_depth)
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = self._sister_group(key[0], max_depth)
        sizes, owned = group
        delta = owned.get(concept)
        return [size + change for size, change in zip(sizes, delta)] if delta else list(sizes)

    def _sister_group(self, parents: frozenset[int], max_depth: int) -> tuple[list[int], dict[int, list[int]]]:
        """For the children of ``parents``: how many nodes lie at each level 1..``max_depth`` below any of them
        (a node's level is one more than its shortest distance below a child, a child itself at level 1), and per
        child the change to those sizes when that child is the concept: its own nodes (those nearest to it alone)
        move to their level below the other children, or drop out, and the child itself drops out."""
        children = {child for parent in parents for child in self.children[parent]}
        nearest: dict[int, tuple[int, int, int]] = {}  # node -> (distance, from child, distance from any other)
        for child in children:
            for node, distance in [(child, 0), *self.hops(child, "down", max_depth - 1).items()]:
                best, source, other = nearest.get(node, (max_depth, -1, max_depth))
                if distance < best:
                    nearest[node] = (distance, child, best)
                elif distance < other:
                    nearest[node] = (best, source, distance)
        sizes = [0] * max_depth
        owned = {child: [0] * max_depth for child in children}
        for node, (distance, source, other) in nearest.items():
            sizes[distance] += 1
            if other != distance:
                owned[source][distance] -= 1
                if other < max_depth and node != source:
                    owned[source][other] += 1
        return sizes, owned

    def _layers(self, concept: int, max_hops: int) -> tuple[frozenset[int], ...]:
        """The concepts at each shortest distance 0..``max_hops`` below ``concept``, memoised: a sibling's
        descendants serve each of its siblings."""
        key = (concept, max_hops)
        found = self._below.get(key)
        if found is None:
            layers: list[set[int]] = [set() for _ in range(max_hops + 1)]
            layers[0].add(concept)
            for node, hops in self.hops(concept, "down", max_hops).items():
                layers[hops].add(node)
            found = self._below[key] = tuple(frozenset(layer) for layer in layers)
        return found
