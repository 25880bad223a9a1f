"""Concept lookup on real WordNet: prefix search, concept cards, hypernym paths and their tree."""

import pytest

from workbench.errors import SpecError
from workbench.knowledge.lookup import concept_card, hypernym_paths, search_concepts, tree_lines

pytestmark = pytest.mark.wordnet


def test_search_puts_exact_lemma_matches_first_and_keeps_every_hit_a_prefix_match(wordnet_graph):
    hits = search_concepts(wordnet_graph, "Dog", limit=30)
    assert hits["name"][0] == "dog.n.01"
    exact = hits["lemma"].str.to_lowercase() == "dog"
    assert exact.arg_min() == exact.sum()  # all exact matches come before the first longer lemma
    assert all(lemma.lower().startswith("dog") for lemma in hits["lemma"])
    assert hits["name"].n_unique() == hits.height


def test_search_filters_by_part_of_speech_and_treats_underscore_as_space(wordnet_graph):
    verbs = search_concepts(wordnet_graph, "dog", pos="v")
    assert set(verbs["pos"]) == {"v"} and "chase.v.01" in verbs["name"].to_list()
    spaced = search_concepts(wordnet_graph, "hot dog", pos="n")
    assert "frank.n.02" in spaced["name"].to_list()
    assert search_concepts(wordnet_graph, "Hot_Dog", pos="n").equals(spaced)
    assert search_concepts(wordnet_graph, "   ").is_empty()
    with pytest.raises(SpecError, match="pos='x'"):
        search_concepts(wordnet_graph, "dog", pos="x")


def test_concept_card_holds_the_gloss_lemmas_and_examples_of_the_synset(wordnet_graph):
    card = concept_card(wordnet_graph, "dog.n.01")
    assert card.gloss.startswith("a member of the genus Canis")
    assert card.lemmas[0] == "dog" and "Canis familiaris" in card.lemmas
    assert card.examples == ("the dog barked all night",)
    with pytest.raises(KeyError):
        concept_card(wordnet_graph, "no_such.n.99")


def test_hypernym_paths_run_from_a_root_to_the_concept_along_isa_links(wordnet_graph):
    paths = hypernym_paths(wordnet_graph, "dog.n.01")
    assert len(paths) == 2  # dog is both a canine and a domestic animal
    parents = wordnet_graph.taxonomy.parents
    for path in paths:
        assert path[0] == "entity.n.01" and path[-1] == "dog.n.01"
        ids = [wordnet_graph.id_of(name) for name in path]
        assert all(upper in parents[lower] for upper, lower in zip(ids, ids[1:]))
    assert hypernym_paths(wordnet_graph, "entity.n.01") == [["entity.n.01"]]


def test_tree_lines_write_shared_prefixes_once():
    lines = tree_lines([["entity", "animal", "dog"], ["entity", "animal", "pet", "dog"]])
    assert lines == [(0, "entity"), (1, "animal"), (2, "dog"), (2, "pet"), (3, "dog")]
