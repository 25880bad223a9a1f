"""`workbench serve`: the port asked for or a clear error, a clean stop on SIGTERM, apps inside the wheel."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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


@pytest.mark.slow
def test_sigterm_stops_voila_and_every_kernel_it_started(tmp_path):
    from workbench.cli.serve import children, free_port

    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "workbench", "serve", "inoculation", "--port", str(free_port()), "--preheat", "1"],
            env={**os.environ, "WORKBENCH_HOME": str(tmp_path)}, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.time() + 180
        while "is filled with" not in log.read_text():  # the preheated kernel is up and has run the app
            assert process.poll() is None and time.time() < deadline, log.read_text()[-2000:]
            time.sleep(0.5)
        (voila,) = children(process.pid)
        kernels = children(voila)
        assert kernels, "Voila started no kernel"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0 and log.read_text().rstrip().endswith("stopped")
        time.sleep(1)
        alive = [pid for pid in (voila, *kernels) if Path(f"/proc/{pid}").exists()]
        assert not alive, f"still running after SIGTERM: {alive}"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


@pytest.mark.slow
def test_the_wheel_carries_the_apps_and_their_template(tmp_path):
    source = tmp_path / "source"  # a copy: building in the checkout would leave build/ there
    skip = shutil.ignore_patterns(".*", "workspace", "test-artifacts", "build", "*.egg-info")
    shutil.copytree(ROOT, source, ignore=skip)
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path)]
    subprocess.run([*build, str(source)], check=True, timeout=300)
    (wheel,) = tmp_path.glob("probe_workbench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"voila_apps/{app}.ipynb" for app in ("explorer", "dashboard", "inoculation")} <= names
    template = "workbench/cli/jupyter_data/voila/templates/workbench/"
    assert {template + "index.html.j2", template + "static/fontawesome/webfonts/fa-solid-900.woff2"} <= names
