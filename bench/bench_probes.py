"""Benchmark: building the five probes from the full WordNet and GCIDE graphs.

Each (probe, setting) is built in a fresh Python subprocess, which reports the seconds to import,
to load the cached graph and to build (``build_probes(spec, graph)``), and its peak resident memory
(``ru_maxrss``) after the graph load and after the build. Settings:

  full     ProbeSpec(probe, max_hops=5, max_depth=3, perturbations=None)   every family and depth
  default  ProbeSpec(probe)  (max_hops=3, max_depth=3, perturbations=2)
  paper    ProbeSpec.paper(probe)   the paper preset (docs/REPRODUCTION.md), what `workbench probes build` builds

Targets (full setting): the five builds together under 60 s and under 2 GB peak memory. Besides
the per-probe subprocesses, one more subprocess builds all five and keeps every frame as
``workbench probes build --probe all`` does (``build_probe_sets``; ``--baseline`` also times ``--workers 2``), to
measure "together" directly, its memory summed over the processes.

Cases: ``probes-full``, ``probes-default``, ``probes-paper`` (the builds, with the SPEC Table 4 statistics beside the
paper's figures), ``probes-eligibility`` (the counts of eligible concepts in each source that explain the
differences), ``probes-profile`` (cProfile of one build), ``probes-against`` (the paper preset's five sets as `probes
build --probe all` builds them, by this tree and by a checkout of another commit, alternately).
"""

import resource
import subprocess
import tempfile
import time
from pathlib import Path

from harness import ROOT, in_child

PROBES = ("definitions", "hypernymy", "hyponymy", "synonymy", "wordsense")
SETTINGS = {
    "full": {"max_hops": 5, "max_depth": 3, "perturbations": None},
    "default": {},
    "paper": None,  # ProbeSpec.paper(probe)
}
TARGET_SECONDS = 60.0
TARGET_MB = 2000.0  # 2 GB, decimal
# SPEC §2 / Richardson & Sabharwal 2020, Table 4: unique questions, with perturbations, avg cluster size, synsets
TABLE4 = {
    "hypernymy": (19_705, 35_094, 5, 7_849),
    "hyponymy": (6_697, 35_243, 11, 3_452),
    "synonymy": (28_254, 91_069, 6, 15_632),
    "definitions": (31_380, 148_662, 10, 15_159),
    "wordsense": (7_000, None, 1, 7_000),  # "~7,000 / - / 1 / ~7,000"
}
STATS = ("unique_questions", "with_perturbations", "avg_cluster_size", "concepts")


def peak_mb() -> float:
    """Peak resident set size of this process so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6


def make_spec(probe: str, setting: str):
    from workbench.probes import ProbeSpec

    return ProbeSpec.paper(probe) if SETTINGS[setting] is None else ProbeSpec(probe, **SETTINGS[setting])


def describe(frame) -> dict:
    """Table 4 statistics plus the breakdowns the README's explanations cite."""
    import polars as pl

    from workbench.probes.stats import table4

    row = table4(frame).row(0, named=True)
    family = (
        pl.when(pl.col("distractor_depth") == 0)
        .then(pl.col("distractor_family"))
        .otherwise(pl.format("{}_{}", "distractor_family", "distractor_depth"))
    )
    families = frame.group_by(family.alias("f")).len().sort("f")
    hops = frame.group_by("hops").len().sort("hops")
    by_pos = frame.group_by("pos").agg(concepts=pl.col("concept").n_unique(), rows=pl.len()).sort("pos")
    splits = frame.group_by("split").len().sort("split")
    return {
        **{name: row[name] for name in STATS},
        "families": dict(zip(families["f"].to_list(), families["len"].to_list())),
        "hops": {str(k): n for k, n in zip(hops["hops"].to_list(), hops["len"].to_list())},
        "by_pos": {p: {"concepts": c, "rows": r} for p, c, r in by_pos.iter_rows()},
        "splits": dict(zip(splits["split"].to_list(), splits["len"].to_list())),
        "random_fill_rows": int((frame["n_random_fill"] > 0).sum()),
    }


# ---------------------------------------------------------------- children


def child_build(probe: str, setting: str) -> dict:
    start = time.perf_counter()
    from workbench.knowledge import load_graph
    from workbench.probes import build_probes

    imported = time.perf_counter()
    rss_import = peak_mb()
    spec = make_spec(probe, setting)
    graph = load_graph(spec.source)
    loaded = time.perf_counter()
    rss_load = peak_mb()
    cpu = time.process_time()
    frame = build_probes(spec, graph, progress=False)
    built = time.perf_counter()
    cpu = time.process_time() - cpu
    rss_peak = peak_mb()
    return {
        "probe": probe,
        "setting": setting,
        "import_s": imported - start,
        "load_s": loaded - imported,
        "build_s": built - loaded,
        "build_cpu_s": cpu,  # well below build_s: the process waited for a CPU (other work running)
        "total_s": built - start,
        "rss_import_mb": rss_import,
        "rss_load_mb": rss_load,
        "rss_peak_mb": rss_peak,
        **describe(frame),
    }


def child_together(setting: str, workers: str = "1", sample: str = "1") -> dict:
    """All five probes, every frame kept, as ``workbench probes build --probe all`` builds them: by
    ``build_probe_sets`` (one process per core) where the tree has it, else one after another in this process.
    With ``sample`` "1", memory is the peak of the summed resident memory of this process and its workers, sampled
    every 50 ms; with "0" no sampler runs (it reads each process's smaps, seconds of a core: ``baseline`` times the
    builds without it) and memory is this process's own peak."""
    import threading

    import psutil

    start = time.perf_counter()
    from workbench import probes as package
    from workbench.knowledge import load_graph

    imported = time.perf_counter()
    cpu = time.process_time()
    sampling = sample == "1"
    peak, done_sampling = [0.0, 0.0], threading.Event()  # summed RSS (shared pages counted in each), summed PSS

    def read_memory() -> None:
        me = psutil.Process()
        while not done_sampling.wait(0.05):
            rss = pss = 0
            for process in [me, *me.children(recursive=True)]:
                try:
                    info = process.memory_full_info()
                except psutil.Error:
                    continue
                rss, pss = rss + info.rss, pss + info.pss
            peak[0], peak[1] = max(peak[0], rss / 1e6), max(peak[1], pss / 1e6)

    sampler = threading.Thread(target=read_memory, daemon=True)
    if sampling:
        sampler.start()
    specs = [make_spec(probe, setting) for probe in PROBES]
    steps = {}
    if hasattr(package, "build_probe_sets"):
        frames = list(package.build_probe_sets(specs, workers=int(workers), progress=False).values())
    else:
        graphs, frames = {}, []
        for spec in specs:
            step = time.perf_counter()
            if spec.source not in graphs:
                graphs[spec.source] = load_graph(spec.source)
            loaded = time.perf_counter()
            frames.append(package.build_probes(spec, graphs[spec.source], progress=False))
            steps[spec.probe] = {"load_s": loaded - step, "build_s": time.perf_counter() - loaded}
    done = time.perf_counter()
    done_sampling.set()
    if sampling:
        sampler.join()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "setting": setting,
        "import_s": imported - start,
        "work_s": done - imported,
        "work_cpu_s": time.process_time() - cpu + children.ru_utime + children.ru_stime,
        "total_s": done - start,
        "rss_peak_mb": max(peak[0], peak_mb()),
        "pss_peak_mb": peak[1],
        "rows": sum(frame.height for frame in frames),
        "steps": steps,
    }


def child_eligibility() -> dict:
    """Counts of concepts each probe could ask about, under the generator's rules and looser ones."""
    import polars as pl

    from workbench.knowledge import load_graph

    wn = load_graph("wordnet")
    examples = wn.examples.group_by("id").agg(n_any=pl.len(), n_usable=(pl.col("surface") != "").sum().cast(pl.Int64))
    lemmas = wn.lemmas.group_by("id").agg(n_lemmas=pl.len(), n_distinct=pl.col("lemma").str.to_lowercase().n_unique())
    parents = wn.isa.group_by("child").agg(n_parents=pl.len()).rename({"child": "id"})
    children = wn.isa.group_by("parent").agg(n_children=pl.len()).rename({"parent": "id"})
    table = (
        wn.concepts.select("id", pos=pl.when(pl.col("pos") == "s").then(pl.lit("a")).otherwise(pl.col("pos")))
        .join(examples, on="id", how="left")
        .join(lemmas, on="id", how="left")
        .join(parents, on="id", how="left")
        .join(children, on="id", how="left")
        .fill_null(0)
    )
    any_ex, usable = pl.col("n_any") > 0, pl.col("n_usable") > 0
    taxonomy = pl.col("pos").is_in(["n", "v"])

    def count(expr) -> int:
        return int(table.filter(expr).height)

    def examples_of(expr) -> int:
        return int(table.filter(expr)["n_usable"].sum())

    wordnet = {
        "synsets": table.height,
        "with_example": count(any_ex),
        "with_usable_example": count(usable),
        "usable_by_pos": {p: count(usable & (pl.col("pos") == p)) for p in ("n", "v", "a", "r")},
        "definitions_eligible": count(usable),
        "definitions_eligible_noun_verb": count(usable & taxonomy),
        "definitions_usable_sentences": examples_of(usable),
        "hypernymy_noun_verb_usable": count(usable & taxonomy),
        "hypernymy_eligible": count(usable & taxonomy & (pl.col("n_parents") > 0)),
        "hypernymy_usable_sentences": examples_of(usable & taxonomy & (pl.col("n_parents") > 0)),
        "hyponymy_eligible": count(usable & taxonomy & (pl.col("n_children") > 0)),
        "hyponymy_usable_sentences": examples_of(usable & taxonomy & (pl.col("n_children") > 0)),
        "synonymy_eligible": count(usable & (pl.col("n_distinct") >= 2)),
        "synonymy_any_example_2_lemmas_raw": count(any_ex & (pl.col("n_lemmas") >= 2)),
        "synonymy_2_lemmas_no_example_needed": count(pl.col("n_distinct") >= 2),
        "synonymy_usable_sentences": examples_of(usable & (pl.col("n_distinct") >= 2)),
    }

    gc = load_graph("gcide")
    senses = (
        gc.concepts.select("id")
        .join(gc.lemmas.filter(pl.col("rank") == 0).select("id", word=pl.col("lemma").str.to_lowercase()), on="id")
        .join(gc.examples.group_by("id").agg(n=pl.len()), on="id", how="left")
        .fill_null(0)
    )
    with_ex = senses.filter(pl.col("n") > 0)
    per_word = with_ex.group_by("word").len()
    per_word_all = senses.group_by("word").len().rename({"len": "all"})
    gcide = {
        "senses": senses.height,
        "headwords": senses["word"].n_unique(),
        "senses_with_example": with_ex.height,
        "words_with_example_sense": per_word.height,
        "words_with_2plus_example_senses": int((per_word["len"] >= 2).sum()),
        "wordsense_eligible": int(per_word.filter(pl.col("len") >= 2)["len"].sum()),
        "example_senses_of_words_with_2plus_senses_any": int(
            with_ex.join(per_word_all, on="word").filter(pl.col("all") >= 2).height
        ),
    }
    gcide.update(gcide_package_examples_only())
    return {"wordnet": wordnet, "gcide": gcide}


def gcide_package_examples_only() -> dict:
    """Word-sense eligibility if only the package's own examples counted (not the ``as, ...`` usages
    the graph builder also extracts from definitions): re-reads the GCIDE JSON (~15 s)."""
    from collections import Counter

    from workbench.knowledge import gcide

    entries = gcide.read_entries()
    vocabulary = gcide.vocabulary_of(entries)
    with_package_example = with_usage = 0
    per_word: Counter = Counter()
    for entry in entries:
        headword = entry.get("entry") or entry["word"]
        for block in entry.get("pos", []):
            for definition in block.get("definitions", []):
                raw = definition.get("text", "")
                gloss, usages = gcide.definition_parts(raw, vocabulary)
                if not gloss:
                    continue
                with_usage += bool(usages)
                examples = (gcide.clean_example(text, vocabulary) for text in definition.get("examples", []))
                if any(text and gcide.surface(text, headword) for text in examples):
                    with_package_example += 1
                    per_word[headword.lower()] += 1
    return {
        "senses_with_as_usage": with_usage,
        "senses_with_package_example_only_rule": with_package_example,
        "wordsense_eligible_package_examples_only": sum(n for n in per_word.values() if n >= 2),
        "words_2plus_package_example_senses": sum(1 for n in per_word.values() if n >= 2),
    }


def builds(setting: str = "full", probes: tuple[str, ...] = PROBES, together: bool = True) -> list[dict]:
    """One round: each probe built in its own fresh interpreter, then (all five, ``full`` or ``paper``) the five
    together as ``probes build --probe all`` builds them; a row each, the paper's Table 4 figures beside."""
    in_child("bench_probes:ensure_caches")
    rows = []
    for probe in probes:
        run = in_child("bench_probes:child_build", probe, setting)
        paper = dict(
            zip(("paper_unique", "paper_with_perturbations", "paper_cluster", "paper_concepts"), TABLE4[probe])
        )
        rows.append({"measure": probe, "setting": describe_setting(setting),
                     **{k: v for k, v in run.items() if k not in ("probe", "setting")}, **paper})  # fmt: skip
    if together and setting in ("full", "paper") and set(probes) == set(PROBES):
        run = in_child("bench_probes:child_together", setting)
        rows.append({"measure": "all five together (probes build --probe all)", **run})
    return rows


def eligibility() -> list[dict]:
    """The counts of concepts each probe could ask about, a row per source and count."""
    counts = in_child("bench_probes:child_eligibility")
    counts.pop("process_s")
    return [{"measure": f"{source}: {name}", "count": value} for source, items in counts.items()
            for name, value in items.items()]  # fmt: skip


def ensure_caches() -> dict:
    from workbench.knowledge import load_graph

    load_graph("wordnet"), load_graph("gcide")
    return {}


def profile(probe: str = "hypernymy", setting: str = "full", top: int = 20) -> list[dict]:
    """cProfile of one build: the ``top`` functions by own time."""
    import cProfile
    import pstats

    from workbench.knowledge import load_graph
    from workbench.probes import build_probes

    spec = make_spec(probe, setting)
    graph = load_graph(spec.source)
    profiler = cProfile.Profile()
    profiler.enable()
    build_probes(spec, graph, progress=False)
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    ranked = sorted(stats.items(), key=lambda item: -item[1][2])[:top]
    return [{"measure": f"{Path(file).name}:{line}({name})", "calls": calls, "own_s": own, "cumulative_s": cumulative}
            for (file, line, name), (_, calls, own, cumulative, _) in ranked]  # fmt: skip


def describe_setting(setting: str) -> str:
    if SETTINGS[setting] is None:
        return "ProbeSpec.paper(probe)"
    args = ", ".join(f"{key}={value}" for key, value in SETTINGS[setting].items())
    return f"ProbeSpec(probe{', ' + args if args else ''})"


def against(rev: str = "05bcb50") -> list[dict]:
    """One round: the paper preset's five builds as ``probes build --probe all`` does them (``child_together``), by
    this tree, by this tree on 2 workers and by ``rev`` (a temporary git worktree): the baseline is ``rev``.

    Each configuration runs twice: once timed with no memory sampler, once with it for the memory. The sampler reads
    /proc smaps of every process 20 times a second, 6.5-7 s of a core over a two-process build, which on two cores
    slows the two workers it competes with but not a one-process build, whose sampler has the second core."""
    with tempfile.TemporaryDirectory() as folder:
        other = Path(folder) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(other), rev], cwd=ROOT, check=True,
                       capture_output=True)  # fmt: skip
        try:
            in_child("bench_probes:ensure_caches")
            rows = []
            for name, root, workers in (("this tree", ROOT, "1"), ("this tree, --workers 2", ROOT, "2"),
                                        (rev, other, "1")):  # fmt: skip
                timed = in_child("bench_probes:child_together", "paper", workers, "0", tree=root)
                sampled = in_child("bench_probes:child_together", "paper", workers, "1", tree=root)
                rows.append({"measure": name, "seconds": timed["work_s"], "with_sampler_s": sampled["work_s"],
                             "rss_peak_mb": sampled["rss_peak_mb"], "pss_peak_mb": sampled["pss_peak_mb"],
                             "rows": timed["rows"]})  # fmt: skip
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, check=False)
    return rows
