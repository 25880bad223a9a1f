"""A pytest plugin for ``bench_suite`` (``cpu=True``): each test's CPU seconds, as one JSON line per test in
``$SUITE_CPU_OUT/<worker>.jsonl``: this process's (``self``: the test's own work in the worker) and its waited-for
children's (``children``: the commands, kernels, servers and browsers it started and reaped), from ``getrusage``."""

import json
import os
import resource
import time

import pytest


def _cpu() -> tuple[float, float]:
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, reaped.ru_utime + reaped.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    (own, reaped), began = _cpu(), time.time()
    yield
    (own_after, reaped_after), ended = _cpu(), time.time()
    line = {"id": item.nodeid, "self": own_after - own, "children": reaped_after - reaped, "wall": ended - began}
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(os.environ["SUITE_CPU_OUT"], f"{worker}.jsonl"), "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
