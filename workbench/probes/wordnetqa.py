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


def pos_key(pos: str) -> str:
    """A part of speech as ``pos_mix`` counts it: adjective satellites are adjectives."""
    return "a" if pos == "s" else pos


def eligible(lexicon: _Lexicon, spec: ProbeSpec, taxonomy: Taxonomy) -> list[int]:
    """Concepts a probe can ask about: with a usable example (unless ``examples_only`` is off), of the parts of
    speech ``pos_mix`` weighs, and with the probe's other needs (a gold ISA link, lemmas)."""
    found = sorted(lexicon.examples) if spec.examples_only else range(len(lexicon.names))
    if spec.probe in ("hypernymy", "hyponymy"):
        direction = "up" if spec.probe == "hypernymy" else "down"
        found = [c for c in found if lexicon.pos[c] in TAXONOMY_POS and taxonomy.hops(c, direction, 1)]
    if spec.probe == "synonymy":
        found = [c for c in found if len(lexicon.lemmas[c]) >= spec.min_lemmas]
    if spec.pos_mix:
        weighed = {pos for pos, share in spec.pos_mix if share > 0}
        found = [c for c in found if pos_key(lexicon.pos[c]) in weighed]
    return list(found)


def _units(lexicon: _Lexicon, spec: ProbeSpec, concept: int, rng: random.Random) -> list[tuple[str, str]]:
    """The (example sentence, word) pairs a concept is asked about in: one drawn, or all (``sentences``); a concept
    without a usable example (``examples_only`` off) is asked about with no sentence and its first lemma."""
    examples = lexicon.examples.get(concept)
    if not examples:
        return [("", lexicon.lemmas[concept][0])]
    return [rng.choice(examples)] if spec.sentences == "one" else list(examples)


def _drawn(lexicon: _Lexicon, spec: ProbeSpec, concepts: list[int]) -> list[int]:
    """The concepts asked about: at most ``max_concepts``, drawn at random so that each part of speech holds its
    ``pos_mix`` share of the questions (a concept yields about one question per example sentence)."""
    if spec.max_concepts is None and not spec.pos_mix:
        return concepts
    rng = random.Random(f"{spec.seed}:{spec.probe}:concepts")
    by_pos: dict[str, list[int]] = defaultdict(list)
    for concept in concepts:
        by_pos[pos_key(lexicon.pos[concept])].append(concept)
    if not spec.pos_mix:
        return sorted(rng.sample(concepts, min(spec.max_concepts, len(concepts))))
    units = {pos: sum(max(1, len(lexicon.examples.get(c, ()))) for c in found) / len(found)
             for pos, found in by_pos.items()}  # fmt: skip
    per_concept = {pos: share / units[pos] for pos, share in spec.pos_mix if share > 0 and pos in by_pos}
    room = min(len(by_pos[pos]) / weight for pos, weight in per_concept.items())  # the most every share allows
    scale = room if spec.max_concepts is None else spec.max_concepts / sum(per_concept.values())
    chosen = []
    for pos, weight in sorted(per_concept.items()):
        chosen += rng.sample(by_pos[pos], min(len(by_pos[pos]), round(scale * weight)))
    return sorted(chosen)


def _hop_keep(
    taxonomy: Taxonomy, lexicon: _Lexicon, spec: ProbeSpec, concepts: list[int], direction: str
) -> dict[int, float]:
    """The chance that a question at each hop count is kept, so that the hops hold their ``hop_mix`` shares:
    the hop count scarcest for its share is kept whole, the others thinned (empty: keep every question)."""
    if not spec.hop_mix or spec.probe not in ("hypernymy", "hyponymy"):
        return {}
    available: dict[int, int] = defaultdict(int)
    for concept in concepts:
        sentences = len(lexicon.examples.get(concept, ())) if spec.sentences == "all" else 1
        by_hops: dict[int, int] = defaultdict(int)
        for hops in taxonomy.hops(concept, direction, spec.max_hops).values():
            by_hops[hops] += 1
        for hops, found in by_hops.items():
            available[hops] += sentences * min(spec.gold_cap, found)
    shares = {hops: share for hops, share in spec.hop_mix if share > 0 and available[hops]}
    scale = min(available[hops] / share for hops, share in shares.items())
    return {hops: min(1.0, shares.get(hops, 0.0) * scale / available[hops]) if available[hops] else 0.0
            for hops in spec.hop_range}  # fmt: skip


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
    concepts = eligible(lexicon, spec, taxonomy)
    wanted = spec.chosen({lexicon.names[c]: c for c in concepts})
    if wanted is not None:
        concepts = [c for c in concepts if c in wanted]
    concepts = _drawn(lexicon, spec, concepts)
    keep = _hop_keep(taxonomy, lexicon, spec, concepts, direction)
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
        units = _units(lexicon, spec, concept, rng)
        concept_template = rng.choice(template_ids)  # phrasings=1: one template for the whole cluster
        is_valid = _validity(graph, lexicon, spec.probe, concept)
        family_sets = {
            (family, depth): (
                [] if family == "random" else [x for x in candidates(taxonomy, concept, family, depth) if is_valid(x)]
            )
            for family, depth in options
        }
        usable = [option for option in options if option[0] == "random" or family_sets[option]]
        weights = [spec.weight_of(*option) for option in usable]
        pool = lexicon.pool(concept)
        golds = _golds(taxonomy, spec, concept, rng)
        for context, word in units:
            for hops, gold in golds:
                if keep and rng.random() >= keep[hops]:
                    continue
                chain = taxonomy.path(concept, gold, direction) if hops else [concept]
                gold_text = text_of(gold)
                phrasing = (
                    [concept_template]
                    if spec.phrasings == 1
                    else rng.sample(template_ids, min(spec.phrasings, len(template_ids)))
                )
                questions = [
                    fill(
                        templates.questions[template],
                        {"context": context, "word": word, "definition": lexicon.gloss[concept]},
                    )
                    for template in phrasing
                ]
                for family, depth in _perturbations(spec, usable, weights, rng):
                    picked = draw(
                        rng,
                        family_sets[(family, depth)],
                        pool,
                        lambda x: is_valid(x) and x != gold,
                        text_of,
                        {gold_text},
                    )
                    if picked is None:
                        continue
                    which = rng.randrange(len(phrasing)) if len(phrasing) > 1 else 0
                    drafts.append(
                        Draft(
                            concept=lexicon.names[concept],
                            pos=lexicon.pos[concept],
                            word=word,
                            context=context,
                            template=phrasing[which],
                            question=questions[which],
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


def _perturbations(
    spec: ProbeSpec, usable: list[tuple[str, int]], weights: list[float], rng: random.Random
) -> list[tuple[str, int]]:
    """The distractor kinds of one question's perturbations: drawn from ``family_mix`` with replacement, else every
    usable kind or ``perturbations`` of them without replacement."""
    if spec.family_mix:
        if not any(weights):
            return []
        return sorted(rng.choices(usable, weights=weights, k=spec.perturbations), key=usable.index)
    if spec.perturbations is None:
        return usable
    return sorted(rng.sample(usable, min(spec.perturbations, len(usable))), key=usable.index)
