"""``workbench pls`` (fit a PLS path model to a table) and ``workbench population`` (build that table
from prediction files and inoculation runs)."""

import json
from enum import Enum
from pathlib import Path

import typer

from workbench.cli.guard import Reads, Writes, declares


class Scheme(str, Enum):
    centroid = "centroid"
    factorial = "factorial"
    path = "path"


@declares(data=Reads(), model=Reads())
def pls(
    data: Path = typer.Option(
        ..., help="The population table: .csv or .parquet, one row per model, one column per score."
    ),
    model: Path = typer.Option(
        ...,
        help="The model in text form (docs/PLS.md): 'LATENT =~ col + col' (reflective, mode A), 'LATENT <~ col + col'"
        " (formative, mode B), 'TARGET ~ SOURCE + SOURCE' (paths); nom(col) / ord(col) make an indicator nominal or"
        " ordinal (non-metric PLS, optimal scaling).",
    ),
    scheme: Scheme = typer.Option(Scheme.path, help="Inner weighting scheme."),
    bootstrap: int = typer.Option(
        500, help="Bootstrap resamples for standard errors, intervals and p-values (0: none)."
    ),
    seed: int = typer.Option(0, help="Seed of the bootstrap."),
    workers: int | None = typer.Option(None, help="Processes for the bootstrap (default: automatic)."),
    alpha: float = typer.Option(0.05, help="Paths with p above this are marked not significant."),
    as_json: bool = typer.Option(
        False, "--json", help="Print path coefficients, R², GoF, loadings, weights and reliability as JSON."
    ),
) -> None:
    """Fit a PLS path model (SPEC §8: mode A or mode B blocks, numeric, ordinal or nominal indicators) and print its
    paths, R², GoF and block reliability."""
    from workbench.analysis import PLSSpec, fit_pls, parse_model
    from workbench.errors import WorkbenchError

    if not model.is_file():
        raise WorkbenchError(
            f"no model file at {model}; "
            "write one with lines like 'TAXONOMY =~ hypernymy + hyponymy' and 'SCIENCE ~ TAXONOMY'"
        )
    result = fit_pls(read_table(data), parse_model(model.read_text(encoding="utf-8")),
                     PLSSpec(scheme=scheme.value, bootstrap=bootstrap, seed=seed, workers=workers, alpha=alpha),
                     progress=not as_json)  # fmt: skip
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2, allow_nan=False))
    else:
        typer.echo(text_summary(result), nl=False)


@declares(predictions=Reads(), runs=Reads(), sweeps=Reads(), out=Writes("population"))
def population(
    predictions: list[Path] = typer.Option(
        [], help="Prediction Parquet file or folder (workbench score --out); repeat for several."
    ),
    runs: list[Path] = typer.Option([], help="Inoculation run folder (workbench inoculate --out); repeat for several."),
    sweeps: list[Path] = typer.Option(
        [], "--sweep", help="Sweep folder (workbench sweep --out): one member per model, control and seed; repeatable."
    ),
    by_hops: bool = typer.Option(False, help="One column per probe and hop count (hypernymy_h1, ...)."),
    out: Path = typer.Option(..., help="Where to write the population table (.parquet or .csv)."),
) -> None:
    """Assemble the population: one row per scored model, sweep member and inoculation checkpoint, with its probe
    accuracies and orig (then: workbench pls --data OUT)."""
    from workbench.analysis.populations import population as build
    from workbench.io import atomic_path, write_parquet

    frame = build(predictions=predictions, runs=runs, by_hops=by_hops, sweeps=sweeps)
    if out.suffix == ".csv":
        with atomic_path(out) as tmp:
            frame.write_csv(tmp)
    else:
        write_parquet(frame, out)
    typer.echo(f"{frame.height} models x {frame.width} columns -> {out}")


def read_table(path: Path):
    """A .csv or .parquet table as a polars frame, or a clear error."""
    import polars as pl

    from workbench.errors import WorkbenchError

    if not path.is_file():
        raise WorkbenchError(f"no table at {path}; give a .csv or .parquet file (workbench population writes one)")
    try:
        if path.suffix == ".parquet":
            return pl.read_parquet(path)
        if path.suffix == ".csv":
            return pl.read_csv(path, infer_schema_length=None)
    except (pl.exceptions.PolarsError, OSError) as err:
        raise WorkbenchError(f"{path} could not be read: {err}") from err
    raise WorkbenchError(f"{path} is neither .csv nor .parquet; convert it to one of them")


def text_summary(result) -> str:
    """The fit as plain text: paths (with bootstrap columns when present), R², GoF, reliability."""
    lines = [f"PLS path model: {result.n_rows} rows, scheme {result.spec.scheme}, {result.iterations} iterations"]
    if result.draws is not None:
        lines.append(f"bootstrap: {result.resamples_ok}/{result.spec.bootstrap} resamples, seed {result.spec.seed}")
    lines += ["", "paths (* p <= {:g}):".format(result.spec.alpha)]
    boot = "se" in result.paths.columns
    for row in result.paths.iter_rows(named=True):
        extra = (
            f"  se {row['se']:.3f}  95% [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]  p {row['p_value']:.4f}"
            if boot
            else f"  p(ols) {row['p_ols']:.4f}"
        )
        lines.append(
            f"  {row['source']:>12} -> {row['target']:<12} {row['coef']:+.3f}{extra} "
            f"{'*' if row['significant'] else ' (n.s.)'}"
        )
    lines += ["", "R²:"] + [f"  {row['latent']:>12}  {row['r2']:.3f}" for row in result.r2.iter_rows(named=True)]
    lines += ["", f"GoF: {result.gof:.4f}", "", "reliability (alpha, DG rho, AVE):"]
    for row in result.reliability.iter_rows(named=True):
        alpha = "   -  " if row["cronbach_alpha"] is None else f"{row['cronbach_alpha']:.3f}"
        rho = "   -  " if row["dg_rho"] is None else f"{row['dg_rho']:.3f}"
        lines.append(f"  {row['latent']:>12}  {alpha}  {rho}  {row['ave']:.3f}  ({row['indicators']} indicators)")
    return "\n".join(lines) + "\n"


def register(app: typer.Typer) -> None:
    app.command("pls")(pls)
    app.command("population")(population)
