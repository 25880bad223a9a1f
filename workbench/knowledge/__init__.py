"""Knowledge sources as graphs of concepts, words, examples, glosses and ISA links (SPEC §1)."""

from workbench.knowledge.cache import SOURCES, load_graph
from workbench.knowledge.graph import Graph, Taxonomy, triples

__all__ = ["SOURCES", "Graph", "Taxonomy", "load_graph", "triples"]
