"""``workbench data``: provision the knowledge sources and build their cached graphs."""

import typer

from workbench.cli.guard import Writes, declares

data_app = typer.Typer(help="Find WordNet and GCIDE, provision them and build the cached graphs.", no_args_is_help=True)


def _provision(source: str, rebuild: bool) -> str:
    """Load ``source``'s graph, building the cache if needed; the line ``setup`` prints."""
    from workbench.knowledge import load_graph
    from workbench.knowledge.cache import graph_dir

    graph = load_graph(source, rebuild=rebuild)
    with_examples = graph.examples["id"].n_unique()
    return (
        f"{source} {graph.version}: {len(graph.concepts):,} concepts, {with_examples:,} with examples, "
        f"{len(graph.isa):,} ISA links -> {graph_dir(source)}"
    )


@data_app.command("setup")
def setup(
    rebuild: bool = typer.Option(False, help="Rebuild the cached graphs even if they exist."),
    workers: int = typer.Option(2, min=1, help="Graphs built at once, each in a process of its own (1: in this one)."),
) -> None:
    """Find WordNet 3.0 (NLTK data or /usr/share/wordnet) and GCIDE, and cache both graphs as Parquet.

    The two graphs are independent, so the ones to build are built side by side (about 20 s each on one core).
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from workbench.knowledge import SOURCES
    from workbench.knowledge.cache import graph_dir

    # each source found again, whatever was remembered (once: the record is what _provision then reads)
    to_build = [source for source in SOURCES if rebuild or not graph_dir(source, refresh=True).is_dir()]
    if min(workers, len(to_build)) <= 1:
        lines = [_provision(source, rebuild) for source in SOURCES]
    else:
        context = multiprocessing.get_context("spawn")  # polars' threads make forking unsafe
        with ProcessPoolExecutor(min(workers, len(SOURCES)), mp_context=context) as pool:
            lines = list(pool.map(_provision, SOURCES, [rebuild] * len(SOURCES)))
    for line in lines:
        typer.echo(line)


@data_app.command("mcqa")
@declares(out=Writes("mcqa"))
def mcqa(
    name: str = typer.Argument(..., help="arc_easy, arc_challenge, openbookqa or sciq."),
    out: str | None = typer.Option(None, help="The folder to write (default: <workspace>/mcqa/NAME)."),
) -> None:
    """Download a standard science QA set (the original task of inoculation) from the Hugging Face hub."""
    from workbench.inoculation.data import fetch_mcqa, read_mcqa_dir
    from workbench.paths import workspace_path

    folder = fetch_mcqa(name, out or workspace_path("mcqa") / name)
    counts = read_mcqa_dir(folder).group_by("split").len().sort("split").iter_rows()
    typer.echo(f"{name}: " + ", ".join(f"{split} {n:,}" for split, n in counts) + f" questions -> {folder}")


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
