"""Inoculation by fine-tuning (SPEC §6; Liu et al. 2019): runs that never lose work.

``inoculate`` continues training a source model on k probe examples for every configuration of a
grid (learning rate, epochs, seed), optionally mixing in original-task examples (add-some), and
scores each trained model on the probe dev set (``S_new``) and the original dev set (``S_orig``).
Per k it selects ``M* = argmax AVG(S_new, S_orig)`` and reports the inoculation cost
``S_orig(before) − S_orig(M*)``.

A run is a folder, written only through ``workbench.io`` (atomic):

- ``config.json``: the resolved settings; a rerun with other fixed settings is refused;
- ``trials.parquet``: one row per finished trial (``TRIALS_SCHEMA``), rewritten after each trial;
  the row ``k=0`` (status ``baseline``) is the source model before inoculation;
- ``trials/<trial>/{probe,orig}.parquet``: that trial's dev predictions;
- ``best/k<k>/``: the checkpoint of the best trial so far for k (``trial.json`` names it);
- ``log.txt``: what happened, including which trials a resumed run skipped.

A killed run resumes where it stopped: finished trials are read back and skipped. Choices that are
made once for the whole run (which k probe examples, which original examples, which dev questions)
use ``data_seed``, so trial k=100 sees the first 100 of the same permutation that k=500 extends.

>>> inoculate("runs/minilm-arc", "probes/hypernymy", "mcqa/arc_easy", ks=(100, 500), out="runs/inoc")  # doctest: +SKIP
"""

import json
import time
from collections.abc import Sequence
from pathlib import Path

import polars as pl
from tqdm.auto import tqdm

from workbench.errors import SpecError, WorkbenchError
from workbench.inoculation.data import read_mcqa_dir
from workbench.inoculation.source import _Log, eval_subset
from workbench.inoculation.train import TrainingError, TrainSpec, accuracy, fit, load_for_training, save_model, score_frame
from workbench.io import write_parquet, write_text
from workbench.probes.formats import read_probes

ADD_SOME = {None: 0, "x1": 1, "x2": 2}
MAX_ADDED = 3000  # add-some never adds more than this many original examples (SPEC §6: "up to 3k")
TRIALS_SCHEMA: dict[str, pl.DataType] = {
    "trial": pl.String(),  # k100-lr3e-05-ep1-s0-x1
    "k": pl.Int64(),  # probe training examples (0: the source model, not trained here)
    "lr": pl.Float64(),
    "epochs": pl.Int64(),
    "seed": pl.Int64(),
    "add_some": pl.String(),  # none, x1, x2
    "n_orig_added": pl.Int64(),  # original-task examples mixed in
    "S_new": pl.Float64(),  # probe dev accuracy
    "S_orig": pl.Float64(),  # original-task dev accuracy
    "avg": pl.Float64(),  # (S_new + S_orig) / 2, what selection maximises
    "final_loss": pl.Float64(),
    "seconds": pl.Float64(),
    "status": pl.String(),  # baseline, ok, diverged
}


def inoculate(
    model_run: str | Path,
    probes_dir: str | Path | Sequence[str | Path],
    orig_dir: str | Path,
    ks: Sequence[int] = (100, 500, 1000, 3000),
    lrs: Sequence[float] = (1e-5, 3e-5),
    epochs: Sequence[int] = (1, 3),
    seeds: Sequence[int] = (0,),
    add_some: str | None = None,
    out: str | Path = "inoculation-run",
    *,
    max_eval: int | None = None,
    batch_size: int = 16,
    max_length: int = 128,
    data_seed: int = 0,
    threads: int | None = None,
    progress: bool = True,
) -> pl.DataFrame:
    """Run (or resume) the inoculation grid into ``out``; return the per-k summary (``summarize``).

    ``model_run``: a ``train-source`` run folder (its ``model/``) or a model folder.
    ``probes_dir``: probe file(s) or folder(s) read by ``read_probes``, with train and dev splits.
    ``orig_dir``: the original task's folder (``dev.jsonl``; ``train.jsonl`` for add-some).
    ``max_eval``: score at most this many dev questions of each set (a fixed sample).
    """
    if add_some not in ADD_SOME:
        raise SpecError(f"add_some={add_some!r} is not allowed; choose one of {list(ADD_SOME)}")
    ks, lrs, epochs, seeds = _grid("ks", ks, int), _grid("lrs", lrs, float), _grid("epochs", epochs, int), _grid("seeds", seeds, int)
    if any(k < 1 for k in ks):
        raise SpecError(f"ks={list(ks)} must all be at least 1")
    model = _model_folder(model_run)
    paths = [probes_dir] if isinstance(probes_dir, (str, Path)) else list(probes_dir)
    probes = pl.concat([read_probes(p) for p in paths])
    probe_train, probe_dev = probes.filter(pl.col("split") == "train"), probes.filter(pl.col("split") == "dev")
    if probe_dev.is_empty():
        raise WorkbenchError(f"the probes {[str(p) for p in paths]} have no dev split; S_new is measured on it (split the probes with workbench probes)")
    if max(ks) > probe_train.height:
        raise WorkbenchError(
            f"k={max(ks)} is larger than the probe train split ({probe_train.height} questions); "
            f"use k up to {probe_train.height} or give more probe training data"
        )
    orig_dev = read_mcqa_dir(orig_dir, ("dev",))
    orig_train = read_mcqa_dir(orig_dir, ("train",)) if add_some else probe_train.clear()
    needed = min(ADD_SOME[add_some] * max(ks), MAX_ADDED)
    if needed > orig_train.height:
        raise WorkbenchError(f"add_some={add_some} needs {needed} original training questions for k={max(ks)}, but {orig_dir} has {orig_train.height}")

    out = Path(out)
    spec_base = TrainSpec(batch_size=batch_size, max_length=max_length, threads=threads)
    config = {
        "model": str(model), "probes": sorted(str(p) for p in paths), "orig": str(orig_dir), "add_some": add_some,
        "max_eval": max_eval, "batch_size": batch_size, "max_length": max_length, "data_seed": data_seed,
        "grid": {"ks": list(ks), "lrs": list(lrs), "epochs": list(epochs), "seeds": list(seeds)},
    }  # fmt: skip
    _check_config(out, config)
    write_text(json.dumps(config, indent=2) + "\n", out / "config.json")
    log = _Log(out / "log.txt")

    probe_pool = probe_train.sample(fraction=1.0, seed=data_seed, shuffle=True)
    orig_pool = orig_train.sample(fraction=1.0, seed=data_seed, shuffle=True)
    probe_eval, orig_eval = eval_subset(probe_dev, max_eval, data_seed), eval_subset(orig_dev, max_eval, data_seed)
    trials = load_run(out) if (out / "trials.parquet").is_file() else pl.DataFrame(schema=TRIALS_SCHEMA)
    done = set(trials["trial"].to_list())
    grid = [(k, lr, ep, seed) for k in ks for lr in lrs for ep in epochs for seed in seeds]
    todo = [cell for cell in grid if trial_id(*cell, add_some) not in done]
    log(f"inoculate: {len(grid)} trials in the grid, {len(grid) - len(todo)} already finished (skipped), {len(todo)} to run; "
        f"probe eval {probe_eval.height}, orig eval {orig_eval.height} questions")  # fmt: skip
    if progress and len(grid) > len(todo):
        tqdm.write(f"resuming {out}: skipping {len(grid) - len(todo)} finished trials")

    def record(row: dict) -> None:
        nonlocal trials
        trials = pl.concat([trials, pl.DataFrame([row], schema=TRIALS_SCHEMA)])
        write_parquet(trials, out / "trials.parquet")

    if "baseline" not in done:
        network, tokenizer = load_for_training(model)
        started = time.time()
        s_new, s_orig = _evaluate(network, tokenizer, probe_eval, orig_eval, out / "trials" / "baseline", spec_base, progress)
        record({"trial": "baseline", "k": 0, "lr": 0.0, "epochs": 0, "seed": 0, "add_some": add_some or "none", "n_orig_added": 0,
                "S_new": s_new, "S_orig": s_orig, "avg": (s_new + s_orig) / 2, "final_loss": None,
                "seconds": time.time() - started, "status": "baseline"})  # fmt: skip
        log(f"baseline (k=0): S_new={s_new:.4f} S_orig={s_orig:.4f}")

    for k, lr, ep, seed in tqdm(todo, desc="trials", unit="trial", disable=not progress):
        name = trial_id(k, lr, ep, seed, add_some)
        n_added = min(ADD_SOME[add_some] * k, MAX_ADDED)
        train = add_some_mix(probe_pool.head(k), orig_pool, n_added, seed=seed)
        spec = TrainSpec(lr=lr, epochs=ep, seed=seed, batch_size=batch_size, max_length=max_length, threads=threads)
        network, tokenizer = load_for_training(model, seed=seed)
        started = time.time()
        row = {"trial": name, "k": k, "lr": lr, "epochs": ep, "seed": seed, "add_some": add_some or "none", "n_orig_added": n_added}
        try:
            history = fit(network, tokenizer, train, spec, progress=progress, desc=name)
        except TrainingError as err:
            log(f"{name}: {err}")
            record({**row, "S_new": None, "S_orig": None, "avg": None, "final_loss": None, "seconds": time.time() - started, "status": "diverged"})
            continue
        s_new, s_orig = _evaluate(network, tokenizer, probe_eval, orig_eval, out / "trials" / name, spec, progress)
        avg = (s_new + s_orig) / 2
        best = trials.filter((pl.col("k") == k) & (pl.col("status") == "ok"))["avg"].max()
        if best is None or avg > best:
            save_model(network, tokenizer, out / "best" / f"k{k}")
            write_text(json.dumps({**row, "S_new": s_new, "S_orig": s_orig, "avg": avg}, indent=2) + "\n", out / "best" / f"k{k}" / "trial.json")
        record({**row, "S_new": s_new, "S_orig": s_orig, "avg": avg, "final_loss": history["loss"][-1],
                "seconds": time.time() - started, "status": "ok"})  # fmt: skip
        log(f"{name}: S_new={s_new:.4f} S_orig={s_orig:.4f} avg={avg:.4f} ({time.time() - started:.0f}s)")
    return summarize(trials)


def trial_id(k: int, lr: float, epochs: int, seed: int, add_some: str | None) -> str:
    """The name of one grid cell, stable across runs: ``k100-lr3e-05-ep1-s0-none``."""
    return f"k{k}-lr{lr:g}-ep{epochs}-s{seed}-{add_some or 'none'}"


def add_some_mix(probe_train: pl.DataFrame, orig_pool: pl.DataFrame, n_orig: int, seed: int = 0) -> pl.DataFrame:
    """The probe examples plus the first ``n_orig`` of ``orig_pool``, shuffled together (``seed``)."""
    if n_orig == 0:
        return probe_train
    added = orig_pool.head(n_orig)
    if added.height < n_orig:
        raise WorkbenchError(f"add-some needs {n_orig} original training questions, only {added.height} are there")
    return pl.concat([probe_train, added.select(probe_train.columns)]).sample(fraction=1.0, seed=seed, shuffle=True)


def load_run(path: str | Path) -> pl.DataFrame:
    """The tidy results of an inoculation run: one ``TRIALS_SCHEMA`` row per finished trial."""
    path = Path(path)
    file = path / "trials.parquet"
    if not file.is_file():
        raise WorkbenchError(f"{path} is not an inoculation run (no trials.parquet); give the --out folder of `workbench inoculate`")
    frame = pl.read_parquet(file)
    missing = [c for c in TRIALS_SCHEMA if c not in frame.columns]
    if missing:
        raise WorkbenchError(f"{file} lacks the columns {missing}; it was not written by this version of inoculate")
    return frame.select(pl.col(c).cast(t) for c, t in TRIALS_SCHEMA.items())


def select(trials: pl.DataFrame) -> pl.DataFrame:
    """Per k > 0, the trial M* with the highest AVG(S_new, S_orig) among finished (status ok) ones.

    Ties go to the smaller learning rate, then fewer epochs, then the smaller seed.
    """
    ok = trials.filter(pl.col("status") == "ok")
    return (
        ok.sort(["k", "avg", "lr", "epochs", "seed"], descending=[False, True, False, False, False])
        .group_by("k", maintain_order=True)
        .first()
    )


def summarize(trials: pl.DataFrame) -> pl.DataFrame:
    """Per k: the selected configuration, its S_new and S_orig, and the cost S_orig(before) − S_orig(M*)."""
    base = trials.filter(pl.col("status") == "baseline")
    if base.is_empty():
        raise WorkbenchError("the run has no baseline row (k=0); rerun inoculate to measure the source model first")
    before_orig, before_new = base["S_orig"][0], base["S_new"][0]
    return select(trials).select(
        "k", "trial", "lr", "epochs", "seed", "add_some", "S_new", "S_orig", "avg",
        S_new_before=pl.lit(before_new), S_orig_before=pl.lit(before_orig), cost=pl.lit(before_orig) - pl.col("S_orig"),
    )  # fmt: skip


def _evaluate(network, tokenizer, probe_eval, orig_eval, folder: Path, spec: TrainSpec, progress: bool) -> tuple[float, float]:
    from workbench.inoculation.train import threads

    with threads(spec.threads):
        probe_pred = score_frame(network, tokenizer, probe_eval, spec.max_length, folder.name, progress)
        orig_pred = score_frame(network, tokenizer, orig_eval, spec.max_length, folder.name, progress)
    write_parquet(probe_pred, folder / "probe.parquet")
    write_parquet(orig_pred, folder / "orig.parquet")
    return accuracy(probe_pred), accuracy(orig_pred)


def _grid(name: str, values: Sequence, kind: type) -> tuple:
    values = tuple(values) if not isinstance(values, (int, float)) else (values,)
    if not values:
        raise SpecError(f"{name} is empty; give at least one value")
    bad = [v for v in values if isinstance(v, bool) or not isinstance(v, (int, float)) or (kind is int and int(v) != v) or v < 0]
    if bad:
        raise SpecError(f"{name} has values {bad} that are not {'whole ' if kind is int else ''}non-negative numbers")
    return tuple(dict.fromkeys(kind(v) for v in values))


def _model_folder(model_run: str | Path) -> Path:
    path = Path(model_run)
    if (path / "model" / "config.json").is_file():
        return path / "model"
    if (path / "config.json").is_file() and not (path / "trials.parquet").is_file():
        return path
    raise WorkbenchError(f"{path} is neither a train-source run (with model/) nor a model folder; run `workbench train-source` first")


def _check_config(out: Path, config: dict) -> None:
    """Refuse to resume ``out`` with different fixed settings (the grid may grow)."""
    file = out / "config.json"
    if not file.is_file():
        return
    old = json.loads(file.read_text(encoding="utf-8"))
    changed = [key for key in config if key != "grid" and old.get(key) != config[key]]
    if changed:
        raise WorkbenchError(
            f"{out} holds a run with other settings ({', '.join(f'{k}: {old.get(k)!r} -> {config[k]!r}' for k in changed)}); "
            "give a new --out folder, or the same settings to resume"
        )
