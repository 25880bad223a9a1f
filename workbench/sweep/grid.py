"""A sweep's grid: which models, probe sets and scoring settings to cross, read from TOML, YAML or a dict.

```toml
seeds = [0, 1, 2]                    # seeds of the controls (control "none" uses the first)
scorers = ["similarity"]
controls = ["none", "random-weights"]
runs = ["runs/inoc"]                 # every kept checkpoint of these inoculation runs (scorer mcqa)

[models]
minilm = "/path/to/all-MiniLM-L6-v2"

[models.smollm2]                     # a model's own settings (an inline table { ... } must fit on one line)
path = "models/SmolLM2-135M.Q8_0.gguf"
scorers = ["causal"]
seeds = [0]
ways = ["cloze/0-shot/plain", "letters/5-shot/chat"]   # ways of asking (causal, seq2seq)

[probes]                             # probe files or folders (workbench probes --out)
hypernymy = "probes/hypernymy"

[orig]                               # science QA folders of {dev,...}.jsonl: the original task
arc_easy = "mcqa/arc_easy"
```

A model entry is a path (or hub name), or a table with ``path`` and its own ``scorers``, ``rules``, ``controls``,
``seeds``, ``ways`` that replace the grid's for that model. A served model's path is its base URL, with its
``served_model``, ``api_key_env``, ``tokenizer``, ``concurrency``, ``bos`` and ``timeout``
(``workbench.scoring.served``), and scorers ``causal`` or ``generate``, e.g.
``served = { path = "http://127.0.0.1:8000/v1", scorers = ["causal"], bos = "<|im_start|>" }``. ``ways`` names
ways of asking a language model (``FORMAT/K-shot/TEMPLATE``, ``workbench.scoring.asking``; the shots come from
each probe folder's train split); the other scorers ignore them.

>>> read_grid("sweep.toml")["models"]["minilm"]["scorers"]  # doctest: +SKIP
['similarity']
"""

import json
import tomllib
from pathlib import Path

from workbench.errors import SpecError
from workbench.io import check_label

LISTS = {
    "scorers": ["similarity"], "rules": ["auto"], "controls": ["none"], "seeds": [0], "runs": [],
    "ways": ["cloze/0-shot/plain"],
}  # fmt: skip
TABLES = ("models", "probes", "orig")
OWN = ("scorers", "rules", "controls", "seeds", "ways")  # what a model entry may set for itself
SERVED = ("served_model", "api_key_env", "tokenizer", "concurrency", "bos", "timeout")
"""What a served model's entry (its path a URL) may set: ``workbench.scoring.served.Endpoint``'s fields."""
SERVED_SCORERS = ("causal", "generate")  # what a server answers (workbench.scoring.served.SCORERS)


def read_grid(source: str | Path | dict) -> dict:
    """The grid as a dict: ``models`` (name -> ``{path, scorers, rules, controls, seeds, ways}``, the grid's where
    the entry sets none, and a served model's ``SERVED`` keys as given), ``probes`` and ``orig`` (name -> path),
    ``runs`` (paths) and ``seeds``; unset lists take ``LISTS``' defaults. What it returns reads as itself again. A
    grid of the wrong shape is one line naming the file (or "the sweep grid") and the key."""
    raw = shaped(_load(source), str(source)) if not isinstance(source, dict) else shaped(dict(source), "the sweep grid")
    grid = {name: _listed(raw.get(name, default), name) for name, default in LISTS.items()}
    for table in TABLES:
        grid[table] = {str(name): value for name, value in (raw.get(table) or {}).items()}
    for table in ("probes", "orig"):
        for name, path in grid[table].items():
            check_label(name, f"{table} name {name!r}", file_name=True)
            if not isinstance(path, str) or not path:
                raise SpecError(f"{table} {name!r} must be a path (got {path!r:.60})")
    grid["models"] = {name: _model(name, entry, grid) for name, entry in grid["models"].items()}
    if not grid["models"] and not grid["runs"]:
        raise SpecError('the sweep grid names no models and no inoculation runs; add [models] name = "path"')
    if not grid["probes"] and not grid["orig"]:
        raise SpecError('the sweep grid names no probe sets; add [probes] name = "path" or [orig] name = "path"')
    return grid


def shaped(raw, where: str) -> dict:
    """``raw`` (a grid read from a file, or given) if it has the grid's shape: a table whose ``models``, ``probes``
    and ``orig`` are tables and whose other keys are lists (or one value); else a one-line error naming ``where``."""
    if not isinstance(raw, dict):
        raise SpecError(f"{where} is not a table of settings (got {type(raw).__name__}); write keys like "
                        'models = {minilm = "/path"} (see docs/SWEEP.md)')  # fmt: skip
    unknown = sorted(map(str, set(raw) - set(LISTS) - set(TABLES)))
    if unknown:
        raise SpecError(f"{where}: unknown keys {unknown}; use {sorted([*TABLES, *LISTS])}")
    for table in TABLES:
        if raw.get(table) is not None and not isinstance(raw[table], dict):
            raise SpecError(f"{where}: {table} must be a table of name = path (got {raw[table]!r:.60})")
    for name in LISTS:
        value = raw.get(name)
        if isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, dict | list) for v in value)):
            raise SpecError(f"{where}: {name} must be a list of values, e.g. {name} = {LISTS[name] or ['runs/inoc']}")
    return raw


def _load(path: str | Path) -> dict:
    """The grid file's table: TOML, YAML (.yaml, .yml) or JSON (.json); a key given twice, or a file that does not
    parse, is one line naming the file."""
    path = Path(path)
    if not path.is_file():
        raise SpecError(f"no sweep grid file at {path}; write one in TOML (see workbench.sweep.grid)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as err:
        raise SpecError(f"cannot read the sweep grid {path}: {err}; give a UTF-8 TOML, YAML or JSON file") from None
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError as err:
            raise SpecError(f"{path} is YAML, which needs pyyaml (pip install pyyaml); or write it in TOML") from err
        try:
            return yaml.load(text, Loader=_unique_yaml_loader()) or {}
        except yaml.YAMLError as err:
            raise SpecError(f"{path} is not valid YAML ({' '.join(str(err).split())}); fix it") from None
    if path.suffix == ".json":
        try:
            return json.loads(text, object_pairs_hook=_unique)
        except ValueError as err:
            raise SpecError(f"{path} is not valid JSON ({err}); fix it") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SpecError(f"{path} is not valid TOML ({err}); fix it, or give .yaml/.json") from err


def _unique(pairs: list[tuple]) -> dict:
    keys = [key for key, _ in pairs]
    if twice := sorted({key for key in keys if keys.count(key) > 1}):
        raise ValueError(f"the key {twice[0]!r} is given twice; keep one")
    return dict(pairs)


def _unique_yaml_loader():
    import yaml

    class UniqueKeys(yaml.SafeLoader):
        """A safe YAML loader refusing a key given twice (the later would silently replace the earlier)."""

        def construct_mapping(self, node, deep=False):
            keys = [self.construct_object(key, deep=deep) for key, _ in node.value]
            if twice := sorted({str(key) for key in keys if keys.count(key) > 1}):
                raise yaml.constructor.ConstructorError(None, None, f"the key {twice[0]!r} is given twice; keep one",
                                                        node.start_mark)  # fmt: skip
            return super().construct_mapping(node, deep=deep)

    return UniqueKeys


def _listed(value, name: str) -> list:
    items = value if isinstance(value, list | tuple) else [value]
    if not items and name != "runs":
        raise SpecError(f"{name} is empty; give at least one, or leave it out for {LISTS[name] or 'none'}")
    if name == "rules" and "all" in items:
        raise SpecError("rule 'all' would give one accuracy over several rules; list them, e.g. "
                        "rules = ['sum', 'mean-token', 'mean-char', 'mi']: each is a unit of its own")  # fmt: skip
    return [_seed(item) if name == "seeds" else str(item) for item in items]


def _model(name: str, entry, grid: dict) -> dict:
    check_label(name, f"model name {name!r}", file_name=True)
    if isinstance(entry, str | Path):
        entry = {"path": str(entry)}
    if not isinstance(entry, dict) or "path" not in entry:
        raise SpecError(f'model {name!r} needs a path: {name} = "path" or {name} = {{ path = "..." }}')
    url = isinstance(entry.get("path"), str) and entry["path"].startswith(("http://", "https://"))
    unknown = sorted(set(entry) - {"path", *OWN, *(SERVED if url else ())})
    if unknown:
        extra = f"; and for a served model (a URL path) {', '.join(SERVED)}" if not url else f", {', '.join(SERVED)}"
        raise SpecError(f"model {name!r} has unknown keys {unknown}; use path, {', '.join(OWN)}{extra}")
    try:
        if not isinstance(entry["path"], str) or not entry["path"]:
            raise SpecError(f"its path must be a text (got {entry['path']!r:.60})")
        own = shaped({key: entry[key] for key in OWN if key in entry}, "its settings")
        described = {"path": entry["path"], **{key: _listed(own.get(key, grid[key]), key) for key in OWN}}
        if not url:
            return described
        described |= {key: entry[key] for key in SERVED if key in entry}
        endpoint(described)  # checked now, not when its unit runs
        if other := sorted(set(described["scorers"]) - set(SERVED_SCORERS)):
            raise SpecError(f"a served model answers the scorers {list(SERVED_SCORERS)}, not {other}; give it its "
                            'own, e.g. scorers = ["generate"]')  # fmt: skip
        return described
    except SpecError as err:
        raise SpecError(f"model {name!r}: {err}") from None


def endpoint(entry: dict) -> str | None:
    """A model entry's ``workbench.scoring.served.Endpoint`` fields as JSON (checked by making one), or None for a
    local model. The entry is ``read_grid``'s, which keeps the served keys as given, so a grid read twice reads the
    same (the command line used to read it twice, and the second read refused a key the first had added)."""
    from workbench.scoring.served import KEY_ENV, Endpoint

    if not entry["path"].startswith(("http://", "https://")):
        return None
    fields = {"url": entry["path"], "model": entry.get("served_model"), "key_env": entry.get("api_key_env", KEY_ENV),
              "tokenizer": entry.get("tokenizer"), "concurrency": entry.get("concurrency", 8),
              "bos": entry.get("bos", "")}  # fmt: skip
    if "timeout" in entry:
        fields["timeout"] = entry["timeout"]
    Endpoint(**fields)
    return json.dumps(fields, sort_keys=True)


def _seed(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
        raise SpecError(f"seed {value!r} is out of range; use whole numbers from 0 to 2**32 - 1")
    return value
