"""Wordnets in WN-LMF XML, the Global WordNet Association's format (the OMW's and Open English WordNet's releases),
read with the field's library ``wn`` and joined to WordNet 3.0 as OMW tab files are
(``knowledge.omw``).

``wn.lmf.load`` parses and validates a file into plain dicts without ``wn``'s database: nothing is written to its data
directory (``~/.wn_data``) and nothing is downloaded. A synset joins WordNet 3.0 by the ``OFFSET-POS`` its id ends with
(``omw-fr-00001740-n``, as the OMW's LMF releases write them); its members' lemmas (in the synset's ``members`` order
where given), definitions and examples become the facts a tab file would give.

>>> read_lmf(Path("omw-fr.xml"), "fra").label  # doctest: +SKIP
'WOLF (Wordnet Libre du Français) (omw-fr:1.4) [fra, 3f2a...]'
"""

import hashlib
import re
from pathlib import Path

import polars as pl
from wn import Error as WnError
from wn import lmf

from workbench.errors import DataSourceError
from workbench.knowledge.omw_facts import FACTS_SCHEMA, POS, OmwWordnet

KEY = re.compile(r"(\d{8})-([a-z])$")
LMF_HINT = (
    "the workbench joins a synset to WordNet 3.0 by the OFFSET-POS its id ends with ('omw-fr-00001740-n'), "
    "as the OMW's WN-LMF releases write them"
)


def read_lmf(path: Path, language: str | None = None) -> OmwWordnet:
    """Read and check one lexicon of a WN-LMF file; ``language`` (an OMW code such as ``fra``) names it, else the
    lexicon's own language tag does. A file ``wn`` cannot read, or a synset id with no WordNet 3.0 key, raises
    ``DataSourceError`` in one line naming it."""
    try:
        resource = lmf.load(path, progress_handler=None)
    except (WnError, OSError, KeyError, ValueError) as error:
        raise DataSourceError(
            f"{path} is no WN-LMF file wn can read ({error}); give an OMW wordnet as WN-LMF XML or as a tab file"
        ) from None
    lexicons = resource["lexicons"]
    if len(lexicons) != 1:
        ids = ", ".join(lexicon["id"] for lexicon in lexicons) or "none"
        raise DataSourceError(f"{path} holds {len(lexicons)} lexicons ({ids}); write one language's lexicon per file")
    lexicon = lexicons[0]
    if lexicon.get("extends"):
        base = lexicon["extends"]
        raise DataSourceError(
            f"{path} is an extension of the lexicon {base['id']}:{base['version']}, not a wordnet of its own; give a "
            "whole lexicon's WN-LMF file"
        )
    return OmwWordnet(
        language=language or lexicon["language"],
        name=f"{lexicon['label']} ({lexicon['id']}:{lexicon['version']})",
        licence=lexicon["license"],
        path=path,
        checksum=hashlib.sha256(path.read_bytes()).hexdigest()[:16],
        facts=_facts(lexicon, path),
    )


def _facts(lexicon: dict, path: Path) -> pl.DataFrame:
    """A lexicon's lemmas (by sense, in each synset's member order), definitions and examples keyed by OFFSET-POS."""
    synsets = lexicon.get("synsets", [])
    order = {sense: at for synset in synsets for at, sense in enumerate(synset.get("members", []))}
    senses = [
        (sense["synset"], order.get(sense["id"], len(order)), entry["lemma"]["writtenForm"])
        for entry in lexicon.get("entries", [])
        for sense in entry.get("senses", [])
    ]
    lemmas = pl.DataFrame(senses, schema={"synset": pl.String(), "at": pl.Int64(), "text": pl.String()}, orient="row")
    texts = [
        (synset["id"], kind, text["text"])
        for synset in synsets
        for kind, field in (("def", "definitions"), ("exe", "examples"))
        for text in synset.get(field, [])
    ]
    ordered = lemmas.with_row_index("seen").sort("synset", "at", "seen")
    frame = pl.concat(
        [
            ordered.select("synset", kind=pl.lit("lemma"), text="text"),
            pl.DataFrame(texts, schema={"synset": pl.String(), "kind": pl.String(), "text": pl.String()}, orient="row"),
        ]
    )
    for synset in frame["synset"].unique(maintain_order=True):
        _check(synset, path)
    return (
        frame.with_columns(pl.col("text").str.strip_chars())
        .filter(pl.col("text").is_not_null() & (pl.col("text") != ""))
        .with_row_index("line", offset=1)
        .select(
            "line",
            key=pl.col("synset").str.extract(KEY.pattern, 0),
            kind="kind",
            text="text",
            place=pl.format("synset '{}'", "synset"),
        )
        .cast(FACTS_SCHEMA)
    )


def _check(synset: str, path: Path) -> None:
    """Raise ``DataSourceError`` naming a synset id that does not end with a WordNet ``OFFSET-POS`` key."""
    found = KEY.search(synset)
    if not found:
        raise DataSourceError(
            f"{path}: synset {synset!r} does not end with a WordNet 3.0 OFFSET-POS; {LMF_HINT}: map its synsets to "
            "3.0 first"
        )
    if found[2] not in POS:
        raise DataSourceError(
            f"{path}: synset {synset!r} has the unknown part of speech {found[2]!r}; WordNet's are {', '.join(POS)}"
        )
