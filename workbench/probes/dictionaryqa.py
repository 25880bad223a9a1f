"""DictionaryQA: word-sense questions from GCIDE (SPEC §3).

The definitions template on a sense's example; distractors are the word's other senses, topped
up with random definitions. Every distractor comes from a sense that has an example of its own:
drawing from senses without examples gave the paper's generator a 56% choice-only bias.
"""

import random
from collections import defaultdict

import polars as pl

from workbench.distractors import draw, same_text
from workbench.knowledge.graph import Graph
from workbench.probes.assemble import Draft
from workbench.probes.spec import ProbeSpec
from workbench.probes.templates import fill, load_templates
from workbench.progress import ProgressBar


def draft_wordsense(graph: Graph, spec: ProbeSpec, progress: bool = True) -> list[Draft]:
    """Draft a word-sense question for every GCIDE sense with an example, when its word has at
    least ``spec.min_senses`` senses with examples."""
    templates = load_templates("wordsense", spec.templates)
    template_ids = list(templates.questions)
    names = graph.names
    pos = graph.concepts["pos"].to_list()
    gloss = graph.concepts["gloss"].to_list()
    headword = dict(
        zip(
            graph.lemmas.filter(pl.col("rank") == 0)["id"].to_list(),
            graph.lemmas.filter(pl.col("rank") == 0)["lemma"].to_list(),
        )
    )
    examples: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for concept, text, form in graph.examples.select("id", "example", "surface").iter_rows():
        examples[concept].append((text, form))
    senses: dict[str, list[int]] = defaultdict(list)
    for concept in sorted(examples):
        senses[headword[concept].lower()].append(concept)
    pool = sorted(examples)
    texts: dict[int, str] = {}
    keys: dict[int, str] = {}

    def text_of(concept: int) -> str:
        """A sense's choice text, filled once."""
        text = texts.get(concept)
        if text is None:
            text = texts[concept] = fill(templates.choice, {"definition": gloss[concept]})
        return text

    def key_of(concept: int) -> str:
        """``same_text`` of a sense's choice text, folded once."""
        key = keys.get(concept)
        if key is None:
            key = keys[concept] = same_text(text_of(concept))
        return key

    drafts: list[Draft] = []
    words = sorted(word for word, group in senses.items() if len(group) >= spec.min_senses)
    wanted = spec.chosen({names[c]: c for word in words for c in senses[word]})
    if wanted is not None:
        words = [word for word in words if wanted.intersection(senses[word])]
    for word in ProgressBar(words, desc="wordsense questions", unit="word", disable=not progress, leave=False):
        for concept in senses[word]:
            if wanted is not None and concept not in wanted:
                continue
            rng = random.Random(f"{spec.seed}:wordsense:{concept}")
            context, surface = rng.choice(examples[concept])
            template = rng.choice(template_ids)
            gold_text = text_of(concept)
            others = [x for x in senses[word] if x != concept]
            is_valid = lambda x, c=concept, g=gold_text.strip().lower(): x != c and text_of(x).strip().lower() != g  # noqa: E731
            picked = draw(rng, others, pool, is_valid, key_of, {gold_text})
            if picked is None:
                continue
            drafts.append(
                Draft(
                    concept=names[concept],
                    pos=pos[concept],
                    word=surface,
                    context=context,
                    template=template,
                    question=fill(
                        templates.questions[template],
                        {"context": context, "word": surface, "definition": gloss[concept]},
                    ),
                    gold=gold_text,
                    distractors=tuple(text_of(x) for x in picked.concepts),
                    gold_concept=names[concept],
                    hops=0,
                    chain=(names[concept],),
                    family="senses",
                    depth=0,
                    distractor_concepts=tuple(names[x] for x in picked.concepts),
                    n_random_fill=picked.n_random_fill,
                )
            )
    return drafts
