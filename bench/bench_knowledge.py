"""Reading WordNet through NLTK against loading the cached graph (and the GCIDE graph), each in a fresh interpreter
(nothing warm in it; the OS page cache is warm for both sides alike: the files were read before):

  nltk     open NLTK's WordNet reader, then for every synset read its name, definition, examples, lemma names,
           hypernyms and instance hypernyms (what building the graph needs): the baseline;
  wordnet  ``workbench.knowledge.load_graph("wordnet")`` from the Parquet cache;
  gcide    ``workbench.knowledge.load_graph("gcide")`` from the Parquet cache;
  imports  what ``import workbench.knowledge`` is made of (polars, the rest) and whether NLTK came with it.

Each child reports the seconds importing its modules (``import_s``), of the work itself (``work_s``), both
(``total_s``) and its process with interpreter start (``process_s``); the case's ratios are against NLTK's
(target: work under 0.10).
"""

import sys
import time

from harness import in_child

_ensured = False


def nltk_read() -> dict:
    start = time.perf_counter()
    from workbench.knowledge.wordnet import open_wordnet  # imports nltk (and polars via the package)

    imported = time.perf_counter()
    reader = open_wordnet()
    count = 0
    for synset in reader.all_synsets():
        synset.name(), synset.definition(), synset.examples(), synset.lemma_names()
        synset.hypernyms(), synset.instance_hypernyms()
        count += 1
    done = time.perf_counter()
    return {"import_s": imported - start, "work_s": done - imported, "total_s": done - start, "rows": count}


def graph_load(source: str) -> dict:
    start = time.perf_counter()
    from workbench.knowledge import load_graph

    imported = time.perf_counter()
    graph = load_graph(source)
    done = time.perf_counter()
    return {"import_s": imported - start, "work_s": done - imported, "total_s": done - start,
            "rows": sum(getattr(graph, name).height for name in ("concepts", "lemmas", "examples", "isa"))}  # fmt: skip


def import_parts() -> dict:
    """What the import of ``workbench.knowledge`` is made of: polars first, then the rest; and whether NLTK came."""
    start = time.perf_counter()
    import polars  # noqa: F401

    polars_done = time.perf_counter()
    import workbench.knowledge  # noqa: F401

    done = time.perf_counter()
    return {"import_s": done - start, "polars_s": polars_done - start, "nltk_imported": "nltk" in sys.modules}


def ensure() -> dict:
    """Build the graph caches that are missing, so that the timed loads only read Parquet."""
    from workbench.knowledge import load_graph

    for source in ("wordnet", "gcide"):
        load_graph(source)
    return {}


def knowledge(sources: tuple[str, ...] = ("wordnet", "gcide")) -> list[dict]:
    """One round: NLTK's reader, each cached graph and the import, each in its own fresh interpreter."""
    global _ensured
    if not _ensured:
        in_child("bench_knowledge:ensure")
        _ensured = True
    rows = [{"measure": "nltk", **in_child("bench_knowledge:nltk_read")}]
    rows += [{"measure": source, **in_child("bench_knowledge:graph_load", source)} for source in sources]
    return [*rows, {"measure": "import workbench.knowledge", **in_child("bench_knowledge:import_parts")}]
