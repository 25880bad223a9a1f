"""What a reader sees: the panels' toggles and the published site.

``widgets`` (``toggle_latency``): how long a toggle change takes to update every view of the panels (target < 200 ms).

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

``publish`` (``site``): `workbench publish` on a 50,000-question prediction set -- build time, site size, and how
fast the page opens from file:// in Chromium (heat map drawn, a cell's questions listed, a concept's cluster shown).

The questions are SYNTHETIC (seeded): 10,000 made-up concepts x 5 questions over 3 hops and 5 distractor cells,
5 choices of WordNet-like length each, scored by seeded random scores (``synthetic_predictions``, above).
The site's cost depends on the number of rows, cells, concepts and the text's length, not on what the words are.
With ``wordnet`` the concepts are named after a seeded sample of the workspace's WordNet noun and verb synsets,
so that the site carries the taxonomy atlas (and the timing clicks a node of it). Cases ``publish``, ``publish-atlas``
(``wordnet=true``) and ``publish-small`` (5,000 questions).
"""

import statistics
import tempfile
import time
from pathlib import Path

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


# --- the published site ----------------------------------------------------------------------------------------

CELLS = (("random", 0), ("sister", 1), ("sister", 2), ("isa_down", 1), ("isa_up", 1))


def synthetic_probes(questions: int, per_concept: int = 5, seed: int = 0, wordnet: bool = False) -> pl.DataFrame:
    """``questions`` seeded made-up questions in ``PROBE_SCHEMA``: clusters of ``per_concept``, 5 choices each;
    their concepts made up, or (``wordnet``) a seeded sample of WordNet noun and verb synsets."""
    from workbench.schema import PROBE_SCHEMA, conform

    rng = np.random.default_rng(seed)
    n = questions
    concept = np.arange(n) // per_concept
    names = [f"c{c:05d}.n.01" for c in range(concept[-1] + 1)]
    if wordnet:
        from workbench.knowledge import load_graph

        synsets = load_graph("wordnet").concepts.filter(pl.col("pos").is_in(["n", "v"]))["name"]
        names = synsets.sample(len(names), seed=seed).to_list()
    cell = rng.integers(0, len(CELLS), n)
    gloss = " ".join(["something", "defined", "as", "a", "kind", "of", "thing", "that", "is", "used"])
    choices = [[f"choice {i}-{c}, defined as '{gloss} {c}'" for c in range(5)] for i in range(n)]
    frame = pl.DataFrame({
        "id": [f"q{i:06d}" for i in range(n)],
        "probe": "hypernymy", "source": "synthetic", "split": "test",
        "cluster_id": [f"hypernymy:{names[c]}" for c in concept],
        "concept": [names[c] for c in concept], "pos": "n", "word": "word",
        "context": "a made-up sentence about the word", "template": "t0",
        "question": [f"In 'a made-up sentence {i}', the word 'word' is best described as a type of" for i in range(n)],
        "choices": choices, "answer": rng.integers(0, 5, n), "gold_concept": "gold.n.01",
        "hops": rng.integers(1, 4, n), "chain": [["c.n.01", "gold.n.01"]] * n,
        "distractor_family": [CELLS[k][0] for k in cell], "distractor_depth": [CELLS[k][1] for k in cell],
        "distractor_concepts": [["d.n.01"] * 4] * n, "n_random_fill": 0,
    })  # fmt: skip
    return conform(frame, PROBE_SCHEMA)


def open_in_chromium(index: Path) -> dict[str, float]:
    """Seconds from navigation to: heat map drawn, a cell's questions listed, a concept's cluster shown."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=flags)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        start = time.perf_counter()
        page.goto(index.as_uri())
        cells = page.locator("#wb-heatmap svg g.mark-rect path")
        cells.first.wait_for(timeout=120_000)
        drawn = time.perf_counter() - start
        start = time.perf_counter()
        cells.nth(4).click()
        page.wait_for_selector("#wb-questions-caption:has-text(' questions in ')", timeout=120_000)
        listed = time.perf_counter() - start
        start = time.perf_counter()
        page.locator("#wb-questions a.wb-concept-link").first.click()
        page.wait_for_selector(".wb-concept-name", timeout=120_000)
        concept = time.perf_counter() - start
        times = {"heat map drawn": drawn, "cell listed": listed, "concept shown": concept}
        noun = page.locator('#wb-atlas svg g.mark-rect path[aria-label*="node: noun;"]')
        if noun.count():
            start = time.perf_counter()
            noun.first.click()
            page.wait_for_selector("#wb-atlas-caption:has-text('concepts below noun')", timeout=120_000)
            times["atlas zoomed, concepts listed"] = time.perf_counter() - start
        browser.close()
    return times


def site(questions: int = 50_000, models: int = 1, n_boot: int = 1000, wordnet: bool = False) -> list[dict]:
    """One round: ``publish`` (wall and CPU seconds, the site's size), then the page opened in Chromium; with
    ``wordnet``, the atlas section alone first."""
    from workbench.site import atlas_section, publish

    probes = synthetic_probes(questions, wordnet=wordnet)
    preds = pl.concat([
        synthetic_predictions(probes, seed=m).with_columns(model=pl.lit(f"synthetic-{m}"), fingerprint=pl.lit(str(m)))
        for m in range(models)
    ])  # fmt: skip
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if wordnet:  # the atlas section alone (publish computes it too)
            start, start_cpu = time.perf_counter(), time.process_time()
            section = atlas_section(preds, n_boot=n_boot)
            rows.append({"measure": "atlas section alone", "seconds": time.perf_counter() - start,
                         "cpu_s": time.process_time() - start_cpu, "nodes": len(section.data["atlas"]["nodes"]),
                         "files": len(section.files)})  # fmt: skip
        start, start_cpu = time.perf_counter(), time.process_time()
        index = publish(preds, Path(tmp) / "site", n_boot=n_boot)
        build, cpu = time.perf_counter() - start, time.process_time() - start_cpu  # cpu: all of this process's threads
        files = [path for path in index.parent.rglob("*") if path.is_file()]
        largest = max(files, key=lambda path: path.stat().st_size)
        rows.append({"measure": f"publish, n_boot={n_boot}", "prediction_rows": preds.height, "seconds": build,
                     "cpu_s": cpu, "files": len(files), "site_mb": sum(path.stat().st_size for path in files) / 1e6,
                     "index_kb": index.stat().st_size / 1e3, "largest": str(largest.relative_to(index.parent)),
                     "largest_mb": largest.stat().st_size / 1e6})  # fmt: skip
        rows += [
            {"measure": f"Chromium: {name}", "seconds": seconds} for name, seconds in open_in_chromium(index).items()
        ]
    return rows
