"""Baselines that ignore the text: a seeded random pick and the most frequent gold position.

``Random`` gives every choice a uniform score drawn from a hash of (seed, question id, position),
so a question's pick does not depend on the other rows of the frame or their order.
``MajorityPosition`` scores each position by how often it held the gold answer in training, so it
picks the most frequent gold position (the next most frequent one when a question is shorter).
"""

import hashlib
from dataclasses import dataclass

import numpy as np
import polars as pl

from workbench.baselines.base import Baseline, check_settings


@dataclass(eq=False)
class Random(Baseline):
    """A uniform random pick, seeded; its accuracy estimates chance on the questions it sees.

    >>> Random(seed=0).fit(train).predict(dev)["correct"].mean()  # about 1 / n_choices
    """

    name = "random"
    rule = "uniform pick"
    seed: int = 0

    def __post_init__(self) -> None:
        check_settings(self.seed)

    def params(self) -> dict:
        return {"seed": self.seed}

    def _fit(self, pairs: pl.DataFrame) -> None:
        pass

    def _scores(self, pairs: pl.DataFrame) -> np.ndarray:
        keys = (
            f"{self.seed}\x1f{question}\x1f{position}"
            for question, position in pairs.select("id", "position").iter_rows()
        )
        return np.array([int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest()) / 2**64 for key in keys])


@dataclass(eq=False)
class MajorityPosition(Baseline):
    """Always pick the position that held the gold answer most often in training.

    Learned: ``position_counts_`` (gold answers per position in training) and ``majority_position_``.

    >>> MajorityPosition().fit(train).majority_position_
    2
    """

    name = "majority-position"
    rule = "most frequent gold position"

    def _fit(self, pairs: pl.DataFrame) -> None:
        gold = pairs.filter("gold")["position"].to_numpy()
        width = int(pairs["n_choices"].max())
        self.position_counts_ = np.bincount(gold, minlength=width)
        self.majority_position_ = int(np.argmax(self.position_counts_))

    def _scores(self, pairs: pl.DataFrame) -> np.ndarray:
        counts = self.position_counts_
        positions = pairs["position"].to_numpy()
        seen = positions < len(counts)
        # Positions never seen in training score below every seen one; ties go to the earlier position.
        return np.where(seen, counts[np.minimum(positions, len(counts) - 1)], -1).astype(np.float64)
