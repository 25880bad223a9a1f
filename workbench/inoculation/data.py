"""The original task's data: science multiple-choice QA (ARC, OpenBookQA, SciQ) as probe-shaped frames.

``read_mcqa`` reads one JSONL file into a ``PROBE_SCHEMA`` frame (``probe="mcqa"``) so the same training
and scoring code serves the original task and the probes. Choices keep their natural number (ARC has
3, 4 or 5). The paper made every science set 5-way by adding empty answers (R&S 2020 §4.2): ``five_way``
does that, and training a source model, its aggregate dev set (``aggregate_dev``, S_orig) and add-some's
held-out questions use it. Any set left ragged is padded *at batch time* (``workbench.inoculation.train``):
missing choices are masked slots whose logit is -inf, so they can never be predicted.

>>> frame = read_mcqa("../shared/data/mcqa/arc_easy/dev.jsonl")  # doctest: +SKIP
>>> frame["choices"].list.len().max()  # doctest: +SKIP
5
"""

import hashlib
import json
import random
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from workbench.errors import ProbeFormatError, WorkbenchError
from workbench.io import staged_folder
from workbench.schema import PROBE_SCHEMA, SPLITS, conform

MAX_CHOICES = 5  # the paper's padded width
ARC_FORMAT = '{"id", "question": {"stem", "choices": [{"text", "label"}, ...]}, "answerKey"}'
SCIQ_FORMAT = '{"question", "correct_answer", "distractor1", "distractor2", "distractor3"}'


def read_mcqa(path: str | Path, n_choices: int | None = None) -> pl.DataFrame:
    """Read an ARC-style (or SciQ) JSONL file into a ``PROBE_SCHEMA`` frame, one row per question.

    ``n_choices``: require exactly this many choices per question (None: any number from 2 to 5).
    ``split`` comes from the file name (``dev.jsonl``), ``source`` from the folder (``arc_easy``).
    SciQ records (no letters) get their four options in a fixed, seeded order per question.
    Every problem raises a ``ProbeFormatError`` naming the file and line.
    """
    path = Path(path)
    if not path.is_file():
        raise ProbeFormatError(f"no MCQA file at {path}; give a JSONL file in the ARC format {ARC_FORMAT}")
    split = next((s for s in SPLITS if path.stem == s or path.stem.endswith(f"_{s}")), "")
    source = path.parent.name or "mcqa"
    rows = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                rows.append(_row(line, path, number, n_choices, split, source))
    if not rows:
        raise ProbeFormatError(f"{path} holds no questions; give one JSON object per line in the format {ARC_FORMAT}")
    return conform(pl.DataFrame(rows, schema=PROBE_SCHEMA), PROBE_SCHEMA, f"MCQA file {path}")


def five_way(frame: pl.DataFrame) -> pl.DataFrame:
    """Every question padded to ``MAX_CHOICES`` with empty answers, as R&S 2020 §4.2 made its science sets 5-way.

    >>> five_way(read_mcqa("arc_easy/dev.jsonl"))["choices"].list.len().unique().to_list()  # doctest: +SKIP
    [5]
    """
    padding = pl.lit([""] * MAX_CHOICES, dtype=pl.List(pl.String)).list.head(MAX_CHOICES - pl.col("choices").list.len())
    return frame.with_columns(choices=pl.concat_list("choices", padding))


def aggregate_dev(folders: Sequence[str | Path]) -> pl.DataFrame:
    """The aggregate science dev set of R&S 2020 §4.2: the union of the folders' ``dev.jsonl``, made 5-way."""
    return five_way(pl.concat([read_mcqa_dir(folder, ("dev",)) for folder in folders]))


def read_mcqa_dir(folder: str | Path, splits: Sequence[str] = SPLITS, n_choices: int | None = None) -> pl.DataFrame:
    """The ``{train,dev,test}.jsonl`` files of ``folder`` that exist among ``splits``, in one frame."""
    folder = Path(folder)
    files = [folder / f"{split}.jsonl" for split in splits if (folder / f"{split}.jsonl").is_file()]
    if not files:
        raise WorkbenchError(
            f"{folder} has none of {[f'{s}.jsonl' for s in splits]}; point at a folder of ARC-style JSONL splits"
        )
    return pl.concat([read_mcqa(file, n_choices) for file in files])


def _row(line: str, path: Path, number: int, n_choices: int | None, split: str, source: str) -> dict:
    def fail(problem: str, fix: str) -> ProbeFormatError:
        return ProbeFormatError(f"{path}, line {number}: {problem}; {fix}")

    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise fail(
            f"not valid JSON ({err.msg} at column {err.colno})", f"write one object per line: {ARC_FORMAT}"
        ) from err
    if not isinstance(record, dict):
        raise fail(f"a JSON {type(record).__name__}, not an object", f"write {ARC_FORMAT}")
    if "correct_answer" in record:
        stem, choices, answer, record_id = _sciq(record, fail, path, number)
    else:
        stem, choices, answer, record_id = _arc(record, fail)
    if not 2 <= len(choices) <= MAX_CHOICES:
        raise fail(f"{len(choices)} choices", f"give 2 to {MAX_CHOICES} choices")
    if n_choices is not None and len(choices) != n_choices:
        raise fail(
            f"{len(choices)} choices where {n_choices} were asked for", "drop the question or pass n_choices=None"
        )
    return {
        "id": record_id, "probe": "mcqa", "source": source, "split": split, "cluster_id": f"mcqa:{record_id}",
        "concept": "", "pos": "", "word": "", "context": "", "template": "mcqa", "question": stem,
        "choices": choices, "answer": answer, "gold_concept": "", "hops": 0, "chain": [],
        "distractor_family": "", "distractor_depth": 0, "distractor_concepts": [], "n_random_fill": 0,
    }  # fmt: skip


def _arc(record: dict, fail) -> tuple[str, list[str], int, str]:
    question = record.get("question")
    stem = question.get("stem") if isinstance(question, dict) else None
    choices = question.get("choices") if isinstance(question, dict) else None
    if not isinstance(stem, str) or not stem.strip():
        raise fail("no question.stem string", f"give every record one: {ARC_FORMAT}")
    if not isinstance(choices, list) or not all(
        isinstance(c, dict) and isinstance(c.get("text"), str) and c["text"].strip() and "label" in c for c in choices
    ):
        raise fail("question.choices is not a list of {text, label} objects with non-empty text", f"write {ARC_FORMAT}")
    labels = [str(c["label"]) for c in choices]
    key = str(record.get("answerKey"))
    if key not in labels:
        raise fail(
            f"answerKey {record.get('answerKey')!r} is not among the labels {labels}", "fix the answerKey or the labels"
        )
    record_id = str(record.get("id") or hashlib.sha1(stem.encode()).hexdigest()[:16])
    return stem, [c["text"] for c in choices], labels.index(key), record_id


def _sciq(record: dict, fail, path: Path, number: int) -> tuple[str, list[str], int, str]:
    fields = ["question", "correct_answer", "distractor1", "distractor2", "distractor3"]
    values = [record.get(name) for name in fields]
    if not all(isinstance(value, str) and value.strip() for value in values):
        raise fail("a SciQ record lacks a non-empty question, correct_answer or distractor", f"write {SCIQ_FORMAT}")
    stem, gold, *distractors = values
    order = [gold, *distractors]
    seed = int(hashlib.sha1(stem.encode()).hexdigest()[:8], 16)
    random.Random(seed).shuffle(order)
    record_id = f"sciq-{path.stem}-{number}"
    return stem, order, order.index(gold), record_id


HUB_SETS = {  # name -> (Hugging Face dataset, configuration): the standard science QA sets
    "arc_easy": ("allenai/ai2_arc", "ARC-Easy"),
    "arc_challenge": ("allenai/ai2_arc", "ARC-Challenge"),
    "openbookqa": ("allenai/openbookqa", "main"),
    "sciq": ("allenai/sciq", None),
}
HUB_SPLITS = {"train": "train", "validation": "dev", "test": "test"}


def hub_record(row: dict) -> dict:
    """A hub row of ARC, OpenBookQA or SciQ as a line ``read_mcqa`` reads (ARC's format, or SciQ's own).

    >>> hub_record({"id": "q1", "question_stem": "What melts?", "answerKey": "B",
    ...             "choices": {"text": ["rock", "ice"], "label": ["A", "B"]}})["question"]["stem"]
    'What melts?'
    """
    if "correct_answer" in row:  # SciQ
        return {name: row[name] for name in ("question", "distractor1", "distractor2", "distractor3", "correct_answer")}
    choices = [{"text": text, "label": label} for text, label in zip(row["choices"]["text"], row["choices"]["label"])]
    stem = row.get("question_stem") or row["question"]
    return {"id": row["id"], "question": {"stem": stem, "choices": choices}, "answerKey": row["answerKey"]}


def fetch_mcqa(name: str, out: str | Path) -> Path:
    """Download a standard science QA set from the Hugging Face hub into ``out/{train,dev,test}.jsonl``.

    Needs internet (and ``datasets``); without it, the error says how to bring the files yourself. The folder
    is published in one step, so ``read_mcqa_dir(out)`` reads all of it or nothing.

    >>> fetch_mcqa("arc_easy", workspace() / "mcqa" / "arc_easy")  # doctest: +SKIP
    """
    if name not in HUB_SETS:
        raise WorkbenchError(f"{name!r} is not a science QA set we know; choose one of {list(HUB_SETS)}")
    repo, config = HUB_SETS[name]
    try:
        from datasets import load_dataset

        splits = load_dataset(repo, config)
    except Exception as err:  # offline, hub down, no such dataset: the same advice
        raise WorkbenchError(
            f"cannot fetch {name} ({repo}) from the Hugging Face hub ({type(err).__name__}: "
            f"{(str(err).splitlines() or [''])[0]}). With no internet, copy its {{train,dev,test}}.jsonl "
            f"(ARC format {ARC_FORMAT}, or SciQ's) into {out}"
        ) from err
    with staged_folder(out) as folder:
        for hub_split, split in HUB_SPLITS.items():
            if hub_split in splits:
                lines = (json.dumps(hub_record(row)) for row in splits[hub_split])
                (folder / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Path(out)
