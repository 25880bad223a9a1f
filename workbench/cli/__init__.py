"""The ``workbench`` command: a thin layer over the library's functions.

Each verb group lives in its own module and registers itself on the app.
"""

import typer

VERB_MODULES = ("data", "probes", "report", "score", "inoculate", "baselines", "serve", "pls", "olmpics", "edge")


def make_app() -> typer.Typer:
    """A ``workbench`` app with every verb group registered (tests invoke it with typer's ``CliRunner``)."""
    from importlib import import_module

    app = typer.Typer(
        help="Probe Workbench: build probes from WordNet and GCIDE, score models on them, read the results.",
        no_args_is_help=True,
        pretty_exceptions_show_locals=False,
    )
    for name in VERB_MODULES:
        import_module(f"workbench.cli.{name}").register(app)
    return app


def main() -> None:
    """Entry point of the ``workbench`` script; user errors print one clear line, not a traceback."""
    from workbench.errors import WorkbenchError

    try:
        make_app()()
    except WorkbenchError as err:
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        raise SystemExit(2) from None
