"""``workbench report``: read a prediction file and print (or write) its report."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    import polars as pl


def report(
    preds: Path = typer.Argument(..., help="Prediction Parquet file (workbench.schema.PREDICTION_SCHEMA)."),
    html: Path | None = typer.Option(None, "--html", help="Also write a standalone HTML report here."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON instead of text."),
    n_boot: int = typer.Option(1000, help="Bootstrap resamples for the confidence intervals."),
    seed: int = typer.Option(0, help="Seed of the bootstrap."),
) -> None:
    """Instance and strict cluster accuracy, per probe and per heat-map cell, of a prediction file."""
    from workbench.report import json_report, text_report, write_html_report

    frame = read_predictions(preds)
    if as_json:
        typer.echo(json.dumps(json_report(frame, n_boot=n_boot, seed=seed), indent=2, allow_nan=False))
    else:
        typer.echo(text_report(frame, n_boot=n_boot, seed=seed), nl=False)
    if html is not None:
        written = write_html_report(frame, html, n_boot=n_boot, seed=seed)
        typer.echo(f"wrote {written}", err=True)


def read_predictions(path: Path) -> "pl.DataFrame":
    """Read a prediction Parquet file and conform it to ``PREDICTION_SCHEMA``, or raise a clear error."""
    import polars as pl

    from workbench.errors import WorkbenchError
    from workbench.schema import PREDICTION_SCHEMA, conform

    if not path.is_file():
        raise WorkbenchError(f"no prediction file at {path}; score a probe set first (it writes Parquet).")
    try:
        frame = pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as err:
        raise WorkbenchError(f"{path} is not a readable Parquet file: {err}") from err
    return conform(frame, PREDICTION_SCHEMA, what=f"prediction file {path}")


def register(app: typer.Typer) -> None:
    app.command("report")(report)
