"""``workbench olmpics``: build oLMpics MC-MLM probes, score them zero-shot, run learning curves."""

from pathlib import Path

import typer

from workbench.cli.guard import Reads, Writes, declares
from workbench.cli.tables import markdown

olmpics_app = typer.Typer(
    help="oLMpics MC-MLM probes: build, zero-shot, learning curves (MLP / LINEAR), results table.", no_args_is_help=True
)


def _numbers(text: str, name: str) -> tuple[int, ...]:
    from workbench.errors import SpecError

    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError as err:
        raise SpecError(f"--{name} {text!r} is not a comma-separated list of whole numbers") from err


def _read(paths: list[Path]):
    import polars as pl

    from workbench.olmpics import read_jsonl

    files = [file for path in paths for file in (sorted(path.glob("*.jsonl")) if path.is_dir() else [path])]
    return pl.concat([read_jsonl(file) for file in files])


@olmpics_app.command("build")
@declares(vocab_model=Reads(), out=Writes("olmpics"))
def build(
    out: Path = typer.Option(..., help="Folder for <probe>.jsonl files (the user format of docs/OLMPICS.md)."),
    probe: str = typer.Option(
        "all",
        help="age-compare, antonym-negation, taxonomy-conjunction, multi-hop-comparison, comma-separated, or 'all'.",
    ),
    n_train: int = typer.Option(4000, help="Training statements per probe (fewer when the source runs out)."),
    n_dev: int = typer.Option(500, help="Dev statements per probe."),
    seed: int = typer.Option(0, help="Seed of every random choice."),
    min_count: int = typer.Option(0, help="WordNet words need at least this SemCor count (0: all)."),
    controls: bool = typer.Option(True, help="Append the NO-LANG and PERTURBED-LANG rows."),
    vocab_model: Path | None = typer.Option(
        None, help="Keep only candidates that are one token for this model's tokenizer."
    ),
) -> None:
    """Generate oLMpics probes (train/dev value ranges apart) and write them as JSONL."""
    from workbench.errors import SpecError
    from workbench.olmpics import OLMPICS_PROBES, OlmpicsSpec, build_olmpics, with_controls, write_jsonl

    names = OLMPICS_PROBES if probe == "all" else tuple(part.strip() for part in probe.split(","))
    unknown = [name for name in names if name not in OLMPICS_PROBES]
    if unknown:
        raise SpecError(f"--probe {unknown} is not an oLMpics probe; choose from {list(OLMPICS_PROBES)} or 'all'")
    vocabulary = None
    if vocab_model is not None:
        from transformers import AutoTokenizer

        if vocab_model.is_file():
            raise SpecError(f"--vocab-model {vocab_model} is a file; give the model's folder (or its hub name)")
        try:
            tokenizer = AutoTokenizer.from_pretrained(vocab_model)
        except (OSError, ValueError, TypeError, KeyError) as err:  # transformers' ways of saying "not a tokenizer"
            raise SpecError(f"--vocab-model {vocab_model} holds no tokenizer transformers can read "
                            f"({' '.join(str(err).split())[:120]}); give a model folder") from None  # fmt: skip
        vocabulary = frozenset(token.lstrip("Ġ▁") for token in tokenizer.get_vocab())
    for name in names:
        frame = build_olmpics(OlmpicsSpec(name, n_train, n_dev, seed, min_count), vocabulary=vocabulary)
        if controls:
            frame = with_controls(frame, seed)
        path = write_jsonl(frame, out / f"{name}.jsonl")
        counts = ", ".join(
            f"{split} {count}"
            for split, count in frame.filter(frame["control"] == "none")
            .group_by("split")
            .len()
            .sort("split")
            .iter_rows()
        )
        typer.echo(f"{name}: {counts} statements{' (+ NO-LANG, PERTURBED-LANG)' if controls else ''} -> {path}")


@olmpics_app.command("zero-shot")
@declares(model=Reads(), probes=Reads(), out=Writes("table"))
def zero_shot(
    model: str = typer.Option(..., help="A masked LM folder, or a hub name in the local Hugging Face cache."),
    probes: list[Path] = typer.Option(..., help="oLMpics JSONL file(s) or folder(s); repeat for several."),
    out: Path = typer.Option(..., help="Predictions (.parquet)."),
    split: str = typer.Option("dev", help="Which split to score."),
) -> None:
    """Score statements with the model's own MLM head restricted to the candidates (MC-MLM)."""
    import polars as pl

    from workbench.io import write_parquet
    from workbench.olmpics import zero_shot as run

    frame = _read(probes).filter(pl.col("split") == split)
    predictions = run(frame, model)
    if predictions is None:
        typer.echo(
            f"zero-shot is unavailable: {model} has no trained MLM head (run `workbench olmpics curves` instead)"
        )
        raise typer.Exit(0)
    write_parquet(predictions, out)
    accuracy = (
        predictions.group_by("probe", pl.col("template").alias("control"))
        .agg(accuracy=pl.col("correct").mean(), n=pl.len())
        .sort("probe", "control")
    )
    typer.echo(markdown(accuracy))
    typer.echo(f"-> {out}")


@olmpics_app.command("curves")
@declares(model=Reads(), probes=Reads(), out=Writes("table"))
def curves(
    model: str = typer.Option(
        ..., help="A masked LM folder (no MLM head: one is initialised and zero-shot is skipped)."
    ),
    probes: list[Path] = typer.Option(..., help="oLMpics JSONL file(s) or folder(s); repeat for several."),
    out: Path = typer.Option(..., help="Learning curves (.parquet, one row per setting x N x seed)."),
    ns: str = typer.Option("62,125,250,500,1000,2000,4000", help="Training sizes N."),
    seeds: str = typer.Option("0,1,2", help="Seeds (sampling and training)."),
    settings: str = typer.Option("mlp,linear", help="mlp (the whole MLM head trains), linear (only its last layer)."),
    lr: float = typer.Option(1e-3, help="AdamW learning rate of the head."),
    epochs: int = typer.Option(20, help="Passes over the N statements (at least --min-steps steps)."),
    min_steps: int = typer.Option(100, help="Fewest optimiser steps per fit."),
    control: str = typer.Option("none", help="none, or random-weights (the same architecture untrained)."),
) -> None:
    """Learning curves with the encoder frozen; writes the curves and prints the oLMpics results table."""
    from workbench.io import write_parquet
    from workbench.olmpics import CurveSpec, load_masked_lm, results_table, run_curves

    spec = CurveSpec(
        _numbers(ns, "ns"),
        _numbers(seeds, "seeds"),
        tuple(s.strip() for s in settings.split(",")),
        lr,
        epochs,
        min_steps,
    )
    loaded = load_masked_lm(model, control=control)
    if loaded.fresh_head:
        typer.echo(f"note: {model} has no MLM head; it was initialised fresh, so zero-shot is unavailable")
    result = run_curves(_read(probes), loaded, spec)
    write_parquet(result, out)
    typer.echo(markdown(results_table(result)))
    typer.echo(f"-> {out}")


@olmpics_app.command("table")
@declares(curves_file=Reads())
def table(
    curves_file: Path = typer.Argument(..., help="A curves .parquet written by `workbench olmpics curves`."),
) -> None:
    """Print the oLMpics results table (zero-shot, MLP/LINEAR WS and MAX, LANGSENSE) of a curves file."""
    import polars as pl

    from workbench.errors import WorkbenchError
    from workbench.io import read_parquet
    from workbench.olmpics import CURVE_SCHEMA, results_table
    from workbench.schema import conform

    try:
        curves = conform(read_parquet(curves_file), CURVE_SCHEMA, f"curves file {curves_file}")
    except (pl.exceptions.PolarsError, OSError) as err:
        raise WorkbenchError(f"{curves_file} is not a readable Parquet file ({' '.join(str(err).split())[:120]}); "
                             "give the file `workbench olmpics curves --out` wrote") from err  # fmt: skip
    typer.echo(markdown(results_table(curves)))


def register(app: typer.Typer) -> None:
    app.add_typer(olmpics_app, name="olmpics")
