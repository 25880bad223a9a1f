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


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
