"""``workbench sweep``: score a population of models on probe sets, planned first, resumable, locally or on Ray."""

from pathlib import Path

import typer

from workbench.cli.guard import Reads, Writes, declares
from workbench.cli.inoculate import Backend


def _pairs(values: list[str], option: str) -> dict[str, str]:
    from workbench.errors import SpecError

    pairs = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise SpecError(f"{option} {value!r} is not NAME=PATH; e.g. {option} minilm=/models/minilm")
        if name in pairs:
            raise SpecError(f"{option} names {name!r} twice ({pairs[name]}, {path}); give each its own name")
        pairs[name] = path
    return pairs


@declares(grid=Reads(), model=Reads(pairs=True), probes=Reads(pairs=True), orig=Reads(pairs=True), run=Reads(),
          out=Writes("sweep"))  # fmt: skip
def sweep(
    grid: Path | None = typer.Option(None, help="A grid file (TOML, YAML or JSON; see docs/SWEEP.md)."),
    out: Path = typer.Option(..., help="The sweep folder: predictions/, units/; a killed sweep resumes from it."),
    model: list[str] = typer.Option(
        [], help="NAME=PATH of a model (folder, GGUF file, hub name or a served model's URL); repeatable."
    ),
    probes: list[str] = typer.Option([], help="NAME=PATH of a probe file or folder; repeatable."),
    orig: list[str] = typer.Option([], help="NAME=PATH of a science QA folder (the original task); repeatable."),
    run: list[Path] = typer.Option([], help="An inoculation run whose kept checkpoints are units too; repeatable."),
    scorers: str | None = typer.Option(None, help="Scorers, comma-separated (default: the grid's, else similarity)."),
    rules: str | None = typer.Option(None, help="Rules, comma-separated (default: the grid's, else auto)."),
    controls: str | None = typer.Option(None, help="Controls, comma-separated: none, random-weights, ..."),
    seeds: str | None = typer.Option(None, help="Seeds of the controls, comma-separated (default 0)."),
    ways: str | None = typer.Option(
        None,
        help="causal, seq2seq: ways of asking, comma-separated, e.g. cloze/0-shot/plain,letters/5-shot/chat (the shots "
        "from each probe set's train split).",
    ),
    where: str | None = typer.Option(
        None, help="Keep only the units matching this SQL condition over the plan, e.g. \"control = 'none'\"."
    ),
    split: str | None = typer.Option(None, help="Score only this split of the probe sets (default: all)."),
    orig_split: str = typer.Option("dev", help="The split of the science QA sets."),
    max_questions: int | None = typer.Option(None, min=1, help="At most this many questions per unit (clusters)."),
    batch_size: str = typer.Option("32", help="Inputs per forward pass, or auto."),
    max_length: int | None = typer.Option(None, help="Most tokens per input."),
    dtype: str | None = typer.Option(None, help="float32, bfloat16 or float16 (GPU)."),
    device: str | None = typer.Option(None, help="cpu, cuda, cuda:N (default: cuda if there is a GPU)."),
    cache: bool = typer.Option(True, help="Reuse and store model outputs in the workspace prediction cache."),
    backend: Backend = typer.Option(Backend.local, help="Where units run: local (this machine) or ray (Ray Tune)."),
    address: str | None = typer.Option(
        None, "--ray-address", "--address", help="Join a Ray cluster (--backend ray): auto, or ray://HEAD:10001."
    ),
    workers: int = typer.Option(1, help="Model loads at once: local processes, or concurrent Ray trials."),
    threads: int | None = typer.Option(None, help="Torch threads per worker (default: the cores shared out)."),
    trial_gpus: float | None = typer.Option(None, help="GPUs each Ray model load requests (default: 1 if any)."),
    trial_cpus: int | None = typer.Option(None, help="CPUs each Ray model load requests (default: --threads, else 1)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and stop."),
) -> None:
    """Score every model x probe set x scorer x rule x control x seed of a grid; one model load per model."""
    import polars as pl

    from workbench.cli.inoculate import _numbers
    from workbench.cli.score import _whole
    from workbench.errors import SpecError
    from workbench.sweep import SweepSpec, plan_sweep, run_sweep
    from workbench.sweep.grid import _load, shaped

    raw = shaped(_load(grid), str(grid)) if grid is not None else {}
    for key, option, values in (("models", "--model", model), ("probes", "--probes", probes), ("orig", "--orig", orig)):
        pairs = _pairs(values, option)
        if twice := sorted(set(pairs) & set(raw.get(key) or {})):
            raise SpecError(f"{option} {twice[0]!r} is also in the grid {grid}; give it another name")
        raw[key] = {**(raw.get(key) or {}), **pairs}
    runs = raw.get("runs") or []
    raw["runs"] = [*(runs if isinstance(runs, list) else [runs]), *map(str, run)]
    for key, text in (("scorers", scorers), ("rules", rules), ("controls", controls), ("ways", ways)):
        if text is not None:
            raw[key] = [part.strip() for part in text.split(",") if part.strip()]
    if seeds is not None:
        raw["seeds"] = _numbers(seeds, int, "seeds")
    spec = SweepSpec(
        out=out, split=split, orig_split=orig_split, max_questions=max_questions,
        batch_size=batch_size if batch_size == "auto" else _whole(batch_size), max_length=max_length, dtype=dtype,
        device=device, cache=cache, backend=backend.value, address=address, workers=workers, threads=threads,
        trial_gpus=trial_gpus, trial_cpus=trial_cpus,
    )  # fmt: skip
    plan = plan_sweep(raw, spec)  # read once, there
    if where is not None:
        try:
            plan = plan.filter(pl.sql_expr(where))
        except (pl.exceptions.PolarsError, ValueError, TypeError) as err:
            raise SpecError(f"--where {where!r} is not a condition over the plan's columns ({list(plan.columns)}): "
                            f"{' '.join(str(err).split())[:160]}") from None  # fmt: skip
    typer.echo(f"sweep: {plan.height} units ({plan['done'].sum()} done), "
               f"{plan.select('path', 'scorer', 'control', 'seed').n_unique()} model loads -> {out}")  # fmt: skip
    if dry_run:
        for row in plan.iter_rows(named=True):
            typer.echo(f"  {'done' if row['done'] else 'todo'}  {row['unit']}")
        return
    summary = run_sweep(plan, spec)
    for row in summary.iter_rows(named=True):
        accuracy = "-" if row["accuracy"] is None else f"{row['accuracy']:.3f}"
        typer.echo(f"  {row['status']:<7} {row['unit']:<60} {row['questions'] or 0:>6} q  accuracy {accuracy}")
    typer.echo(f"predictions: {out / 'predictions'}; population: workbench population --sweep {out} --out pop.parquet")


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep)
