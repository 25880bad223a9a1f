"""``workbench serve [APP]``: start a Voilà app (explorer, dashboard, inoculation) on 127.0.0.1."""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from enum import Enum
from pathlib import Path

import typer

STOP_TIMEOUT_S = 20.0  # how long Voilà may take to shut its kernels down before it is killed
JUPYTER_DATA = Path(__file__).resolve().parent / "jupyter_data"  # the Voilà template "workbench" and its static files


class App(str, Enum):
    explorer = "explorer"
    dashboard = "dashboard"
    inoculation = "inoculation"


def check_port(port: int) -> int:
    """``port`` if a server can listen on it on 127.0.0.1 now; else a ``WorkbenchError`` naming it (never another)."""
    from workbench.errors import WorkbenchError

    if not 1 <= port <= 65535:
        raise WorkbenchError(f"--port {port} is not a TCP port; choose one from 1 to 65535 (or 0 for any free one)")
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as err:
            raise WorkbenchError(
                f"port {port} on 127.0.0.1 is busy ({err.strerror}); stop what uses it, or choose another --port"
            ) from None
    return port


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stage_app(app: str, home: Path) -> Path:
    """Copy the app's notebook (package data of ``voila_apps``) into ``<workspace>/apps/``: Voilà serves from there."""
    from importlib import resources

    from workbench.errors import WorkbenchError
    from workbench.io import write_text

    source = resources.files("voila_apps").joinpath(f"{app}.ipynb")
    if not source.is_file():
        raise WorkbenchError(f"the app notebook {app}.ipynb is missing from the installed package; reinstall it")
    # Voilà reads voila.json from its working folder (the apps folder): visitors may fetch no file at all
    write_text(json.dumps({"VoilaConfiguration": {"file_allowlist": []}}) + "\n", home / "apps" / "voila.json")
    return write_text(source.read_text(encoding="utf-8"), home / "apps" / f"{app}.ipynb")


def voila_command(notebook: Path, port: int, browser: bool = False, preheat: int = 0) -> list[str]:
    """The Voilà command line serving ``notebook`` on 127.0.0.1:``port`` with the workspace as root.

    ``preheat``: keep this many kernels started ahead with the app already run (Voilà's kernel pool).
    """
    command = [
        sys.executable, "-m", "voila", str(notebook), f"--port={port}", "--Voila.ip=127.0.0.1",
        f"--Voila.root_dir={notebook.parent.parent}", "--show_tracebacks=False", "--theme=light",
        "--Voila.port_retries=0",  # the port asked for or an error, never a silent other one
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

    port = check_port(port) if port else free_port()
    notebook = stage_app(app.value, workspace())
    typer.echo(f"{app.value}: http://127.0.0.1:{port}/  (workspace {workspace()}; Ctrl-C to stop)")
    command = voila_command(notebook, port, browser, preheat)
    process = subprocess.Popen(command, cwd=notebook.parent, env=voila_environment(), start_new_session=True)
    stop_with(process)
    while process.poll() is None:  # not wait(): the signal handler must be able to reap Voilà itself
        time.sleep(0.5)
    typer.echo("stopped")


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (read from /proc; none where there is no /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
    return found


def stop_with(process: subprocess.Popen) -> None:
    """On SIGINT or SIGTERM to this process, stop ``process`` (Voilà) and every kernel it started, then exit.

    Voilà gets SIGTERM and shuts its kernels down; whatever is left of its process group after
    ``STOP_TIMEOUT_S`` seconds is killed. Voilà runs in its own session, so a Ctrl-C reaches it only this way.
    """

    def stop(signum, frame) -> None:
        kernels = children(process.pid)  # each kernel runs in a session of its own: not in Voilà's group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=STOP_TIMEOUT_S)
        for pid in kernels:  # what Voilà did not stop in time
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        typer.echo("stopped")
        raise SystemExit(0)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
