"""``workbench edge``: build edge-probing tasks, probe frozen encoders, audit memorisation."""

from pathlib import Path

import typer

from workbench.cli.guard import Reads, Writes, declares
from workbench.cli.tables import markdown

edge_app = typer.Typer(
    help="Edge probing: build tasks (jiant JSONL), span probes with controls and MDL, memorisation audit.",
    no_args_is_help=True,
)


@edge_app.command("build")
@declares(out=Writes("edge-task"))
def build(
    task: str = typer.Option(..., help="supersense (WordNet lexicographer file) or gcide-pos (GCIDE part of speech)."),
    out: Path = typer.Option(..., help="Folder for {train,dev,test}.jsonl in jiant's edge-probing format."),
    n: int = typer.Option(5000, help="Targets to draw (one per example sentence)."),
    seed: int = typer.Option(0, help="Seed of the sample and the split."),
) -> None:
    """Build an edge-probing task from WordNet or GCIDE and write it as jiant JSONL."""
    from workbench.edge import EDGE_TASKS, gcide_pos_task, supersense_task, write_jiant
    from workbench.errors import SpecError
    from workbench.knowledge import load_graph

    if task not in EDGE_TASKS:
        raise SpecError(f"--task {task!r} is not allowed; choose one of {list(EDGE_TASKS)}")
    frame = (
        supersense_task(load_graph("wordnet"), n, seed)
        if task == "supersense"
        else gcide_pos_task(load_graph("gcide"), n, seed)
    )
    for path in write_jiant(frame, out):
        typer.echo(f"{path} ({frame.filter(frame['split'] == path.stem).height} targets)")


@edge_app.command("probe")
@declares(model=Reads(), data=Reads(), out=Writes("edge-results"))
def probe(
    model: str = typer.Option(..., help="An encoder folder, or a hub name in the local Hugging Face cache."),
    data: Path = typer.Option(..., help="A jiant JSONL folder ({train,dev,test}.jsonl) or file."),
    out: Path = typer.Option(..., help="Folder for summary.parquet, predictions.parquet and audit.parquet."),
    probes: str = typer.Option("linear,mlp", help="Probe kinds: linear, mlp (comma-separated)."),
    layer: str = typer.Option("-1", help="Layer number (0 = embeddings, -1 = last) or 'mix' (learned scalar mix)."),
    random_control: bool = typer.Option(True, help="Also probe the random-weights encoder of the same architecture."),
    mdl: bool = typer.Option(True, help="Compute the MDL online codelength (11 blocks)."),
    epochs: int = typer.Option(10, help="Training passes of each probe."),
    seed: int = typer.Option(0, help="Seed of the probes, the control task and the random encoder."),
) -> None:
    """Probe frozen representations (and their random-weights control); write summaries, predictions and the audit."""
    import polars as pl

    from workbench.edge import EdgeSpec, audit_table, probe_task, read_jiant
    from workbench.edge.probes import SUMMARY_COLUMNS
    from workbench.io import write_parquet
    from workbench.representations import RepresentationCache, load_encoder

    frame = read_jiant(data)
    cache = RepresentationCache()
    layer_value = layer if layer == "mix" else int(layer)
    summaries, predictions = [], []
    for control in ("none", "random-weights") if random_control else ("none",):
        encoder = load_encoder(model, control=control, seed=seed)
        for kind in (part.strip() for part in probes.split(",")):
            result = probe_task(
                encoder,
                frame,
                EdgeSpec(probe=kind, layer=layer_value, epochs=epochs, seed=seed),
                control_seed=seed,
                mdl=mdl,
                cache=cache,
            )
            summaries.append(result["summary"])
            predictions.append(result["predictions"])
    summary, stacked = pl.concat(summaries, how="diagonal_relaxed"), pl.concat(predictions, how="diagonal_relaxed")
    audit = audit_table(frame.filter(pl.col("split") == "train"), stacked, seed)
    for name, table in (("summary", summary), ("predictions", stacked), ("audit", audit)):
        write_parquet(table, out / f"{name}.parquet")
    shown = [name for name in SUMMARY_COLUMNS if name in summary.columns]
    typer.echo(markdown(summary.select(shown), float_precision=3))
    typer.echo(markdown(audit, float_precision=3))
    typer.echo(f"-> {out}")


@edge_app.command("audit")
@declares(data=Reads())
def audit(data: Path = typer.Option(..., help="A jiant JSONL folder with train.jsonl and test.jsonl.")) -> None:
    """Print the memorisation shares of a train/test pair (Mem-Exact, Mem-Freq, Mem-Uniform; percent of test)."""
    import polars as pl

    from workbench.edge import memorisation_shares, read_jiant

    frame = read_jiant(data)
    typer.echo(
        markdown(
            memorisation_shares(frame.filter(pl.col("split") == "train"), frame.filter(pl.col("split") == "test")),
            float_precision=3,
        )
    )


def register(app: typer.Typer) -> None:
    app.add_typer(edge_app, name="edge")
