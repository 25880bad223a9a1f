"""The automatic batch size: start from what fit last time (or a guess), halve on out-of-memory, remember what fit.

``batch_size="auto"`` suits a GPU, whose memory bounds a batch: the first batch of a run starts from the size that
fit last time for the same model fingerprint, device, dtype, scorer, kind of work and ``max_length`` (one small
JSON in the workspace, ``predictions/batch_sizes.json``), else from ``GUESS``; a forward that runs out of memory
(``torch.OutOfMemoryError``) is retried at half the size, and the size the run ended with is remembered. A fixed
batch size that runs out of memory stops with an error naming ``auto``.
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from workbench.errors import WorkbenchError
from workbench.io import write_text
from workbench.paths import cache_dir
from workbench.scoring.scorers import AUTO

GUESS = {"cuda": 256, "cpu": 32}
"""The first size tried when nothing is remembered, per device kind (other kinds: the CPU's)."""
MEMORY = "batch_sizes.json"


class BatchSize:
    """The batch size of one run: ``requested`` (a whole number, or ``"auto"``) for the work named by ``key``.

    ``run(step, features)`` calls ``step(features, size)``; in auto mode an out-of-memory error halves the size
    and returns None (the caller re-cuts the batch and tries again), and ``remember`` keeps the size that fit.
    """

    def __init__(self, requested: int | str, key: str, device: str, store: Path | None = None) -> None:
        self.auto, self.key, self._store = requested == AUTO, key, store
        guess = GUESS.get(torch.device(device).type, GUESS["cpu"])
        self.value = int(self._remembered().get(key, guess)) if self.auto else int(requested)

    def run(self, step: Callable[[list, int], Any], features: list) -> Any | None:
        """``step(features, size)``, or None after halving the size on out-of-memory (auto mode)."""
        try:
            return step(features, self.value)
        except torch.OutOfMemoryError as err:
            if not self.auto:
                raise WorkbenchError(
                    f"out of memory at batch size {self.value}; pass a smaller batch size, or batch_size='auto' "
                    "(--batch-size auto), which halves it until it fits and remembers what fit"
                ) from err
            if self.value == 1:
                raise WorkbenchError(
                    "out of memory at batch size 1; use a smaller max_length, dtype='bfloat16', or "
                    "device_map='auto' to spread the model over more devices"
                ) from err
        # out of the except block: the failed batch's tensors, held by the traceback, are freed before the retry
        self.value //= 2
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        return None

    def remember(self) -> None:
        """Keep the size that fit (auto mode), for the next run of the same work."""
        if not self.auto:
            return
        known = self._remembered()
        if known.get(self.key) != self.value:
            write_text(json.dumps({**known, self.key: self.value}, indent=0, sort_keys=True), self.store)

    @property
    def store(self) -> Path:
        """The JSON file of remembered sizes (default: the workspace's)."""
        return self._store or cache_dir("predictions") / MEMORY

    def _remembered(self) -> dict[str, int]:
        return json.loads(self.store.read_text(encoding="utf-8")) if self.store.exists() else {}
