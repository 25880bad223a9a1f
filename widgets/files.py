"""What the apps may read and write: folders and files inside the workspace only.

Names a visitor types become one safe path component under a fixed workspace folder; nothing else
from the page ever reaches the file system.
"""

import re
from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError
from workbench.paths import workspace_path
from workbench.probes.formats import read_probes

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_child(folder: Path, name: str) -> Path:
    """``folder / name`` with ``name`` reduced to letters, digits, ``.``, ``_``, ``-`` (never ``..``)."""
    cleaned = _SAFE.sub("-", name.strip()).strip(".-")
    if not cleaned:
        raise WorkbenchError(f"{name!r} is not a usable name; use letters, digits, '-', '_' or '.'")
    path = (folder / cleaned).resolve()
    if folder.resolve() not in path.parents:
        raise WorkbenchError(f"{name!r} would leave {folder}; choose a plain name")
    return path


def probe_folders(home: Path | None = None) -> list[Path]:
    """Probe folders under ``<workspace>/probes`` (each holding split Parquet files), sorted."""
    root = workspace_path("probes", home)
    return sorted({p.parent for p in root.glob("*/*.parquet") if p.parent.parent == root}) if root.is_dir() else []


def load_probes(home: Path | None = None) -> pl.DataFrame | None:
    """Every probe set under ``<workspace>/probes`` in one frame (None when there is none)."""
    folders = probe_folders(home)
    return pl.concat([read_probes(folder) for folder in folders]) if folders else None


def prediction_files(home: Path | None = None) -> list[Path]:
    """Prediction Parquet files under ``<workspace>/predictions``, sorted by name."""
    root = workspace_path("predictions", home)
    return sorted(root.glob("*.parquet")) if root.is_dir() else []


def workspace_fit(home: Path | None = None):
    """The newest IRT fit under ``<workspace>/irt`` (``workbench irt fit --out``; ``make irt-population``), or None."""
    from workbench.irt import IrtFit

    root = workspace_path("irt", home)
    fits = sorted(root.glob("*/fit.json"), key=lambda p: p.stat().st_mtime) if root.is_dir() else []
    return IrtFit.load(fits[-1].parent) if fits else None


def run_folders(home: Path | None = None) -> list[Path]:
    """Inoculation run folders (with ``trials.parquet``) under ``<workspace>/runs``."""
    root = workspace_path("runs", home)
    return sorted(p.parent for p in root.glob("**/trials.parquet")) if root.is_dir() else []


def model_folders(home: Path | None = None) -> list[Path]:
    """Trained source models under ``<workspace>/runs`` (folders named ``model`` with a config.json), then the
    ``.gguf`` causal LMs under ``<workspace>/runs`` and ``<workspace>/models`` (inoculated with the causal loss)."""
    root = workspace_path("runs", home)
    folders = sorted(p.parent.parent for p in root.glob("**/model/config.json")) if root.is_dir() else []
    models = root.parent / "models"
    return folders + sorted(p for where in (root, models) if where.is_dir() for p in where.glob("**/*.gguf"))


def olmpics_curve_files(home: Path | None = None) -> list[Path]:
    """oLMpics learning-curve Parquet files (``workbench olmpics curves --out``) under ``<workspace>/olmpics``,
    sorted."""
    root = workspace_path("olmpics", home)
    return sorted(root.glob("*.parquet")) if root.is_dir() else []


def edge_result_folders(home: Path | None = None) -> list[Path]:
    """Edge-probing result folders (``workbench edge probe --out``, with ``summary.parquet``) under
    ``<workspace>/edge``."""
    root = workspace_path("edge", home)
    return sorted(p.parent for p in root.glob("**/summary.parquet")) if root.is_dir() else []


def mcqa_folders(home: Path | None = None) -> list[Path]:
    """Original-task (science QA) folders under ``<workspace>/mcqa`` holding a ``dev.jsonl``."""
    root = workspace_path("mcqa", home)
    return sorted(p.parent for p in root.glob("*/dev.jsonl")) if root.is_dir() else []
