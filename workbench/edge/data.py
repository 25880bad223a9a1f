"""Edge-probing data (Tenney et al. 2019; jiant's JSONL): one row per labelled span of a sentence.

``EDGE_SCHEMA``: the sentence as words joined by single spaces, the span(s) as word offsets
(end exclusive, as jiant writes them), the label, the split, and ``word`` (the span's text,
lowercased: the item the memorisation audit and the control task key on).

Two tasks built offline from our own sources:
- ``supersense``: the WordNet lexicographer file (``noun.animal``, ``verb.motion``...) of the
  target word in each WordNet example sentence;
- ``gcide-pos``: the part of speech (n, v, a, r) of the headword in GCIDE usage examples.
Rows are split train/dev/test at random by sentence (seeded), as jiant's tasks are, so the
same word type can sit in train and test: that is what ``workbench.edge.audit`` measures.

>>> frame = supersense_task(load_graph("wordnet"), n=5000, seed=0)  # doctest: +SKIP
>>> write_jiant(frame, "edge/supersense")  # train.jsonl, dev.jsonl, test.jsonl  # doctest: +SKIP
"""

import hashlib
import json
import re
from pathlib import Path

import polars as pl

from workbench.errors import ProbeFormatError, SpecError
from workbench.io import write_text
from workbench.schema import conform

EDGE_TASKS = ("supersense", "gcide-pos")
EDGE_SPLITS = ("train", "dev", "test")
EDGE_SCHEMA: dict[str, pl.DataType] = {
    "id": pl.String(),  # stable id of the target (hash of task, text and spans)
    "task": pl.String(),
    "split": pl.String(),  # train, dev, test
    "text": pl.String(),  # words joined by single spaces
    "span1_start": pl.Int64(),  # first word of span 1
    "span1_end": pl.Int64(),  # one past its last word
    "span2_start": pl.Int64(),  # span 2 of two-span tasks, else null
    "span2_end": pl.Int64(),
    "label": pl.String(),
    "word": pl.String(),  # the span text(s), lowercased: the memorisation / control-task item
}
_WORDS = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")


def words_of(text: str) -> list[str]:
    """Split text into words and punctuation marks (the jiant convention: tokens joined by spaces).

    >>> words_of("the dog's bark, loud.")
    ['the', "dog's", 'bark', ',', 'loud', '.']
    """
    return _WORDS.findall(text)


def _find(words: list[str], target: list[str]) -> int:
    lowered, wanted = [w.lower() for w in words], [w.lower() for w in target]
    for start in range(len(words) - len(target) + 1):
        if lowered[start : start + len(target)] == wanted:
            return start
    return -1


def _rows_from_examples(task: str, examples: pl.DataFrame, n: int | None, seed: int, shares=(0.8, 0.1)) -> pl.DataFrame:
    """Examples (``example``, ``surface``, ``label``) as edge rows with one span each, split by sentence."""
    if n is not None and not (isinstance(n, int) and n >= 10):
        raise SpecError(f"n={n!r} is out of range; use None (all) or a whole number >= 10")
    examples = examples.filter(pl.col("surface") != "").unique(["example", "surface"], maintain_order=True)
    examples = examples.sample(fraction=1.0, shuffle=True, seed=seed)
    rows = []
    for example, surface, label in examples.select("example", "surface", "label").iter_rows():
        words, target = words_of(example), words_of(surface)
        start = _find(words, target) if target else -1
        if start < 0:
            continue
        text = " ".join(words)
        rows.append((text, start, start + len(target), label, " ".join(target).lower()))
        if n is not None and len(rows) >= n:
            break
    frame = pl.DataFrame(rows, schema=["text", "span1_start", "span1_end", "label", "word"], orient="row")
    count = frame.height
    cut_train, cut_dev = int(count * shares[0]), int(count * (shares[0] + shares[1]))
    frame = frame.with_columns(
        task=pl.lit(task),
        split=pl.when(pl.int_range(pl.len()) < cut_train).then(pl.lit("train"))
        .when(pl.int_range(pl.len()) < cut_dev).then(pl.lit("dev"))
        .otherwise(pl.lit("test")),
        span2_start=pl.lit(None, pl.Int64), span2_end=pl.lit(None, pl.Int64),
    )  # fmt: skip
    return _with_ids(frame)


def supersense_task(graph, n: int | None = 5000, seed: int = 0) -> pl.DataFrame:
    """The WordNet supersense (lexicographer file) of the target word of ``n`` example sentences."""
    examples = graph.examples.join(graph.concepts.select("id", pl.col("lexname").alias("label")), on="id")
    return _rows_from_examples("supersense", examples, n, seed)


def gcide_pos_task(graph, n: int | None = 5000, seed: int = 0) -> pl.DataFrame:
    """The part of speech (n, v, a, r) of the headword in ``n`` GCIDE usage examples."""
    examples = graph.examples.join(graph.concepts.select("id", pl.col("pos").alias("label")), on="id")
    return _rows_from_examples("gcide-pos", examples.filter(pl.col("label").is_in(["n", "v", "a", "r"])), n, seed)


def _with_ids(frame: pl.DataFrame) -> pl.DataFrame:
    key = pl.concat_str(
        [
            pl.col("task"),
            pl.col("text"),
            *(
                pl.col(c).cast(pl.String).fill_null("")
                for c in ("span1_start", "span1_end", "span2_start", "span2_end")
            ),
        ],
        separator="\x1f",
    )
    frame = frame.with_columns(
        id=key.map_elements(lambda s: hashlib.sha256(s.encode()).hexdigest()[:16], return_dtype=pl.String)
    )
    return conform(frame, EDGE_SCHEMA, "edge frame")


def read_jiant(path: str | Path, task: str | None = None) -> pl.DataFrame:
    """Read jiant edge-probing JSONL (a file, or a folder of ``{train,dev,test}.jsonl``) into ``EDGE_SCHEMA``.

    Each line: ``{"text": "w1 w2 ...", "targets": [{"span1": [s, e], "label": "x", "span2": [s, e]?}],
    "info": {...}?}``.
    The split is the file name (``train.jsonl`` ...) unless ``info.split`` says otherwise; the task is
    ``task``, else ``info.task``, else the folder's name.
    """
    path = Path(path)
    files = (
        [path / f"{split}.jsonl" for split in EDGE_SPLITS if (path / f"{split}.jsonl").is_file()]
        if path.is_dir()
        else [path]
    )
    if not files:
        raise ProbeFormatError(
            f"{path} holds no train.jsonl, dev.jsonl or test.jsonl; give a jiant JSONL file or such a folder"
        )
    rows = []
    for file in files:
        default_split = file.stem if file.stem in EDGE_SPLITS else "test"
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except OSError as err:
            raise ProbeFormatError(f"cannot read {file} ({err})") from err
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rows.extend(_jiant_rows(json.loads(line), task, file.parent.name or "edge", default_split))
            except (ValueError, KeyError, TypeError, IndexError) as err:
                raise ProbeFormatError(
                    f"{file}, line {number}: {err}. Expected jiant edge-probing JSONL (docs/EDGE.md)."
                ) from err
    if not rows:
        raise ProbeFormatError(f"{path} has no targets to probe")
    return _with_ids(pl.DataFrame(rows, schema_overrides={k: v for k, v in EDGE_SCHEMA.items() if k != "id"}))


def _jiant_rows(item: dict, task: str | None, default_task: str, default_split: str) -> list[dict]:
    text = item["text"]
    words = text.split(" ")
    info = item.get("info") or {}
    split = info.get("split", default_split)
    task = task or info.get("task") or default_task
    rows = []
    for target in item["targets"]:
        label = target["label"]
        if isinstance(label, list):
            if len(label) != 1:
                raise ValueError(f"multi-label targets ({label}) are not supported; give one label per target")
            label = label[0]
        spans = [target["span1"], target.get("span2")]
        for span in filter(None, spans):
            if not (0 <= span[0] < span[1] <= len(words)):
                raise ValueError(f"span {span} lies outside the {len(words)} words of the text")
        word = " | ".join(" ".join(words[s:e]).lower() for s, e in filter(None, spans))
        rows.append({
            "task": task, "split": split, "text": text, "label": str(label), "word": word,
            "span1_start": spans[0][0], "span1_end": spans[0][1],
            "span2_start": spans[1][0] if spans[1] else None, "span2_end": spans[1][1] if spans[1] else None,
        })  # fmt: skip
    return rows


def write_jiant(frame: pl.DataFrame, folder: str | Path) -> list[Path]:
    """Write ``frame`` as jiant JSONL, one file per split in ``folder`` (targets grouped by sentence), atomically."""
    frame = conform(frame, EDGE_SCHEMA, "edge frame")
    written = []
    for split in EDGE_SPLITS:
        part = frame.filter(pl.col("split") == split)
        if part.is_empty():
            continue
        lines = []
        for (text,), group in part.group_by("text", maintain_order=True):
            targets = []
            for row in group.iter_rows(named=True):
                target = {"span1": [row["span1_start"], row["span1_end"]], "label": row["label"]}
                if row["span2_start"] is not None:
                    target["span2"] = [row["span2_start"], row["span2_end"]]
                targets.append(target)
            lines.append(
                json.dumps(
                    {"text": text, "targets": targets, "info": {"split": split, "task": group["task"][0]}},
                    ensure_ascii=False,
                )
            )
        written.append(write_text("\n".join(lines) + "\n", Path(folder) / f"{split}.jsonl"))
    return written
