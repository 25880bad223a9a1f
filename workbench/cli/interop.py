"""``workbench export lm-eval`` and ``workbench import lm-eval``: probes as lm-evaluation-harness tasks, and its
logged samples back as a prediction file (``workbench.scoring.harness``)."""

from pathlib import Path

import typer

from workbench.cli.guard import Label, Reads, Writes, declares

export_app = typer.Typer(help="Write probes in another tool's format.", no_args_is_help=True)
import_app = typer.Typer(help="Read another tool's results as a prediction file.", no_args_is_help=True)


@export_app.command("lm-eval")
@declares(probes=Reads(), prompts=Reads(), out=Writes("tasks"))
def export_lm_eval(
    probes: Path = typer.Argument(..., help="A probe file or folder (.parquet, .jsonl, or a built probe folder)."),
    out: Path = typer.Option(..., "--out", help="Folder for the tasks: workbench_<probe>.yaml and .jsonl each."),
    prompts: Path = typer.Option(None, help="Prompt template file of the causal scorer (default: the packaged one)."),
) -> None:
    """One lm-eval task per probe (output_type multiple_choice, our causal prompt), run with
    lm_eval --include_path OUT --tasks workbench_<probe>."""
    from workbench.probes.formats import read_probes
    from workbench.scoring.harness import export_lm_eval as export

    written = export(read_probes(probes), out, prompts=prompts)
    tasks = sorted(path.stem for path in written if path.suffix == ".yaml")
    typer.echo(f"wrote {len(tasks)} task(s) to {out}: lm_eval --include_path {out.resolve()} --tasks {','.join(tasks)}")


@import_app.command("lm-eval")
@declares(samples=Reads(), out=Writes("predictions"), name=Label())
def import_lm_eval(
    samples: Path = typer.Argument(..., help="A samples_<task>_<date>.jsonl written by lm_eval --log_samples."),
    out: Path = typer.Option(..., "--out", help="Prediction file to write (.parquet)."),
    name: str = typer.Option(None, help="The model's label (default: the folder lm_eval wrote the samples into)."),
) -> None:
    """The harness's per-question log-likelihoods as predictions: rule sum (its acc) and mean-char (its acc_norm)."""
    import polars as pl

    from workbench.io import write_parquet
    from workbench.scoring.harness import import_lm_eval as read_samples

    predictions = read_samples(samples, name=name)
    write_parquet(predictions, out)
    accuracy = predictions.group_by("rule", maintain_order=True).agg(pl.col("correct").mean())
    shown = ", ".join(f"{rule} {acc:.4f}" for rule, acc in accuracy.iter_rows())
    typer.echo(f"wrote {predictions['id'].n_unique()} questions to {out} (accuracy: {shown})")


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")
    app.add_typer(import_app, name="import")
