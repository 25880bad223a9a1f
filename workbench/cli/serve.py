"""``workbench serve [APP]``: start a Voilà app (explorer, dashboard, inoculation), on 127.0.0.1 unless asked.

Serving to others (``--host ADDR`` or ``--public``) needs a token; visitors' kernels are capped and idle ones
culled; the server answers only to its own host names (docs/SHARING.md).
"""

import contextlib
import errno
import fcntl
import ipaddress
import json
import os
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from enum import Enum
from pathlib import Path

import typer

STOP_TIMEOUT_S = 20.0  # how long Voilà may take to shut its kernels down before it is killed
JUPYTER_DATA = Path(__file__).resolve().parent / "jupyter_data"  # the Voilà template "workbench" and its static files
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
MIN_TOKEN = 12  # characters
IOPUB_TIMEOUT_S = 60
"""How long Voilà waits for the app cell's output once the kernel said the cell ran (nbclient's default: 4 s, and
then it renders the page without the app: a blank page that never draws). The output trails the reply when the
machine is busy, as when a preheated pool runs the app in several kernels at once (bench/README.md)."""


class App(str, Enum):
    explorer = "explorer"
    dashboard = "dashboard"
    inoculation = "inoculation"
    annotate = "annotate"


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an IP address or ``localhost``) reaches only this machine."""
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        from workbench.errors import WorkbenchError

        raise WorkbenchError(f"--host {address} is not an IP address; give one, e.g. 0.0.0.0 (or --public)") from None


def check_port(port: int, address: str = "127.0.0.1") -> int:
    """``port`` if a server can listen on it on ``address`` now (0: a free one there); else a ``WorkbenchError`` naming
    it (never another port) or the address, if it is not this machine's."""
    from workbench.errors import WorkbenchError

    if not 0 <= port <= 65535:
        raise WorkbenchError(f"--port {port} is not a TCP port; choose one from 1 to 65535 (or 0 for any free one)")
    with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET) as sock:
        try:
            sock.bind((address, port))
        except OSError as err:
            if err.errno == errno.EADDRNOTAVAIL:
                raise WorkbenchError(
                    f"--host {address} is not an address of this machine; give one of its own "
                    f"({', '.join(machine_addresses()) or '127.0.0.1'}), or 0.0.0.0 (--public) for all"
                ) from None
            raise WorkbenchError(
                f"port {port} on {address} is busy ({err.strerror}); stop what uses it, or choose another --port"
            ) from None
        return sock.getsockname()[1]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def check_token(address: str, token: str | None) -> str | None:
    """The token visitors must give: none on loopback unless asked, else ``token`` or a new random one.

    An explicitly empty or short token while serving to others is a ``WorkbenchError``.
    """
    from workbench.errors import WorkbenchError

    if token is None:
        return None if is_loopback(address) else secrets.token_urlsafe(18)
    if token and len(token) < MIN_TOKEN:
        raise WorkbenchError(f"the token is too short (easy to guess): give one of at least {MIN_TOKEN} characters")
    if not token and not is_loopback(address):
        raise WorkbenchError(
            f"serving to others (--host {address} or --public) needs a token: leave --token out for a generated "
            "one, or set --token / $WORKBENCH_SERVE_TOKEN"
        )
    return token or None


def allowed_hosts(address: str, extra: list[str]) -> list[str]:
    """The host names the server answers to: this machine's local names, and when it serves others its own
    name(s) and address(es), then ``extra`` (``--allow-host``: e.g. the name a reverse proxy passes on)."""
    hosts = [*LOCAL_HOSTS]
    if not is_loopback(address):
        names = {socket.gethostname(), socket.getfqdn()}
        with contextlib.suppress(OSError):
            names |= {info[4][0] for name in tuple(names) for info in socket.getaddrinfo(name, None)}
        names |= set(machine_addresses()) if ipaddress.ip_address(address).is_unspecified else {address}
        hosts += sorted(f"[{name}]" if ":" in name else name for name in names)
    return list(dict.fromkeys(host.lower() for host in [*hosts, *extra]))


def machine_addresses() -> list[str]:
    """This machine's own IP addresses (its interfaces', IPv4 and IPv6; loopback and link-local left out), read
    from the kernel: what visitors type when the machine has no name they can resolve."""
    found = set()
    for _, name in socket.if_nameindex():
        with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            request = struct.pack("256s", name.encode()[:15])
            found.add(socket.inet_ntoa(fcntl.ioctl(sock.fileno(), 0x8915, request)[20:24]))  # SIOCGIFADDR
    with contextlib.suppress(OSError), open("/proc/net/if_inet6", encoding="ascii") as table:
        for line in table:
            found.add(str(ipaddress.ip_address(bytes.fromhex(line.split()[0]))))
    kept = [ipaddress.ip_address(a) for a in found]
    return sorted(str(a) for a in kept if not (a.is_loopback or a.is_link_local or a.is_unspecified))


def machine_name() -> str:
    """This machine's full name as others know it (its short name where the full one is only ``localhost``)."""
    name = socket.getfqdn()
    return socket.gethostname() if name in LOCAL_HOSTS or name.startswith("localhost") else name


def stage_app(app: str, home: Path) -> Path:
    """Copy the app's notebook (package data of ``voila_apps``) into ``<workspace>/apps/``: Voilà serves from there.

    A read-only workspace (visitors must not write to it) gets the notebook in a temporary folder instead.
    """
    from importlib import resources

    from workbench.errors import WorkbenchError
    from workbench.io import write_text

    source = resources.files("voila_apps").joinpath(f"{app}.ipynb")
    if not source.is_file():
        raise WorkbenchError(f"the app notebook {app}.ipynb is missing from the installed package; reinstall it")
    text = source.read_text(encoding="utf-8")
    # Voilà reads voila.json from its working folder (the apps folder): visitors may fetch no file at all
    settings = json.dumps({"VoilaConfiguration": {"file_allowlist": []}}) + "\n"
    try:
        write_text(settings, home / "apps" / "voila.json")
        return write_text(text, home / "apps" / f"{app}.ipynb")
    except OSError:  # read-only
        folder = Path(tempfile.mkdtemp(prefix="workbench-serve-")) / "apps"
        write_text(settings, folder / "voila.json")
        return write_text(text, folder / f"{app}.ipynb")


REFILL_S = 5
"""Seconds the pool waits before it starts a kernel in place of one a visitor took (Voilà's default: 1 s), and then
until the CPUs are less than half busy (at most 30 s, or until a visitor waits on it: ``CappedKernelManager``): the
new kernel's start and app (3-5 s of CPU) then come after the visitors' pages are drawn, not while they are."""

PREHEAT = 3
"""Kernels ``workbench serve`` keeps ready by default: a visitor's first page is the app already run, not a kernel's
start and the app's build (on 2 cores: the explorer's in 1.45 s against 4.3 s, the dashboard's 1.4 s against 3.3 s;
for each of three visitors at once 4.1 s and 4.5 s against 9.7 s and 8.4 s; bench/README.md, serve-first-page), and
three visitors arriving at once each find one; about 0.3 GiB each (docs/SHARING.md)."""


def voila_command(
    notebook: Path,
    port: int,
    browser: bool = False,
    preheat: int = 0,
    address: str = "127.0.0.1",
    hosts: list[str] = LOCAL_HOSTS,
    max_kernels: int = 8,
    cull_idle: int = 600,
) -> list[str]:
    """The Voilà command line (``workbench.cli.voila_server``) serving ``notebook`` on ``address``:``port``.

    ``preheat``: keep this many kernels started ahead with the app already run (Voilà's kernel pool);
    ``hosts``: the ``Host:`` names answered; ``max_kernels``: visitors' kernels at once (the pool aside);
    ``cull_idle``: seconds after which a kernel with no activity is shut down (0: never).
    """
    command = [
        sys.executable, "-m", "workbench.cli.voila_server", str(notebook), f"--port={port}", f"--Voila.ip={address}",
        f"--Voila.root_dir={notebook.parent.parent}", "--show_tracebacks=False", "--theme=light",
        "--Voila.port_retries=0",  # the port asked for or an error, never a silent other one
        f"--VoilaExecutor.iopub_timeout={IOPUB_TIMEOUT_S}",
        "--template=workbench", f"--CappedKernelManager.max_kernels={max_kernels}",
        *(f"--WorkbenchVoila.allowed_hosts={host}" for host in hosts),
    ]  # fmt: skip
    if not browser:
        command.append("--no-browser")
    if preheat:
        command += [
            "--preheat_kernel=True",
            f"--pool_size={preheat}",
            "--CappedKernelManager.fill_delay=0",
            f"--CappedKernelManager.refill_delay={REFILL_S}",
        ]
    if cull_idle:  # pages left open but untouched count as idle too: a place must free up for the next visitor
        interval = max(1, min(60, cull_idle // 3))
        command += [
            f"--MappingKernelManager.cull_idle_timeout={cull_idle}", f"--MappingKernelManager.cull_interval={interval}",
            "--MappingKernelManager.cull_connected=True",
        ]  # fmt: skip
    return command


def voila_environment(token: str | None = None) -> dict[str, str]:
    """This process's environment with the workbench template first on Jupyter's data path (and the token)."""
    from workbench.cli.voila_server import TOKEN_ENV

    paths = [str(JUPYTER_DATA), *filter(None, os.environ.get("JUPYTER_PATH", "").split(os.pathsep))]
    env = {key: value for key, value in os.environ.items() if key != TOKEN_ENV}
    return {**env, "JUPYTER_PATH": os.pathsep.join(paths), **({TOKEN_ENV: token} if token else {})}


def serve(
    app: App = typer.Argument(App.explorer, help="Which app: explorer, dashboard, inoculation or annotate."),
    port: int = typer.Option(8866, help="TCP port (0: any free port)."),
    host: str = typer.Option("127.0.0.1", help="Address to listen on; another than 127.0.0.1 serves others."),
    public: bool = typer.Option(False, "--public", help="Serve others on every address (--host 0.0.0.0)."),
    token: str = typer.Option(
        None,
        envvar="WORKBENCH_SERVE_TOKEN",
        show_envvar=True,
        help="Token visitors must give (in the URL once, or on the login page); generated when serving others.",
    ),
    allow_host: list[str] = typer.Option([], help="Another host name to answer to (e.g. a reverse proxy's)."),
    max_kernels: int = typer.Option(8, min=1, help="Visitors served at once (one kernel each); more see 'full'."),
    cull_idle: int = typer.Option(600, min=0, help="Shut down a kernel after this many idle seconds (0: never)."),
    browser: bool = typer.Option(False, "--browser/--no-browser", help="Also open the app in a web browser."),
    preheat: int = typer.Option(
        PREHEAT, help="Kernels kept ready with the app already run, so a visitor's first page shows at once (0: none)."
    ),
) -> None:
    """Serve one Voilà app and print its URL; Ctrl-C stops it. Local (127.0.0.1) unless --host or --public."""
    from workbench.errors import WorkbenchError
    from workbench.paths import workspace

    if preheat < 0:
        raise WorkbenchError(f"--preheat {preheat} is not a number of kernels; give 0 (none) or more")
    address = "0.0.0.0" if public else host
    token = check_token(address, token)
    port = check_port(port, address)
    notebook = stage_app(app.value, workspace())
    hosts = allowed_hosts(address, allow_host)
    shown = address if is_loopback(address) or not ipaddress.ip_address(address).is_unspecified else machine_name()
    url = f"http://{f'[{shown}]' if ':' in shown else shown}:{port}/" + (f"?token={token}" if token else "")
    typer.echo(f"{app.value}: {url}  (workspace {workspace()}; Ctrl-C to stop)")
    command = voila_command(notebook, port, browser, preheat, address, hosts, max_kernels, cull_idle)
    process = subprocess.Popen(command, cwd=notebook.parent, env=voila_environment(token), start_new_session=True)
    stop_with(process)
    try:
        while process.poll() is None:  # not wait(): the signal handler must be able to reap Voilà itself
            time.sleep(0.5)
    finally:
        if not notebook.is_relative_to(workspace()):  # staged in a temporary folder: a read-only workspace
            shutil.rmtree(notebook.parent.parent, ignore_errors=True)
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
