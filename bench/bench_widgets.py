"""Benchmark: how long a toggle change takes to update every view of the panels (target < 200 ms).

The full definitions probe (``ProbeSpec("definitions")`` on the full WordNet graph, read from
``$WORKBENCH_HOME/probes/definitions`` when there, built otherwise) with cached predictions in memory.
Panels: probe controls (counts + example questions), cluster browser (dog.n.01), results dashboard
(heat map, cluster bars, drill-down table). Panel observers run synchronously, so when a toggle's setter
returns every view holds its new value: that is what we time. The bars' bootstrap intervals (1,000
resamples) follow from a background thread; "intervals ready" times the toggle until they are drawn.

Three passes over the same toggle changes: the dashboard as shipped (aggregates memoised per filter, so
a filter seen before is cheap), the same with the memo off (every filter computed anew: the first-visit
cost), and the memo off waiting for the intervals after each change. Toggles come back to back, so a
bootstrap of the previous change may still run while the next one is timed (as when a visitor clicks fast).

Predictions: ``predictions=FILE`` reads real ones (``workbench score ... --out FILE``); without it the
benchmark SYNTHESISES predictions (seeded random choice scores, ``model="synthetic"``): the views cost
the same whatever the scores are, and scoring 49k questions with MiniLM takes many minutes on 2 cores.

Baseline, measured in the same run: the previous dashboard's synchronous redraw of the same filtered
predictions (altair heat map and cluster bars built and validated anew, bootstrap in line, full drill-down),
with the same 1,000 resamples and with the 50 it had been cut to.
Case ``widgets`` (bench/cases.py); ``--set predictions=FILE`` reads real predictions.
"""

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


def toggle_latency(passes: int = 3, predictions: str | None = None) -> list[dict]:
    """Every toggle change ``passes`` times in each of the three passes, and the baseline redraws: one round."""
    from widgets import ClusterBrowser, ProbeControls, ResultsDashboard, Session
    from workbench import charts, metrics
    from workbench.knowledge import load_graph
    from workbench.paths import workspace
    from workbench.probes import ProbeSpec, build_probes
    from workbench.probes.formats import read_probes
    from workbench.probes.select import select

    graph = load_graph("wordnet")
    folder = workspace() / "probes" / "definitions"
    probes = read_probes(folder) if folder.is_dir() else build_probes(ProbeSpec("definitions"), graph)
    preds = pl.read_parquet(predictions) if predictions else synthetic_predictions(probes)

    def toggles(controls: ProbeControls) -> list:
        return [
            ("split test", lambda: setattr(controls.split, "value", "test")),
            ("split all", lambda: setattr(controls.split, "value", "")),
            ("depth 1-1", lambda: setattr(controls.depths, "value", (1, 1))),
            ("depth 0-3", lambda: setattr(controls.depths, "value", (0, 3))),
            ("families sister", lambda: setattr(controls.families, "value", ("sister",))),
            ("families all", lambda: setattr(controls.families, "value", tuple(controls.families.options))),
        ]

    def run(memo: int, wait: bool) -> tuple[dict[str, list[float]], list[float]]:
        session = Session(graph=graph, probes=probes, predictions=preds, concept="dog.n.01")
        controls, browser, board = ProbeControls(session), ClusterBrowser(session), ResultsDashboard(session, memo=memo)
        board.wait()
        timings: dict[str, list[float]] = {}
        ready: list[float] = []
        for _ in range(passes):
            for name, change in toggles(controls):
                started = time.perf_counter()
                change()
                timings.setdefault(name, []).append(time.perf_counter() - started)
                visited.append(session.where)
                if wait:
                    board.wait()
                    ready.append(time.perf_counter() - started)
        board.wait()
        assert (
            board.heat.spec is not None
            and "dog.n.01" in browser.summary.value
            and "intervals-done" in board.intervals.value
        )
        return timings, ready

    visited: list = []  # the filters the toggles set, in order: the baseline redraws each
    shipped, _ = run(memo=64, wait=False)
    cold, _ = run(memo=0, wait=False)
    waited, ready = run(memo=0, wait=True)
    baseline: dict[int, list[float]] = {1000: [], 50: []}
    for n_boot, values in baseline.items():
        for where in visited:
            chosen = select(preds, where)
            started = time.perf_counter()
            charts.heatmap(chosen, selection=charts.cell_selection()).to_dict()
            charts.cluster_bars(chosen, n_boot=n_boot).to_dict()
            metrics.drilldown(chosen)
            values.append(time.perf_counter() - started)

    def row(name: str, values: list[float]) -> dict:
        return {"measure": name, "median_ms": 1000 * statistics.median(values), "max_ms": 1000 * max(values),
                "n": len(values)}  # fmt: skip

    every = [t for values in shipped.values() for t in values]
    first = [t for values in cold.values() for t in values] + [t for values in waited.values() for t in values]
    return [
        *(row(f"{name} (as shipped)", values) for name, values in shipped.items()),
        row("every change, as shipped (memo on)", every),
        row("every change, memo off (first visit of a filter)", first),
        row("intervals ready (memo off, toggle to whiskers drawn)", ready),
        *(row(f"baseline: previous synchronous redraw, {n} resamples", values) for n, values in baseline.items()),
    ]
