"""``workbench publish PREDICTIONS... --out SITE``: the results as a static site that needs no server."""

from pathlib import Path

import typer

from workbench.cli.guard import Reads, Writes, declares


@declares(preds=Reads(), probes=Reads(), out=Writes("site"))
def publish(
    preds: list[Path] = typer.Argument(..., help="Prediction Parquet file(s); several models are shown side by side."),
    out: Path = typer.Option(..., "--out", help="The site's folder (new, or one published before: replaced whole)."),
    probes: Path | None = typer.Option(
        None, help="The probe set the predictions came from: its statistics, and a warning on clusters scored in part."
    ),
    title: str = typer.Option("Probe Workbench results", help="The page's title."),
    n_boot: int = typer.Option(
        1000, min=10, help="Bootstrap resamples of the cluster bars' intervals (the atlas's: at most 200)."
    ),
    seed: int = typer.Option(0, help="Seed of the bootstrap."),
    course_link: str | None = typer.Option(
        None, help="Link the teaching course (`workbench course build`; docs/COURSE.md) from the site: its address."
    ),
) -> None:
    """Write a self-contained static site: heat map (click a cell to list its questions), cluster bars with
    intervals, the taxonomy atlas of WordNet concepts (click a node to zoom in and list its concepts), each
    concept's cluster, the probe's statistics; English against each other language where the files pair them
    (`--paired-with`). Opens from file://, a share or any static host."""
    from workbench import metrics
    from workbench.io import read_predictions
    from workbench.irt.estimates import estimates, refuse_mixed
    from workbench.metrics import partial_cluster_warning
    from workbench.probes.formats import read_probes
    from workbench.site import publish as publish_site

    found = estimates(preds)
    refuse_mixed(preds, found, "`workbench publish`")
    frame = read_predictions(*preds)
    probe_set = read_probes(probes) if probes is not None else None
    if (mismatch := metrics.probe_set_check(frame, probe_set, probes)) is not None:
        typer.echo(mismatch, err=True)
    if not found and (warning := partial_cluster_warning(frame, probe_set)) is not None:  # asked in part by design
        typer.echo(warning, err=True)  # the site shows it too
    sections = []
    if course_link is not None:
        from workbench.site import link_section

        text = "How these results are made, step by step, with every notebook's outputs:"
        sections.append(link_section("course", "The course", course_link, text, "--course-link"))
    page = publish_site(
        frame, out, probe_set, title=title, n_boot=n_boot, seed=seed, sections=sections, estimates=found
    )
    typer.echo(f"wrote {page.parent}/ (open {page} in a browser, or copy the folder to any static host)", err=True)


def register(app: typer.Typer) -> None:
    app.command("publish")(publish)
