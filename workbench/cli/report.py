"""``workbench report``: read a prediction file and print (or write) its report."""

import json
from pathlib import Path

import typer

from workbench.cli.guard import Reads, Writes, declares


@declares(preds=Reads(), probes=Reads(), html=Writes("report"))
def report(
    preds: list[Path] = typer.Argument(
        ..., help="Prediction Parquet file(s); several models are reported side by side."
    ),
    html: Path | None = typer.Option(None, "--html", help="Also write a standalone HTML report here."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON instead of text."),
    n_boot: int = typer.Option(1000, help="Bootstrap resamples for the confidence intervals."),
    seed: int = typer.Option(0, help="Seed of the bootstrap."),
    probes: Path | None = typer.Option(
        None, help="The probe set the predictions came from: warns loudly about clusters scored only in part."
    ),
    force: bool = typer.Option(False, help="Replace --html even if it holds something other than a report."),
) -> None:
    """Instance and strict cluster accuracy, per probe and per heat-map cell, of prediction files."""
    from workbench import metrics
    from workbench.io import read_predictions, write_text
    from workbench.irt import estimates
    from workbench.metrics import partial_cluster_warning
    from workbench.probes.formats import read_probes
    from workbench.reports import json_report, page_html, text_report, write_html_report

    found = estimates.estimates(preds)
    if found:  # adaptive runs: their estimate, never the asked questions' accuracy
        estimates.refuse_mixed(preds, found, "`workbench report`")
        if as_json:
            typer.echo(json.dumps(estimates.estimate_json(found), indent=2, allow_nan=False))
        else:
            typer.echo(estimates.estimate_text(found), nl=False)
        if html is not None:
            written = write_text(page_html("Probe Workbench report", estimates.estimate_html(found)), html)
            typer.echo(f"wrote {written}", err=True)
        return
    frame = read_predictions(*preds)
    probe_set = read_probes(probes) if probes is not None else None
    if (mismatch := metrics.probe_set_check(frame, probe_set, probes)) is not None:
        typer.echo(mismatch, err=True)
    if (warning := partial_cluster_warning(frame, probe_set)) is not None:
        typer.echo(warning, err=True)
    if as_json:
        typer.echo(
            json.dumps(json_report(frame, n_boot=n_boot, seed=seed, probes=probe_set), indent=2, allow_nan=False)
        )
    else:
        typer.echo(text_report(frame, n_boot=n_boot, seed=seed, probes=probe_set), nl=False)
    if html is not None:
        written = write_html_report(frame, html, n_boot=n_boot, seed=seed, probes=probe_set)
        typer.echo(f"wrote {written}", err=True)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
