"""Free answers (the ``generate`` scorer) matched against a question's gold and choices.

An answer is normalised (``normalise``: its first line, cut at the first comma, parentheses dropped, lower case,
punctuation and leading articles a/an/the stripped; choices the same way; a last word every choice ends with, as
"event" in the released verb questions, is the template's and is also tried without), then, in this order:

- ``exact``: it names the gold: the gold choice's text, or a lemma of the gold concept (WordNet's, underscores as
  spaces, through WordNet's morphology: "Dogs", "a dog", "the domestic dog" all name dog.n.01); in synonymy, whose
  gold choice lists the synset's words, one of the listed words;
- ``choice``: it names a distractor: one of the other choices' text (inflections included);
- ``near``: it names a concept next to the gold (``NEAR``): for hypernymy another hypernym of the concept (any
  ancestor, e.g. "animal" for a poodle asked for "dog"), for hyponymy another hyponym of the concept (any
  descendant), for synonymy a lemma of the synset the gold choice does not list;
- ``other``: anything else (an empty answer too).

Lemmas are only looked up for the probes of ``LEMMA_PROBES`` whose gold is a WordNet synset; answers to the probes
whose choices are glosses (definitions, wordsense, GCIDE's DictionaryQA) are matched against the choices' whole
text (normalised, not cut at commas) and can only be ``exact``, ``choice`` or ``other``: reproducing a gloss word
for word is rare, so their recall is a floor, not a measure of knowing the sense.

>>> normalise("The domestic dogs, which bark\\nQuestion: ...")
'domestic dogs'
"""

import re
from dataclasses import dataclass

import polars as pl

from workbench.knowledge import Graph, load_graph
from workbench.knowledge.morphology import base_forms
from workbench.scoring.scorers import SCORER_RULES

LEMMA_PROBES = ("hypernymy", "hyponymy", "synonymy")
NEAR = {"hypernymy": "another hypernym of the concept", "hyponymy": "another hyponym of the concept",
        "synonymy": "a lemma of the synset the gold choice does not list"}  # fmt: skip
MATCH_SCHEMA = {"matched": pl.String(), "match": pl.String(), "pred": pl.Int64()}
SYNSET = r"\.[nvasr]\.\d+$"
"""A WordNet synset name (dog.n.01): the questions whose answers are matched against WordNet's lemmas."""

_ARTICLES = re.compile(r"^(?:(?:a|an|the)\s+)+")
_PARENTHESES = re.compile(r"\([^)]*\)")
_PUNCTUATION = re.compile(r"[^\w\s'-]+")


def normalise(text: str | None, cut: bool = True) -> str:
    """The comparable form of an answer or choice: first line, (``cut``) up to the first comma, no parentheses, lower
    case, punctuation and leading articles stripped, spaces collapsed.

    >>> normalise("  A Poodle!"), normalise("sit (or sit down) event, defined as 'be seated'")
    ('poodle', 'sit event')
    """
    text = (text or "").strip().split("\n", 1)[0]
    if cut:
        text = text.split(",", 1)[0]
    text = _PUNCTUATION.sub(" ", _PARENTHESES.sub(" ", text.lower().replace("_", " ")))
    return _ARTICLES.sub("", " ".join(text.split())).strip("'- ")


@dataclass(frozen=True)
class Lexicon:
    """WordNet's lemmas as look-up tables: ``named`` maps (lemma, pos) to the concept ids it names (lower case,
    spaces for underscores, satellites as adjectives), ``lemmas`` a concept id to its lemmas, ``pos`` to its part
    of speech."""

    graph: Graph
    named: dict[tuple[str, str], list[int]]
    lemmas: dict[int, list[str]]
    pos: list[str]


_LEXICONS: dict[str, Lexicon] = {}


def lexicon(graph: Graph) -> Lexicon:
    """The ``Lexicon`` of ``graph`` (built once per graph and kept)."""
    if graph.key not in _LEXICONS:
        pos = graph.concepts.sort("id")["pos"].str.replace("s", "a").to_list()
        rows = graph.lemmas.sort("id", "rank").select(
            "id", lemma=pl.col("lemma").str.replace_all("_", " ").str.to_lowercase()
        )
        named: dict[tuple[str, str], list[int]] = {}
        lemmas: dict[int, list[str]] = {}
        for id, lemma in rows.iter_rows():
            named.setdefault((lemma, pos[id]), []).append(id)
            lemmas.setdefault(id, []).append(lemma)
        _LEXICONS[graph.key] = Lexicon(graph, named, lemmas, pos)
    return _LEXICONS[graph.key]


def match_answers(questions: pl.DataFrame, answers: list[str], graph: Graph | None) -> pl.DataFrame:
    """``matched`` (the lemma or normalised choice text the answer named), ``match`` (``MATCH_KINDS``) and ``pred``
    (the choice it names, or null) for each question of ``questions`` (probe columns) and its free answer.

    ``graph``: WordNet's (``load_graph("wordnet")``), needed where a question's probe is in ``LEMMA_PROBES``."""
    words = lexicon(graph) if graph is not None else None
    columns = ("probe", "concept", "choices", "answer", "gold_concept")
    rows = [_match(words, *row, answer) for row, answer in zip(questions.select(columns).iter_rows(), answers)]
    return pl.DataFrame(rows, schema=MATCH_SCHEMA, orient="row")


_LETTER = re.compile(r"^\s*(?i:(?:the\s+)?answer(?:\s+is)?\s*:?\s*)?[(\[]?([A-Z])(?![\w'])")


def match_letters(questions: pl.DataFrame, answers: list[str]) -> pl.DataFrame:
    """``match_answers`` for answers that name a choice by its letter (asked with ``format="letters"``): the letter
    written first ("B", "B.", "(B)", "Answer: B", "The answer is B"), ``exact`` for the gold's, ``choice`` for
    another choice's, ``other`` for anything else (no letter, or one past the choices).

    >>> frame = pl.DataFrame({"choices": [["x", "y", "z"]] * 4, "answer": [1, 1, 1, 1]})
    >>> match_letters(frame, ["B. y", "(C)", "Answer: D", "a bird"])["match"].to_list()
    ['exact', 'choice', 'other', 'other']
    """
    rows = []
    for choices, gold, answer in zip(questions["choices"].to_list(), questions["answer"].to_list(), answers):
        found = _LETTER.match(answer or "")
        index = ord(found.group(1)) - ord("A") if found else -1
        if not 0 <= index < len(choices):
            rows.append((None, "other", None))
        else:
            rows.append((found.group(1), "exact" if index == gold else "choice", index))
    return pl.DataFrame(rows, schema=MATCH_SCHEMA, orient="row")


def _match(
    words: Lexicon | None, probe: str, concept: str, choices: list[str], gold: int, gold_concept: str, answer: str
) -> tuple[str | None, str, int | None]:
    ids = words.graph.ids if words is not None else {}
    by_lemma = probe in LEMMA_PROBES and gold_concept in ids
    said = normalise(answer, cut=by_lemma)
    if not said:
        return None, "other", None
    pos = words.pos[ids[gold_concept]] if by_lemma else ""
    texts = [normalise(choice, cut=by_lemma) for choice in choices]
    forms, tail = {said}, None
    if by_lemma:
        filler = {text.rsplit(" ", 1)[-1] for text in texts if " " in text}  # e.g. the released verbs' "event"
        tail = filler.pop() if len(filler) == 1 and all(" " in text for text in texts if text) else None
        forms = base_forms(said, pos) | base_forms(said.removesuffix(f" {tail}"), pos)
    names = [{text, text.removesuffix(f" {tail}")} if tail else {text} for text in texts]
    if hit := sorted(names[gold] & forms):
        return hit[0], "exact", gold
    named = {id: form for form in sorted(forms) for id in words.named.get((form, pos), ())} if by_lemma else {}
    gold_id = ids.get(gold_concept)
    if probe == "synonymy" and by_lemma:
        listed = {normalise(part) for part in choices[gold].split(",")}
        if hit := sorted(forms & listed):
            return hit[0], "exact", gold
    elif gold_id in named:
        return named[gold_id], "exact", gold
    for index, text in enumerate(texts):
        if index != gold and text and (hit := sorted(names[index] & forms)):
            return hit[0], "choice", index
    if by_lemma:
        near = _near(words, probe, ids[concept] if concept in ids else None, gold_id, named)
        if near is not None:
            return near, "near", None
    return None, "other", None


def _near(words: Lexicon, probe: str, concept: int | None, gold: int, named: dict[int, str]) -> str | None:
    """The form of the answer that names a concept next to the gold (``NEAR``), if one does."""
    if probe == "synonymy":
        return named.get(gold)
    if concept is None:
        return None
    taxonomy = words.graph.taxonomy
    if probe == "hypernymy":
        close = [id for id in named if id != gold and id in taxonomy.ancestors(concept)]
    else:
        close = [id for id in named if id != gold and taxonomy.is_descendant(id, concept)]
    return named[min(close)] if close else None


def answered(probes: pl.DataFrame, prompts: list[str], answers: list[str], letters: bool = False) -> pl.DataFrame:
    """The ``generate`` scorer's rows from each question's free answer (a local model's, or a served one's:
    ``workbench.scoring.served``); ``letters``: the answers name a choice by its letter (``answers.match_letters``)."""
    synsets = probes["probe"].is_in(LEMMA_PROBES) & probes["gold_concept"].str.contains(SYNSET).fill_null(False)
    graph = load_graph("wordnet") if synsets.any() and not letters else None
    matches = match_letters(probes, answers) if letters else match_answers(probes, answers, graph)
    width = probes["choices"].list.len()
    scores = [[float(index == pred) for index in range(size)] for size, pred in zip(width, matches["pred"])]
    return pl.DataFrame(
        {
            "row": pl.Series(range(probes.height), dtype=pl.Int64),
            "rule": [SCORER_RULES["generate"][0]] * probes.height,
            "scores": pl.Series(scores, dtype=pl.List(pl.Float64)),
            "prompt": pl.Series(prompts, dtype=pl.String),
            "generated": pl.Series(answers, dtype=pl.String),
        }
    ).hstack(matches)
