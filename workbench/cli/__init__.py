"""The ``workbench`` command: a thin layer over the library's functions.

Each verb group lives in its own module and registers itself on the app.
"""

import typer

VERB_MODULES = (
    "data",
    "probes",
    "report",
    "publish",
    "compare",
    "score",
    "inoculate",
    "sweep",
    "baselines",
    "serve",
    "pls",
    "olmpics",
    "edge",
    "interop",
    "annotate",
    "course",
    "irt",
)


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
    """Entry point of the ``workbench`` script; user errors print one clear line, not a traceback.

    ``--debug`` (anywhere on the line) or ``WORKBENCH_DEBUG=1`` shows the full traceback, for bug reports.
    """
    import os
    import sys
    import warnings

    from workbench.errors import WorkbenchError
    from workbench.startup import skip_iri_grammar

    warnings.formatwarning = lambda message, category, *_, **__: f"warning: {message}\n"  # one line, no source echo
    skip_iri_grammar()  # before any verb imports altair

    debug = "--debug" in sys.argv[1:] or os.environ.get("WORKBENCH_DEBUG", "") not in ("", "0")
    sys.argv = [arg for arg in sys.argv if arg != "--debug"]
    try:
        make_app()()
    except (WorkbenchError, OSError, UnicodeError) as err:
        if debug:
            raise
        typer.secho(f"error: {_one_line(err)}", fg=typer.colors.RED, err=True)
        raise SystemExit(2) from None
    except Exception as err:  # a bug: still one line, with the way to see more
        if debug:
            raise
        typer.secho(f"unexpected error ({type(err).__name__}): {_one_line(err)}; rerun with --debug for the traceback "
                    "and report it", fg=typer.colors.RED, err=True)  # fmt: skip
        raise SystemExit(1) from None


def _one_line(err: BaseException) -> str:
    if isinstance(err, OSError) and err.strerror:
        return f"{err.strerror}: {err.filename}" if err.filename else err.strerror
    return " ".join(str(err).split()) or type(err).__name__
