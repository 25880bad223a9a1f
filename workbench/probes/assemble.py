"""From drafted questions to a probe frame: gold positions balanced, ids, duplicates dropped."""

import hashlib
import random
from typing import NamedTuple

import polars as pl
import pyarrow as pa

from workbench.errors import WorkbenchError
from workbench.schema import PROBE_SCHEMA, cluster_id, conform


class Draft(NamedTuple):
    """One question before its gold answer is placed among the distractors (a tuple: a build makes hundreds of
    thousands, and a frozen dataclass took three times as long to make)."""

    concept: str
    pos: str
    word: str
    context: str
    template: str
    question: str
    gold: str
    distractors: tuple[str, ...]
    gold_concept: str
    hops: int
    chain: tuple[str, ...]
    family: str
    depth: int
    distractor_concepts: tuple[str, ...]
    n_random_fill: int


def question_id(probe: str, question: str, choices: list[str], answer: int) -> str:
    """A stable id from the question's content."""
    digest = hashlib.sha1("\x1f".join([probe, question, *choices, str(answer)]).encode()).hexdigest()
    return f"{probe}-{digest[:16]}"


def assemble(drafts: list[Draft], probe: str, source: str, seed: int) -> pl.DataFrame:
    """A ``PROBE_SCHEMA`` frame from ``drafts``: gold positions exactly balanced, duplicates dropped.

    Positions are a seeded permutation of 0,1,..,n_choices-1 repeated, so every position holds the
    gold answer equally often (to within one question).
    """
    if not drafts:
        raise WorkbenchError(
            f"no {probe} questions could be built with these settings; widen them "
            "(more hops, more distractor families, a larger depth) or check the knowledge source"
        )
    n_choices = len(drafts[0].distractors) + 1
    positions = [index % n_choices for index in range(len(drafts))]
    random.Random(f"{seed}:{probe}:positions").shuffle(positions)
    choices = []
    for draft, answer in zip(drafts, positions):
        row = list(draft.distractors)
        row.insert(answer, draft.gold)
        choices.append(row)
    columns: dict[str, list] = {  # column by column, not a dict per row: a Series per list cell is slow
        "id": [question_id(probe, d.question, row, answer) for d, row, answer in zip(drafts, choices, positions)],
        "probe": [probe] * len(drafts),
        "source": [source] * len(drafts),
        "split": [""] * len(drafts),
        "population": [""] * len(drafts),
        "cluster_id": [cluster_id(probe, d.concept) for d in drafts],
        "choices": choices,
        "answer": positions,
        "chain": [list(d.chain) for d in drafts],
        "distractor_family": [d.family for d in drafts],
        "distractor_depth": [d.depth for d in drafts],
        "distractor_concepts": [list(d.distractor_concepts) for d in drafts],
    }
    for name in ("concept", "pos", "word", "context", "template", "question", "gold_concept", "hops", "n_random_fill"):
        columns[name] = [getattr(d, name) for d in drafts]
    for name in ("choices", "chain", "distractor_concepts"):  # pyarrow converts nested lists in one call
        columns[name] = pl.from_arrow(pa.array(columns[name], type=pa.large_list(pa.large_string())))
    frame = pl.DataFrame({name: columns[name] for name in PROBE_SCHEMA}, schema=PROBE_SCHEMA)
    return conform(frame.unique(subset="id", keep="first", maintain_order=True), PROBE_SCHEMA)
