"""Wordnets of other languages from the Open Multilingual Wordnet, joined to WordNet 3.0 by offset and part of speech.

An OMW wordnet's tab file (``wn-data-<lang>.tab``) has a header line ``# NAME<TAB>lang<TAB>url<TAB>licence`` and one
line per fact, ``OFFSET-POS<TAB>[lang:]lemma<TAB>LEMMA`` (definitions and examples:
``OFFSET-POS<TAB>lang:def<TAB>N<TAB>TEXT``); the keys are WordNet 3.0 synset offsets (``00001740-n``; ``a`` for
adjective satellites too). A language's graph is the English graph with the language's lemmas (and definitions and
examples where it has them): the ISA structure, the concept names and ids stay WordNet's, so a question in French asks
about the same synsets as one in English.

The tab format is read with polars, not ``wn`` (docs/DEPENDENCIES.md): ``wn`` reads WN-LMF XML and ILI files only.
A wordnet in WN-LMF XML (``<lang>/*.xml``, or a ``.xml`` path) is read with ``wn`` by ``knowledge.lmf`` into the same
facts.

>>> fra = language_graph("fra")  # doctest: +SKIP
>>> fra.lemmas.filter(pl.col("id") == load_graph().id_of("dog.n.01"))  # doctest: +SKIP
"""

import hashlib
import os
import re
import warnings
from bisect import bisect_left
from pathlib import Path

import polars as pl

from workbench.errors import DataSourceError
from workbench.io import IGNORABLE, check_label, write_parquet
from workbench.knowledge.graph import EXAMPLES_SCHEMA, LEMMAS_SCHEMA, Graph
from workbench.knowledge.omw_facts import FACTS_SCHEMA, POS, OmwWordnet
from workbench.paths import cache_dir, workspace

LEMMA_KINDS = ("lemma",)  # `lemma:root`, `lemma:brokenplural` (Arabic) are not words of the synset: left out
TEXT_KINDS = ("def", "exe")
MISSING_SHARE = 0.01  # more keys than this unknown to WordNet 3.0: the file is keyed by another wordnet
OMW_HINT = (
    "Put an OMW wordnet's tab file at $OMW_DIR/<lang>/wn-data-<lang>.tab (or <workspace>/omw/<lang>/...), "
    "as the omw-data repository lays them out, or its WN-LMF XML file in that <lang> folder, or pass the file's path"
)
FORMATS = (".tab", ".xml")


def find_omw(language: str) -> Path:
    """The tab or WN-LMF file of ``language`` (an ISO 639-3 code such as ``fra``, or a file's path); a tab file is
    preferred where a folder holds both."""
    given = Path(language)
    if given.suffix in FORMATS:
        if not given.is_file():
            raise DataSourceError(f"no OMW wordnet file at {given}. {OMW_HINT}.")
        return given
    if not re.fullmatch(r"[a-z]{3}", language):
        raise DataSourceError(
            f"--language {language!r} is neither a three-letter code (fra, ita, ...) nor a .tab or .xml file"
        )
    roots = omw_roots()
    for root in roots:
        tabs = (root / language / f"wn-data-{language}.tab", root / f"wn-data-{language}.tab")
        for candidate in (*tabs, *sorted((root / language).glob("*.xml"))):
            if candidate.is_file():
                return candidate
    raise DataSourceError(
        f"no OMW wordnet for {language!r} in {', '.join(map(str, roots))}. {OMW_HINT} (five are in the project's "
        "shared data: OMW_DIR=../shared/data/omw)."
    )


def omw_roots() -> list[Path]:
    """The folders OMW wordnets are looked for in: ``$OMW_DIR`` (when set), then ``<workspace>/omw``."""
    return [*([Path(os.environ["OMW_DIR"])] if os.environ.get("OMW_DIR") else []), workspace() / "omw"]


def omw_languages() -> tuple[str, ...]:
    """The codes of the OMW wordnets found (a ``<code>`` folder of ``omw_roots`` with a tab or WN-LMF file): the
    languages the explorer shows a concept's words in."""
    found = {
        folder.name
        for root in omw_roots()
        if root.is_dir()
        for folder in root.iterdir()
        if re.fullmatch(r"[a-z]{3}", folder.name) and (any(folder.glob("wn-data-*.tab")) or any(folder.glob("*.xml")))
    }
    return tuple(sorted(found))


def read_omw(language: str) -> OmwWordnet:
    """Read and check the OMW wordnet of ``language`` (code or path; tab or WN-LMF, ``knowledge.lmf``); a bad line
    raises ``DataSourceError`` naming it.

    >>> read_omw("fra").facts.filter(pl.col("kind") == "lemma").height  # doctest: +SKIP
    102647
    """
    path = find_omw(language)
    if path.suffix == ".xml":
        from workbench.knowledge.lmf import read_lmf

        return read_lmf(path, language if re.fullmatch(r"[a-z]{3}", language) else None)
    data = path.read_bytes()
    lines = pl.Series("raw", [line.removesuffix("\r") for line in _text(data, path).split("\n")])  # not splitlines:
    # U+0085 or U+2028 inside a lemma is no line break of a tab file
    header = lines[0].lstrip("# ").split("\t") if len(lines) and lines[0].startswith("#") else []
    code = header[1] if len(header) > 1 else path.stem.removeprefix("wn-data-")
    frame = (
        pl.DataFrame({"line": pl.int_range(1, len(lines) + 1, eager=True), "raw": lines})
        .filter(~pl.col("raw").str.starts_with("#") & (pl.col("raw").str.strip_chars() != ""))
        .with_columns(parts=pl.col("raw").str.split("\t"))
        .with_columns(
            key=pl.col("parts").list.get(0, null_on_oob=True),
            kind=pl.col("parts").list.get(1, null_on_oob=True).str.split(":").list.get(-1),
            first=pl.col("parts").list.get(1, null_on_oob=True),
            text=pl.when(pl.col("parts").list.len() >= 4)
            .then(pl.col("parts").list.get(3, null_on_oob=True))
            .otherwise(pl.col("parts").list.get(2, null_on_oob=True))
            .str.strip_chars(),
        )
    )
    frame = _once(frame, path)
    _check_keys(frame, path)
    _check_columns(frame, path, code)
    facts = frame.filter(
        (pl.col("first").str.split(":").list.len() <= 2) & pl.col("kind").is_in([*LEMMA_KINDS, *TEXT_KINDS])
    ).filter(pl.col("text").is_not_null() & (pl.col("text") != ""))
    return OmwWordnet(
        language=code,
        name=check_label(header[0].strip() if header else path.stem, f"{path} line 1: the wordnet's name"),
        licence=header[3].strip() if len(header) > 3 else "",
        path=path,
        checksum=hashlib.sha256(data).hexdigest()[:16],
        facts=facts.with_columns(place=pl.format("line {}", "line")).select(list(FACTS_SCHEMA)).cast(FACTS_SCHEMA),
    )


def _text(data: bytes, path: Path) -> str:
    """The file's text: UTF-8, a byte-order mark dropped; an invalid byte is refused naming its line (it was read
    as U+FFFD, a word silently changed)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise DataSourceError(
            f"{path} line {line}: not valid UTF-8 (byte {err.object[err.start]:#04x}); save the file as UTF-8"
        ) from None


def _once(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    """``frame`` with each repeated line kept once, and a warning that counts them."""
    repeated = frame.filter(pl.col("raw").is_duplicated() & ~pl.col("raw").is_first_distinct())
    if repeated.height:
        warnings.warn(
            f"{path}: {repeated.height:,} lines repeat an earlier line (first: line {repeated['line'][0]}); "
            "each is read once",
            stacklevel=3,
        )
    return frame.filter(pl.col("raw").is_first_distinct())


def _check_columns(frame: pl.DataFrame, path: Path, code: str) -> None:
    """Raise on the first line of another language's (``eng:lemma`` in the Italian file), and on the first lemma,
    definition or example line with a column too many (a tab inside a lemma was read as a column break)."""
    prefix = pl.col("first").str.split(":")
    other = frame.filter((prefix.list.len() > 1) & (prefix.list.first() != code)).head(1)
    if other.height:
        raise DataSourceError(
            f"{path} line {other['line'][0]}: {other['first'][0]!r} is a line of another language than the file's "
            f"({code}); keep one language per file (delete the line, or move it to that language's file)"
        )
    columns = pl.col("parts").list.len()
    lemma = pl.col("kind").is_in(LEMMA_KINDS) & (prefix.list.len() <= 2)
    shown = pl.col("text").str.replace_all(IGNORABLE, "").str.strip_chars()
    unseen = frame.filter(lemma & ((shown == "") | pl.col("text").str.contains("[\u202a-\u202e\u2066-\u2069]")))
    if unseen.height:
        raise DataSourceError(
            f"{path} line {unseen['line'][0]}: the lemma {unseen['text'][0]!r} shows as nothing or holds a bidi "
            "control (a question would show an empty word, or text reordered); fix or delete the line"
        )
    wide = frame.filter((lemma & (columns != 3)) | (pl.col("kind").is_in(TEXT_KINDS) & (columns > 4))).head(1)
    if wide.height:
        raise DataSourceError(
            f"{path} line {wide['line'][0]}: {wide['raw'][0][:60]!r} has {wide['parts'][0].len()} tab-separated "
            "columns where a lemma line has 3 and a definition or example 3 or 4 (a tab inside the text?); fix the "
            "line"
        )


def _check_keys(frame: pl.DataFrame, path: Path) -> None:
    """Raise on the first line whose key is not ``OFFSET-POS`` or whose part of speech is unknown."""
    bad = frame.filter(~pl.col("key").str.contains(r"^\d{8}-[a-z]$") | pl.col("first").is_null()).head(1)
    if bad.height:
        line, raw = bad["line"][0], bad["raw"][0]
        raise DataSourceError(
            f"{path} line {line}: {raw[:60]!r} does not start with an OFFSET-POS key and a relation "
            "(8 digits, a dash, a part of speech, a tab: '00001740-n\\tfra:lemma\\tentité'); fix or delete the line"
        )
    unknown = frame.filter(~pl.col("key").str.slice(9).is_in(POS)).head(1)
    if unknown.height:
        line, key = unknown["line"][0], unknown["key"][0]
        raise DataSourceError(
            f"{path} line {line}: {key!r} has the unknown part of speech {key[9:]!r}; WordNet's are {', '.join(POS)} "
            "(s: adjective satellite); fix or delete the line"
        )


def wordnet_keys(graph: Graph) -> pl.DataFrame:
    """``id`` and OMW ``key`` (``00001740-n``; satellites as ``a``) of every concept of an English WordNet graph,
    read once from NLTK's lemma index (a name ``dog.n.01`` is the first offset of ``dog`` as a noun, as NLTK's
    ``synset`` reads it) and cached beside the graph (keyed by its version and checksum)."""
    path = cache_dir("graphs") / f"{graph.key}-omw-keys.parquet"
    if path.is_file():
        try:
            return pl.read_parquet(path)
        except (OSError, pl.exceptions.PolarsError):
            pass
    from workbench.knowledge.wordnet import open_wordnet

    offsets = open_wordnet()._lemma_pos_offset_map  # lemma -> part of speech -> offsets in sense order
    rows = []
    for index, name in graph.concepts.select("id", "name").iter_rows():
        lemma, pos, sense = name.lower().rsplit(".", 2)
        found = offsets.get(lemma, {}).get(pos, [])
        if 0 < int(sense) <= len(found):
            rows.append((index, f"{found[int(sense) - 1]:08d}-{'a' if pos == 's' else pos}"))
    keys = pl.DataFrame(rows, schema={"id": graph.concepts.schema["id"], "key": pl.String()}, orient="row")
    write_parquet(keys, path)
    return keys


def linked_facts(wordnet: OmwWordnet, graph: Graph) -> tuple[pl.DataFrame, list[str], int]:
    """``wordnet``'s facts with the English concept ``id`` of their key; the shifts that aligned its keys to the
    installed WordNet 3.0 (``aligned_keys``); and how many lines named no synset of it (dropped). A file where more
    than ``MISSING_SHARE`` of the keys stay unknown is not keyed by WordNet 3.0: ``DataSourceError`` naming its first
    such line."""
    if graph.version != "3.0":
        raise DataSourceError(
            f"OMW wordnets are keyed by WordNet 3.0's offsets, but the English WordNet installed is {graph.version}; "
            "install WordNet 3.0 (see `workbench data setup`) to read them"
        )
    keys = wordnet_keys(graph)
    facts = wordnet.facts.with_columns(pl.col("key").str.replace(r"-s$", "-a"))
    mapping, shifts = aligned_keys(facts["key"].unique().to_list(), set(keys["key"].to_list()))
    linked = facts.with_columns(pl.col("key").replace(mapping)).join(keys, on="key", how="left")
    unknown = linked.filter(pl.col("id").is_null())
    if unknown.height > MISSING_SHARE * max(linked.height, 1):
        first = unknown.row(0, named=True)
        raise DataSourceError(
            f"{wordnet.path} {first['place']}: {first['key']!r} is no WordNet 3.0 synset, nor are "
            f"{unknown.height:,} of its {linked.height:,} facts: the file is keyed by another wordnet's offsets. "
            "OMW wordnets must use WordNet 3.0 offsets (omw-data's wns/ folder); map the keys to 3.0 first"
        )
    return linked.filter(pl.col("id").is_not_null()), shifts, unknown.height


def aligned_keys(keys: list[str], installed: set[str], rounds: int = 10) -> tuple[dict[str, str], list[str]]:
    """Princeton WordNet 3.0 keys moved to the offsets of the 3.0 installed, where its files were rebuilt.

    Debian's ``wordnet-base`` regenerates the data files from the lexicographer files: a few verb and adjective
    synsets are some bytes longer, so every offset after them is that much larger than Princeton's (which OMW uses);
    nouns and adverbs are unchanged. A part of speech whose smallest unknown key ``m`` lies ``d`` bytes (200 at most)
    from an installed offset, before or after, has every key from ``m`` on moved by ``d``, kept only if that lines up
    most of those keys and more than before (a file keyed by another wordnet does not line up), then again from the next
    unknown key, ``rounds`` times at most. Returns the key mapping and a line per shift (``"v +18 from 00613018"``).
    """
    mapping: dict[str, str] = {}
    shifts: list[str] = []
    for pos in sorted({key[9:] for key in keys}):
        ours = sorted(int(key[:8]) for key in keys if key[9:] == pos)
        theirs = sorted(int(key[:8]) for key in installed if key[9:] == pos)
        moved = {offset: offset for offset in ours}
        for _ in range(rounds):
            missing = [offset for offset in ours if f"{moved[offset]:08d}-{pos}" not in installed]
            if not missing or not theirs:
                break
            start = missing[0]
            later = [offset for offset in ours if offset >= start]
            at = bisect_left(theirs, moved[start])
            near = [theirs[i] - moved[start] for i in (at - 1, at) if 0 <= i < len(theirs)]
            lined = {
                delta: sum(f"{moved[offset] + delta:08d}-{pos}" in installed for offset in later)
                for delta in near
                if abs(delta) <= 200
            }
            delta = max(lined, key=lined.__getitem__, default=0)
            if not delta or lined[delta] < max(0.5 * len(later), len(later) - len(missing) + 1):
                break  # it must line up most of those keys, and more of them than before
            for offset in later:
                moved[offset] += delta
            shifts.append(f"{pos} {delta:+d} from {start:08d}")
        mapping.update({f"{old:08d}-{pos}": f"{new:08d}-{pos}" for old, new in moved.items() if new != old})
    return mapping, shifts


def language_graph(language: str, graph: Graph | None = None) -> Graph:
    """The English WordNet graph with ``language``'s lemmas, definitions and examples instead of English ones.

    Every concept and ISA link stays (ids and names are WordNet's); a concept the language has no lemma for has none
    here, so no question asks about it or offers it as a choice. Its ``source`` is ``omw-<lang>``, its ``version``
    the English WordNet's, its ``checksum`` that of the tab file and the English graph together.

    >>> language_graph("fra").source  # doctest: +SKIP
    'omw-fra'
    """
    from workbench.knowledge.cache import load_graph

    english = graph or load_graph("wordnet")
    wordnet = read_omw(language)
    facts, _, _ = linked_facts(wordnet, english)
    lemmas = (
        facts.filter(pl.col("kind") == "lemma")
        .unique(["id", "text"], keep="first", maintain_order=True)
        .sort("id", "line")
        .select("id", pl.int_range(pl.len()).over("id").alias("rank"), pl.col("text").alias("lemma"))
        .cast(LEMMAS_SCHEMA)
    )
    glosses = facts.filter(pl.col("kind") == "def").group_by("id").agg(pl.col("text").first().alias("own_gloss"))
    concepts = (
        english.concepts.join(glosses, on="id", how="left", maintain_order="left")
        .with_columns(gloss=pl.col("own_gloss").fill_null(""))
        .select(english.concepts.columns)
    )
    examples = _examples(facts.filter(pl.col("kind") == "exe"), lemmas)
    checksum = hashlib.sha256(f"{wordnet.checksum}:{english.key}".encode()).hexdigest()[:16]
    return Graph(
        source=f"omw-{wordnet.language}",
        version=english.version,
        checksum=checksum,
        concepts=concepts,
        lemmas=lemmas,
        examples=examples,
        isa=english.isa,
    )


def _examples(exe: pl.DataFrame, lemmas: pl.DataFrame) -> pl.DataFrame:
    """Example sentences with the lemma they show (``surface``; '' when none of the concept's lemmas appears)."""
    if exe.is_empty():
        return pl.DataFrame(schema=EXAMPLES_SCHEMA)
    found = (
        exe.select("id", "line", pl.col("text").alias("example"))
        .join(lemmas.select("id", "lemma"), on="id", how="left")
        .with_columns(
            hit=pl.col("example").str.to_lowercase().str.contains(pl.col("lemma").str.to_lowercase(), literal=True)
        )
        .group_by("id", "line", "example", maintain_order=True)
        .agg(pl.col("lemma").filter(pl.col("hit")).first().fill_null("").alias("surface"))
    )
    return (
        found.sort("id", "line")
        .select("id", pl.int_range(pl.len()).over("id").alias("rank"), "example", "surface")
        .cast(EXAMPLES_SCHEMA)
    )


def lemmas_across(languages: tuple[str, ...], graph: Graph | None = None) -> pl.DataFrame:
    """``language``, ``id``, ``rank``, ``lemma`` of every concept in English and in each of ``languages``: read once,
    then ``words_across`` picks a concept's rows (the explorer keeps it)."""
    from workbench.knowledge.cache import load_graph

    english = graph or load_graph("wordnet")
    parts = [("eng", english), *((language, language_graph(language, english)) for language in languages)]
    return pl.concat([part.lemmas.select(pl.lit(code).alias("language"), pl.all()) for code, part in parts])


def words_across(
    concept: str, languages: tuple[str, ...], graph: Graph | None = None, lemmas: pl.DataFrame | None = None
) -> pl.DataFrame:
    """``concept``'s words in English and in each of ``languages`` (``language``, ``lemmas``; an empty list where a
    wordnet has none): what a concept card shows of it in every loaded language. ``lemmas``: ``lemmas_across``'s
    frame of those languages, read once for many concepts.

    >>> words_across("dog.n.01", ("fra", "arb"))  # doctest: +SKIP
    """
    from workbench.knowledge.cache import load_graph

    english = graph or load_graph("wordnet")
    across = lemmas if lemmas is not None else lemmas_across(languages, english)
    found = across.filter(pl.col("id") == english.id_of(concept)).sort("rank")
    rows = [(code, found.filter(pl.col("language") == code)["lemma"].to_list()) for code in ("eng", *languages)]
    return pl.DataFrame(rows, schema={"language": pl.String(), "lemmas": pl.List(pl.String())}, orient="row")
