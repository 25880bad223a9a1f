"""``workbench data``: provision the knowledge sources and build their cached graphs."""

import typer

data_app = typer.Typer(help="Find WordNet and GCIDE, provision them and build the cached graphs.", no_args_is_help=True)


@data_app.command("setup")
def setup(
    rebuild: bool = typer.Option(False, help="Rebuild the cached graphs even if they exist."),
) -> None:
    """Find WordNet 3.0 (NLTK data or /usr/share/wordnet) and GCIDE, and cache both graphs as Parquet."""
    from workbench.knowledge import SOURCES, load_graph
    from workbench.knowledge.cache import graph_dir

    for source in SOURCES:
        graph_dir(source, refresh=True)  # find the source again, whatever was remembered
        graph = load_graph(source, rebuild=rebuild)
        with_examples = graph.examples["id"].n_unique()
        typer.echo(
            f"{source} {graph.version}: {len(graph.concepts):,} concepts, {with_examples:,} with examples, "
            f"{len(graph.isa):,} ISA links -> {graph_dir(source)}"
        )


@data_app.command("mcqa")
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
