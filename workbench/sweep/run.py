"""Running a sweep: each group of units that share a model load is one item of a backend (``local`` or ``ray``,
``workbench.inoculation.backends``), so one model load serves every probe set (and rule) of that model.

A unit writes its prediction file (``<out>/predictions/<unit>.parquet``), then its record
(``<out>/units/<unit>.json``: the key, questions, accuracy, seconds), both atomically; only then does it count as
done. A sweep killed at any point leaves whole files or none, and a rerun scores only the units without a record
of the same key, giving the same files an uninterrupted sweep gives.

>>> summary = run_sweep(plan_sweep("sweep.toml", out="sweeps/s1"))  # doctest: +SKIP
"""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError
from workbench.inoculation.backends import run_local, run_ray
from workbench.io import exclusive, write_parquet, write_text
from workbench.progress import ProgressBar
from workbench.specs import resolve_spec
from workbench.sweep.plan import KEYED, PLAN_SCHEMA, SweepSpec, file_digest, is_done, read_record, record_path

SUMMARY_SCHEMA: dict[str, pl.DataType] = {
    **{name: PLAN_SCHEMA[name] for name in ("unit", "model", "probe_set", "scorer", "rule", "control", "seed")},
    "questions": pl.Int64(),
    "accuracy": pl.Float64(),
    "seconds": pl.Float64(),  # scoring time of this unit (its share of the model load not included)
    "status": pl.String(),  # scored (now), skipped (done before), left (stopped before it ran)
    "file": pl.String(),
}
LOAD_KEYS = ("path", "scorer", "control", "seed", "max_length", "dtype")  # units sharing these share a load
RECORDED = ("model", "path", "origin", "probe_set", "orig", "scorer", "rule", "control", "seed", "asking", "trial")


@dataclass(frozen=True)
class SweepJob:
    """The sweep's job for a backend: load a group's model once, score each of its units, write their files."""

    spec: SweepSpec
    progress: bool = False

    def __call__(self, group: list[dict], threads: int | None = None, stop: threading.Event | None = None) -> dict:
        from workbench.scoring import ASKED_MAX_LENGTH, Endpoint, load_model, score
        from workbench.scoring.asking import Asking

        first, spec, rows = group[0], self.spec, []
        started = time.time()
        asked_any = any(Asking.from_label(unit["asking"]) != Asking() for unit in group if unit.get("asking"))
        if first.get("endpoint"):  # a served model: its server holds the weights, with its own concurrency
            model = Endpoint(**json.loads(first["endpoint"]))
        else:
            model = load_model(first["path"], first["scorer"], first["control"], seed=first["seed"],
                               max_length=first["max_length"] or (ASKED_MAX_LENGTH if asked_any else None),
                               device=spec.device, dtype=first["dtype"])  # fmt: skip
        load_s = time.time() - started
        for unit in group:
            if stop is not None and stop.is_set():
                break
            started = time.time()
            predictions = score(
                questions(unit), model, unit["scorer"], rule=unit["rule"], control=unit["control"],
                seed=unit["seed"], batch_size=spec.batch_size, max_length=unit["max_length"], threads=threads,
                device=None if unit.get("endpoint") else spec.device, dtype=unit["dtype"], cache=spec.cache,
                progress=self.progress, name=unit["model"],
                **asked(unit),
            )  # fmt: skip
            write_parquet(predictions, unit["file"])
            row = {"unit": unit["unit"], "key": unit["key"], "questions": predictions["id"].n_unique(),
                   "accuracy": float(predictions["correct"].mean()), "seconds": time.time() - started,
                   "file_digest": file_digest(unit["file"])}  # fmt: skip
            described = {name: unit[name] for name in RECORDED} | {"inputs": {name: unit[name] for name in KEYED}}
            write_text(json.dumps({**described, **row, "load_seconds": load_s}, indent=1) + "\n",
                       record_path(unit["file"]))  # fmt: skip
            rows.append(row)
        return {"units": rows}


def asked(unit: dict) -> dict:
    """The ``score`` arguments of a unit's way of asking: its fields and, with shots, its probe folder's train split."""
    from workbench.probes.formats import read_probes
    from workbench.scoring.asking import Asking

    if not unit.get("asking"):
        return {}
    way = Asking.from_label(unit["asking"])
    fields = {"format": way.format, "shots": way.shots, "shots_per_question": way.shots_per_question,
              "chat_template": way.chat_template}  # fmt: skip
    if way.shots:
        pool = read_probes(unit["probes"]).filter(pl.col("split") == "train") if Path(unit["probes"]).is_dir() else None
        if pool is None or pool.is_empty():
            raise WorkbenchError(
                f"{unit['unit']}: {unit['asking']} draws its shots from the probe set's train split, and "
                f"{unit['probes']} has none; give a probe folder with a train split"
            )
        fields |= {"shot_pool": pool, "shots_from": unit["probes"]}
    return fields


def questions(unit: dict) -> pl.DataFrame:
    """The questions a unit scores: its probe set's ``split`` (science QA as probe ``mcqa``), at most
    ``max_questions`` of them as whole clusters (``data_seed``, the same for every model)."""
    from workbench.inoculation.data import read_mcqa_dir
    from workbench.probes.formats import read_probes
    from workbench.probes.select import sample_clusters

    if unit["orig"]:
        frame = read_mcqa_dir(unit["probes"], (unit["split"],))
    else:
        frame = read_probes(unit["probes"])
        if unit["split"] is not None:
            frame = frame.filter(pl.col("split") == unit["split"])
    if frame.is_empty():
        raise WorkbenchError(f"{unit['probes']} has no questions in split {unit['split']!r}; choose another split")
    return sample_clusters(frame, unit["max_questions"], unit["data_seed"])


def run_sweep(
    plan: pl.DataFrame,
    spec: SweepSpec | None = None,
    *,
    progress: bool = True,
    on_unit: Callable[[dict], None] | None = None,
    stop: threading.Event | None = None,
    **overrides,
) -> pl.DataFrame:
    """Score every unit of ``plan`` not already done, on the spec's backend; return the summary table.

    Parameters
    ----------
    plan : polars.DataFrame
        From ``plan_sweep`` (``PLAN_SCHEMA``), filtered or not.
    spec : SweepSpec, optional
        How and where to run (``backend``, ``workers``, ``address``, ``batch_size``, ``device``, ``cache``, ...);
        ``**overrides`` are its fields. What is scored (split, sample, ``max_length``, ``dtype``) is in the plan.
    progress : bool
        A progress bar over units (and, on the local backend with one worker, each unit's scoring bar).
    on_unit : callable, optional
        Called in this process with each finished unit's summary row. The rows of a group (the units sharing
        one model load) come together, once the whole group has been scored and written.
    stop : threading.Event, optional
        Set it to stop after the units running now; a rerun finishes the rest.

    Returns
    -------
    polars.DataFrame
        ``SUMMARY_SCHEMA``: one row per unit of the plan, ``status`` scored, skipped or left.

    Examples
    --------
    >>> plan = plan_sweep("sweep.toml", out="sweeps/s1")  # doctest: +SKIP
    >>> run_sweep(plan.filter(pl.col("seed") < 2), backend="ray", workers=4)  # doctest: +SKIP
    """
    spec = resolve_spec(SweepSpec, spec, overrides)
    if plan.is_empty():
        return pl.DataFrame(schema=SUMMARY_SCHEMA)
    out = Path(plan["file"][0]).parent.parent
    results: dict[str, dict] = {}
    with exclusive(out):  # two sweeps into one folder would score the same units twice
        todo = [unit for unit in plan.iter_rows(named=True) if not is_done(unit)]
        groups = plan_groups(todo)
        if progress and len(todo) < plan.height:
            ProgressBar.write(f"resuming {out}: {plan.height - len(todo)} of {plan.height} units already done")
        with ProgressBar(total=len(todo), desc="sweep", unit="unit", disable=not progress) as bar:

            def record(result: dict) -> None:
                for row in result["units"]:
                    results[row["unit"]] = row
                    bar.update(1)
                    if on_unit is not None:
                        on_unit(row)

            if spec.backend == "ray":
                run_ray(groups, SweepJob(spec), record, str(out.resolve() / "ray"), workers=spec.workers, stop=stop,
                        address=spec.address, gpus=spec.trial_gpus, cpus=spec.trial_cpus, threads=spec.threads,
                        device=spec.device)  # fmt: skip
            else:
                job = SweepJob(spec, progress=progress and spec.workers == 1)
                run_local(groups, job, record, workers=spec.workers, stop=stop, threads=spec.threads)
    return _summary(plan, results)


def plan_groups(units: list[dict]) -> list[list[dict]]:
    """``units`` grouped by model load (``LOAD_KEYS``), in the plan's order of first appearance."""
    groups: dict[tuple, list[dict]] = {}
    for unit in units:
        groups.setdefault(tuple(unit[key] for key in LOAD_KEYS), []).append(unit)
    return list(groups.values())


def _summary(plan: pl.DataFrame, results: dict[str, dict]) -> pl.DataFrame:
    rows = []
    for unit in plan.iter_rows(named=True):
        record, status = results.get(unit["unit"]), "scored"
        if record is None:
            done = is_done(unit)
            record = (read_record(record_path(unit["file"])) or {}) if done else {}
            status = "skipped" if done else "left"
        rows.append({**{name: unit[name] for name in SUMMARY_SCHEMA if name in unit}, "status": status,
                     **{name: record.get(name) for name in ("questions", "accuracy", "seconds")}})  # fmt: skip
    return pl.DataFrame(rows, schema=SUMMARY_SCHEMA)
