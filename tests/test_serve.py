"""`workbench serve`: the port asked for or a clear error; serving others only with a token; and, served from an
installed wheel: foreign Host headers and cross-origin websockets refused, kernels capped and culled, SIGTERM."""

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def serve(*args: str, home: Path, **options) -> subprocess.CompletedProcess:
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "workbench", "serve", *args], env=env, **options)


def test_a_port_out_of_range_or_busy_is_a_clear_error_not_another_port(tmp_path):
    wrong = serve("explorer", "--port", "70000", home=tmp_path, capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "--port 70000 is not a TCP port" in wrong.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = serve("explorer", "--port", str(port), home=tmp_path, capture_output=True, text=True, timeout=60)
    assert busy.returncode == 2 and f"port {port} on 127.0.0.1 is busy" in busy.stderr
    assert "http://" not in busy.stdout  # no URL of a server that is not there


def test_the_voila_server_does_not_build_jsonschemas_iri_grammar():
    """rfc3987_syntax (0.9 CPU-s at import, under jupyter_server's event schemas) stays out of the server."""
    code = ("import sys\nimport workbench.cli.voila_server\nimport jsonschema, jupyter_events.validators\n"
            "print(sys.modules.get('rfc3987_syntax'), 'lark' in sys.modules)")  # fmt: skip
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] == ["None", "False"]


def test_serving_others_without_a_token_is_refused(tmp_path):
    from workbench.cli.serve import check_token
    from workbench.errors import WorkbenchError

    refused = serve("--public", "--token", "", home=tmp_path, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "http://" not in refused.stdout
    assert "serving to others (--host 0.0.0.0 or --public) needs a token" in " ".join(refused.stderr.split())
    with pytest.raises(WorkbenchError, match="needs a token"):
        check_token("192.168.1.20", "")
    with pytest.raises(WorkbenchError, match="too short"):
        check_token("0.0.0.0", "secret")
    assert len(check_token("0.0.0.0", None)) >= 20 and check_token("0.0.0.0", None) != check_token("0.0.0.0", None)
    assert check_token("127.0.0.1", None) is None and check_token("127.0.0.1", "") is None  # local: none needed


def request(port: int, path: str, host: str | None = None) -> tuple[int, dict[str, str], str]:
    """A GET with any ``Host:`` header: status, header fields, body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("GET", path, headers={"Host": host or f"127.0.0.1:{port}"})
        reply = connection.getresponse()
        return reply.status, dict(reply.getheaders()), reply.read().decode()
    finally:
        connection.close()


def websocket_status(port: int, kernel: str, origin: str) -> int:
    """The status of a websocket handshake to ``kernel``'s channels sent from a page of ``origin``."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(
            (
                f"GET /api/kernels/{kernel}/channels HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                f"Origin: {origin}\r\n\r\n"
            ).encode()
        )
        return int(sock.recv(4096).split(b"\r\n", 1)[0].split()[1])


def alive(pids: list[int], needle: str) -> list[int]:
    """Those of ``pids`` still running, and any process whose command line holds ``needle``."""
    found = {pid for pid in pids if Path(f"/proc/{pid}").exists()}
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if needle.encode() in cmdline.read_bytes():
                found.add(int(cmdline.parent.name))
        except (OSError, ValueError):
            pass
    return sorted(found)


@pytest.mark.slow
@pytest.mark.browser
def test_an_installed_wheel_serves_refuses_foreign_hosts_caps_culls_and_stops_on_sigterm(tmp_path, browser):
    from workbench.cli.serve import children, free_port

    source = tmp_path / "source"  # a copy: building in the checkout would leave build/ there
    skip = shutil.ignore_patterns(".*", "workspace", "test-artifacts", "build", "*.egg-info")
    shutil.copytree(ROOT, source, ignore=skip)
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path)]
    subprocess.run([*build, str(source)], check=True, timeout=300)
    (wheel,) = tmp_path.glob("probe_workbench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"voila_apps/{app}.ipynb" for app in ("explorer", "dashboard", "inoculation", "annotate")} <= names
    template = "workbench/cli/jupyter_data/voila/templates/workbench/"
    assert {template + "index.html.j2", template + "static/fontawesome/webfonts/fa-solid-900.woff2"} <= names
    assert {"workbench/site_assets/site.js", "workbench/site_assets/site.css"} <= names  # workbench publish's page

    venv = tmp_path / "venv"  # a fresh environment holding only the wheel ...
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q"]
    subprocess.run([*install, str(wheel)], check=True, timeout=300)
    site = Path(subprocess.check_output([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                        text=True).strip())  # fmt: skip
    # ... that then sees this environment's dependencies (after installing: pip must not see this checkout's)
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    notebook = site / "voila_apps" / "explorer.ipynb"  # marked: the page shows the installed copy is served
    cells = json.loads(notebook.read_text())
    cells["cells"].append(
        {"cell_type": "code", "execution_count": None, "id": "installed", "metadata": {}, "outputs": [],
         "source": "import widgets, workbench\nprint('served by', widgets.__file__, workbench.__file__)"}
    )  # fmt: skip
    notebook.write_text(json.dumps(cells))

    port, home = free_port(), tmp_path / "home"  # an empty workspace: the explorer says "no probe sets"
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")  # Voila's templates: data files of its wheel
    log = tmp_path / "serve.log"
    command = [venv / "bin" / "workbench", "serve", "explorer", f"--port={port}", "--preheat=1", "--max-kernels=1",
               "--cull-idle=3"]  # fmt: skip
    with log.open("w") as out:
        process = subprocess.Popen(command, env={**env, "WORKBENCH_HOME": str(home)}, cwd=tmp_path, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip

    def pool_filled(times: int) -> None:  # the preheated kernel is up and has run the app
        while log.read_text().count("is filled with") < times:
            assert process.poll() is None and time.time() < deadline, log.read_text()[-2000:]
            time.sleep(0.3)

    try:
        deadline = time.time() + 300  # the cull: 3 s idle after the 30 s render grace
        pool_filled(1)
        (voila,) = children(process.pid)
        status, _, body = request(port, "/", host=f"rebound.example.com:{port}")  # DNS rebinding: a foreign name
        assert status == 403 and "Unknown host name" in body and "kernelId" not in body
        assert request(port, "/api/kernels/x", host="rebound.example.com")[0] == 403
        for path in ("/voila/templates/.../../", "/voila/templates/", "/logout"):  # were 500 with a traceback
            assert request(port, path)[0] in (403, 404), path
        assert "Traceback" not in log.read_text()

        status, _, page = request(port, "/")  # the one visitor the cap allows gets the preheated kernel
        served = time.time()
        assert status == 200 and "Using pre-heated kernel" in log.read_text()
        kernel = UUID.search(page[page.index('"kernelId"') :]).group(0)
        pool_filled(2)  # the pool is refilled: a kernel more, not a visitor more
        time.sleep(max(0.0, served + 4.5 - time.time()))
        assert len(children(voila)) == 2, "the culler took the kernel of a page still loading (none connected yet)"
        status, fields, full = request(port, "/", host=f"localhost:{port}")  # a second visitor
        assert status == 503 and "The app is full" in full and "try again in a few minutes" in full.lower()
        assert fields.get("Retry-After", "").isdigit()

        assert websocket_status(port, kernel, "http://rebound.example.com") == 403  # a cross-origin page
        assert websocket_status(port, kernel, f"http://127.0.0.1:{port}") == 101  # the app's own page connects
        while len(children(voila)) > 1:  # gone again, idle 3 s: culled; the preheated kernel is kept
            assert time.time() < deadline, log.read_text()[-2000:]
            time.sleep(0.3)
        assert f"Culling 'idle' kernel 'python3' ({kernel})" in log.read_text()

        page = browser.new_page()  # a place is free again: a browser gets the app, from the installed package
        page.goto(f"http://127.0.0.1:{port}/", timeout=120_000)
        page.wait_for_selector(".wb-app-title", timeout=120_000)
        shown = page.inner_text("body")
        assert "No probe sets in the workspace yet" in shown
        assert f"served by {site}/widgets/__init__.py {site}/workbench/__init__.py" in " ".join(shown.split())
        page.close()

        started = [voila, *children(voila)]  # Voila and its kernels: the page's, the preheated one
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0 and log.read_text().rstrip().endswith("stopped")
        time.sleep(1)
        assert not alive(started, f"--port={port}"), "still running after SIGTERM"
    finally:
        if process.poll() is None:  # a failed check: stop it as a user would (Voila runs in a session of its own)
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)


def test_the_servers_log_masks_the_lab_token_and_personal_links(tmp_path):
    """Issue 60: the log wrote the full URL of 403, 404 and 503 answers, the lab's token and a person's annotation
    link in it (a person opening their link when the app is full). Every log line the apps' server writes masks
    them; the answers themselves are logged still."""
    from workbench.cli.serve import free_port, stage_app, voila_command, voila_environment
    from workbench.cli.voila_server import HIDDEN

    lab, personal = "lab-token-" + "L" * 24, "personal-" + "P" * 24
    port, home = free_port(), tmp_path / "home"
    notebook = stage_app("annotate", home)
    command = voila_command(notebook, port, max_kernels=0, cull_idle=0)  # the app is full: every visitor a 503
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=notebook.parent, env=voila_environment(lab), stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        deadline = time.time() + 120
        while True:
            try:
                request(port, "/favicon.ico")
                break
            except OSError:
                assert process.poll() is None and time.time() < deadline, log.read_text()[-2000:]
                time.sleep(0.3)
        link = f"/?token={lab}&annotator={personal}"
        assert request(port, link)[0] == 503  # the app is full
        assert request(port, link, host="rebound.example.com")[0] == 403
        assert request(port, f"/voila/templates/x?token={lab}&annotator={personal}")[0] == 404
        assert request(port, f"/?token=wrong-{lab}&annotator={personal}")[0] in (302, 403)  # a wrong lab token
        assert request(port, f"/login?next=%2F%3Ftoken%3D{lab}%26annotator%3D{personal}")[0] in (200, 302, 404)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    written = log.read_text()
    assert lab not in written and personal not in written, written[-3000:]
    for status in ("503", "403", "404"):
        assert re.search(rf"{status} GET /\S*\?token={re.escape(HIDDEN)}&annotator={re.escape(HIDDEN)}", written), (
            status, written[-3000:])  # fmt: skip


def test_a_pool_refill_waits_for_quiet_cpus_unless_a_visitor_waits_on_it():
    """A kernel started in place of one a visitor took is held while the machine is busy (at most ``refill_wait``),
    started once the CPUs are quiet, and started at once when a visitor already waits on it (it left the pool)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor
    from types import SimpleNamespace

    from workbench.cli.voila_server import CappedKernelManager

    async def held(busy: float, in_pool: bool) -> float:
        manager = SimpleNamespace(refill_delay=0.2, refill_busy=busy, refill_wait=3.0, _pools={"app.ipynb": []})
        refill = asyncio.current_task()
        if in_pool:
            manager._pools["app.ipynb"].append(refill)
        began = time.monotonic()
        await CappedKernelManager.until_quiet(manager)
        return time.monotonic() - began

    def run(busy: float, in_pool: bool) -> float:  # in a thread of its own: a browser fixture's loop may run here
        with ThreadPoolExecutor(1) as thread:
            return thread.submit(asyncio.run, held(busy, in_pool)).result()

    never_quiet, always_quiet = 0.0, 1.01  # the share of busy CPU below which the machine counts as quiet
    assert 3.0 <= run(never_quiet, in_pool=True) < 4.5  # held the whole wait, then started anyway
    assert 1.0 <= run(always_quiet, in_pool=True) < 2.0  # quiet over its first second: started
    assert run(never_quiet, in_pool=False) < 1.0  # a visitor waits on it: only the short delay
