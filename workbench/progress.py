"""Progress bars that help in a terminal or a notebook and stay out of log files.

``ProgressBar`` is ``tqdm.auto.tqdm`` (a widget in Jupyter, a bar in a terminal). When the output is neither a
terminal nor a notebook (a log file, a CI job, ``nohup``), it redraws at most every ``LOG_INTERVAL_S`` seconds
instead of many times a second, so a long run leaves a few lines of progress, not thousands.

    >>> for item in ProgressBar(items, desc="scoring", unit="question"):  # doctest: +SKIP
    ...     work(item)
"""

import sys

from tqdm.auto import tqdm

LOG_INTERVAL_S = 30.0


def interactive() -> bool:
    """Whether progress is seen as it happens: stderr is a terminal, or this is a Jupyter (or Voilà) kernel."""
    return sys.stderr.isatty() or "ipykernel" in sys.modules


class ProgressBar(tqdm):
    """``tqdm.auto.tqdm``, redrawn at most every ``LOG_INTERVAL_S`` seconds when nobody watches it live."""

    def __init__(self, *args, **kwargs) -> None:
        if not interactive():
            kwargs["mininterval"] = max(kwargs.get("mininterval", 0.1), LOG_INTERVAL_S)
        super().__init__(*args, **kwargs)
