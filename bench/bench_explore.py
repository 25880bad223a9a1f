"""``make explore`` on a fresh clone, step by step, with the Makefile's own targets: a ``git clone`` of this commit
into a temporary folder, then

  setup   ``make explore-setup``: a fresh ``.venv`` (the Debian part is a no-op where WordNet is installed) and
          ``pip install -e .`` from the machine's package indexes (no download is timed where they are local);
  data    ``make explore-data``: ``workbench data setup`` into the clone's empty workspace (WordNet and GCIDE
          found, both graphs cached as Parquet);
  probes  ``make explore-probes``: the five probe sets;
  score   ``make explore-score``: MiniLM on at most 400 questions of the hypernymy test split;
  serve   ``make explore``: from the command until the explorer's page answers HTTP 200 (``seconds``) and until its
          whole page has come (``page_s``: Voilà sends it as the app runs), checked to hold the app's widgets; then
          Ctrl-C (SIGINT), as a user stops it.

Each step runs with the earlier ones marked done (``make -o explore-setup ...``), so each is timed alone.
``before``: also time ``make setup`` (the suite's set-up, every extra: what ``make explore`` ran before it had a set-up
of its own) in a second fresh clone, so the row ``make explore before`` (that set-up, then the same steps) is measured
in the same run; every ``ratio`` is over it. ``cache``: ``empty`` gives each set-up an empty pip cache of its own (a
fresh machine: llama-cpp-python compiles llama.cpp), ``warm`` uses this machine's (``llama_wheel_cached`` says
whether it held a built llama-cpp-python). Each row has the 1-minute load average at its end (``load``): the machine
is shared; run it under ``nice -n 10`` there.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil  # installed with IPython

ROOT = Path(__file__).resolve().parents[1]
STEPS = (("data", "explore-data"), ("probes", "explore-probes"), ("score", "explore-score"))
PAGE_TIMEOUT_S = 600
WIDGET = b"application/vnd.jupyter.widget-view+json"  # in the page: the app ran and showed its panel


def clean_environment(cache: Path | None) -> dict[str, str]:
    """This environment without what points at this checkout (its venv, PYTHONPATH, WORKBENCH_HOME: the Makefile
    sets the clone's own), with pip's cache at ``cache`` where given."""
    venv = os.environ.get("VIRTUAL_ENV")
    path = [part for part in os.environ.get("PATH", "").split(os.pathsep)
            if part != str(Path(sys.executable).parent) and not (venv and part.startswith(venv))]  # fmt: skip
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV", "WORKBENCH_HOME", "PIP_NO_CACHE_DIR")}  # fmt: skip
    return {**env, "PATH": os.pathsep.join(path), **({"PIP_CACHE_DIR": str(cache)} if cache else {})}


def clone(folder: Path) -> Path:
    """A fresh clone of this checkout's commit (what is committed: a dirty tree's changes are not in it)."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(folder)], check=True)
    subprocess.run(["git", "checkout", "--quiet", head.stdout.strip()], cwd=folder, check=True)
    return folder


def make(folder: Path, target: str, env: dict[str, str], done: tuple[str, ...] = ()) -> float:
    """Seconds ``make TARGET`` takes in ``folder``, the targets ``done`` not made again; its output in a log."""
    log = folder.parent / f"make-{folder.name}-{target}.log"
    start = time.perf_counter()
    with log.open("w") as out:
        finished = subprocess.run(["make", *(f"-o{name}" for name in done), target], cwd=folder, env=env,
                                  stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    seconds = time.perf_counter() - start
    if finished.returncode != 0:
        raise RuntimeError(f"make {target} failed ({finished.returncode}): {log.read_text()[-3000:]}")
    return seconds


def llama_wheel_cached(env: dict[str, str]) -> bool:
    """Whether pip's cache (``env``'s) holds a built llama-cpp-python wheel, which spares its compile."""
    found = subprocess.run([sys.executable, "-m", "pip", "cache", "list", "llama_cpp_python", "--format=abspath"],
                           env=env, capture_output=True, text=True)  # fmt: skip
    return found.returncode == 0 and ".whl" in found.stdout


def venv_mib(folder: Path) -> float:
    """The size of the clone's .venv on disk, in MiB."""
    total = sum(entry.stat(follow_symlinks=False).st_size for entry in (folder / ".venv").rglob("*"))
    return round(total / 2**20)


def load() -> float:
    return round(os.getloadavg()[0], 2)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def setup(folder: Path, target: str, cache: str, scratch: Path) -> dict:
    """One fresh clone's set-up by ``make TARGET``, with an empty pip cache of its own or this machine's."""
    env = clean_environment(scratch / f"pip-cache-{target}" if cache == "empty" else None)
    cached = llama_wheel_cached(env)
    seconds = make(clone(folder), target, env)
    return {"seconds": seconds, "venv_mib": venv_mib(folder), "llama_wheel_cached": cached, "load": load()}


def first_page(folder: Path, env: dict[str, str], done: tuple[str, ...]) -> dict:
    """``make explore`` (its earlier steps done) until the explorer answers HTTP 200 and its page has come; then
    Ctrl-C to make's process group, as a user stops it."""
    port = free_port()
    log = folder.parent / "make-explore-serve.log"
    start = time.perf_counter()
    with log.open("w") as out:
        server = subprocess.Popen(["make", *(f"-o{name}" for name in done), "explore", f"PORT={port}"], cwd=folder,
                                  env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        while True:
            if server.poll() is not None or time.perf_counter() - start > PAGE_TIMEOUT_S:
                raise RuntimeError(f"the explorer did not answer on port {port}: {log.read_text()[-3000:]}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=PAGE_TIMEOUT_S) as response:
                    answered, status = time.perf_counter() - start, response.status
                    page = response.read()
                    break
            time.sleep(0.2)
        whole = time.perf_counter() - start
    finally:
        os.killpg(server.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=60)
        stop_left_over(folder)
    if status != 200 or WIDGET not in page:
        raise RuntimeError(f"the explorer answered {status} without its panel: {page[-2000:]!r}")
    return {"seconds": answered, "page_s": whole, "page_kib": round(len(page) / 1024), "load": load()}


def stop_left_over(folder: Path) -> None:
    """Kill what the clone's server left running (Voilà and its kernels run in sessions of their own): every process
    of this user whose working folder is inside the clone."""
    for process in psutil.process_iter(["cwd"]):
        cwd = process.info.get("cwd")
        if cwd and Path(cwd).is_relative_to(folder) and process.pid != os.getpid():
            with contextlib.suppress(psutil.Error):
                process.kill()


def fresh_clone(cache: str = "empty", before: bool = True) -> list[dict]:
    """One round of ``make explore`` on a fresh clone, step by step (module docstring)."""
    if cache not in ("empty", "warm"):
        raise ValueError(f"cache={cache!r} is not 'empty' (a fresh machine's pip cache) or 'warm' (this machine's)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-explore-") as scratch:
        scratch = Path(scratch)
        if before:
            rows.append({"measure": "setup before: make setup (every extra, as make explore ran it)",
                         **setup(scratch / "suite", "setup", cache, scratch)})  # fmt: skip
            subprocess.run(["rm", "-rf", str(scratch / "suite")], check=True)  # its venv: GBs of disk
        folder = scratch / "explore"
        ours = {"measure": "setup: make explore-setup", **setup(folder, "explore-setup", cache, scratch)}
        rows.append(ours)
        env, done = clean_environment(None), ("explore-setup",)
        for step, target in STEPS:
            rows.append({"measure": f"{step}: make {target}", "seconds": make(folder, target, env, done),
                         "load": load()})  # fmt: skip
            done += (target,)
        rows.append({"measure": "serve: make explore, to the explorer's first HTTP 200",
                     **first_page(folder, env, done)})  # fmt: skip
    steps = sum(row["seconds"] for row in rows if not row["measure"].startswith("setup"))
    total = [{"measure": "make explore", "seconds": ours["seconds"] + steps}]
    if before:
        total.insert(0, {"measure": "make explore before", "seconds": rows[0]["seconds"] + steps})
    return [*total, *rows]
