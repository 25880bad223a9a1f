"""``workbench train-source`` and ``workbench inoculate``: fine-tune a source model, then inoculate it."""

from enum import Enum
from pathlib import Path

import typer

from workbench.cli.guard import Reads, Writes, declares


class AddSome(str, Enum):
    x1 = "x1"
    x2 = "x2"


class Backend(str, Enum):
    local = "local"
    ray = "ray"


class Precision(str, Enum):
    float32 = "float32"
    bfloat16 = "bfloat16"
    float16 = "float16"


class Keep(str, Enum):
    best = "best"
    all = "all"
    none = "none"


def _numbers(text: str, kind: type, name: str) -> list:
    from workbench.errors import SpecError

    try:
        return [kind(part) for part in text.split(",") if part.strip()]
    except ValueError as err:
        raise SpecError(
            f"--{name} {text!r} is not a comma-separated list of {'whole ' if kind is int else ''}numbers"
        ) from err


@declares(model=Reads(), data=Reads(), eval_data=Reads(), out=Writes("source"))
def train_source(
    model: Path = typer.Option(..., help="The pretrained model folder (a multiple-choice head is added if missing)."),
    data: list[Path] = typer.Option(
        ..., help="Original-task folder(s) of ARC-style {train,dev}.jsonl; repeat for several."
    ),
    out: Path = typer.Option(..., help="The run folder to write (config.json, model/, metrics.json, log.txt)."),
    eval_data: list[Path] = typer.Option([], "--eval", help="More folders whose dev split to report (e.g. sciq)."),
    lr: float = typer.Option(1e-4, help="Peak learning rate (AdamW, linear warmup then decay)."),
    epochs: int = typer.Option(1, help="Passes over the training questions."),
    batch_size: int = typer.Option(16, help="Questions per step."),
    max_length: int = typer.Option(96, help="Most tokens per question-choice pair."),
    max_train: int | None = typer.Option(None, help="Train on a seeded sample of this many questions."),
    max_eval: int | None = typer.Option(None, help="Score at most this many dev questions per set."),
    seed: int = typer.Option(0, help="Seed of the head, the shuffling and dropout."),
    device: str = typer.Option("auto", help="auto (a GPU when there is one), cpu, cuda or cuda:N."),
    precision: Precision = typer.Option(
        Precision.float32, help="bfloat16: autocast (GPU or CPU); float16: autocast with loss scaling (GPU only)."
    ),
    accumulate: int = typer.Option(1, help="Batches per optimizer step (the step sees batch-size x accumulate)."),
    gradient_checkpointing: bool = typer.Option(
        False, "--gradient-checkpointing", help="Recompute activations in the backward pass: less GPU memory."
    ),
) -> None:
    """Fine-tune a model on the original task (science QA) and report its dev accuracy."""
    from workbench.inoculation import TrainSpec
    from workbench.inoculation import train_source as run

    spec = TrainSpec(
        lr=lr, epochs=epochs, seed=seed, batch_size=batch_size, max_length=max_length, device=device,
        precision=precision.value, accumulate=accumulate, gradient_checkpointing=gradient_checkpointing,
    )  # fmt: skip
    metrics = run(model, data, out, spec, max_train=max_train, max_eval=max_eval, eval_dirs=eval_data)
    for name, value in metrics.items():
        typer.echo(f"{name} dev accuracy: {value:.4f}")
    typer.echo(f"model written to {out / 'model'}")


@declares(model=Reads(), probes=Reads(), orig=Reads(), add_some_data=Reads(), out=Writes("inoculation"))
def inoculate(
    model: Path = typer.Option(..., help="A train-source run folder (or a model folder) to inoculate."),
    probes: list[Path] = typer.Option(..., help="Probe file or folder with train and dev splits; repeat for several."),
    orig: list[Path] = typer.Option(
        ...,
        help="A science QA folder with dev.jsonl; repeat for several: S_orig is on the union of their dev sets, 5-way.",
    ),
    out: Path = typer.Option(..., help="The run folder; an interrupted run resumes from it."),
    k: str = typer.Option("100,500,1000,3000", help="Probe training sizes, comma-separated."),
    lr: str = typer.Option("1e-5,3e-5", help="Learning rates, comma-separated."),
    epochs: str = typer.Option("1,3", help="Epochs, comma-separated."),
    seeds: str = typer.Option("0", help="Seeds, comma-separated."),
    add_some: AddSome | None = typer.Option(
        None, help="Mix in original examples: x1 (one per probe example) or x2 (two), from --add-some-data."
    ),
    add_some_data: Path | None = typer.Option(
        None, help="With --add-some: a science QA folder held out from training and evaluation."
    ),
    max_eval: int | None = typer.Option(
        None, help="Score at most this many questions of each evaluation set (whole clusters)."
    ),
    batch_size: int = typer.Option(16, help="Questions per step."),
    max_length: int = typer.Option(128, help="Most tokens per question-choice pair."),
    backend: Backend = typer.Option(Backend.local, help="Where trials run: local (this machine) or ray (Ray Tune)."),
    address: str | None = typer.Option(
        None,
        "--ray-address",
        "--address",
        help="Join an existing Ray cluster (--backend ray): auto, or ray://HEAD:10001 (default: a local Ray).",
    ),
    workers: int = typer.Option(1, help="Trials at once: local processes, or concurrent Ray trials."),
    threads: int | None = typer.Option(
        None, help="Torch threads per trial (default: the cores shared among the workers; --trial-cpus on Ray)."
    ),
    trial_gpus: float | None = typer.Option(
        None, help="GPUs each Ray trial requests (default: 1 when the cluster has GPUs, else 0; 0.5 shares one)."
    ),
    trial_cpus: int | None = typer.Option(None, help="CPUs each Ray trial requests (default: --threads, else 1)."),
    device: str | None = typer.Option(
        None, help="auto (a GPU when there is one), cpu, cuda or cuda:N (default: as recorded in --out, else auto)."
    ),
    precision: Precision | None = typer.Option(
        None, help="float32, bfloat16 or float16 (loss scaling; GPU) (default: as recorded in --out, else float32)."
    ),
    accumulate: int | None = typer.Option(
        None, help="Batches per optimizer step (default: as recorded in --out, else 1)."
    ),
    gradient_checkpointing: bool | None = typer.Option(
        None,
        "--gradient-checkpointing/--no-gradient-checkpointing",
        help="Recompute activations in the backward pass: less GPU memory (default: as recorded, else off).",
    ),
    keep_checkpoints: Keep | None = typer.Option(
        None, help="best (M* of each k), all, or none (default: as recorded in --out, else best)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the per-k summary as JSON."),
) -> None:
    """Continue training on k probe examples over a grid; select M* = argmax AVG(S_new, S_orig) per k."""
    import json

    from workbench.inoculation import inoculate as run

    summary = run(
        model, probes, orig,
        ks=_numbers(k, int, "k"), lrs=_numbers(lr, float, "lr"), epochs=_numbers(epochs, int, "epochs"),
        seeds=_numbers(seeds, int, "seeds"), add_some=add_some.value if add_some else None, out=out,
        add_some_dir=add_some_data,
        max_eval=max_eval, batch_size=batch_size, max_length=max_length, threads=threads,
        backend=backend.value, address=address, workers=workers, trial_gpus=trial_gpus, trial_cpus=trial_cpus,
        device=device, precision=precision.value if precision else None, accumulate=accumulate,
        gradient_checkpointing=gradient_checkpointing, keep_checkpoints=keep_checkpoints.value if keep_checkpoints
        else None,
    )  # fmt: skip
    if as_json:
        typer.echo(json.dumps(summary.to_dicts(), indent=2))
        return
    for row in summary.iter_rows(named=True):
        typer.echo(
            f"k={row['k']}: {row['trial']}  S_new dev={row['S_new']:.4f} test={_score(row['S_new_test'])}  "
            f"S_orig={row['S_orig']:.4f}  inoculation cost (after - before)={row['inoculation_cost']:+.4f} "
            f"(S_orig before {row['S_orig_before']:.4f})"
        )
    typer.echo(f"results: {out / 'trials.parquet'} (workbench.inoculation.load_run)")


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def register(app: typer.Typer) -> None:
    app.command("train-source")(train_source)
    app.command("inoculate")(inoculate)
