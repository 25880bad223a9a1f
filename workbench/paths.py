"""Where the workbench keeps provisioned data and caches.

Everything lives under one workspace folder, ``$WORKBENCH_HOME`` or
``~/.cache/probe-workbench``, so a user can see, move or delete it in one place.
"""

import os
from pathlib import Path


def workspace() -> Path:
    """The workspace folder (created on first use)."""
    root = Path(os.environ.get("WORKBENCH_HOME", Path.home() / ".cache" / "probe-workbench"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def cache_dir(kind: str) -> Path:
    """A sub-folder of the workspace for one kind of cache (``graphs``, ``predictions``...)."""
    path = workspace() / kind
    path.mkdir(parents=True, exist_ok=True)
    return path
