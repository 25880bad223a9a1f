"""How well a few questions estimate a model's accuracy on the whole set (issue 61, point 5).

Three measurements, each a case of bench/cases.py:

- ``population``: leave-one-FAMILY-out over the workbench's own population (``make irt-population``: its sweeps and
  the lexical baselines' predictions in the workspace). Each family (a model, its controls and its checkpoints:
  ``workbench.irt.responses.FAMILY``) is held out in turn, the 2PL is fitted on the other families' members, and
  each held-out member's accuracy on every question of the fit is estimated from N of them, chosen four ways.
- ``simulated``: the same on a simulated 2PL population (known truth), members held out in folds.
- ``served``: the served SmolLM2 (llama-cpp-python's server) asked adaptively against asked everything: requests sent
  (counted as they go out) and the estimate against the full run's accuracy, on a fit without SmolLM2's family.

The four ways: random (the plain mean of N random questions), cell-stratified random (N shared out over the hops x
distractor-family cells by size, the cells' means weighted by size), tinyBenchmarks-style anchors (``probes tiny``,
their weighted accuracy) and adaptive (``score --adaptive``: maximum Fisher information, the IRT estimate). Each
row gives the mean absolute error of the estimate against the full-set accuracy over the held-out members, and the
mean Pearson r of the estimated hops x distractor-family profile with the full one (a cell the way asked nothing of
takes the way's overall estimate; members whose full profile is flat are left out of r). On adaptive rows, how many
random questions give the same error (interpolated on log N, log error between the measured sizes, extrapolated
from the last two beyond them) and what share that is, and the share of held-out members whose full-set accuracy
lies inside the estimate's 95 % interval.
"""

import time
from collections.abc import Callable

import numpy as np
import polars as pl

from workbench.irt import fit_irt
from workbench.irt.adaptive import adaptive
from workbench.irt.anchors import anchors
from workbench.irt.responses import FAMILY, RESPONSE_SCHEMA, item_key, responses
from workbench.schema import PROBE_SCHEMA, empty

WAYS = ("random", "stratified", "anchors", "adaptive")
CELL = ("hops", "distractor_family")


def simulated(members: int = 120, questions: int = 400, folds: int = 4, sizes: tuple = (25, 50, 100, 200),
              seed: int = 0) -> list[dict]:  # fmt: skip
    """2PL answers of ``members`` to ``questions`` (hops 1-3 x random/sister cells); members held out in folds."""
    probes, right = _simulated(members, questions, seed)
    rng = np.random.default_rng(seed + 1)
    groups = np.array_split(rng.permutation(members), folds)
    names = np.array([f"m{m}" for m in range(members)])
    started = time.perf_counter()
    errors = []
    for group in groups:
        train = np.setdiff1d(np.arange(members), group)
        fit = fit_irt(_answers(probes, right, train), held_out=0)
        errors += _held_out(fit, probes, {names[m]: right[m] for m in group}, sizes, rng, seed)
    return _rows(errors, sizes, f"simulated 2PL: {members} members x {questions} questions, {folds} folds of "
                 f"members held out; {time.perf_counter() - started:.0f} s in all")  # fmt: skip


def population(sweeps: tuple = ("irt", "irt-static", "irt-smollm2"), predictions: tuple = ("irt/baselines",),
               sizes: tuple = (25, 50, 100, 200), seed: int = 0) -> list[dict]:  # fmt: skip
    """Leave-one-family-out over the workspace's population: ``sweeps`` under ``<workspace>/sweeps`` and prediction
    files or folders under ``<workspace>`` (those that exist; the rest is named in the first row)."""
    answers, probes, missing = _population(sweeps, predictions)
    members = answers.group_by("member", maintain_order=True).agg(pl.col("label").first()).with_columns(
        family=pl.col("label").str.extract(FAMILY)
    )  # fmt: skip
    families = members["family"].unique(maintain_order=True).to_list()
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    errors, fits = [], []
    for family in families:
        held = members.filter(pl.col("family") == family)["member"]
        begun = time.perf_counter()
        fit = fit_irt(answers.filter(~pl.col("member").is_in(held.implode())), held_out=0)
        fits.append(time.perf_counter() - begun)
        truth = _truth(answers.filter(pl.col("member").is_in(held.implode())), probes)
        errors += _held_out(fit, probes, truth, sizes, rng, seed)
    sizes_of = members.group_by("family", maintain_order=True).len()
    make = ", ".join(f"{name} {count}" for name, count in sizes_of.iter_rows())
    note = (f"population: {members.height} members in {len(families)} families ({make}), {probes.height} questions"
            f" answered by all; a fit {np.mean(fits):.0f} s on average, {time.perf_counter() - started:.0f} s in all"
            + (f"; not in the workspace: {', '.join(missing)}" if missing else ""))  # fmt: skip
    return _rows(errors, sizes, note)


def served(sizes: tuple = (25, 50, 100), questions: int | None = None, timeout: float = 600,
           sweeps: tuple = ("irt", "irt-static", "irt-smollm2"), predictions: tuple = ("irt/baselines",),
           port: int = 8131, threads: int = 1) -> list[dict]:  # fmt: skip
    """The served SmolLM2 asked adaptively (N of ``sizes``) and asked every question of the fit (``questions``: a
    sample of whole clusters of them, for a loaded machine), no cache: requests sent and accuracy, on a 2PL fitted
    without the smollm2 family. The server is connected once, as ``score --adaptive`` connects it (its echo checked
    once, not before each question). ``timeout``: seconds a request may take (an echo request on a loaded machine
    is slow)."""
    from workbench.probes.select import sample_clusters
    from workbench.scoring import score
    from workbench.scoring import served as serving
    from workbench.scoring.served import Endpoint

    answers, probes, _ = _population(sweeps, predictions)
    probes = sample_clusters(probes, questions, 0)
    kept = answers.filter(~pl.col("label").str.starts_with("smollm2"))
    fit = fit_irt(kept, held_out=0)
    sent = [0]
    request = serving._request

    def counted(*args, **kwargs):  # every request the scorer sends goes through serving._request: count them
        sent[0] += 1
        return request(*args, **kwargs)

    serving._request = counted
    process = _start_server(port, threads)
    endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", bos="<|im_start|>", concurrency=1, timeout=timeout)
    try:
        server = serving.connect(endpoint, "causal")  # once, as `score --adaptive` connects: a listing, not counted
        rows = []
        for n in sizes:
            sent[0] = 0
            begun = time.perf_counter()
            result = adaptive(fit, probes, lambda rows: score(rows, server, "causal", cache=False, progress=False),
                              n)  # fmt: skip
            rows.append({"measure": f"adaptive, N = {n}", "questions": n, "requests": sent[0],
                         "seconds": time.perf_counter() - begun, "accuracy": result.estimate["accuracy"][0],
                         "lo": result.estimate["lo"][0], "hi": result.estimate["hi"][0]})  # fmt: skip
        sent[0] = 0
        begun = time.perf_counter()
        full = score(probes, server, "causal", cache=False, progress=False)
        rows.append({"measure": "full run", "questions": full.height, "requests": sent[0],
                     "seconds": time.perf_counter() - begun, "accuracy": full["correct"].mean()})  # fmt: skip
    finally:
        serving._request = request
        process.terminate()
        process.wait()
    for row in rows[:-1]:
        row |= {"error": abs(row["accuracy"] - rows[-1]["accuracy"]), "requests ratio": row["requests"] / sent[0]}
    rows.append({"measure": f"fit without smollm2: {fit.members.height} members, {probes.height} questions"})
    return rows


def _start_server(port: int, threads: int):
    from bench_peers import start_server

    return start_server(port, threads)


def _population(sweeps: tuple, predictions: tuple) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:
    """The population's answers to the questions every member answered, those questions' probe rows, and the
    sources not found in the workspace."""
    from workbench.io import read_predictions
    from workbench.paths import workspace

    home = workspace()
    folders = [home / "sweeps" / name for name in sweeps]
    files = [home / name for name in predictions]
    missing = [str(path) for path in [*folders, *files] if not path.exists()]
    folders, files = [p for p in folders if p.exists()], [p for p in files if p.exists()]
    answers = responses(predictions=files, sweeps=folders)
    members = answers["member"].n_unique()
    common = answers.group_by("item").len().filter(pl.col("len") == members)["item"]
    answers = answers.filter(pl.col("item").is_in(common.implode()))
    first = sorted((folders[0] / "predictions").glob("*.parquet"))[0]
    probes = read_predictions(first)
    probes = probes.filter(item_key(probes).is_in(common.implode())).select(list(PROBE_SCHEMA))
    return answers, probes, missing


def _truth(answers: pl.DataFrame, probes: pl.DataFrame) -> dict[str, np.ndarray]:
    """Each member's right/wrong on ``probes``' questions, in their order."""
    order = probes.select(item=item_key(probes)).with_row_index("row")
    out = {}
    for member, part in answers.partition_by("member", as_dict=True).items():
        rows = order.join(part.select("item", "right"), on="item", how="left").sort("row")
        out[member[0]] = rows["right"].to_numpy().astype(bool)
    return out


def _held_out(fit, probes: pl.DataFrame, truth: dict, sizes, rng, seed: int) -> list[dict]:
    """Per held-out member, way and N: the absolute error of the estimated accuracy and the profile's r."""
    cell_of = probes.select(pl.struct(*CELL).rank("dense") - 1)[:, 0].to_numpy()  # cells numbered in sorted order
    cells = [np.flatnonzero(cell_of == c) for c in range(cell_of.max() + 1)]
    order = probes.select(*CELL).unique().sort(*CELL).with_row_index("at")
    keyed = probes.with_row_index("row")
    tiny = {n: keyed.join(anchors(fit, probes, n, seed=seed).select("id", "weight"), on="id") for n in sizes}
    out = []
    for member, right in truth.items():
        full = right.mean()
        profile = np.array([right[rows].mean() for rows in cells])

        def scored(way: str, n: int, rows: np.ndarray, weights: np.ndarray) -> dict:
            estimate = float(np.average(right[rows], weights=weights))
            guess = [np.average(right[rows[cell_of[rows] == c]], weights=weights[cell_of[rows] == c])
                     if (cell_of[rows] == c).any() else estimate for c in range(len(cells))]  # fmt: skip
            return {"member": member, "way": way, "n": n, "error": abs(estimate - full), "r": _r(profile, guess)}

        for n in sizes:
            out.append(scored("random", n, rng.choice(len(right), n, replace=False), np.ones(n)))
            takes = [max(1, round(n * len(rows) / len(right))) for rows in cells]  # at least one of each cell
            rows = np.concatenate([rng.choice(rows, k, replace=False) for rows, k in zip(cells, takes, strict=True)])
            weights = np.concatenate([[len(rows) / k] * k for rows, k in zip(cells, takes, strict=True)])
            out.append(scored("stratified", n, rows, weights))
            out.append(scored("anchors", n, tiny[n]["row"].to_numpy(), tiny[n]["weight"].to_numpy()))
            result = adaptive(fit, probes, _answerer(dict(zip(probes["id"], right, strict=True))), n)
            guess = order.join(result.cells, on=list(CELL), how="left").sort("at")["accuracy"].to_numpy()
            estimate, low, high = (result.estimate[name][0] for name in ("accuracy", "lo", "hi"))
            out.append({"member": member, "way": "adaptive", "n": n, "error": abs(estimate - full),
                        "r": _r(profile, guess), "held": low <= full <= high})  # fmt: skip
    return out


def _answerer(by_id: dict) -> Callable[[pl.DataFrame], pl.DataFrame]:
    return lambda rows: rows.with_columns(correct=rows["id"].replace_strict(by_id, return_dtype=pl.Boolean))


def _r(full: np.ndarray, estimated) -> float:
    """Pearson r of two profiles; NaN where the full one is flat (nothing to correlate with)."""
    estimated = np.asarray(estimated, dtype=float)
    if full.std() == 0 or estimated.std() == 0:
        return float("nan") if full.std() == 0 else 0.0
    return float(np.corrcoef(full, estimated)[0, 1])


def _rows(errors: list[dict], sizes, note: str) -> list[dict]:
    """One row per way and N: the mean absolute error, the mean profile r; on adaptive rows random's equal N."""
    frame = pl.DataFrame(errors, infer_schema_length=None)
    table = frame.group_by("way", "n").agg(
        members=pl.col("member").n_unique(), error=pl.col("error").mean(),
        r=pl.col("r").filter(pl.col("r").is_not_nan()).mean(), held=pl.col("held").mean(),
    )  # fmt: skip
    random = table.filter(pl.col("way") == "random").sort("n")
    rows = [{"measure": note}]
    for way in WAYS:
        for n in sizes:
            row = table.filter(pl.col("way") == way, pl.col("n") == n).row(0, named=True)
            out = {"measure": way, "N": n, "members": row["members"], "error": row["error"], "profile r": row["r"]}
            if way == "adaptive":
                equal = _equal_n(random["n"].to_numpy(), random["error"].to_numpy(), row["error"])
                out |= {"random N for this error": equal, "share of random's N": n / equal,
                        "interval holds the full": row["held"]}  # fmt: skip
            rows.append(out)
    return rows


def _equal_n(sizes: np.ndarray, errors: np.ndarray, error: float) -> float:
    """The N at which random sampling's error (linear in log N, log error) equals ``error``."""
    x, y = np.log(sizes), np.log(errors)
    for i in range(len(x) - 1):
        if y[i] >= np.log(error) >= y[i + 1]:
            break
    else:
        i = 0 if np.log(error) > y[0] else len(x) - 2
    slope = (y[i + 1] - y[i]) / (x[i + 1] - x[i])
    return float(np.exp(x[i] + (np.log(error) - y[i]) / slope)) if slope < 0 else float("nan")


def _simulated(members: int, questions: int, seed: int) -> tuple[pl.DataFrame, np.ndarray]:
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


def _answers(probes: pl.DataFrame, right: np.ndarray, rows: np.ndarray) -> pl.DataFrame:
    keys = probes.select(item_key(probes))[:, 0]
    return pl.DataFrame({
        "member": np.repeat([f"m{m}" for m in rows], len(probes)), "label": np.repeat([f"m{m}" for m in rows],
        len(probes)), "source": "simulated", "item": np.tile(keys.to_numpy(), len(rows)), "id": np.tile(probes["id"],
        len(rows)), "probe": "hypernymy", "choices": 4, "hops": np.tile(probes["hops"], len(rows)),
        "distractor_family": np.tile(probes["distractor_family"], len(rows)), "distractor_depth": 0, "concept": "",
        "word": "", "question": "", "right": right[rows].ravel(),
    }, schema=RESPONSE_SCHEMA)  # fmt: skip


if __name__ == "__main__":
    for line in population():
        print(line)
