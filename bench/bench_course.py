"""Benchmark: building the course (`workbench course build`) -- a first build, a rebuild with nothing changed, with
one notebook's prose changed (rendered again, not run) and with one notebook's code changed (only it runs again).

The notebooks are copied to a folder beside notebooks/ (so their relative paths to ../../shared/data still hold);
the copy is changed, never notebooks/ itself. The cache is the workspace's (``$WORKBENCH_HOME/course``) unless
``--cache`` is given: with a warm cache the first build only renders. The code change replaces the cached run of
that notebook, so the next build runs it once more.

    .venv/bin/python bench/bench_course.py [--sizes student|test] [--change 02_building_probes] [--cache DIR]
"""

import argparse
import json
import platform
import shutil
import tempfile
import time
from pathlib import Path

import nbformat

from workbench import course

ROOT = Path(__file__).resolve().parents[1]


def timed_build(out: Path, sizes: str, notebooks: list[Path], cache: Path | None) -> tuple[float, int]:
    """Seconds of one build, and how many notebooks it executed (the rest came from the cache)."""
    start = time.perf_counter()
    course.build_course(out, sizes, notebooks, cache)
    seconds = time.perf_counter() - start
    records = json.loads((out / course.MANIFEST).read_text())["notebooks"].values()
    return seconds, sum(not record["from_cache"] for record in records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="student", choices=course.SIZES)
    parser.add_argument("--change", default="02_building_probes", help="the notebook to change")
    parser.add_argument("--cache", type=Path, default=None)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix=".bench-course-", dir=ROOT))
    out = Path(tempfile.mkdtemp(prefix="bench-course-site-")) / "site"
    try:
        for path in course.course_notebooks():
            shutil.copy(path, folder / path.name)
        notebooks = course.course_notebooks(folder)
        changed = folder / f"{args.change}.ipynb"
        rows = [("first build (cold or warm cache)", *timed_build(out, args.sizes, notebooks, args.cache))]
        rows.append(("rebuild, nothing changed", *timed_build(out, args.sizes, notebooks, args.cache)))
        nb = nbformat.read(changed, as_version=4)
        nb.cells.append(nbformat.v4.new_markdown_cell("A sentence added by bench/bench_course.py."))
        nbformat.write(nb, changed)
        rows.append((f"rebuild, prose of {args.change} changed", *timed_build(out, args.sizes, notebooks, args.cache)))
        nb.cells.append(nbformat.v4.new_code_cell("print('a cell added by bench/bench_course.py')"))
        nbformat.write(nb, changed)
        rows.append((f"rebuild, code of {args.change} changed", *timed_build(out, args.sizes, notebooks, args.cache)))
        size = sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(out.parent, ignore_errors=True)
    print(f"{len(notebooks)} notebooks at {args.sizes} sizes; {platform.processor() or platform.machine()}, "
          f"site {size / 1e6:.1f} MB")  # fmt: skip
    print("| build | seconds | notebooks executed |\n|---|---|---|")
    for name, seconds, executed in rows:
        print(f"| {name} | {seconds:.1f} | {executed} |")


if __name__ == "__main__":
    main()
