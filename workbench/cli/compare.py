"""``workbench compare A.parquet B.parquet``: is B really better than A, overall and per heat-map cell?"""

from pathlib import Path

import typer

from workbench.cli.guard import Reads, declares
from workbench.cli.tables import markdown

SHOWN = ("row", "column", "n", "n_clusters", "accuracy_a", "accuracy_b", "diff", "diff_lo", "diff_hi",
         "cluster_diff", "cluster_diff_lo", "cluster_diff_hi", "a_only", "b_only", "p_mcnemar", "p_holm")  # fmt: skip


@declares(a=Reads(), b=Reads())
def compare(
    a: Path = typer.Argument(..., help="Predictions of model A (.parquet, one model)."),
    b: Path = typer.Argument(..., help="Predictions of model B, on the same questions."),
    n_boot: int = typer.Option(1000, min=10, help="Paired bootstrap resamples of clusters."),
    seed: int = typer.Option(0, help="Seed of the bootstrap."),
    alpha: float = typer.Option(0.05, min=0.0, max=1.0, help="Significance level of the Holm-adjusted p-values."),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON."),
) -> None:
    """B minus A on the questions both scored: instance and strict cluster accuracy with cluster-bootstrap
    intervals, exact McNemar tests, Holm across cells; * marks significant rows."""
    import json

    import polars as pl

    from workbench.analysis.comparison import compare as paired_comparison
    from workbench.analysis.comparison import pairing
    from workbench.io import read_predictions
    from workbench.irt import estimates

    if found := estimates.estimates([a, b]):  # an adaptive estimate has no paired questions to test
        if as_json:
            typer.echo(json.dumps(estimates.estimate_json(found) | {"not_computed": estimates.NOT_PAIRED}, indent=2))
        else:
            adaptive = {e.path: e for e in found}
            lines = [line for path in (a, b) for line in (estimates.estimate_lines(adaptive[path])
                     if path in adaptive else estimates.measured_lines(path))]  # fmt: skip
            typer.echo("\n".join([*lines, estimates.NOT_PAIRED]))
        return
    frame_a, frame_b = read_predictions(a), read_predictions(b)
    table = paired_comparison(frame_a, frame_b, n_boot=n_boot, seed=seed, alpha=alpha)
    counts = pairing(frame_a, frame_b)
    if counts["a_left"] or counts["b_left"]:  # a partial overlap: say what the numbers stand on
        typer.echo(f"paired {counts['paired']:,} questions scored by both; left out {counts['a_left']:,} of A's "
                   f"({a.name}) and {counts['b_left']:,} of B's ({b.name}), scored by one only", err=True)  # fmt: skip
    if as_json:
        typer.echo(json.dumps(table.to_dicts(), indent=2))
        return
    shown = table.with_columns(
        row=pl.when(pl.col("scope") == "overall").then(pl.lit("overall")).otherwise("row"),
        column=pl.col("column") + pl.when("significant").then(pl.lit(" *")).otherwise(pl.lit("")),
    )
    typer.echo(f"B = {b.name} minus A = {a.name} (* p_holm < {alpha:g})")
    typer.echo(markdown(shown.select(SHOWN), float_precision=3))


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
