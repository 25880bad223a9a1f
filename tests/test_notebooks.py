"""Every teaching notebook in notebooks/ runs top to bottom in a fresh kernel; a failing cell fails its test.

Each notebook keeps its sizes in a first code cell tagged ``parameters`` (papermill's convention): the
values a student runs. The smaller values the suite runs are in the notebook's metadata,
``workbench.test_parameters``; they are injected as a cell right after the ``parameters`` cell, so every
later cell sees them. A notebook without that metadata runs as stored.

They run through the course's executor (``workbench.course.execute``) into a cache shared by the run's workers
(``course_cache``), so that tests/test_course.py builds the course at these sizes without running them again.
"""

import os
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import CHROMIUM
from nbclient import NotebookClient

from workbench import course
from workbench.errors import WorkbenchError

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
RUN_IN_JUPYTERLAB = ("07_panels_in_jupyterlab.ipynb",)  # with Chromium there, tests/test_jupyterlab.py runs them


def with_test_parameters(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` with a cell setting its ``workbench.test_parameters`` right after its ``parameters`` cell."""
    return course.with_parameters(nb, course.test_parameters(nb))


@pytest.fixture(scope="session")
def course_cache(tmp_path_factory) -> Path:
    """The executed notebooks of this run, shared by its workers (their temporary folders' common parent)."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if "PYTEST_XDIST_WORKER" in os.environ else base) / "course-cache"


def test_there_are_teaching_notebooks():
    names = [path.name for path in NOTEBOOKS]
    assert "01_quickstart.ipynb" in names, f"notebooks/ holds {names}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_is_stored_without_outputs(path: Path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [
        i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and (cell.outputs or cell.execution_count)
    ]
    assert not dirty, (
        f"{path.name}: cells {dirty} keep outputs; clear them before committing "
        "(Jupyter: Edit > Clear Outputs of All Cells)"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_test_parameters_name_variables_of_the_parameters_cell(path: Path):
    nb = nbformat.read(path, as_version=4)
    values = nb.metadata.get("workbench", {}).get("test_parameters", {})
    cells = [cell.source for cell in nb.cells if "parameters" in cell.get("metadata", {}).get("tags", [])]
    unknown = [name for name in values if not any(f"{name} =" in source for source in cells)]
    assert not unknown, f"{path.name}: test_parameters {unknown} are not set in the notebook's 'parameters' cell"


def client_for(nb: nbformat.NotebookNode) -> NotebookClient:
    """A client that runs ``nb`` in a fresh kernel, in notebooks/, stopping at the first failing cell."""
    return NotebookClient(
        nb,
        kernel_name="python3",  # jupyter_client starts a 'python3' kernel with sys.executable: this interpreter
        timeout=course.CELL_TIMEOUT_S,
        allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )


def test_notebook_kernel_runs_this_interpreter_in_notebooks_dir():
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import os, sys; print(sys.prefix); print(os.getcwd())")]
    )
    client_for(nb).execute()
    prefix, cwd = nb.cells[0].outputs[0]["text"].split()
    assert (Path(prefix), Path(cwd)) == (Path(sys.prefix), NOTEBOOK_DIR)


@pytest.mark.slow
@pytest.mark.wordnet
@pytest.mark.model
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_runs_top_to_bottom(path: Path, course_cache: Path):
    if path.name in RUN_IN_JUPYTERLAB and Path(CHROMIUM).exists():
        pytest.skip("tests/test_jupyterlab.py runs it top to bottom in JupyterLab (Run All), then uses its panels")
    run = course.execute(path, "test", course_cache)  # a failing cell raises WorkbenchError naming it
    ran = [cell for cell in run.notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in ran), "some code cells did not run"


def test_a_failing_cell_fails_the_run_naming_the_notebook_and_the_cell(tmp_path: Path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("1 / 0")])
    nbformat.write(nb, tmp_path / "broken.ipynb")
    with pytest.raises(WorkbenchError, match=r"broken.ipynb: cell 1 \('1 / 0'\) failed: ZeroDivisionError"):
        course.execute(tmp_path / "broken.ipynb", "test", tmp_path / "cache")
