"""``workbench export lm-eval`` and ``workbench import lm-eval``: probes as lm-evaluation-harness tasks, and its
logged samples back as a prediction file (``workbench.scoring.harness``)."""

from pathlib import Path

import typer

from workbench.cli.guard import Label, Reads, Writes, declares
from workbench.cli.score import (
    CHAT_TEMPLATE,
    FORMAT,
    SHOT_SEED,
    SHOTS,
    SHOTS_FROM,
    SYSTEM,
    ChatTemplate,
    Format,
)

export_app = typer.Typer(help="Write probes in another tool's format.", no_args_is_help=True)
import_app = typer.Typer(help="Read another tool's results as a prediction file.", no_args_is_help=True)


@export_app.command("lm-eval")
@declares(probes=Reads(), prompts=Reads(), shots_from=Reads(), out=Writes("tasks"))
def export_lm_eval(
    probes: Path = typer.Argument(..., help="A probe file or folder (.parquet, .jsonl, or a built probe folder)."),
    out: Path = typer.Option(..., "--out", help="Folder for the tasks: workbench_<probe>.yaml and .jsonl each."),
    prompts: Path = typer.Option(None, help="Prompt template file of the causal scorer (default: the packaged one)."),
    split: str | None = typer.Option(None, help="Export only this split (train, dev or test)."),
    format: Format = FORMAT,
    shots: int = SHOTS,
    shots_from: Path | None = SHOTS_FROM,
    shot_seed: int = SHOT_SEED,
    chat_template: ChatTemplate = CHAT_TEMPLATE,
    system: str | None = SYSTEM,
) -> None:
    """One lm-eval task per probe (output_type multiple_choice, our causal prompt, asked as the options say: the
    shots as the task's fixed few-shot docs), run with the lm_eval command it prints."""
    import polars as pl

    from workbench.cli.score import _shot_pool
    from workbench.errors import WorkbenchError
    from workbench.probes.formats import read_probes
    from workbench.scoring.asking import Asking, draw_shots
    from workbench.scoring.harness import export_lm_eval as export
    from workbench.scoring.harness import lm_eval_command

    asking = Asking(format.value, shots, False, shot_seed, chat_template.value, system)
    frame = read_probes(probes)
    pool = _shot_pool(frame, probes, shots, shots_from)
    if split is not None:
        frame = frame.filter(pl.col("split") == split)
        if frame.is_empty():
            raise WorkbenchError(f"{probes} has no questions in split {split!r}")
    drawn = draw_shots(pool, frame, asking, source=str(shots_from or probes)) if pool is not None else None
    written = export(frame, out, prompts=prompts, asking=asking, shots=drawn)
    tasks = sorted(path.stem for path in written if path.suffix == ".yaml")
    typer.echo(f"wrote {len(tasks)} task(s) to {out}: {lm_eval_command(tasks, out.resolve(), asking)}")


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
