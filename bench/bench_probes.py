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

It prints the SPEC Table 4 statistics of both settings next to the paper's figures, and the counts of
eligible concepts in each source that explain the differences.

    .venv/bin/python bench/bench_probes.py [--settings full,default] [--repeats 1] [--json]
    .venv/bin/python bench/bench_probes.py --profile hypernymy      # cProfile of one full build
    .venv/bin/python bench/bench_probes.py --baseline 05bcb50 --repeats 3   # the paper preset's five sets as
        `probes build --probe all` builds them, by this tree and by a checkout of another commit, alternately
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
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


def run_child(*args: str, root: Path = REPO) -> dict:
    """Run a child of this script with the workbench of ``root`` (this tree, or a baseline checkout) importable."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", *args],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"child {args} failed with exit code {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- parent


def ensure_caches() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from workbench.knowledge import load_graph; load_graph('wordnet'); load_graph('gcide')",
        ],
        cwd=REPO,
    )
    if proc.returncode != 0:
        raise SystemExit("could not build the graph caches; run `workbench data setup`")


def machine() -> dict:
    from importlib import metadata

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "unknown",
    )
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "python": sys.version.split()[0],
        "polars": metadata.version("polars"),
        "nltk": metadata.version("nltk"),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
    }


def median_run(reps: list[dict]) -> dict:
    """The first repeat's counts with the median of every timing and memory figure."""
    merged = dict(reps[0])
    for key, value in reps[0].items():
        if isinstance(value, float):
            merged[key] = statistics.median(rep[key] for rep in reps)
    merged["build_s_runs"] = [rep["build_s"] for rep in reps]
    return merged


def fmt(value, width: int, digits: int = 0) -> str:
    if value is None:
        return f"{'-':>{width}}"
    return f"{value:>{width},.{digits}f}"


def print_timing(setting: str, runs: dict[str, dict], together: dict | None) -> dict:
    print(f"\n== {setting}: {describe_setting(setting)}")
    header = (
        f"{'probe':<12}{'load s':>8}{'build s':>9}{'total s':>9}{'cpu/wall':>9}"
        f"{'RSS load MB':>13}{'RSS peak MB':>13}{'rows':>10}"
    )
    print(header)
    print("-" * len(header))
    load = build = 0.0
    peak = 0.0
    for probe, run in runs.items():
        load += run["load_s"]
        build += run["build_s"]
        peak = max(peak, run["rss_peak_mb"])
        print(
            f"{probe:<12}{run['load_s']:>8.2f}{run['build_s']:>9.2f}{run['load_s'] + run['build_s']:>9.2f}"
            f"{run['build_cpu_s'] / run['build_s']:>9.2f}"
            f"{run['rss_load_mb']:>13,.0f}{run['rss_peak_mb']:>13,.0f}{run['with_perturbations']:>10,}"
        )
    print(f"{'sum':<12}{load:>8.2f}{build:>9.2f}{load + build:>9.2f}{'':>9}{'':>13}{peak:>13,.0f}  (max of the five)")
    verdict = {"sum_seconds": load + build, "max_peak_mb": peak}
    if together is not None:
        print(
            f"together, as `probes build --probe all` builds them: {together['work_s']:.2f} s "
            f"(+{together['import_s']:.2f} s imports; cpu/wall {together['work_cpu_s'] / together['work_s']:.2f}), "
            f"peak RSS summed over its processes {together['rss_peak_mb']:,.0f} MB, {together['rows']:,} rows"
        )
        verdict.update(together_seconds=together["work_s"], together_peak_mb=together["rss_peak_mb"])
    return verdict


def describe_setting(setting: str) -> str:
    if SETTINGS[setting] is None:
        return "ProbeSpec.paper(probe)"
    args = ", ".join(f"{key}={value}" for key, value in SETTINGS[setting].items())
    return f"ProbeSpec(probe{', ' + args if args else ''})"


def print_table4(results: dict[str, dict[str, dict]]) -> None:
    print("\n== Table 4: unique questions / with perturbations / avg cluster size / concepts")
    header = f"{'probe':<12}{'source':<9}{'unique':>9}{'w. pert.':>10}{'cluster':>9}{'concepts':>10}"
    print(header)
    print("-" * len(header))
    for probe in next(iter(results.values())):
        paper = TABLE4[probe]
        print(
            f"{probe:<12}{'paper':<9}{fmt(paper[0], 9)}{fmt(paper[1], 10)}{fmt(paper[2], 9)}{fmt(paper[3], 10)}"
            + ("   (~ approximate)" if probe == "wordsense" else "")
        )
        for setting, runs in results.items():
            run = runs[probe]
            print(
                f"{'':<12}{setting:<9}{run['unique_questions']:>9,}{run['with_perturbations']:>10,}"
                f"{run['avg_cluster_size']:>9.2f}{run['concepts']:>10,}"
            )


def print_breakdowns(results: dict[str, dict[str, dict]]) -> None:
    print("\n== rows per distractor family (and hop count), by setting")
    for setting, runs in results.items():
        for probe, run in runs.items():
            families = ", ".join(f"{name} {n:,}" for name, n in run["families"].items())
            hops = ", ".join(f"k={k}: {n:,}" for k, n in run["hops"].items())
            pos = ", ".join(f"{p} {v['rows'] / v['concepts']:.1f}" for p, v in run["by_pos"].items())
            print(f"{setting:<8}{probe:<12}{families}")
            print(f"{'':<20}hops: {hops}; rows per concept by POS: {pos}; topped-up rows: {run['random_fill_rows']:,}")


def print_eligibility(counts: dict) -> None:
    print("\n== eligible concepts (measured on the cached graphs)")
    for source, items in counts.items():
        for name, value in items.items():
            text = ", ".join(f"{k} {v:,}" for k, v in value.items()) if isinstance(value, dict) else f"{value:,}"
            print(f"{source:<8}{name:<48}{text}")


def profile(probe: str, setting: str, top: int) -> None:
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
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def baseline(rev: str, repeats: int) -> None:
    """The paper preset's five builds as ``probes build --probe all`` does them (``child_together``), by this tree
    and by ``rev`` (a temporary git worktree), alternately ``repeats`` times: the median of each, their ratio and
    peak memory (summed over the processes).

    Each repeat runs every configuration twice: once timed with no memory sampler, once with it for the memory. The
    sampler reads /proc smaps of every process 20 times a second, 6.5-7 s of a core over a two-process build, which
    on two cores slows the two workers it competes with (13.5 s against 15.4-16.0 s for this tree's five sets on
    two processes, 2026-11-27) but not a one-process build, whose sampler has the second core to itself."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        other = Path(folder) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(other), rev], cwd=REPO, check=True,
                       capture_output=True)  # fmt: skip
        try:
            configurations = (("this tree", REPO, "1"), ("this tree, --workers 2", REPO, "2"), (rev, other, "1"))
            runs: dict[str, list[dict]] = {name: [] for name, _, _ in configurations}
            sampled: dict[str, list[dict]] = {name: [] for name, _, _ in configurations}
            for repeat in range(repeats):
                for name, root, workers in configurations:
                    runs[name].append(run_child("together", "paper", workers, "0", root=root))
                    sampled[name].append(run_child("together", "paper", workers, "1", root=root))
                    print(
                        f"{name} run {repeat + 1}: {runs[name][-1]['work_s']:.1f} s "
                        f"({sampled[name][-1]['work_s']:.1f} s with the memory sampler)",
                        file=sys.stderr,
                    )
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=REPO, check=False)
    info = machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores; {info['date']}; load before: {os.getloadavg()[0]:.2f}")
    medians = {}
    for name, reps in runs.items():
        medians[name] = statistics.median(run["work_s"] for run in reps)
        peak = max(run["rss_peak_mb"] for run in sampled[name])
        pss = max(run["pss_peak_mb"] for run in sampled[name])
        rows = reps[0]["rows"]
        print(f"  {name:<22} paper preset, five probes as `probes build` does: {medians[name]:6.1f} s (median of "
              f"{len(reps)}; {statistics.median(run['work_s'] for run in sampled[name]):.1f} s with the memory "
              f"sampler), peak {peak:,.0f} MB RSS / {pss:,.0f} MB PSS, summed over its processes, "
              f"{rows:,} questions")  # fmt: skip
    for name in medians:
        if name != rev:
            print(f"  ratio {name} / {rev}: {medians[name] / medians[rev]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", default="full,default", help="comma-separated: full, default")
    parser.add_argument("--probes", default=",".join(PROBES), help="comma-separated probes (default: all five)")
    parser.add_argument("--repeats", type=int, default=1, help="fresh subprocesses per probe and setting (median)")
    parser.add_argument("--no-together", action="store_true", help="skip the all-five-in-one-process run")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    parser.add_argument("--profile", metavar="PROBE", help="cProfile one build (setting: the first of --settings)")
    parser.add_argument("--top", type=int, default=20, help="functions shown by --profile")
    parser.add_argument("--baseline", metavar="REV", help="time the paper preset here and at git REV, same run")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("WORKBENCH_HOME", str(REPO / "workspace"))
    settings = [part.strip() for part in args.settings.split(",") if part.strip()]
    probes = [part.strip() for part in args.probes.split(",") if part.strip()]

    if args.child:
        import warnings

        warnings.simplefilter("ignore")
        kind, *rest = args.child
        if kind == "build":
            report = child_build(*rest)
        elif kind == "together":
            report = child_together(*rest)
        else:
            report = child_eligibility()
        print(json.dumps(report))
        return
    if args.profile:
        profile(args.profile, settings[0], args.top)
        return
    if args.baseline:
        ensure_caches()
        baseline(args.baseline, args.repeats)
        return

    load_before = os.getloadavg()
    ensure_caches()
    results: dict[str, dict[str, dict]] = {}
    together: dict[str, dict] = {}
    for setting in settings:
        results[setting] = {}
        for probe in probes:
            reps = []
            for repeat in range(args.repeats):
                reps.append(run_child("build", probe, setting))
                print(
                    f"{setting} {probe} run {repeat + 1}: build {reps[-1]['build_s']:.2f} s, "
                    f"peak {reps[-1]['rss_peak_mb']:,.0f} MB",
                    file=sys.stderr,
                )
            results[setting][probe] = median_run(reps)
        if setting in ("full", "paper") and not args.no_together and set(probes) == set(PROBES):
            together[setting] = run_child("together", setting)
            print(f"{setting} together: {together[setting]['work_s']:.2f} s", file=sys.stderr)
    eligibility = run_child("eligibility")

    info = machine()
    info["loadavg_before"] = [round(x, 2) for x in load_before]
    info["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    verdicts = {}
    if args.json:
        for setting in settings:
            runs = results[setting]
            verdicts[setting] = {
                "sum_seconds": sum(r["load_s"] + r["build_s"] for r in runs.values()),
                "max_peak_mb": max(r["rss_peak_mb"] for r in runs.values()),
            }
    else:
        print(
            f"machine: {info['cpu']}, {info['cores']} cores, {info['ram_gib']} GiB RAM; Python {info['python']}, "
            f"polars {info['polars']}, nltk {info['nltk']}; {info['date']}"
        )
        print(
            f"load average (1/5/15 min) before: {info['loadavg_before']}, after: {info['loadavg_after']}"
            + ("   WARNING: other work was running; timings are inflated" if info["loadavg_before"][0] > 0.7 else "")
        )
        print(
            f"times: median of {args.repeats} fresh subprocess(es) per row; "
            "memory: peak RSS (ru_maxrss) of that subprocess"
        )
        for setting in settings:
            verdicts[setting] = print_timing(setting, results[setting], together.get(setting))
        print_table4(results)
        print_breakdowns(results)
        print_eligibility(eligibility)
    if "full" in verdicts and set(probes) == set(PROBES):
        v = verdicts["full"]
        v["targets"] = {
            "seconds_sum_under_60": v["sum_seconds"] < TARGET_SECONDS,
            "peak_each_under_2GB": v["max_peak_mb"] < TARGET_MB,
        }
        if "full" in together:
            v["targets"]["seconds_together_under_60"] = together["full"]["work_s"] < TARGET_SECONDS
            v["targets"]["peak_together_under_2GB"] = together["full"]["rss_peak_mb"] < TARGET_MB
        if not args.json:
            print("\n== targets (full setting)")
            for name, met in v["targets"].items():
                print(f"  {name:<28}{'met' if met else 'NOT met'}")
    if args.json:
        print(
            json.dumps(
                {
                    "machine": info,
                    "results": results,
                    "together": together,
                    "eligibility": eligibility,
                    "verdicts": verdicts,
                    "paper_table4": TABLE4,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
