"""Where the workbench keeps provisioned data and caches.

Everything lives under one workspace folder, ``$WORKBENCH_HOME`` or
``~/.cache/probe-workbench``, so a user can see, move or delete it in one place.
"""

import os
from pathlib import Path

LAYOUT = {  # the one list of the workspace's folders: the apps look here, the README and `make explore` write here
    "graphs": "knowledge graphs cached as Parquet (workbench data setup)",
    "probes": "probe sets, one folder per probe (workbench probes build --out <workspace>/probes)",
    "predictions": "prediction files (workbench score --out <workspace>/predictions/NAME.parquet) and the model cache",
    "runs": "train-source and inoculation run folders (workbench train-source / inoculate --out <workspace>/runs/NAME)",
    "mcqa": "science QA sets, the original task of inoculation (one folder of {train,dev,test}.jsonl each)",
    "olmpics": "oLMpics learning curves (workbench olmpics curves --out <workspace>/olmpics/NAME.parquet)",
    "edge": "edge-probing results (workbench edge probe --out <workspace>/edge/NAME)",
    "representations": "frozen token states of encoders (oLMpics, edge probing, frozen baselines), SQLite",
    "apps": "the app notebooks Voila serves (copied by workbench serve)",
    "annotation": "annotation batches: sampled questions, annotators and their votes (workbench annotate sample)",
    "irt": "IRT fits (workbench irt fit --out <workspace>/irt/NAME); the explorer shows the newest one's parameters",
    "vendor": "Vega's JavaScript as vl-convert bundles it, kept for the apps' charts and published sites",
}


def workspace() -> Path:
    """The workspace folder (created on first use)."""
    root = Path(os.environ.get("WORKBENCH_HOME", Path.home() / ".cache" / "probe-workbench"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def workspace_path(kind: str, home: Path | None = None) -> Path:
    """The folder of one kind of content (a key of ``LAYOUT``) in ``home`` (default: the workspace); not created."""
    if kind not in LAYOUT:
        raise KeyError(f"{kind!r} is not a workspace folder; choose one of {list(LAYOUT)}")
    return (home if home is not None else workspace()) / kind


def cache_dir(kind: str) -> Path:
    """A sub-folder of the workspace for one kind of cache (``graphs``, ``predictions``...), created."""
    path = workspace() / kind
    path.mkdir(parents=True, exist_ok=True)
    return path
