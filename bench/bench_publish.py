"""Benchmark: `workbench publish` on a 50,000-question prediction set -- build time, site size, and how fast the
page opens from file:// in Chromium (heat map drawn, a cell's questions listed, a concept's cluster shown).

The questions are SYNTHETIC (seeded): 10,000 made-up concepts x 5 questions over 3 hops and 5 distractor cells,
5 choices of WordNet-like length each, scored by seeded random scores (``bench_widgets.synthetic_predictions``).
The site's cost depends on the number of rows, cells, concepts and the text's length, not on what the words are.
With ``wordnet`` the concepts are named after a seeded sample of the workspace's WordNet noun and verb synsets,
so that the site carries the taxonomy atlas (and the timing clicks a node of it). Cases ``publish``, ``publish-atlas``
(``wordnet=true``) and ``publish-small`` (5,000 questions).
"""

import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from bench_widgets import synthetic_predictions

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
