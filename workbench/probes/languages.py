"""Taxonomy probes in other languages: WordNetQA's hypernymy and hyponymy asked with a language's lemmas.

A language's graph (``knowledge.omw.language_graph``) is WordNet's ISA structure with that language's words, so its
questions are built by the same code as the English ones (``build_probes``), with the language's question templates
(``templates/<lang>.json``: data, word order and quotation marks per language) and lemma-only choices, since the OMW
wordnets have no definitions or example sentences to show (Italian has a few; they are not used). ``pair_with`` asks
an English set's questions in a language instead: the same concepts, hops, distractor synsets, answer positions and
splits, wherever the language has words for every synset a question names. ``eng`` is English itself, lemma-only, the
partner that differs from the other languages only in its words.

Both ways end with ``audit``: a question is dropped where two choices read the same or where a distractor's words also
name a right answer in that language (French *bête* is a lemma of both *beast* and *animal*), so that every kept
question has one right answer in its own language, and ``LanguageSet.dropped`` says how many went and why.

>>> fra = build_language_probes("fra", language_spec("hypernymy", "fra", max_hops=2))  # doctest: +SKIP
>>> paired = pair_with(read_probes("probes/hypernymy-eng"), "fra")  # doctest: +SKIP
>>> paired.dropped  # doctest: +SKIP
"""

import hashlib
import random
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import polars as pl
import pyarrow as pa

from workbench.distractors import same_text
from workbench.errors import SpecError, WorkbenchError
from workbench.knowledge import Graph, load_graph
from workbench.probes.assemble import question_id
from workbench.probes.spec import ProbeSpec
from workbench.probes.templates import fill, load_templates
from workbench.schema import PROBE_SCHEMA, conform

ENGLISH = "eng"
LANGUAGE_PROBES = ("hypernymy", "hyponymy")
DROPPED_SCHEMA = {"reason": pl.String(), "questions": pl.Int64()}
NO_CONCEPT, NO_GOLD, NO_DISTRACTOR = "concept has no word", "gold has no word", "a distractor has no word"
SAME_TEXT, ALSO_RIGHT = "two choices read the same", "a distractor's word also names a right answer"
REASONS = (NO_CONCEPT, NO_GOLD, NO_DISTRACTOR, SAME_TEXT, ALSO_RIGHT)
MIN_QUESTIONS = 20  # fewer kept: the language cannot carry the probe with these settings (an error says what to do)


@dataclass(frozen=True)
class LanguageSet:
    """A probe set in one language: its questions (``PROBE_SCHEMA``), what was dropped and why (``DROPPED_SCHEMA``,
    one row per reason in ``REASONS``), and the knowledge it came from (``knowledge``: the wordnets and releases)."""

    language: str
    probes: pl.DataFrame
    dropped: pl.DataFrame
    knowledge: str


def template_path(language: str) -> Path:
    """The packaged question templates of ``language`` (``templates/<lang>.json``)."""
    path = Path(str(resources.files("workbench.probes").joinpath("templates", f"{language}.json")))
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.json") if p.stem != "default")
        raise SpecError(
            f"no question templates for language {language!r}; write workbench/probes/templates/{language}.json "
            f"as fra.json is written (or pass templates=PATH); packaged: {', '.join(known)}"
        )
    return path


def language_spec(probe: str, language: str, **overrides) -> ProbeSpec:
    """``ProbeSpec`` of ``probe`` in ``language``: its templates, lemma-only questions (no sentence is needed), the
    first lemmas as choice words; ``overrides`` as ``ProbeSpec``'s (``max_hops``, ``seed``, ...)."""
    if probe not in LANGUAGE_PROBES:
        raise SpecError(
            f"{probe} cannot be asked in {language}: its question or choices show a definition or an example "
            "sentence, which the OMW wordnets lack (Italian has definitions for 2,122 synsets); choose "
            f"{' or '.join(LANGUAGE_PROBES)}"
        )
    templates = overrides.pop("templates", None) or template_path(language_code(language))
    settings = {"templates": templates, "examples_only": False, "sentences": "one"}
    return ProbeSpec(probe=probe, **{**settings, "choice_words": "lemmas", **overrides})


def language_code(language: str) -> str:
    """The three-letter code of ``language``: the code itself, or the one a wordnet file's name holds
    (``wn-data-fra.tab``); anything else (``/etc/passwd``) is refused naming both forms."""
    if re.fullmatch(r"[a-z]{3}", language):
        return language
    path = Path(language)
    if path.suffix not in (".tab", ".xml"):
        raise SpecError(
            f"--language {language!r} is neither a three-letter code (eng, fra, ita, ...) nor a .tab or .xml "
            "wordnet file"
        )
    code = path.stem.removeprefix("wn-data-")
    if not re.fullmatch(r"[a-z]{3}", code):
        raise SpecError(
            f"--language {language}: the file's name does not say its language (wn-data-CODE.tab); pass its "
            "question templates with --templates (as workbench/probes/templates/fra.json is written)"
        )
    return code


def graph_of(language: str, english: Graph | None = None) -> Graph:
    """The graph questions in ``language`` are asked from: English WordNet for ``eng``, else its OMW graph."""
    from workbench.knowledge.omw import language_graph

    english = english or load_graph("wordnet")
    return english if language == ENGLISH else language_graph(language, english)


def _within(graph: Graph, languages: tuple[str, ...], english: Graph | None = None) -> Graph:
    """``graph`` with the words of only the synsets every one of ``languages`` (OMW codes) has words for, so that a
    set built from it asks only what they can ask too: an English set to pair with them loses few questions."""
    from workbench.knowledge.omw import language_graph

    english = english or load_graph("wordnet")
    shared = graph.lemmas["id"].unique()
    for other in languages:
        shared = shared.filter(shared.is_in(language_graph(other, english).lemmas["id"].unique()))
    checksum = hashlib.sha256(f"{graph.checksum}:within:{','.join(sorted(languages))}".encode()).hexdigest()[:16]
    return replace(graph, lemmas=graph.lemmas.filter(pl.col("id").is_in(shared)), checksum=checksum)


def shared_concepts(languages: tuple[str, ...], n: int, seed: int = 0, graph: Graph | None = None) -> tuple[str, ...]:
    """``n`` noun and verb synsets, drawn at random, that have a hypernym and words in every one of ``languages``:
    the concepts of a study that asks each of them the same questions (``--concepts``).

    >>> shared_concepts(("fra", "arb"), 3)  # doctest: +SKIP
    ('abbey.n.03', 'gasp.v.01', 'savanna.n.01')
    """
    from workbench.knowledge.omw import language_graph

    english = graph or load_graph("wordnet")
    shared = english.concepts["id"]
    for language in languages:
        shared = shared.filter(shared.is_in(language_graph(language, english).lemmas["id"].unique()))
    children = english.isa.filter(~pl.col("instance"))["child"].unique()
    pool = english.concepts.filter(
        pl.col("id").is_in(shared) & pl.col("id").is_in(children) & pl.col("pos").is_in(["n", "v"])
    )["name"].to_list()
    return tuple(sorted(random.Random(seed).sample(pool, min(n, len(pool)))))


def knowledge_label(language: str, english: Graph) -> str:
    """What a set in ``language`` was built from, as probe files and reports name it: the English WordNet's release
    and checksum, and the language's wordnet (name, code, checksum of its tab file)."""
    base = f"{english.source} {english.version} ({english.checksum})"
    if language == ENGLISH:
        return base
    from workbench.knowledge.omw import read_omw

    return f"{read_omw(language).label} on {base}"


def build_language_probes(
    language: str,
    spec: ProbeSpec | str,
    graph: Graph | None = None,
    shared: tuple[str, ...] = (),
    progress: bool = True,
    **overrides,
) -> LanguageSet:
    """Build a taxonomy probe in ``language`` (``eng`` or an OMW code such as ``fra``), then ``audit`` it.

    Parameters
    ----------
    language : str
        ``eng`` (English, lemma-only) or the code of an OMW wordnet found by ``knowledge.omw.find_omw``.
    spec : ProbeSpec or str
        The settings: a spec from ``language_spec``, or a probe name (``language_spec(spec, language, **overrides)``).
    graph : Graph, optional
        The English WordNet graph (default: the cached one).
    shared : tuple of str
        Ask only about synsets these OMW languages have words for too (``_within``): an English set to pair with.

    Examples
    --------
    >>> build_language_probes("ita", "hypernymy", max_hops=3).dropped  # doctest: +SKIP
    >>> english = build_language_probes("eng", "hypernymy", shared=("fra",))  # doctest: +SKIP
    """
    from workbench.probes import build_probes

    spec = language_spec(spec, language, **overrides) if isinstance(spec, str) else spec
    english = graph or load_graph("wordnet")
    source = graph_of(language, english)
    target = _within(source, shared, english) if shared else source
    label = knowledge_label(language, english) + (f", only synsets with words in {'+'.join(shared)}" if shared else "")
    try:
        probes = build_probes(spec, graph=target, progress=progress)
    except WorkbenchError as err:  # assemble's "no questions could be built": told below with the counts
        if type(err) is not WorkbenchError:  # a template, spec or source error says its own fix
            raise
        probes = pl.DataFrame(schema=PROBE_SCHEMA)
    kept, dropped = audit(probes, target)
    return _checked(LanguageSet(language, kept, _counts(dropped), label), spec.probe)


def pair_with(english: pl.DataFrame, language: str, graph: Graph | None = None, seed: int = 0) -> LanguageSet:
    """The questions of the English WordNet set ``english`` asked in ``language``: the same concepts, golds, hops,
    distractor synsets (in the same order), answer positions, splits and template ids, in its words; a question is
    dropped where the language has no word for a synset it names, then by ``audit``.

    Parameters
    ----------
    english : polars.DataFrame
        A hypernymy or hyponymy set built from English WordNet (``PROBE_SCHEMA``), e.g. by ``--language eng``.
    language : str
        An OMW code (``fra``) or ``eng``.
    seed : int
        The draw of a template for a question whose template id the language's file lacks.

    Examples
    --------
    >>> pair_with(build_language_probes("eng", "hypernymy").probes, "fra").dropped  # doctest: +SKIP
    """
    english = conform(english, PROBE_SCHEMA, what="probe frame")
    probes = sorted(english["probe"].unique().to_list())
    sources = sorted(english["source"].unique().to_list())
    if not set(probes) <= set(LANGUAGE_PROBES) or sources != ["wordnet"]:
        raise WorkbenchError(
            f"--paired-with needs a hypernymy or hyponymy set built from English WordNet; this one holds {probes} "
            f"from {sources}. Build one with `workbench probes build --probe hypernymy --language eng --out DIR`"
        )
    english_graph = graph or load_graph("wordnet")
    target = graph_of(language, english_graph)
    words = _words(target)
    ids = dict(zip(target.concepts["name"].to_list(), target.concepts["id"].to_list(), strict=True))
    gloss = target.concepts["gloss"].to_list()
    templates = {probe: load_templates(probe, template_path(language)) for probe in probes}
    rows, reasons = [], []
    for row in english.iter_rows(named=True):
        concept, gold = ids.get(row["concept"]), ids.get(row["gold_concept"])
        distractors = [ids.get(name) for name in row["distractor_concepts"]]
        if concept is None or gold is None or None in distractors:
            raise WorkbenchError(
                f"question {row['id']} names a synset ({row['concept']}, {row['gold_concept']} or a distractor) that "
                f"is not in the installed WordNet {target.version}; build the English set from this WordNet"
            )
        reason = _missing_word(words, concept, gold, distractors)
        if reason:
            reasons.append(reason)
            continue
        chosen = templates[row["probe"]]
        template = row["template"] if row["template"] in chosen.questions else _drawn(chosen, seed, row["concept"])
        question = fill(chosen.questions[template], {"context": "", "word": words[concept][0], "definition": ""})
        choices = [_choice(chosen.choice, words[x], gloss[x]) for x in distractors]
        choices.insert(row["answer"], _choice(chosen.choice, words[gold], gloss[gold]))
        rows.append(
            {
                **row,
                "id": question_id(row["probe"], question, choices, row["answer"]),
                "source": target.source,
                "word": words[concept][0],
                "context": "",
                "template": template,
                "question": question,
                "choices": choices,
            }
        )
    frame = _frame(rows)
    kept, dropped = audit(frame, target)
    counts = _counts([*reasons, *dropped])
    label = knowledge_label(language, english_graph)
    return _checked(LanguageSet(language, kept, counts, label), "/".join(probes))


def audit(probes: pl.DataFrame, graph: Graph) -> tuple[pl.DataFrame, list[str]]:
    """``probes`` less the questions with two choices that read the same, or a distractor whose words (in
    ``graph``'s language) are also words of a right answer: an ancestor of the concept for hypernymy, a descendant
    for hyponymy, through every ISA link, instance links included. Returns the questions kept and a reason per drop.
    """
    words = _words(graph)
    ids = graph.ids
    concepts_of: dict[str, list[int]] = defaultdict(list)
    for concept, lemmas in enumerate(words):
        for lemma in lemmas:
            concepts_of[same_text(lemma)].append(concept)
    taxonomy = graph.taxonomy
    keep, reasons = [], []
    for probe, concept, choices, distractors in probes.select(
        "probe", "concept", "choices", "distractor_concepts"
    ).iter_rows():
        keys = [same_text(choice) for choice in choices]
        if len(set(keys)) < len(keys):
            keep.append(False)
            reasons.append(SAME_TEXT)
            continue
        c = ids[concept]
        if probe == "hypernymy":
            above = taxonomy.ancestors(c)
            right = above.__contains__
        else:
            right = lambda x, c=c: taxonomy.is_descendant(x, c)  # noqa: E731
        also = any(
            right(other)
            for name in distractors
            for lemma in words[ids[name]]
            for other in concepts_of[same_text(lemma)]
            if other != ids[name]
        )
        keep.append(not also)
        if also:
            reasons.append(ALSO_RIGHT)
    return probes.filter(pl.Series(keep, dtype=pl.Boolean)), reasons


def _words(graph: Graph) -> list[list[str]]:
    """Each concept's lemmas in rank order, case variants folded (as WordNetQA's choices show them)."""
    words: list[list[str]] = [[] for _ in range(graph.concepts.height)]
    for concept, lemma in graph.lemmas.sort("id", "rank").select("id", "lemma").iter_rows():
        if same_text(lemma) not in (same_text(known) for known in words[concept]):
            words[concept].append(lemma)
    return words


def _missing_word(words: list[list[str]], concept: int, gold: int, distractors: list[int]) -> str:
    """The first synset of a question the language has no word for, as a reason ('' if it has all)."""
    if not words[concept]:
        return NO_CONCEPT
    if not words[gold]:
        return NO_GOLD
    return NO_DISTRACTOR if any(not words[x] for x in distractors) else ""


def _choice(template: str, lemmas: list[str], gloss: str) -> str:
    """A choice's text from the language's choice template (the fields of WordNetQA's choices)."""
    values = {"word": lemmas[0], "synonyms": "", "event": "", "definition": gloss, "lemmas": ", ".join(lemmas)}
    return fill(template, values)


def _drawn(templates, seed: int, concept: str) -> str:
    """A template id drawn for ``concept`` (one per cluster, as WordNetQA's ``phrasings=1``)."""
    return random.Random(f"{seed}:{templates.probe}:{concept}:language").choice(sorted(templates.questions))


def _frame(rows: list[dict]) -> pl.DataFrame:
    """``rows`` as a ``PROBE_SCHEMA`` frame (an empty one when none is left)."""
    if not rows:
        return pl.DataFrame(schema=PROBE_SCHEMA)
    columns = {name: [row[name] for row in rows] for name in PROBE_SCHEMA}
    for name in ("choices", "chain", "distractor_concepts"):
        columns[name] = pl.from_arrow(pa.array(columns[name], type=pa.large_list(pa.large_string())))
    return conform(pl.DataFrame(columns), PROBE_SCHEMA)


def _counts(reasons: list[str]) -> pl.DataFrame:
    """Questions dropped per reason, every reason listed."""
    return pl.DataFrame(
        {"reason": list(REASONS), "questions": [reasons.count(reason) for reason in REASONS]}, schema=DROPPED_SCHEMA
    )


def _checked(built: LanguageSet, probe: str) -> LanguageSet:
    """``built``, unless fewer than ``MIN_QUESTIONS`` questions are left: an error with the counts and the fix."""
    if built.probes.height >= MIN_QUESTIONS:
        return built
    why = ", ".join(f"{reason}: {n:,}" for reason, n in built.dropped.iter_rows() if n) or "no question was drafted"
    raise WorkbenchError(
        f"{probe} in {built.language} keeps {built.probes.height} question(s), fewer than {MIN_QUESTIONS} "
        f"(dropped: {why}); "
        f"{built.knowledge} has too few words for these settings: allow more hops (--max-hops) and distractor "
        "families, or use a larger wordnet for the language"
    )
