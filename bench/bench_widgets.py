"""Benchmark: how long a toggle change takes to update every view of the panels (target < 200 ms).

The full definitions probe (``ProbeSpec("definitions")`` on the full WordNet graph, read from
``$WORKBENCH_HOME/probes/definitions`` when there, built otherwise) with cached predictions in memory.
Panels: probe controls (counts + example questions), cluster browser (dog.n.01), results dashboard
(heat map, cluster bars with 50 bootstrap resamples, drill-down table). Panel observers run
synchronously, so when a toggle's setter returns every view holds its new value: that is what we time.

Predictions: ``--predictions FILE`` reads real ones (``workbench score ... --out FILE``); without it the
benchmark SYNTHESISES predictions (seeded random choice scores, ``model="synthetic"``): the views cost
the same whatever the scores are, and scoring 49k questions with MiniLM takes many minutes on 2 cores.

Baseline, measured in the same run: building the same four views from scratch (new panels) for the
same state, i.e. what a page without shared state and observers would redo on every change.

    WORKBENCH_HOME=workspace .venv/bin/python bench/bench_widgets.py [--repeats 5] [--predictions FILE]
"""

import argparse
import os
import platform
import statistics
import time

import numpy as np
import polars as pl


def synthetic_predictions(probes: pl.DataFrame, seed: int = 0) -> pl.DataFrame:
    """Seeded random scores for every choice: a stand-in for cached predictions (plainly not a model)."""
    from workbench.schema import PREDICTION_SCHEMA, conform

    rng = np.random.default_rng(seed)
    sizes = probes["choices"].list.len().to_numpy()
    flat = rng.random(int(sizes.sum()))
    scores = pl.Series("scores", np.split(flat, np.cumsum(sizes)[:-1])).cast(pl.List(pl.Float64))
    frame = probes.with_columns(scores=scores).with_columns(pred=pl.col("scores").list.arg_max().cast(pl.Int64))
    frame = frame.with_columns(
        correct=pl.col("pred") == pl.col("answer"), model=pl.lit("synthetic"), fingerprint=pl.lit("synthetic"),
        scorer=pl.lit("synthetic"), rule=pl.lit("random"), control=pl.lit("none"),
    )  # fmt: skip
    return conform(frame, PREDICTION_SCHEMA)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--predictions", default=None)
    args = parser.parse_args()

    from workbench.knowledge import load_graph
    from workbench.paths import workspace
    from workbench.probes import ProbeSpec, build_probes
    from workbench.probes.formats import read_probes
    from widgets import ClusterBrowser, ProbeControls, ResultsDashboard, Session

    graph = load_graph("wordnet")
    folder = workspace() / "probes" / "definitions"
    probes = read_probes(folder) if folder.is_dir() else build_probes(ProbeSpec("definitions"), graph)
    preds = pl.read_parquet(args.predictions) if args.predictions else synthetic_predictions(probes)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; "
          f"{probes.height:,} definitions questions, {preds.height:,} predictions ({'file' if args.predictions else 'synthetic'})")  # fmt: skip

    session = Session(graph=graph, probes=probes, predictions=preds, concept="dog.n.01")
    controls, browser, board = ProbeControls(session), ClusterBrowser(session), ResultsDashboard(session)
    toggles = [
        ("split test", lambda: setattr(controls.split, "value", "test")),
        ("split all", lambda: setattr(controls.split, "value", "")),
        ("depth 1-1", lambda: setattr(controls.depths, "value", (1, 1))),
        ("depth 0-3", lambda: setattr(controls.depths, "value", (0, 3))),
        ("families sister", lambda: setattr(controls.families, "value", ("sister",))),
        ("families all", lambda: setattr(controls.families, "value", tuple(controls.families.options))),
    ]
    timings: dict[str, list[float]] = {name: [] for name, _ in toggles}
    cold: list[float] = []
    for _ in range(args.repeats):
        for name, change in toggles:
            started = time.perf_counter()
            change()
            timings[name].append(time.perf_counter() - started)
        started = time.perf_counter()
        ProbeControls(session), ClusterBrowser(session), ResultsDashboard(session)
        cold.append(time.perf_counter() - started)
    assert board.heat.spec is not None and "dog.n.01" in browser.summary.value
    every = [t for values in timings.values() for t in values]
    print("| toggle change | median ms | max ms |\n|---|---|---|")
    for name, values in timings.items():
        print(f"| {name} | {1000 * statistics.median(values):.0f} | {1000 * max(values):.0f} |")
    warm, base = statistics.median(every), statistics.median(cold)
    print(f"| every change (n={len(every)}) | {1000 * warm:.0f} | {1000 * max(every):.0f} |")
    print(f"| baseline: rebuild all views from scratch | {1000 * base:.0f} | {1000 * max(cold):.0f} |")
    print(f"ratio toggle/rebuild: {warm / base:.2f}; target 200 ms: {'met' if max(every) < 0.2 else 'NOT met'} (max {1000 * max(every):.0f} ms)")


if __name__ == "__main__":
    main()
