"""``workbench course build``: the teaching notebooks executed and rendered as a static site."""

from pathlib import Path

import typer

from workbench.cli.guard import Reads, Writes, declares

app = typer.Typer(help="The teaching notebooks as a course: executed on the offline data, rendered with outputs.")


@app.command("build")
@declares(results=Reads(), probes=Reads(), notebooks=Reads(), cache=Writes("course-cache"), out=Writes("course"))
def build(
    out: Path = typer.Option(Path("course"), "--out", help="The course's folder (new, or one built before: replaced)."),
    sizes: str = typer.Option("student", help="student: each notebook's parameters cell; test: the suite's sizes."),
    only: list[str] = typer.Option([], help="Build only these notebooks (a name such as 01_quickstart); repeatable."),
    results: list[Path] = typer.Option(
        [], help="Prediction Parquet file(s) to publish beside the course (OUT/results/, linked both ways)."
    ),
    probes: Path | None = typer.Option(None, help="The probe set of --results (as `workbench publish --probes`)."),
    results_link: str | None = typer.Option(None, help="Or link a results site published elsewhere (URL or path)."),
    notebooks: Path | None = typer.Option(None, help="The notebooks' folder (default: this checkout's notebooks/)."),
    cache: Path | None = typer.Option(
        None,
        help="Where executed notebooks are kept (default: WORKSPACE/course): new, or a folder the course wrote.",
    ),
    cell_timeout: int = typer.Option(3600, min=1, help="Seconds one cell may run before the build stops, naming it."),
) -> None:
    """Execute every teaching notebook top to bottom (or take it from the cache when its code, parameters and the
    library are unchanged) and write the course: a page per notebook with its outputs and live charts, a table of
    contents, how to run each page yourself. Opens from file://; a failing cell stops the build, naming it."""
    from workbench.course import build_course, course_notebooks

    paths = course_notebooks(notebooks)
    if only:
        unknown = sorted(set(only) - {path.stem for path in paths} - {path.name for path in paths})
        if unknown:
            raise typer.BadParameter(f"no notebook {unknown}; choose among {[path.stem for path in paths]}")
        paths = [path for path in paths if path.stem in only or path.name in only]
    frame = probe_set = None
    if results:
        from workbench.io import read_predictions
        from workbench.probes.formats import read_probes

        frame = read_predictions(*results)
        probe_set = read_probes(probes) if probes is not None else None
    page = build_course(
        out, sizes, paths, cache, results=frame, probes=probe_set, results_link=results_link, cell_timeout=cell_timeout
    )
    typer.echo(f"wrote {page.parent}/ (open {page} in a browser, or copy the folder to any static host)", err=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="course")
