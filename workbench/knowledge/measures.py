"""Lexical measures of concepts: the target lemma of a word, its polysemy, the concept's depth in the ISA
hierarchy, and WordNet's sense-tagged counts.

What ``workbench.analysis.difficulty`` regresses a model's correctness on, as frames over a ``Graph``:

    >>> concept_measures(graph, pl.DataFrame({"concept": ["dog.n.01"], "word": ["dogs"]}))
    # concept, word, lemma 'dog', polysemy 7, concept_depth 8, sense_count 42

The sense counts are the ``tag_cnt`` of WordNet's sense index (``index.sense``): how often each word was tagged
in each sense in the semantic concordances, the number NLTK's ``Lemma.count()`` reads from ``cntlist.rev``.
They are joined to the graph's concepts by the synsets' offsets in the data files, read once in 0.3 s (NLTK's
reader takes seconds to open and a lookup per lemma).
"""

import warnings
import zipfile
from pathlib import Path

import polars as pl

from workbench.knowledge.graph import Graph

DATA_FILES = ("adj", "adv", "noun", "verb")  # the order of NLTK's all_synsets, hence of the graph's concept ids
SS_TYPES = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "s"}  # a sense key's synset type
MEASURES_SCHEMA = {
    "concept": pl.String(),
    "word": pl.String(),
    "lemma": pl.String(),
    "polysemy": pl.Int64(),
    "concept_depth": pl.Int64(),
    "sense_count": pl.Int64(),
}


def concept_measures(graph: Graph, items: pl.DataFrame) -> pl.DataFrame:
    """Per distinct (``concept``, ``word``) of ``items``: the target ``lemma``, its ``polysemy``, the
    ``concept_depth`` and the ``sense_count``; nulls where ``graph`` lacks the concept or the measure.

    ``lemma``: the concept's lemma the word is a form of (the same, or a prefix of it once a final "e" or "y" is
    dropped: hunker -> hunkered, carry -> carried), else its first lemma. ``polysemy``: how many concepts of the
    same part of speech (satellites counted as adjectives) have that lemma, as ``len(wn.synsets(lemma, pos))``.
    ``concept_depth``: the fewest ISA links (instance links included) up to a root, NLTK's ``min_depth()``; null
    for a graph without ISA links. ``sense_count``: WordNet's sense-tagged count of the lemma in this sense
    (``Lemma.count()``); null for other sources or when the sense index is not installed.
    """
    pairs = items.select(pl.col("concept").cast(pl.String), pl.col("word").cast(pl.String)).unique()
    ids = pairs.join(graph.concepts.select(pl.col("name").alias("concept"), "id", "pos"), on="concept", how="left")
    lemmas = graph.lemmas.with_columns(low=_normal(pl.col("lemma")))
    stem = pl.col("low").str.replace(r"[ey]$", "")
    word = _normal(pl.col("word"))
    matched = (
        ids.join(lemmas, on="id")
        .with_columns(
            exact=pl.col("low") == word,
            prefix=(stem.str.len_chars() >= 3) & word.str.starts_with(stem),
            length=pl.col("low").str.len_chars(),
        )
        .sort("exact", "prefix", "length", "rank", descending=[True, True, True, False])
        .group_by("concept", "word", maintain_order=True)
        .agg(pl.col("low", "lemma").first())
    )
    senses = lemmas.join(graph.concepts.select("id", group=_pos_group()), on="id").group_by("low", "group")
    polysemy = senses.agg(polysemy=pl.col("id").n_unique().cast(pl.Int64))
    measures = (
        ids.with_columns(group=_pos_group())
        .join(matched, on=["concept", "word"], how="left")
        .join(polysemy, on=["low", "group"], how="left")
        .with_columns(concept_depth=pl.Series(min_depths(graph, ids["id"].to_list()), dtype=pl.Int64))
    )
    counts = sense_counts(graph)
    if counts is not None:
        measures = measures.join(counts.rename({"lemma": "low"}), on=["id", "low"], how="left")
    else:
        measures = measures.with_columns(sense_count=pl.lit(None, pl.Int64))
    return measures.select(pl.col(name).cast(dtype) for name, dtype in MEASURES_SCHEMA.items())


def min_depths(graph: Graph, ids: list[int | None]) -> list[int | None]:
    """The fewest ISA links from each concept id up to a root (None for a None id or a graph without ISA)."""
    if graph.isa.is_empty():
        return [None] * len(ids)
    parents = graph.taxonomy.parents
    depth: dict[int, int] = {}

    def walk(concept: int) -> int:
        stack = [concept]
        while stack:  # depth-first, so that deep hierarchies never reach Python's recursion limit
            node = stack[-1]
            waiting = [parent for parent in parents[node] if parent not in depth]
            if waiting:
                stack.extend(waiting)
                continue
            depth[node] = 1 + min((depth[parent] for parent in parents[node]), default=-1)
            stack.pop()
        return depth[concept]

    return [None if concept is None else walk(concept) for concept in ids]


def sense_counts(graph: Graph) -> pl.DataFrame | None:
    """WordNet's sense-tagged counts: per concept ``id`` and ``lemma`` (lower case, spaces), its ``sense_count``.

    None (with a warning) for a graph that is not WordNet's, when the sense index is not installed, or when the
    data files do not line up with the graph's concepts.
    """
    if graph.source != "wordnet":
        return None
    from workbench.knowledge.cache import source_files

    files = source_files("wordnet")
    try:
        read = _reader(files[0] if files[0].suffix == ".zip" else files[0].parent)
        lines = pl.concat([read(f"data.{name}") for name in DATA_FILES]).filter(~pl.col("line").str.starts_with(" "))
        index = read("index.sense")
    except (OSError, KeyError) as err:
        warnings.warn(f"WordNet's sense index could not be read ({err}); sense counts are left out", stacklevel=2)
        return None
    synsets = lines.select(
        offset=pl.col("line").str.slice(0, 8), ss=pl.col("line").str.split(" ").list.get(2), id=pl.int_range(pl.len())
    )
    if synsets.height != graph.concepts.height or (synsets["ss"] != graph.concepts["pos"]).any():
        warnings.warn("WordNet's data files do not match the graph; sense counts are left out", stacklevel=2)
        return None
    fields = pl.col("line").str.split(" ")
    keys = index.select(key=fields.list.get(0), offset=fields.list.get(1), count=fields.list.get(3).cast(pl.Int64))
    return (
        keys.select(
            lemma=_normal(pl.col("key").str.extract(r"^(.*)%")),
            ss=pl.col("key").str.extract(r"%(\d)").replace_strict(SS_TYPES),
            offset="offset",
            sense_count="count",
        )
        .join(synsets, on=["offset", "ss"])
        .select(pl.col("id").cast(pl.Int32), "lemma", "sense_count")
    )


def _reader(path: Path):
    """A function reading one WordNet file of ``path`` (a folder, or NLTK's zip) as a frame of lines."""

    def frame(data: bytes) -> pl.DataFrame:
        return pl.DataFrame({"line": data.decode("utf-8").splitlines()})

    if path.is_file():
        archive = zipfile.ZipFile(path)
        return lambda name: frame(archive.read(f"wordnet/{name}"))
    return lambda name: frame((path / name).read_bytes())


def _normal(text: pl.Expr) -> pl.Expr:
    """A word as lemmas are compared: lower case, spaces for underscores."""
    return text.str.to_lowercase().str.replace_all("_", " ").str.strip_chars()


def _pos_group() -> pl.Expr:
    """A concept's part of speech with satellites counted as adjectives (as ``wn.synsets(lemma, "a")``)."""
    return pl.col("pos").replace("s", "a")
