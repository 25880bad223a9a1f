"""A local Ray for the tests, started so that a loaded machine (a 2-core host running other suites) does not fail it.

Ray 2.60 waits a fixed 30 s for its raylet to register (``ray/_private/node.py``: "The current node timed out during
startup"; no option or environment variable sets it), so a start that times out is shut down and tried again, up to
``TRIES`` times; a worker may take up to ``REGISTER_S`` to register (Ray's ``worker_register_timeout_seconds``,
60 s by default, set through ``_system_config``).
"""

import contextlib
import time
from collections.abc import Iterator

import pytest

TRIES = 3
REGISTER_S = 600


@contextlib.contextmanager
def local_ray(cpus: int = 2) -> Iterator[object]:
    """``ray`` initialised with ``cpus`` CPUs and no GPU for the block, then shut down."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        ray.shutdown()
    for attempt in range(1, TRIES + 1):
        try:
            ray.init(num_cpus=cpus, num_gpus=0, include_dashboard=False, log_to_driver=False,
                     _system_config={"worker_register_timeout_seconds": REGISTER_S})  # fmt: skip
            break
        except Exception as err:  # Ray raises a bare Exception for this
            ray.shutdown()
            if "timed out during startup" not in str(err) or attempt == TRIES:
                raise
            time.sleep(5 * attempt)
    try:
        yield ray
    finally:
        ray.shutdown()
