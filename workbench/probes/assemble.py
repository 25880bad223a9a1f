"""From drafted questions to a probe frame: gold positions balanced, ids, duplicates dropped."""

import hashlib
import random
from dataclasses import dataclass

import polars as pl
import pyarrow as pa

from workbench.errors import WorkbenchError
from workbench.schema import PROBE_SCHEMA, cluster_id, conform


@dataclass(frozen=True)
class Draft:
    """One question before its gold answer is placed among the distractors."""

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
    columns: dict[str, list] = {name: [] for name in PROBE_SCHEMA}
    for draft, answer in zip(drafts, positions):  # columns, not a dict per row: a Series per list cell is slow
        choices = list(draft.distractors)
        choices.insert(answer, draft.gold)
        for name, value in (
            ("id", question_id(probe, draft.question, choices, answer)),
            ("cluster_id", cluster_id(probe, draft.concept)),
            ("concept", draft.concept),
            ("pos", draft.pos),
            ("word", draft.word),
            ("context", draft.context),
            ("template", draft.template),
            ("question", draft.question),
            ("choices", choices),
            ("answer", answer),
            ("gold_concept", draft.gold_concept),
            ("hops", draft.hops),
            ("chain", list(draft.chain)),
            ("distractor_family", draft.family),
            ("distractor_depth", draft.depth),
            ("distractor_concepts", list(draft.distractor_concepts)),
            ("n_random_fill", draft.n_random_fill),
        ):
            columns[name].append(value)
    constant = {"probe": probe, "source": source, "split": ""}
    for name, value in constant.items():
        columns[name] = [value] * len(drafts)
    for name in ("choices", "chain", "distractor_concepts"):  # pyarrow converts nested lists in one call
        columns[name] = pl.from_arrow(pa.array(columns[name], type=pa.large_list(pa.large_string())))
    frame = pl.DataFrame(columns, schema=PROBE_SCHEMA)
    return conform(frame.unique(subset="id", keep="first", maintain_order=True), PROBE_SCHEMA)
