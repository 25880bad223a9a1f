"""``bench_suite``'s process census (``processes=True``), copied beside the clone as ``sitecustomize.py`` on
``PYTHONPATH``, so that every Python process of the run loads it: at exit (or on a SIGTERM it would die of), one JSON
line in ``$SUITE_PROCESSES_OUT/<pid>.jsonl``: its command line, its CPU seconds, which of the costly packages it
imported, and the test that started it (``PYTEST_CURRENT_TEST``, inherited). A process killed by SIGKILL writes
nothing. Measurement only: never part of the workbench or its tests."""

import atexit
import json
import os
import signal
import sys

PACKAGES = ("torch", "transformers", "altair", "sklearn", "nltk", "ipykernel", "jupyter_server", "voila", "ray",
            "llama_cpp", "pytest")  # fmt: skip
_written = []


def _write() -> None:
    if _written:
        return
    _written.append(True)
    times = os.times()
    line = {"argv": [arg[:120] for arg in sys.argv[:4]], "cpu": times.user + times.system,
            "imported": [name for name in PACKAGES if sys.modules.get(name) is not None],
            "test": os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]}  # fmt: skip
    try:
        with open(os.path.join(os.environ["SUITE_PROCESSES_OUT"], f"{os.getpid()}.jsonl"), "a") as out:
            out.write(json.dumps(line) + "\n")
    except OSError:
        pass


def _on_term(signum, frame) -> None:
    _write()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


if os.environ.get("SUITE_PROCESSES_OUT"):
    atexit.register(_write)
    try:  # a process that sets its own handler later replaces this one; its own exit path then runs atexit
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_term)
    except ValueError:  # not the main thread
        pass
