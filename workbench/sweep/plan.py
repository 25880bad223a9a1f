"""A sweep planned as data: one row per unit (model x probe set x scorer x rule x control x seed), filterable
before it runs, each with the prediction file it writes and the key that says whether that file is up to date.

A unit's ``key`` digests everything its predictions depend on: the model's files (through the workspace's digest
cache, so a known model costs a few ``stat`` calls), the probe files, the scoring settings and the question
sample. A unit is ``done`` when ``<out>/units/<unit>.json`` records the same key and its prediction file is
there; a rerun skips it, so a killed sweep resumes where it stopped.

>>> plan = plan_sweep("sweep.toml", out="sweeps/minilm")  # doctest: +SKIP
>>> run_sweep(plan.filter(pl.col("control") == "none"))  # doctest: +SKIP
"""

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.inoculation.backends import BACKENDS
from workbench.io import check_output
from workbench.schema import SPLITS
from workbench.specs import resolve_spec
from workbench.sweep.grid import endpoint, read_grid

PLAN_SCHEMA: dict[str, pl.DataType] = {
    "unit": pl.String(),  # minilm__hypernymy__similarity-auto__none-s0: the file names
    "model": pl.String(),  # the model's name in the grid (the predictions' model column)
    "path": pl.String(),  # its folder, file or hub name, or a served model's URL
    "endpoint": pl.String(),  # a served model's Endpoint fields (JSON; workbench.scoring.served), else null
    "origin": pl.String(),  # "model" or "checkpoint" (of an inoculation run)
    "probe_set": pl.String(),
    "probes": pl.String(),  # the probe file or folder (science QA folder for orig sets)
    "orig": pl.Boolean(),  # a science QA set: the original task
    "scorer": pl.String(),
    "rule": pl.String(),
    "control": pl.String(),
    "seed": pl.Int64(),
    "asking": pl.String(),  # causal/seq2seq: the way of asking (letters/5-shot/chat), else ""
    "trial": pl.String(),  # a checkpoint's trial.json (k, lr, epochs, seed, add_some) as JSON, else null
    "split": pl.String(),  # the split scored: the spec's split (null: all), or orig_split for science QA
    "max_questions": pl.Int64(),  # the sample (whole clusters, data_seed), the same for every model
    "data_seed": pl.Int64(),
    "max_length": pl.Int64(),
    "dtype": pl.String(),
    "file": pl.String(),  # <out>/predictions/<unit>.parquet
    "key": pl.String(),
    "done": pl.Boolean(),
}
SCORING = ("max_questions", "data_seed", "max_length", "dtype")  # with split: what the plan fixes for every unit
UNITS, PREDICTIONS = "units", "predictions"
DEFAULT_WAY = "cloze/0-shot/plain"
CHECKPOINT_SCORER = "mcqa"  # an inoculation checkpoint has its multiple-choice head
UNIT_NAME_LIMIT = 150  # bytes of a unit's name: with .parquet and a writer's temporary prefix, within 255
PROBE_SET_LIMIT = 2 * 10**9  # bytes of a probe set's files: more is some other folder, refused before hashing


@dataclass(frozen=True)
class SweepSpec:
    """Where a sweep writes (``out``), what each unit scores (``split`` of the probe sets, ``orig_split`` of the
    science QA sets, at most ``max_questions`` of each, sampled as whole clusters with ``data_seed``; ``max_length``,
    ``dtype``: these are fixed in the plan's rows), how (``batch_size``, ``device``, ``threads``, the prediction
    ``cache``) and where units run: ``backend`` ``local`` (``workers`` processes) or ``ray`` (``address``;
    ``trial_gpus``, ``trial_cpus`` per model load), as inoculation's settings of the same names.

    >>> SweepSpec(out="sweeps/s1", max_questions=400, backend="ray")  # doctest: +ELLIPSIS
    SweepSpec(out='sweeps/s1', ...)
    """

    out: str | Path = "sweep"
    split: str | None = None
    orig_split: str = "dev"
    max_questions: int | None = None
    data_seed: int = 0
    batch_size: int | str = 32
    max_length: int | None = None
    dtype: str | None = None
    device: str | None = None
    threads: int | None = None
    cache: bool = True
    backend: str = "local"
    address: str | None = None
    workers: int = 1
    trial_gpus: float | None = None
    trial_cpus: int | None = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise SpecError(f"backend={self.backend!r} is not allowed; choose one of {list(BACKENDS)}")
        for name in ("split", "orig_split"):
            if getattr(self, name) not in (*SPLITS, None) or (name == "orig_split" and self.orig_split is None):
                raise SpecError(f"{name}={getattr(self, name)!r} is not a split; choose one of {list(SPLITS)}")
        if not isinstance(self.workers, int) or self.workers < 1:
            raise SpecError(f"workers={self.workers!r} is out of range; use a whole number >= 1")
        if self.backend != "ray" and (self.address, self.trial_gpus, self.trial_cpus) != (None, None, None):
            raise SpecError("address, trial_gpus and trial_cpus are for backend='ray'; set backend='ray' or drop them")


def plan_sweep(grid: str | Path | dict, spec: SweepSpec | None = None, **overrides) -> pl.DataFrame:
    """Every unit of a sweep as a frame to inspect and filter before ``run_sweep``.

    Parameters
    ----------
    grid : str, Path or dict
        A TOML, YAML or JSON grid file, or the same as a dict (``workbench.sweep.grid``): ``models``,
        ``probes``, ``orig`` (science QA), ``scorers``, ``rules``, ``controls``, ``seeds``, ``runs``.
    spec : SweepSpec, optional
        The sweep's settings; ``**overrides`` are ``SweepSpec`` fields (``out``, ``max_questions``, ...).

    Returns
    -------
    polars.DataFrame
        ``PLAN_SCHEMA``: one row per unit, ``done`` for those an earlier run finished with the same inputs.

    Examples
    --------
    >>> plan = plan_sweep({"models": {"minilm": minilm}, "probes": {"hypernymy": "probes/hypernymy"},
    ...                    "controls": ["none", "random-weights"], "seeds": [0, 1]}, out="sweeps/s1")  # doctest: +SKIP
    >>> plan.group_by("control").len()  # doctest: +SKIP
    """
    from workbench.scoring import ScoreSpec  # torch: only when a sweep is planned

    spec = resolve_spec(SweepSpec, spec, overrides)
    grid = read_grid(grid)
    out = Path(spec.out)
    sets = [(name, str(path), False) for name, path in grid["probes"].items()]
    sets += [(name, str(path), True) for name, path in grid["orig"].items()]
    for _, path, _ in sets:
        if not Path(path).exists():
            raise WorkbenchError(f"no probe set at {path}; build one with `workbench probes` or fix the grid")
    for name, entry in grid["models"].items():
        _check_model(name, entry["path"])
    inputs = [path for _, path, _ in sets] + [entry["path"] for entry in grid["models"].values()] + grid["runs"]
    check_output(out, kind="sweep", inputs=tuple(path for path in inputs if Path(path).exists()))
    members = [(name, entry["path"], "model", entry, None) for name, entry in grid["models"].items()]
    checkpoint = {"scorers": [CHECKPOINT_SCORER], "rules": ["auto"], "controls": ["none"], "seeds": grid["seeds"]}
    members += [(name, path, "checkpoint", checkpoint, trial)
                for run in grid["runs"] for name, path, trial in checkpoints(run)]  # fmt: skip
    scoring = {name: getattr(spec, name) for name in SCORING}
    rows = []
    for name, path, origin, entry, trial in members:
        for scorer in entry["scorers"]:
            for rule in entry["rules"]:
                for control in entry["controls"]:
                    for seed in entry["seeds"] if control != "none" else entry["seeds"][:1]:
                        try:
                            ScoreSpec(scorer, rule=rule, control=control, seed=seed)
                        except SpecError as err:
                            raise SpecError(f"model {name!r}: {err} (give the model its own scorers, rules or "
                                            "controls in the grid)") from None  # fmt: skip
                        for way in _ways(entry, scorer, name):
                            for probe_set, probes, orig in sets:
                                unit = unit_name(name, probe_set, scorer, rule, control, seed, way)
                                rows.append({
                                    "unit": unit, "model": name, "path": path, "origin": origin,
                                    "endpoint": endpoint(entry) if origin == "model" else None,
                                    "probe_set": probe_set, "probes": probes, "orig": orig, "scorer": scorer,
                                    "rule": rule, "control": control, "seed": seed, "asking": way,
                                    "trial": json.dumps(trial) if trial else None,
                                    "split": spec.orig_split if orig else spec.split, **scoring,
                                    "file": str(out / PREDICTIONS / f"{unit}.parquet"),
                                })  # fmt: skip
    plan = pl.DataFrame(rows, schema={name: PLAN_SCHEMA[name] for name in PLAN_SCHEMA if name not in ("key", "done")})
    if (longest := plan.filter(pl.col("unit").str.len_bytes() > UNIT_NAME_LIMIT)).height:
        raise SpecError(f"the unit name {longest['unit'][0]!r} is longer than {UNIT_NAME_LIMIT} bytes (a file name); "
                        "give the model and probe set shorter names in the grid")  # fmt: skip
    duplicated = plan.filter(pl.col("unit").is_duplicated())["unit"].unique().to_list()
    if duplicated:
        raise SpecError(f"units {duplicated[:3]} appear twice; give models and probe sets distinct names")
    keys = [unit_key(row) for row in plan.iter_rows(named=True)]
    plan = plan.with_columns(key=pl.Series(keys, dtype=pl.String))
    return plan.with_columns(done=pl.Series([is_done(row) for row in plan.iter_rows(named=True)], dtype=pl.Boolean))


def _check_model(name: str, path: str) -> None:
    """A model is a file, a folder, a hub name or a served model's URL; a path to nothing is one line now, not an error
    at load time."""
    if path.startswith(("http://", "https://")) or Path(path).expanduser().exists():
        return
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(path)
    except HFValidationError:
        raise WorkbenchError(f"model {name!r}: no model at {path} (not a file, a folder, or a hub name); "
                             "fix its path") from None  # fmt: skip


def unit_name(model: str, probe_set: str, scorer: str, rule: str, control: str, seed: int, way: str = "") -> str:
    """The unit's file name: ``minilm__hypernymy__similarity-auto__none-s0`` (``/`` of checkpoints becomes ``+``;
    a way of asking other than zero-shot cloze is added: ``...__letters+5-shot+chat``)."""
    text = f"{model}__{probe_set}__{scorer}-{rule}__{control}-s{seed}"
    if way and way != DEFAULT_WAY:
        text += f"__{way}"
    return re.sub(r"[^A-Za-z0-9._+=-]", "+", text)


def _ways(entry: dict, scorer: str, name: str) -> list[str]:
    """The ways of asking a unit of ``scorer`` takes: the entry's (checked) for a language model's scorer, else ""."""
    from workbench.scoring import LM_SCORERS
    from workbench.scoring.asking import Asking

    if scorer not in LM_SCORERS:
        return [""]
    try:
        return list(dict.fromkeys(Asking.from_label(way).label for way in entry["ways"]))
    except SpecError as err:
        raise SpecError(f"model {name!r}: {err}") from None


def checkpoints(run: str | Path) -> list[tuple[str, str, dict]]:
    """The checkpoints an inoculation run kept, as ``(name, folder, trial)``: ``best/k<k>`` and, with
    ``keep_checkpoints="all"``, ``trials/<trial>/model``; ``trial`` is the checkpoint's ``trial.json``."""
    run = Path(run)
    if not (run / "trials.parquet").is_file():
        raise WorkbenchError(f"{run} is not an inoculation run (no trials.parquet); give a `workbench inoculate --out`")
    found = {}
    for info in sorted([*run.glob("best/k*/trial.json"), *run.glob("trials/*/model/trial.json")]):
        try:
            trial = json.loads(info.read_text(encoding="utf-8"))
            name = trial["trial"] if isinstance(trial, dict) and isinstance(trial.get("trial"), str) else None
        except (OSError, ValueError) as err:
            raise WorkbenchError(f"{info} cannot be read ({err}); rerun `workbench inoculate` on {run}") from None
        if name is None:
            raise WorkbenchError(f"{info} names no trial; it is damaged: rerun `workbench inoculate` on {run}")
        found[name] = (f"{run.name}/{name}", str(info.parent), trial)
    if not found:
        raise WorkbenchError(f"{run} kept no checkpoints (keep_checkpoints='none'?); rerun it keeping best or all")
    return [found[name] for name in sorted(found)]


SETTINGS = ("model", "probes", "orig", "scorer", "rule", "control", "seed", "asking", "split", *SCORING)
"""The unit fields its key holds as they are (besides its model's and probe set's files)."""


def unit_key(unit: dict) -> str:
    """A digest of what ``unit``'s predictions depend on: model and probe files, scoring settings, sample."""
    from workbench.scoring.fingerprints import file_digests, model_files, model_folder

    if unit.get("endpoint"):  # a served model: what its server says it serves now, never the files
        return served_key(unit)
    model = Path(unit["path"]).expanduser()
    folder = None if model.is_file() else model_folder(unit["path"])  # a single-file model (GGUF) is its own file
    files = [model] if model.is_file() else model_files(folder, weights=unit["control"] != "random-weights") \
        if folder else []  # fmt: skip
    probes = Path(unit["probes"])
    probe_files = probe_set_files(probes)
    digests = file_digests([*files, *probe_files])
    settings = {name: unit[name] for name in SETTINGS}
    settings["path"] = None if files else unit["path"]  # a hub name not in the local cache: its name only
    text = json.dumps([settings, [(p.name, digests[p]) for p in files], [digests[p] for p in probe_files]])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


KEYED = (*SETTINGS, "path", "endpoint")
"""The unit fields its key digests (with the files they name); a unit's record keeps them as ``inputs``."""


def changed_since(record: dict) -> bool | None:
    """Whether the files a recorded unit was scored on (its model's and its probe set's) changed since; None when
    that cannot be told: a record written before records kept their ``inputs``, or a served model (not asked)."""
    inputs = record.get("inputs")
    if not isinstance(inputs, dict) or inputs.get("endpoint") or set(KEYED) - set(inputs):
        return None
    try:
        return unit_key(inputs) != record["key"]
    except (OSError, ValueError, WorkbenchError):  # a file gone or unreadable: not what the unit was scored on
        return True


def served_key(unit: dict) -> str:
    """``unit_key`` of a served model's unit: its endpoint's settings and the identity its server reports now (so
    other weights served under the same name score again), the probe files and scoring settings."""
    from workbench.scoring.fingerprints import file_digests
    from workbench.scoring.served import Endpoint, connect

    server = connect(Endpoint(**json.loads(unit["endpoint"])), unit["scorer"])
    probe_files = probe_set_files(Path(unit["probes"]))
    digests = file_digests(probe_files)
    names = ("model", "probes", "orig", "scorer", "rule", "control", "seed", "asking", "split", "endpoint", *SCORING)
    text = json.dumps([{name: unit[name] for name in names}, server.fingerprint, [digests[p] for p in probe_files]])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def probe_set_files(probes: Path) -> list[Path]:
    """The files a probe set's key digests: itself, or a folder's probe files (``.parquet``, ``.jsonl``, outside
    dot-folders, at most ``PROBE_SET_LIMIT`` bytes in all: a folder of other things is refused, not hashed)."""
    if not probes.is_dir():
        return [probes]
    files = sorted(path for path in probes.rglob("*") if path.suffix in (".parquet", ".jsonl") and path.is_file()
                   and not any(part.startswith(".") for part in path.relative_to(probes).parts))  # fmt: skip
    if not files:
        raise WorkbenchError(f"{probes} holds no probe files (.parquet, .jsonl); give a probe set's folder or file")
    if (size := sum(path.stat().st_size for path in files)) > PROBE_SET_LIMIT:
        raise WorkbenchError(f"{probes} holds {size / 1e9:.1f} GB of .parquet/.jsonl files, more than a probe set; "
                             "give the folder of one probe set")  # fmt: skip
    return files


def record_path(file: str | Path) -> Path:
    """Where a unit's record sits: ``<out>/units/<unit>.json`` for ``<out>/predictions/<unit>.parquet``."""
    file = Path(file)
    return file.parent.parent / UNITS / f"{file.stem}.json"


RECORD_SCHEMA = {"unit": str, "key": str, "questions": int, "accuracy": float, "file_digest": str, "model": str,
                 "probe_set": str, "scorer": str, "rule": str, "control": str, "seed": int}  # fmt: skip
"""What a unit record must hold (with its type) to count: anything less is a damaged record, set aside."""


def read_record(path: str | Path) -> dict | None:
    """The unit record at ``path``, or None when there is none; a damaged one (truncated, not JSON, a field missing
    or of the wrong type) is set aside as ``<unit>.json.damaged`` with a warning, and the unit is scored again."""
    import warnings

    path = Path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        record, problem = None, " ".join(str(err).split())
    else:
        wrong = [name for name, kind in RECORD_SCHEMA.items() if not isinstance(record, dict)
                 or not isinstance(record.get(name), kind) or isinstance(record.get(name), bool)]  # fmt: skip
        if not wrong:
            return record
        problem = f"field {wrong[0]} missing or of the wrong type"
    aside = path.with_name(path.name + ".damaged")
    path.replace(aside)
    warnings.warn(f"{path} is damaged ({problem}); set aside as {aside.name}, the unit is scored again", stacklevel=2)
    return None


def file_digest(path: str | Path) -> str:
    """The BLAKE2b digest of a file's bytes: what a unit's record says its prediction file is."""
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_done(unit: dict) -> bool:
    """Whether ``unit``'s prediction file is there, was written for the same key, and is the file its record
    names (by digest: another unit's file copied over it is scored again)."""
    file = Path(unit["file"])
    record = read_record(record_path(file))
    if record is None or record["key"] != unit["key"] or not file.is_file():
        return False
    return record["file_digest"] == file_digest(file)
