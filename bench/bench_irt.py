"""How well a few questions estimate a model's accuracy on the whole set (issue 61, point 5), on a SIMULATED
population: 2PL answers of M members to I questions in hops x distractor cells. The members are split into K folds;
each fold is held out in turn, the IRT model is fitted on the others, and each held-out member's full-set accuracy
is estimated from N questions chosen four ways: random (plain mean), cell-stratified random (cells weighted by size),
tinyBenchmarks-style anchors (their weighted accuracy) and adaptive (maximum Fisher information, the IRT estimate).
Prints the mean absolute error per way and N, and the fit time. Self-contained: imports only the workbench.

    python bench/bench_irt.py --members 120 --questions 400 --folds 4 --sizes 25,50,100,200
"""

import argparse
import time

import numpy as np
import polars as pl

from workbench.irt import fit_irt
from workbench.irt.adaptive import adaptive
from workbench.irt.anchors import anchor_estimate, anchors
from workbench.irt.responses import RESPONSE_SCHEMA, item_key
from workbench.schema import PROBE_SCHEMA, empty


def population(members: int, questions: int, seed: int) -> tuple[pl.DataFrame, np.ndarray]:
    """Probe rows of ``questions`` cells (hops 1-3 x random/sister) and members x questions 0/1 answers."""
    rng = np.random.default_rng(seed)
    hops = rng.integers(1, 4, questions)
    family = rng.choice(["random", "sister"], questions)
    b = -1.0 + 0.5 * hops + 0.8 * (family == "sister") + rng.normal(0, 0.7, questions)
    a = rng.uniform(0.5, 2.0, questions)
    theta = rng.normal(size=members)
    right = rng.random((members, questions)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))
    probes = pl.concat([empty(PROBE_SCHEMA), pl.DataFrame({
        "id": [f"q{i}" for i in range(questions)], "probe": "hypernymy", "context": "", "answer": 0,
        "question": [f"question {i}?" for i in range(questions)], "choices": [["a", "b", "c", "d"]] * questions,
        "hops": hops, "distractor_family": family, "distractor_depth": 0,
    })], how="diagonal_relaxed")  # fmt: skip
    return probes, right


def answers(probes: pl.DataFrame, right: np.ndarray, rows: np.ndarray) -> pl.DataFrame:
    keys = probes.select(item_key(probes))[:, 0]
    return pl.DataFrame({
        "member": np.repeat([f"m{m}" for m in rows], len(probes)), "label": np.repeat([f"m{m}" for m in rows],
        len(probes)), "source": "simulated", "item": np.tile(keys.to_numpy(), len(rows)), "id": np.tile(probes["id"],
        len(rows)), "probe": "hypernymy", "choices": 4, "hops": np.tile(probes["hops"], len(rows)),
        "distractor_family": np.tile(probes["distractor_family"], len(rows)), "distractor_depth": 0, "concept": "",
        "word": "", "question": "", "right": right[rows].ravel(),
    }, schema=RESPONSE_SCHEMA)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=120)
    parser.add_argument("--questions", type=int, default=400)
    parser.add_argument("--folds", type=int, default=4)
    parser.add_argument("--sizes", default="25,50,100,200")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    probes, right = population(args.members, args.questions, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    folds = np.array_split(rng.permutation(args.members), args.folds)
    cells = probes.select("hops", "distractor_family").with_row_index("row")
    errors: dict[tuple[str, int], list[float]] = {}
    fit_times = []
    for fold in folds:
        train = np.setdiff1d(np.arange(args.members), fold)
        started = time.perf_counter()
        fit = fit_irt(answers(probes, right, train), held_out=0)
        fit_times.append(time.perf_counter() - started)
        tiny = {n: anchors(fit, probes, n, seed=args.seed) for n in sizes}
        for member in fold:
            full = right[member].mean()
            truth = probes.with_columns(correct=pl.Series(right[member]))
            for n in sizes:
                pick = rng.choice(args.questions, n, replace=False)
                errors.setdefault(("random", n), []).append(abs(right[member, pick].mean() - full))
                strata = cells.group_by("hops", "distractor_family").agg("row", size=pl.len())
                estimate = 0.0
                for rows, size in strata.select("row", "size").iter_rows():
                    take = rng.choice(rows, max(1, round(n * size / args.questions)), replace=False)
                    estimate += right[member, take].mean() * size / args.questions
                errors.setdefault(("stratified", n), []).append(abs(estimate - full))
                anchor = anchor_estimate(tiny[n], truth)["accuracy"][0]
                errors.setdefault(("anchors", n), []).append(abs(anchor - full))
                by_id = dict(zip(probes["id"], right[member], strict=True))
                result = adaptive(fit, probes, lambda rows: rows.with_columns(correct=rows["id"].replace_strict(by_id)),
                                  n)  # fmt: skip
                errors.setdefault(("adaptive", n), []).append(abs(result.estimate["accuracy"][0] - full))
    print(f"simulated 2PL population: {args.members} members x {args.questions} questions, {args.folds} folds; "
          f"fit {np.mean(fit_times):.1f} s on average")  # fmt: skip
    print("| way | " + " | ".join(f"N = {n}" for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for way in ("random", "stratified", "anchors", "adaptive"):
        print(f"| {way} | " + " | ".join(f"{np.mean(errors[way, n]):.3f}" for n in sizes) + " |")


if __name__ == "__main__":
    main()
