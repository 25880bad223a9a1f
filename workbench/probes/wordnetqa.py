"""WordNetQA: definitions, hypernymy, hyponymy and synonymy questions from WordNet (SPEC §2)."""

import random
from collections import defaultdict

from workbench.distractors import candidates, draw
from workbench.knowledge.graph import Graph, Taxonomy
from workbench.probes.assemble import Draft
from workbench.probes.spec import ProbeSpec
from workbench.probes.templates import fill, load_templates
from workbench.progress import ProgressBar

MAX_SYNONYMS = 2  # lemmas shown in "(or a, b)" after a concept's first lemma
TAXONOMY_POS = ("n", "v")


class _Lexicon:
    """Per-concept text lookups over a graph's frames, by integer id."""

    def __init__(self, graph: Graph) -> None:
        self.names = graph.names
        self.pos = graph.concepts["pos"].to_list()
        self.gloss = graph.concepts["gloss"].to_list()
        self.lemmas: list[list[str]] = [[] for _ in self.names]
        for concept, lemma in zip(graph.lemmas["id"].to_list(), graph.lemmas["lemma"].to_list()):
            if lemma.lower() not in (known.lower() for known in self.lemmas[concept]):  # Moon, moon
                self.lemmas[concept].append(lemma)
        self.examples: dict[int, list[tuple[str, str]]] = defaultdict(list)
        usable = graph.examples.filter(graph.examples["surface"] != "")
        for concept, text, form in zip(
            usable["id"].to_list(), usable["example"].to_list(), usable["surface"].to_list()
        ):
            self.examples[concept].append((text, form))
        self.by_pos: dict[str, list[int]] = defaultdict(list)
        for concept, pos in enumerate(self.pos):
            self.by_pos["a" if pos == "s" else pos].append(concept)

    def pool(self, concept: int) -> list[int]:
        """Concepts of the same part of speech (adjective satellites count as adjectives)."""
        pos = self.pos[concept]
        return self.by_pos["a" if pos == "s" else pos]

    def choice_fields(self, concept: int) -> dict[str, str]:
        lemmas = self.lemmas[concept]
        others = lemmas[1 : 1 + MAX_SYNONYMS]
        return {
            "word": lemmas[0],
            "synonyms": f" (or {', '.join(others)})" if others else "",
            "definition": self.gloss[concept],
            "lemmas": ", ".join(lemmas),
        }


def eligible(lexicon: _Lexicon, probe: str) -> list[int]:
    """Concepts a probe can ask about: with a usable example (and the probe's other needs)."""
    found = sorted(lexicon.examples)
    if probe in ("hypernymy", "hyponymy"):
        found = [c for c in found if lexicon.pos[c] in TAXONOMY_POS]
    if probe == "synonymy":
        found = [c for c in found if len(lexicon.lemmas[c]) >= 2]
    return found


def _validity(graph: Graph, lexicon: _Lexicon, probe: str, concept: int):
    """The rule a distractor must pass so that it is never also a right answer (instance links included)."""
    taxonomy = graph.taxonomy
    if probe == "hypernymy":
        ancestors = taxonomy.ancestors(concept)
        return lambda x: x != concept and x not in ancestors
    if probe == "hyponymy":
        return lambda x: x != concept and not taxonomy.is_descendant(x, concept)
    if probe == "definitions":
        gold = lexicon.gloss[concept].strip().lower()
        return lambda x: x != concept and lexicon.gloss[x].strip().lower() != gold
    own = {lemma.lower() for lemma in lexicon.lemmas[concept]}
    return lambda x: x != concept and own.isdisjoint(lemma.lower() for lemma in lexicon.lemmas[x])


def _golds(taxonomy: Taxonomy, spec: ProbeSpec, concept: int, rng: random.Random) -> list[tuple[int, int]]:
    """(hops, gold concept) pairs: up to ``spec.gold_cap`` ancestors/descendants at each exact distance k."""
    if spec.probe not in ("hypernymy", "hyponymy"):
        return [(0, concept)]
    direction = "up" if spec.probe == "hypernymy" else "down"
    by_hops: dict[int, list[int]] = defaultdict(list)
    for node, hops in taxonomy.hops(concept, direction, spec.max_hops).items():
        by_hops[hops].append(node)
    golds = []
    for k in spec.hop_range:
        found = sorted(by_hops.get(k, ()))
        golds.extend((k, gold) for gold in sorted(rng.sample(found, min(spec.gold_cap, len(found)))))
    return golds


def draft_wordnetqa(graph: Graph, spec: ProbeSpec, progress: bool = True) -> list[Draft]:
    """Draft every question of a WordNetQA probe (definitions, hypernymy, hyponymy, synonymy)."""
    lexicon = _Lexicon(graph)
    templates = load_templates(spec.probe, spec.templates)
    template_ids = list(templates.questions)
    taxonomy = graph.taxonomy_for(spec.instance_links)
    options = spec.distractor_options()
    direction = "up" if spec.probe == "hypernymy" else "down"
    drafts: list[Draft] = []
    concepts = eligible(lexicon, spec.probe)
    wanted = spec.chosen({lexicon.names[c]: c for c in concepts})
    if wanted is not None:
        concepts = [c for c in concepts if c in wanted]
    texts: dict[int, str] = {}

    def text_of(concept: int) -> str:
        text = texts.get(concept)
        if text is None:
            text = texts[concept] = fill(templates.choice, lexicon.choice_fields(concept))
        return text

    for concept in ProgressBar(
        concepts, desc=f"{spec.probe} questions", unit="concept", disable=not progress, leave=False
    ):
        rng = random.Random(f"{spec.seed}:{spec.probe}:{concept}")
        context, word = rng.choice(lexicon.examples[concept])
        template = rng.choice(template_ids)
        question = fill(
            templates.questions[template],
            {"context": context, "word": word, "definition": lexicon.gloss[concept]},
        )
        is_valid = _validity(graph, lexicon, spec.probe, concept)
        family_sets = {
            (family, depth): (
                [] if family == "random" else [x for x in candidates(taxonomy, concept, family, depth) if is_valid(x)]
            )
            for family, depth in options
        }
        usable = [option for option in options if option[0] == "random" or family_sets[option]]
        pool = lexicon.pool(concept)
        for hops, gold in _golds(taxonomy, spec, concept, rng):
            chain = taxonomy.path(concept, gold, direction) if hops else [concept]
            gold_text = text_of(gold)
            chosen = (
                usable
                if spec.perturbations is None
                else sorted(rng.sample(usable, min(spec.perturbations, len(usable))), key=usable.index)
            )
            for family, depth in chosen:
                picked = draw(
                    rng, family_sets[(family, depth)], pool, lambda x: is_valid(x) and x != gold, text_of, {gold_text}
                )
                if picked is None:
                    continue
                drafts.append(
                    Draft(
                        concept=lexicon.names[concept],
                        pos=lexicon.pos[concept],
                        word=word,
                        context=context,
                        template=template,
                        question=question,
                        gold=gold_text,
                        distractors=tuple(text_of(x) for x in picked.concepts),
                        gold_concept=lexicon.names[gold],
                        hops=hops,
                        chain=tuple(lexicon.names[x] for x in chain),
                        family=family,
                        depth=depth,
                        distractor_concepts=tuple(lexicon.names[x] for x in picked.concepts),
                        n_random_fill=0 if family == "random" else picked.n_random_fill,
                    )
                )
    return drafts
