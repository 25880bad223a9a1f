"""transformers' load report and progress bars silenced inside a block, for every module that loads a network
(``models``, ``gguf``): we report what matters ourselves."""

import contextlib
from collections.abc import Iterator

from transformers.utils import logging as hf_logging


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' load report and progress bar inside the block, then restore its settings."""
    verbosity, bar = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bar:
            hf_logging.enable_progress_bar()
