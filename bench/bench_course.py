"""Benchmark: building the course (`workbench course build`) -- each notebook's first run, a build from the cache,
a rebuild with one notebook's prose changed, with a comment in its code changed (both rendered again, not run) and,
for each notebook named by ``--change``, with its code changed (that notebook alone runs again, on the workspace's
warm caches: predictions, inoculation runs, sweeps).

The notebooks are copied to a folder beside notebooks/ (so their relative paths to ../../shared/data still hold);
the copy is changed, never notebooks/ itself. The cache is the workspace's (``$WORKBENCH_HOME/course``) unless
``--cache`` is given. Give a fresh ``WORKBENCH_HOME`` (after ``workbench data setup``) for a cold first run.

    .venv/bin/python bench/bench_course.py [--sizes student|test] [--change all | --change 02_building_probes ...]
"""

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import nbformat

from workbench import course
from workbench.errors import WorkbenchError

ROOT = Path(__file__).resolve().parents[1]


def timed_build(out: Path, sizes: str, notebooks: list[Path], cache: Path | None) -> tuple[float, int]:
    """Seconds of one build, and how many notebooks it executed (the rest came from the cache)."""
    start = time.perf_counter()
    course.build_course(out, sizes, notebooks, cache)
    seconds = time.perf_counter() - start
    records = json.loads((out / course.MANIFEST).read_text())["notebooks"].values()
    return seconds, sum(not record["from_cache"] for record in records)


def first_runs(notebooks: list[Path], sizes: str, cache: Path | None) -> list[tuple[str, str]]:
    """Each notebook executed (or taken from the cache) on its own, so one failing does not hide the others."""
    rows = []
    for path in notebooks:
        start = time.perf_counter()
        try:
            run = course.execute(path, sizes, cache)
            shown = f"{run.record['seconds']:.1f}" + (" (cached)" if run.cached else "")
        except WorkbenchError as err:
            shown = f"failed after {time.perf_counter() - start:.0f} s: {err}"
        print(f"first run of {path.stem}: {shown}", flush=True)
        rows.append((path.stem, shown))
    return rows


def edit(path: Path, change) -> None:
    nb = nbformat.read(path, as_version=4)
    change(nb)
    nbformat.write(nb, path)


def comment_edit(nb: nbformat.NotebookNode) -> None:
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    code[-1].source = "# a comment added by bench/bench_course.py\n" + code[-1].source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="student", choices=course.SIZES)
    parser.add_argument("--change", nargs="+", default=["02_building_probes"], help="notebooks to change, or all")
    parser.add_argument("--cache", type=Path, default=None)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix=".bench-course-", dir=ROOT))
    out = Path(tempfile.mkdtemp(prefix="bench-course-site-")) / "site"
    try:
        for path in course.course_notebooks():
            shutil.copy(path, folder / path.name)
        notebooks = course.course_notebooks(folder)
        changes = [p.stem for p in notebooks] if args.change == ["all"] else args.change
        runs = first_runs(notebooks, args.sizes, args.cache)
        rows = [("build from the cache (render only)", *timed_build(out, args.sizes, notebooks, args.cache))]
        rows.append(("rebuild, nothing changed", *timed_build(out, args.sizes, notebooks, args.cache)))
        first = folder / f"{changes[0]}.ipynb"
        edit(first, lambda nb: nb.cells.append(nbformat.v4.new_markdown_cell("A sentence added by the bench.")))
        rows.append((f"rebuild, prose of {first.stem} changed", *timed_build(out, args.sizes, notebooks, args.cache)))
        edit(first, comment_edit)
        rows.append((f"rebuild, a comment in {first.stem}", *timed_build(out, args.sizes, notebooks, args.cache)))
        for stem in changes:
            edit(folder / f"{stem}.ipynb", lambda nb: nb.cells.append(nbformat.v4.new_code_cell("print('bench')")))
            rows.append((f"rebuild, code of {stem} changed", *timed_build(out, args.sizes, notebooks, args.cache)))
            print(rows[-1], flush=True)
        size = sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(out.parent, ignore_errors=True)
    print(f"{len(notebooks)} notebooks at {args.sizes} sizes; {course._machine()}, site {size / 1e6:.1f} MB")
    print("| notebook | first run, seconds |\n|---|---|")
    for stem, shown in runs:
        print(f"| {stem} | {shown} |")
    print("\n| build | seconds | notebooks executed |\n|---|---|---|")
    for name, seconds, executed in rows:
        print(f"| {name} | {seconds:.1f} | {executed} |")


if __name__ == "__main__":
    main()
