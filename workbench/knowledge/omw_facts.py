"""One non-English wordnet read and checked, in the form the tab (``knowledge.omw``) and WN-LMF (``knowledge.lmf``)
readers both give: its name, licence, file checksum and its facts (lemmas, definitions, examples) by WordNet 3.0
``OFFSET-POS`` key, which ``omw.language_graph`` joins to the English graph."""

from dataclasses import dataclass
from pathlib import Path

import polars as pl

POS = ("n", "v", "a", "r", "s")
FACTS_SCHEMA = {"line": pl.Int64(), "key": pl.String(), "kind": pl.String(), "text": pl.String(), "place": pl.String()}


@dataclass(frozen=True)
class OmwWordnet:
    """One OMW wordnet (tab or WN-LMF file) read and checked: its header, and its lemmas, definitions and examples by
    synset key."""

    language: str
    name: str
    licence: str
    path: Path
    checksum: str
    facts: pl.DataFrame  # FACTS_SCHEMA: order, OFFSET-POS key, kind (lemma, def, exe), text, where (line or synset)

    @property
    def label(self) -> str:
        """The wordnet as reports name it: ``WOLF (Wordnet Libre du Français) [fra, 3f2a...]``."""
        return f"{self.name} [{self.language}, {self.checksum}]"
