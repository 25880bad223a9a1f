"""Benchmark: building the course (`workbench course build`) -- each notebook's first run, a build from the cache,
a rebuild with one notebook's prose changed, with a comment in its code changed (both rendered again, not run) and,
for each notebook named in ``change``, with its code changed (that notebook alone runs again, on the workspace's
warm caches: predictions, inoculation runs, sweeps).

The notebooks are copied to a folder beside notebooks/ (so their relative paths to ../../shared/data still hold);
the copy is changed, never notebooks/ itself. The cache is the workspace's (``$WORKBENCH_HOME/course``) unless
``cache`` is given. Give a fresh ``WORKBENCH_HOME`` (after ``workbench data setup``) for a cold first run. Cases
``course`` (student sizes, every notebook's code changed) and ``course-test-sizes``.
"""

import json
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
from harness import ROOT

from workbench import course
from workbench.errors import WorkbenchError


def timed_build(out: Path, sizes: str, notebooks: list[Path], cache: Path | None) -> tuple[float, int]:
    """Seconds of one build, and how many notebooks it executed (the rest came from the cache)."""
    start = time.perf_counter()
    course.build_course(out, sizes, notebooks, cache)
    seconds = time.perf_counter() - start
    records = json.loads((out / course.MANIFEST).read_text())["notebooks"].values()
    return seconds, sum(not record["from_cache"] for record in records)


def first_runs(notebooks: list[Path], sizes: str, cache: Path | None) -> list[dict]:
    """Each notebook executed (or taken from the cache) on its own, so one failing does not hide the others."""
    rows = []
    for path in notebooks:
        start = time.perf_counter()
        try:
            run = course.execute(path, sizes, cache)
            rows.append({"measure": f"first run of {path.stem}", "seconds": run.record["seconds"],
                         "cached": run.cached})  # fmt: skip
        except WorkbenchError as err:
            rows.append({"measure": f"first run of {path.stem}", "seconds": time.perf_counter() - start,
                         "error": str(err)})  # fmt: skip
    return rows


def edit(path: Path, change) -> None:
    nb = nbformat.read(path, as_version=4)
    change(nb)
    nbformat.write(nb, path)


def comment_edit(nb: nbformat.NotebookNode) -> None:
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    code[-1].source = "# a comment added by bench/bench_course.py\n" + code[-1].source


def builds(
    sizes: str = "student", change: tuple[str, ...] = ("02_building_probes",), cache: str | None = None
) -> list[dict]:
    """Each notebook's first run, then the builds: from the cache, nothing changed, prose changed, a comment
    changed, and the code of each notebook in ``change`` (``("all",)``: every one) changed in turn."""
    cache = Path(cache) if cache else None
    folder = Path(tempfile.mkdtemp(prefix=".bench-course-", dir=ROOT))
    out = Path(tempfile.mkdtemp(prefix="bench-course-site-")) / "site"
    try:
        for path in course.course_notebooks():
            shutil.copy(path, folder / path.name)
        notebooks = course.course_notebooks(folder)
        changes = [p.stem for p in notebooks] if tuple(change) == ("all",) else list(change)
        runs = first_runs(notebooks, sizes, cache)
        rows = [("build from the cache (render only)", *timed_build(out, sizes, notebooks, cache))]
        rows.append(("rebuild, nothing changed", *timed_build(out, sizes, notebooks, cache)))
        first = folder / f"{changes[0]}.ipynb"
        edit(first, lambda nb: nb.cells.append(nbformat.v4.new_markdown_cell("A sentence added by the bench.")))
        rows.append((f"rebuild, prose of {first.stem} changed", *timed_build(out, sizes, notebooks, cache)))
        edit(first, comment_edit)
        rows.append((f"rebuild, a comment in {first.stem}", *timed_build(out, sizes, notebooks, cache)))
        for stem in changes:
            edit(folder / f"{stem}.ipynb", lambda nb: nb.cells.append(nbformat.v4.new_code_cell("print('bench')")))
            rows.append((f"rebuild, code of {stem} changed", *timed_build(out, sizes, notebooks, cache)))
        size = sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(out.parent, ignore_errors=True)
    timed = [{"measure": name, "seconds": seconds, "notebooks_executed": executed, "site_mb": size / 1e6}
              for name, seconds, executed in rows]  # fmt: skip
    return runs + timed
