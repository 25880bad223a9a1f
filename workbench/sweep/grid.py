"""A sweep's grid: which models, probe sets and scoring settings to cross, read from TOML, YAML or a dict.

```toml
seeds = [0, 1, 2]                    # seeds of the controls (control "none" uses the first)
scorers = ["similarity"]
controls = ["none", "random-weights"]
runs = ["runs/inoc"]                 # every kept checkpoint of these inoculation runs (scorer mcqa)

[models]
minilm = "/path/to/all-MiniLM-L6-v2"
smollm2 = { path = "models/SmolLM2-135M.Q8_0.gguf", scorers = ["causal"], seeds = [0],
            ways = ["cloze/0-shot/plain", "letters/5-shot/chat"] }   # ways of asking (causal, seq2seq)

[probes]                             # probe files or folders (workbench probes --out)
hypernymy = "probes/hypernymy"

[orig]                               # science QA folders of {dev,...}.jsonl: the original task
arc_easy = "mcqa/arc_easy"
```

A model entry is a path (or hub name), or a table with ``path`` and its own ``scorers``, ``rules``, ``controls``,
``seeds``, ``ways`` that replace the grid's for that model. ``ways`` names ways of asking a language model
(``FORMAT/K-shot/TEMPLATE``, ``workbench.scoring.asking``; the shots come from each probe folder's train split);
the other scorers ignore them.

>>> read_grid("sweep.toml")["models"]["minilm"]["scorers"]  # doctest: +SKIP
['similarity']
"""

import json
import tomllib
from pathlib import Path

from workbench.errors import SpecError

LISTS = {
    "scorers": ["similarity"], "rules": ["auto"], "controls": ["none"], "seeds": [0], "runs": [],
    "ways": ["cloze/0-shot/plain"],
}  # fmt: skip
TABLES = ("models", "probes", "orig")
OWN = ("scorers", "rules", "controls", "seeds", "ways")  # what a model entry may set for itself


def read_grid(source: str | Path | dict) -> dict:
    """The grid as a dict: ``models`` (name -> ``{path, scorers, rules, controls, seeds}``, the grid's where the
    entry sets none), ``probes`` and ``orig`` (name -> path), ``runs`` (paths) and ``seeds``; unset lists take
    ``LISTS``' defaults."""
    raw = _load(source) if not isinstance(source, dict) else dict(source)
    unknown = sorted(set(raw) - set(LISTS) - set(TABLES))
    if unknown:
        raise SpecError(f"the sweep grid has unknown keys {unknown}; use {sorted([*TABLES, *LISTS])}")
    grid = {name: _listed(raw.get(name, default), name) for name, default in LISTS.items()}
    for table in TABLES:
        value = raw.get(table) or {}
        if not isinstance(value, dict):
            raise SpecError(f"{table} must be a table of name = path (got {value!r})")
        grid[table] = {str(name): value[name] for name in value}
    grid["models"] = {name: _model(name, entry, grid) for name, entry in grid["models"].items()}
    if not grid["models"] and not grid["runs"]:
        raise SpecError('the sweep grid names no models and no inoculation runs; add [models] name = "path"')
    if not grid["probes"] and not grid["orig"]:
        raise SpecError('the sweep grid names no probe sets; add [probes] name = "path" or [orig] name = "path"')
    return grid


def _load(path: str | Path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise SpecError(f"no sweep grid file at {path}; write one in TOML (see workbench.sweep.grid)")
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError as err:
            raise SpecError(f"{path} is YAML, which needs pyyaml (pip install pyyaml); or write it in TOML") from err
        return yaml.safe_load(text) or {}
    if path.suffix == ".json":
        return json.loads(text)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SpecError(f"{path} is not valid TOML ({err}); fix it, or give .yaml/.json") from err


def _listed(value, name: str) -> list:
    items = value if isinstance(value, list | tuple) else [value]
    if not items and name != "runs":
        raise SpecError(f"{name} is empty; give at least one, or leave it out for {LISTS[name] or 'none'}")
    return [_seed(item) if name == "seeds" else str(item) for item in items]


def _model(name: str, entry, grid: dict) -> dict:
    if isinstance(entry, str | Path):
        entry = {"path": str(entry)}
    if not isinstance(entry, dict) or "path" not in entry:
        raise SpecError(f'model {name!r} needs a path: {name} = "path" or {name} = {{ path = "..." }}')
    unknown = sorted(set(entry) - {"path", *OWN})
    if unknown:
        raise SpecError(f"model {name!r} has unknown keys {unknown}; use path, {', '.join(OWN)}")
    try:
        return {"path": str(entry["path"]), **{key: _listed(entry.get(key, grid[key]), key) for key in OWN}}
    except SpecError as err:
        raise SpecError(f"model {name!r}: {err}") from None


def _seed(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
        raise SpecError(f"seed {value!r} is out of range; use whole numbers from 0 to 2**32 - 1")
    return value
