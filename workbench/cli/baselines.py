"""``workbench baselines``: the probe-health report of a probe set (partial-input baselines vs chance)."""

import json
from pathlib import Path

import typer

from workbench.cli.guard import Reads, Writes, declares
from workbench.cli.tables import markdown


@declares(probes=Reads(), model=Reads(), predictions=Reads(), out=Writes("table"),
          save_predictions=Writes("predictions"))  # fmt: skip
def baselines(
    probes: list[Path] = typer.Option(
        ..., help="Probe file(s) or folder(s) with a train split and a dev or test split; repeat for several files."
    ),
    model: Path | None = typer.Option(
        None, help="Encoder folder for the transformer Choice-Only (e.g. the offline MiniLM)."
    ),
    predictions: Path | None = typer.Option(
        None, help="A model's prediction Parquet file to show beside the baselines."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the table as JSON rows instead of text."),
    out: Path | None = typer.Option(None, help="Also write the health table here (.parquet)."),
    save_predictions: Path | None = typer.Option(
        None, help="Also write the baselines' predictions here (.parquet): one member each for `workbench irt fit`."
    ),
    max_questions: int | None = typer.Option(
        None, help="Score at most this many questions of each dev or test split, whole clusters (as sweep and score)."
    ),
    data_seed: int = typer.Option(0, help="Seed of the --max-questions sample (the sweep's --data-seed)."),
    margin: float = typer.Option(
        0.10, help="Flag a question-blind baseline whose CI lower bound is this far above chance."
    ),
    n_boot: int = typer.Option(1000, help="Bootstrap resamples for the confidence intervals."),
    seed: int = typer.Option(0, help="Seed of the baselines and the bootstrap."),
    batch_size: int = typer.Option(64, help="Texts per forward pass of the encoder."),
    device: str | None = typer.Option(None, help="Torch device of the encoder (default: cuda if there is a GPU)."),
) -> None:
    """Train partial-input baselines on each probe's train split, score dev/test, flag probes that leak."""
    import polars as pl

    from workbench.baselines.health import HealthSpec, baseline_predictions, check_same_questions, health_table
    from workbench.io import read_predictions, write_parquet
    from workbench.probes.formats import read_probes
    from workbench.probes.select import sample_clusters

    frame = pl.concat([read_probes(path) for path in probes])
    if max_questions is not None:  # each evaluated split sampled as a sweep samples it: the same questions
        parts = frame.partition_by("probe", "split", maintain_order=True)
        frame = pl.concat([part if part["split"][0] == "train" else sample_clusters(part, max_questions, data_seed)
                           for part in parts])  # fmt: skip
    model_preds = read_predictions(predictions) if predictions is not None else None
    if model_preds is not None:
        check_same_questions(frame, model_preds)
    options = {"batch_size": batch_size, "device": device} if model is not None else {}
    spec = HealthSpec(margin=margin, n_boot=n_boot, seed=seed)
    preds = baseline_predictions(frame, model=model, seed=seed, **options)
    table = health_table(preds, model_preds, spec)
    if save_predictions is not None:
        write_parquet(preds, save_predictions)
        typer.echo(f"wrote {save_predictions}", err=True)
    if out is not None:
        write_parquet(table, out)
    if as_json:
        typer.echo(json.dumps(table.to_dicts(), indent=2, allow_nan=False))
    else:
        typer.echo(_text(table, margin))
    if out is not None:
        typer.echo(f"wrote {out}", err=True)


def _text(table, margin: float) -> str:
    import polars as pl

    shown = table.select(
        "probe",
        "split",
        "baseline",
        "n",
        accuracy=pl.format("{} [{}, {}]", *(pl.col(name).mul(100).round(1) for name in ("accuracy", "lo", "hi"))),
        chance=pl.col("chance").mul(100).round(1),
        flag=pl.when("flagged").then(pl.lit("LEAKS")).otherwise(pl.lit("")),
    )
    body = markdown(shown)
    flagged = table.filter("flagged").select("probe", "split").unique(maintain_order=True).rows()
    verdict = (
        "flagged (answer found without the question): " + ", ".join(f"{probe}/{split}" for probe, split in flagged)
        if flagged
        else "no probe flagged"
    )
    return (
        f"Probe health: accuracy % [95% bootstrap interval]; a question-blind baseline is flagged when the lower "
        f"end of its interval is more than {margin * 100:g} points above chance.\n{body}\n{verdict}"
    )


def register(app: typer.Typer) -> None:
    app.command("baselines")(baselines)
