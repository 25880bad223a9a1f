"""Benchmark: `workbench publish` on a 50,000-question prediction set -- build time, site size, and how fast the
page opens from file:// in Chromium (heat map drawn, a cell's questions listed, a concept's cluster shown).

The questions are SYNTHETIC (seeded): 10,000 made-up concepts x 5 questions over 3 hops and 5 distractor cells,
5 choices of WordNet-like length each, scored by seeded random scores (``bench_widgets.synthetic_predictions``).
The site's cost depends on the number of rows, cells, concepts and the text's length, not on what the words are.
With ``--wordnet`` the concepts are named after a seeded sample of the workspace's WordNet noun and verb synsets,
so that the site carries the taxonomy atlas (and the timing clicks a node of it).

    .venv/bin/python bench/bench_publish.py [--questions 50000] [--models 1] [--repeats 3] [--wordnet]
"""

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).parent))
from bench_widgets import synthetic_predictions  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=50_000)
    parser.add_argument("--models", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--wordnet", action="store_true", help="concepts named after WordNet synsets: the atlas")
    args = parser.parse_args()

    from workbench.site import atlas_section, publish

    probes = synthetic_probes(args.questions, wordnet=args.wordnet)
    preds = pl.concat([
        synthetic_predictions(probes, seed=m).with_columns(model=pl.lit(f"synthetic-{m}"), fingerprint=pl.lit(str(m)))
        for m in range(args.models)
    ])  # fmt: skip
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
    print(f"{preds.height:,} prediction rows ({args.questions:,} questions x {args.models} model(s))")
    builds, cpu, opens = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        if args.wordnet:  # the atlas section alone (publish computes it too)
            start, start_cpu = time.perf_counter(), time.process_time()
            section = atlas_section(preds, n_boot=args.n_boot)
            print(f"atlas section: {time.perf_counter() - start:.2f} s wall, {time.process_time() - start_cpu:.2f} s "
                  f"cpu; {len(section.data['atlas']['nodes'])} nodes, {len(section.files)} node files")  # fmt: skip
        for _ in range(args.repeats):
            start, start_cpu = time.perf_counter(), time.process_time()
            index = publish(preds, Path(tmp) / "site", n_boot=args.n_boot)
            builds.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)  # all of this process's threads: steadier on a busy machine
            opens.append(open_in_chromium(index))
        files = [path for path in index.parent.rglob("*") if path.is_file()]
        size = sum(path.stat().st_size for path in files)
        largest = max(files, key=lambda path: path.stat().st_size)
        print(f"site: {len(files)} files, {size / 1e6:.1f} MB; index.html {index.stat().st_size / 1e3:.0f} kB; "
              f"largest {largest.relative_to(index.parent)} {largest.stat().st_size / 1e6:.2f} MB")  # fmt: skip
    print(f"build (publish, n_boot={args.n_boot}): median {statistics.median(builds):.2f} s wall of "
          f"{[round(t, 2) for t in builds]}, {statistics.median(cpu):.2f} s cpu")  # fmt: skip
    for key in opens[0]:
        times = [run[key] for run in opens]
        print(f"{key}: median {statistics.median(times):.2f} s of {[round(t, 2) for t in times]}")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
