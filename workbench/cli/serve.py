"""``workbench serve [APP]``: start a Voilà app (explorer, dashboard, inoculation) on 127.0.0.1."""

import json
import os
import socket
import subprocess
import sys
from enum import Enum
from pathlib import Path

import typer

APPS_DIR = Path(__file__).resolve().parents[2] / "voila_apps"
JUPYTER_DATA = Path(__file__).resolve().parent / "jupyter_data"  # the Voilà template "workbench" and its static files


class App(str, Enum):
    explorer = "explorer"
    dashboard = "dashboard"
    inoculation = "inoculation"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stage_app(app: str, home: Path, apps_dir: Path = APPS_DIR) -> Path:
    """Copy the app's notebook into ``<workspace>/apps/`` so that Voilà serves from the workspace."""
    from workbench.errors import WorkbenchError
    from workbench.io import write_text

    source = apps_dir / f"{app}.ipynb"
    if not source.is_file():
        raise WorkbenchError(
            f"the app notebook {source} is missing; run from a checkout of Probe Workbench (voila_apps/)."
        )
    # Voilà reads voila.json from its working folder (the apps folder): visitors may fetch no file at all
    write_text(json.dumps({"VoilaConfiguration": {"file_allowlist": []}}) + "\n", home / "apps" / "voila.json")
    return write_text(source.read_text(), home / "apps" / source.name)


def voila_command(notebook: Path, port: int, browser: bool = False, preheat: int = 0) -> list[str]:
    """The Voilà command line serving ``notebook`` on 127.0.0.1:``port`` with the workspace as root.

    ``preheat``: keep this many kernels started ahead with the app already run (Voilà's kernel pool).
    """
    command = [
        sys.executable, "-m", "voila", str(notebook), f"--port={port}", "--Voila.ip=127.0.0.1",
        f"--Voila.root_dir={notebook.parent.parent}", "--show_tracebacks=False", "--theme=light",
        "--template=workbench",
    ]  # fmt: skip
    if not browser:
        command.append("--no-browser")
    if preheat:
        command += ["--preheat_kernel=True", f"--pool_size={preheat}"]
    return command


def voila_environment() -> dict[str, str]:
    """This process's environment with the workbench template first on Jupyter's data path."""
    paths = [str(JUPYTER_DATA), *filter(None, os.environ.get("JUPYTER_PATH", "").split(os.pathsep))]
    return {**os.environ, "JUPYTER_PATH": os.pathsep.join(paths)}


def serve(
    app: App = typer.Argument(App.explorer, help="Which app: explorer, dashboard or inoculation."),
    port: int = typer.Option(8866, help="Port on 127.0.0.1 (0: any free port)."),
    browser: bool = typer.Option(False, "--browser/--no-browser", help="Also open the app in a web browser."),
    preheat: int = typer.Option(0, help="Kernels to start ahead with the app already run, so visitors wait less."),
) -> None:
    """Serve one Voilà app on 127.0.0.1 and print its URL; Ctrl-C stops it."""
    from workbench.paths import workspace

    port = port or free_port()
    notebook = stage_app(app.value, workspace())
    typer.echo(f"{app.value}: http://127.0.0.1:{port}/  (workspace {workspace()}; Ctrl-C to stop)")
    try:
        subprocess.run(
            voila_command(notebook, port, browser, preheat), check=False, cwd=notebook.parent, env=voila_environment()
        )
    except KeyboardInterrupt:
        typer.echo("stopped")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
