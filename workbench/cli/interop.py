"""``workbench export lm-eval`` / ``import lm-eval`` (``workbench.scoring.harness``) and ``workbench export inspect``
/ ``import inspect`` / ``export inspect-log`` (``workbench.scoring.inspect_eval``): probes as another harness's tasks,
its results back as a prediction file, and ours as its log."""

from pathlib import Path

import typer

from workbench.cli.guard import Label, Reads, Writes, declares
from workbench.cli.score import (
    CHAT_TEMPLATE,
    FORMAT,
    SHOT_SEED,
    SHOTS,
    SHOTS_FROM,
    SHOTS_PER_QUESTION,
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


@export_app.command("inspect")
@declares(probes=Reads(), prompts=Reads(), shots_from=Reads(), out=Writes("inspect-task"))
def export_inspect(
    probes: Path = typer.Argument(..., help="A probe file or folder (.parquet, .jsonl, or a built probe folder)."),
    out: Path = typer.Option(..., "--out", help="Folder for the task: task.py, workbench_<probe>.jsonl, prompts.json."),
    prompts: Path = typer.Option(
        None, help="Prompt templates whose letters line is '{letter}) {choice}' (default: Inspect's own template)."
    ),
    split: str | None = typer.Option(None, help="Export only this split (train, dev or test)."),
    shots: int = SHOTS,
    shots_from: Path | None = SHOTS_FROM,
    shots_per_question: bool = SHOTS_PER_QUESTION,
    shot_seed: int = SHOT_SEED,
    system: str | None = SYSTEM,
    format: Format = typer.Option(Format.letters, help="letters (Inspect's multiple_choice); cloze is lm-eval's."),
    max_tokens: int = typer.Option(16, min=1, max=4096, help="The most tokens of each answer (it stops at a newline)."),
) -> None:
    """An Inspect task per probe (its multiple_choice solver and choice scorer, the provider's chat template, the
    shots as chat turns), run with the inspect command it prints."""
    import polars as pl

    from workbench.cli.score import _shot_pool
    from workbench.errors import WorkbenchError
    from workbench.probes.formats import read_probes
    from workbench.scoring.asking import Asking, draw_shots
    from workbench.scoring.inspect_eval import export_inspect as export
    from workbench.scoring.inspect_eval import inspect_command, score_command

    asking = Asking(format.value, shots, shots_per_question, shot_seed, "auto", system)
    frame = read_probes(probes)
    pool = _shot_pool(frame, probes, shots, shots_from)
    if split is not None:
        frame = frame.filter(pl.col("split") == split)
        if frame.is_empty():
            raise WorkbenchError(f"{probes} has no questions in split {split!r}")
    drawn = draw_shots(pool, frame, asking, source=str(shots_from or probes)) if pool is not None else None
    written = export(frame, out, prompts=prompts, asking=asking, shots=drawn, max_tokens=max_tokens)
    tasks = sorted(path.stem for path in written if path.suffix == ".jsonl")
    ours = score_command(out, probes, asking, shots_from, max_tokens)
    typer.echo(f"wrote {len(tasks)} Inspect task(s) of {frame.height} questions to {out}: {inspect_command(out)}; "
               f"the same asked by the workbench: {ours}")  # fmt: skip


@import_app.command("inspect")
@declares(logs=Reads(), probes=Reads(), out=Writes("predictions"), name=Label())
def import_inspect(
    logs: Path = typer.Argument(..., help="An Inspect log (.eval or .json) of an exported task, or a folder of them."),
    probes: Path = typer.Option(..., help="The probe file or folder the task was exported from."),
    out: Path = typer.Option(..., "--out", help="Prediction file to write (.parquet)."),
    name: str = typer.Option(None, help="The model's label (default: its name as Inspect records it)."),
) -> None:
    """Inspect's answers as predictions (scorer inspect, rule choice): the pick, the messages seen, the answer."""
    from workbench.io import write_parquet
    from workbench.probes.formats import read_probes
    from workbench.scoring.inspect_eval import import_inspect as read_logs

    predictions = read_logs(logs, read_probes(probes), name=name)
    write_parquet(predictions, out)
    typer.echo(f"wrote {predictions.height} predictions to {out} (accuracy {predictions['correct'].mean():.4f})")


@export_app.command("inspect-log")
@declares(predictions=Reads(), out=Writes("inspect-log"), label=Label())
def export_inspect_log(
    predictions: Path = typer.Argument(..., help="A prediction file (.parquet)."),
    out: Path = typer.Option(..., "--out", help="The Inspect log to write (.eval, or .json)."),
    label: str = typer.Option(None, help="The model to write, by its label in reports (when the file holds several)."),
    force: bool = typer.Option(False, help="Replace --out even if it is not a log this command wrote."),
) -> None:
    """A prediction file as an Inspect log, for `inspect view`: a sample per question, its prompt, pick and scores."""
    import polars as pl

    from workbench.errors import WorkbenchError
    from workbench.io import read_predictions
    from workbench.metrics import MODEL_KEYS, model_labels
    from workbench.scoring.inspect_eval import export_inspect_log as write_log

    frame = read_predictions(predictions)
    if label is not None:
        labels = model_labels(frame)
        if label not in labels["label"].to_list():
            raise WorkbenchError(f"{predictions} holds no model labelled {label!r}; choose one of "
                                 f"{labels['label'].to_list()[:10]}")  # fmt: skip
        chosen = labels.filter(pl.col("label") == label).select(MODEL_KEYS)
        frame = frame.join(chosen, on=list(MODEL_KEYS), nulls_equal=True, maintain_order="left")
    path = write_log(frame, out)
    typer.echo(f"wrote {path} (inspect view --log-dir {path.resolve().parent})")


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")
    app.add_typer(import_app, name="import")
