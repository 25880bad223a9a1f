"""Probe files: Parquet, ARC-style JSONL (ours and the released WordNetQA/DictionaryQA data), HF datasets.

One reader, ``read_probes``, takes any of these and returns a ``PROBE_SCHEMA`` frame; the writers
are deterministic (same frame, same bytes) and atomic.

Released records map into the schema as follows (ours carry the same notes plus the schema
fields the released notes lack, so ``read_probes(write_jsonl(frame))`` gives ``frame`` back):

- ``probe`` and ``split`` come from the file name (``hyponymy_test.jsonl``, ``dev.jsonl``), else from
  ``notes.probe``/``notes.split``, else (probe only) from the folder name (``hyponymy/test.jsonl``, the
  original repository's layout) or the id prefix;
  ``dictionary_qa`` is our ``wordsense``. The file name wins because the released ids lie
  (``hyponymy_test.jsonl`` holds ids ``hypernymy_0``...).
- ``source`` is ``"released"``: released notes say ``source: wordnet`` for the knowledge base, but
  we keep released and regenerated probes apart. Our own files (notes with ``cluster_id``) keep
  their ``notes.source``.
- ``concept`` is ``gold_synset``; ``context`` is the first quoted span of the stem when the quoted
  word (``surface_form``/``word``) follows it and it contains that word (true for every released
  record except synonymy, whose template has no sentence: there it is ``""``);
  ``cluster_id`` is ``f"{probe}:{concept}"`` (``workbench.schema.cluster_id``); ``template`` is ``"released"``.
- ``chain`` splits ``"a=>b"`` / ``"a<=b"``; the released chains list only the two endpoints (the hop
  count is in ``hops``) and write a zero-hop chain as ``"c<=c"``, read as ``[c]``.
  ``gold_concept`` is the chain's last concept, else ``gold_synset``.
- ``distractor_type`` ``hypernym``/``hyponym`` are our ``isa_up``/``isa_down``; DictionaryQA (no
  type) is ``senses``. ``distractor_depth`` is ``distractor_hops`` (0 when absent).
- ``distractor_concepts`` is ``other_distractors + random_distractors``, or for DictionaryQA
  ``distractor_synsets`` without the gold; ``n_random_fill`` is ``len(random_distractors)`` (0 for the
  random family), or for DictionaryQA the choices that are not senses of the word
  (``len(choices) - sense_choices``).
- ids stay strings (``2898`` -> ``"2898"``); a record without one gets ``question_id`` of its
  content. Released training files repeat some ids for different questions; they are kept as is.
"""

import json
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from workbench.errors import ProbeFormatError, SpecError, WorkbenchError
from workbench.io import (
    IGNORABLE,
    OWN_MARKER,
    exclusive,
    hidden_but_ours,
    read_parquet,
    staged_folder,
    write_parquet,
    write_text,
)
from workbench.probes.assemble import question_id
from workbench.schema import PROBE_SCHEMA, PROBES, SPLITS, cluster_id, conform

if TYPE_CHECKING:
    import datasets

FORMATS = ("parquet", "jsonl")
RELEASED_PROBES = {name: name for name in PROBES} | {"dictionary_qa": "wordsense"}
RELEASED_FAMILIES = {
    "random": "random",
    "sister": "sister",
    "hypernym": "isa_up",
    "hyponym": "isa_down",
    "senses": "senses",
}
FAMILY_TYPES = {family: kind for kind, family in RELEASED_FAMILIES.items()}
CHAIN_SEPARATOR = re.compile(r"=>|<=")
ARC_HINT = (
    'one JSON object per line: {"id", "question": {"stem", "choices": [{"text", "label"}]}, "answerKey", "notes"}'
)


def read_probes(path: str | Path) -> pl.DataFrame:
    """Read probes from a Parquet or ARC-style JSONL file, or a folder of ``{train,dev,test}`` files.

    A folder is read in one format: its ``.parquet`` split files if it has any, else its ``.jsonl``.
    A folder of such folders (what ``workbench probes build --probe all`` writes) is read whole.
    The paper's released files (ARC-style JSONL with ``notes``) read the same way.

    Parameters
    ----------
    path : str or Path
        A probe file or folder.

    Returns
    -------
    polars.DataFrame
        One row per question, ``PROBE_SCHEMA``.

    Examples
    --------
    >>> read_probes("../shared/data/semantic_fragments/hypernymy_test.jsonl").height  # doctest: +SKIP
    2254
    """
    path = Path(path)
    if path.is_dir():
        return _read_folder(path)
    if not path.is_file():
        raise ProbeFormatError(
            f"no probe file or folder at {path}; check the path (a .parquet or .jsonl file, or a folder of them)"
        )
    if path.suffix == ".parquet":
        return _read_parquet(path)
    if path.suffix == ".jsonl":
        return _read_jsonl(path)
    raise ProbeFormatError(f"{path}: unknown probe file type {path.suffix!r}; use a .parquet or .jsonl file")


def write_jsonl(frame: pl.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` as ARC-style JSONL with released-style ``notes`` (plus ours), atomically.

    >>> write_jsonl(probes, "hypernymy.jsonl")  # doctest: +SKIP
    """
    frame = conform(frame, PROBE_SCHEMA, what="probe frame")
    unknown = sorted(set(frame["distractor_family"].unique().to_list()) - set(FAMILY_TYPES))
    if unknown:
        raise WorkbenchError(f"distractor_family {unknown} cannot be written; use one of {tuple(FAMILY_TYPES)}")
    rows = frame.iter_rows(named=True)
    text = "".join(json.dumps(_arc_record(row), ensure_ascii=False) + "\n" for row in rows)
    return write_text(text, path)


def write_probes(frame: pl.DataFrame, out_dir: str | Path, fmt: str = "parquet") -> list[Path]:
    """Write one ``{split}.{fmt}`` file per split of ``frame`` into ``out_dir``, as one unit.

    The set is written into a staging folder and published in one step (``workbench.io.staged_folder``):
    readers see the old set or the new one, never a new dev beside an old train, and whatever the folder
    held before (other splits, the other format) is replaced, so it reads back as ``frame``.

    Parameters
    ----------
    frame : polars.DataFrame
        A probe frame (``PROBE_SCHEMA``).
    out_dir : str or Path
        The folder of the set.
    fmt : {"parquet", "jsonl"}
        Parquet, or ARC-style JSONL with ``notes`` (readable by the paper's code and by ``read_probes``).

    Returns
    -------
    list of Path
        The files written.

    Examples
    --------
    >>> write_probes(probes, "out/hypernymy", fmt="jsonl")  # doctest: +SKIP
    [PosixPath('out/hypernymy/train.jsonl'), PosixPath('out/hypernymy/dev.jsonl'), ...]
    """
    return write_probe_sets({"": frame}, out_dir, fmt)


def write_probe_sets(
    sets: dict[str, pl.DataFrame], out_dir: str | Path, fmt: str = "parquet", metadata: dict[str, str] | None = None
) -> list[Path]:
    """Write several probe sets, one sub-folder each (``{"": frame}``: ``out_dir`` itself), all or nothing.

    What ``workbench probes build --probe all`` writes: a kill at any point leaves every set as it was.
    ``out_dir`` may hold only probe sets (it is replaced whole); anything else there is refused, not deleted.
    ``metadata`` (Parquet only) goes into every file's key-value metadata: ``knowledge``, the sources and releases
    the set was built from (``probe_metadata`` reads it back).
    """
    if fmt not in FORMATS:
        raise SpecError(f"fmt={fmt!r} is not a probe format; use one of {FORMATS}")
    frames = {name: _checked_for_writing(frame, fmt) for name, frame in sets.items()}
    out_dir = Path(out_dir)
    check_probe_folder(out_dir)
    writer = partial(write_parquet, metadata=metadata) if fmt == "parquet" else write_jsonl
    paths = []
    with exclusive(out_dir), staged_folder(out_dir) as staging:
        for name, frame in frames.items():
            for split in (s for s in SPLITS if s in frame["split"]):
                writer(frame.filter(pl.col("split") == split), staging / name / f"{split}.{fmt}")
                paths.append(out_dir / name / f"{split}.{fmt}")
    return paths


def probe_metadata(path: str | Path) -> dict[str, str]:
    """The key-value metadata of a probe Parquet file, or of the first one in a folder (``{}`` for other files)."""
    path = Path(path)
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path] if path.suffix == ".parquet" else []
    if not files:
        return {}
    try:
        found = pl.read_parquet_metadata(files[0])
    except (OSError, pl.exceptions.PolarsError):
        return {}
    return {key: value for key, value in found.items() if not key.startswith("ARROW:")}  # not Arrow's schema


def _checked_for_writing(frame: pl.DataFrame, fmt: str) -> pl.DataFrame:
    frame = conform(frame, PROBE_SCHEMA, what="probe frame")
    unknown = sorted(set(frame["distractor_family"].unique().to_list()) - set(FAMILY_TYPES))
    if fmt == "jsonl" and unknown:
        raise WorkbenchError(f"distractor_family {unknown} cannot be written; use one of {tuple(FAMILY_TYPES)}")
    unknown = sorted(set(frame["split"].unique().to_list()) - set(SPLITS))
    if unknown:
        raise WorkbenchError(
            f"write_probes writes one file per split, but some rows have split {unknown}; set `split` to one "
            f"of {SPLITS} first (workbench.probes.splits.split_by_concept), or write one file with write_jsonl"
        )
    return frame


def check_probe_folder(out_dir: str | Path) -> None:
    """``out_dir`` is new, or holds nothing but probe sets (split files, folders of them): what writing a probe set
    may replace. ``workbench probes build`` checks it before building, ``write_probe_sets`` before writing."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise WorkbenchError(
            f"the output {out_dir} is a file; give a folder for the probe set (new, or one holding a probe set)"
        )
    if not out_dir.is_dir():
        return
    split_files = {f"{split}.{fmt}" for split in SPLITS for fmt in FORMATS}
    foreign = [
        child.name for child in out_dir.iterdir()
        if not hidden_but_ours(child.name) and child.name not in split_files
        and not (child.is_dir() and _is_probe_tree(child))
    ]  # fmt: skip
    if foreign:
        raise WorkbenchError(
            f"{out_dir} holds {sorted(foreign)[:5]}, which are not probe files; writing a probe set replaces the whole "
            "folder, so give a new folder or one that holds only probe sets"
        )


def _is_probe_tree(folder: Path) -> bool:
    split_files = {f"{split}.{fmt}" for split in SPLITS for fmt in FORMATS}
    children = [child for child in folder.iterdir() if not hidden_but_ours(child.name)]
    return all(child.name in split_files or (child.is_dir() and _is_probe_tree(child)) for child in children)


def to_hf_dataset(frame: pl.DataFrame) -> "datasets.Dataset":
    """A Hugging Face multiple-choice ``Dataset``: id, question, choices, label, plus probe metadata.

    >>> to_hf_dataset(probes)[0]["label"]  # doctest: +SKIP
    2
    """
    import datasets  # heavy; only this export needs it

    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "question": datasets.Value("string"),
            "choices": datasets.Sequence(datasets.Value("string")),
            "label": datasets.Value("int64"),
            "probe": datasets.Value("string"),
            "cluster_id": datasets.Value("string"),
            "hops": datasets.Value("int64"),
            "distractor_family": datasets.Value("string"),
            "distractor_depth": datasets.Value("int64"),
            "concept": datasets.Value("string"),
        }
    )
    columns = conform(frame, PROBE_SCHEMA, what="probe frame").rename({"answer": "label"}).select(list(features))
    return datasets.Dataset.from_dict(columns.to_dict(as_series=False), features=features)


def _read_parquet(path: Path, split: str | None = None) -> pl.DataFrame:
    try:
        frame = read_parquet(path)
    except (OSError, pl.exceptions.PolarsError) as err:
        raise ProbeFormatError(f"{path} is not a readable Parquet file ({err}); rewrite it with write_probes") from err
    frame = checked_questions(conform(frame, PROBE_SCHEMA, what=f"probe file {path}"), path)
    return frame if split is None else frame.with_columns(split=pl.lit(split))


MAX_HOPS = 1000
"""More ISA hops (or distractor depth) than any taxonomy has: a larger number is a damaged file."""


def checked_questions(frame: pl.DataFrame, path: str | Path) -> pl.DataFrame:
    """``frame`` (``PROBE_SCHEMA``) if every row is a well-formed question, else a one-line ``ProbeFormatError``
    naming the file, the first bad row (1-based) and its id: at least two choices, none empty, an ``answer`` among
    them, no two choice texts the same as a page shows them, up to case and spaces (a gold copied into a distractor,
    ``Dog`` beside ``dog ``, ``café`` composed beside decomposed, a zero-width space added, moves or duplicates the
    gold), hops and distractor depth in 0..``MAX_HOPS``."""
    seen = pl.element().str.normalize("NFKC").str.replace_all(IGNORABLE, "")  # as a page shows it
    same = seen.str.to_lowercase().str.replace_all(r"\s+", " ").str.strip_chars()
    problems = {
        "fewer than two choices": pl.col("choices").list.len() < 2,
        "it repeats an earlier row": pl.struct("id", "question", "choices", "answer").is_duplicated()
        & ~pl.struct("id", "question", "choices", "answer").is_first_distinct(),
        "a choice is empty (or invisible)": pl.col("choices").list.eval(seen.str.strip_chars() == "").list.any(),
        "answer is not the index of a choice": ~pl.col("answer").is_between(0, pl.col("choices").list.len() - 1),
        "two choices have the same text (up to case and spaces)": pl.col("choices").list.eval(same).list.n_unique()
        < pl.col("choices").list.len(),
        f"hops or distractor_depth outside 0..{MAX_HOPS}": ~pl.col("hops").fill_null(0).is_between(0, MAX_HOPS)
        | ~pl.col("distractor_depth").fill_null(0).is_between(0, MAX_HOPS),  # missing: not known, not wrong
    }
    flagged = frame.with_row_index("_row", offset=1).select(
        "_row", "id", *(expr.fill_null(True).alias(name) for name, expr in problems.items())
    )
    for name in problems:
        bad = flagged.filter(pl.col(name))
        if not bad.is_empty():
            raise ProbeFormatError(
                f"{path}, row {bad['_row'][0]} (id {bad['id'][0]!r}): {name}; fix or drop the question "
                f"({bad.height} row{'s' if bad.height > 1 else ''} like it)"
            )
    return frame


def _read_folder(folder: Path) -> pl.DataFrame:
    for fmt in FORMATS:
        files = [folder / f"{split}.{fmt}" for split in SPLITS if (folder / f"{split}.{fmt}").is_file()]
        if files:
            if fmt == "parquet":
                return pl.concat([_read_parquet(file, split=file.stem) for file in files])
            return pl.concat([_read_jsonl(file) for file in files])
    sets = sorted(sub for sub in folder.iterdir() if sub.is_dir() and not sub.name.startswith(".") and _has_splits(sub))
    if sets:
        return pl.concat([_read_folder(sub) for sub in sets])
    raise ProbeFormatError(
        f"{folder} holds no probe files; expected {{train,dev,test}}.parquet or {{train,dev,test}}.jsonl "
        "(or folders of them)"
    )


def _has_splits(folder: Path) -> bool:
    return any((folder / f"{split}.{fmt}").is_file() for fmt in FORMATS for split in SPLITS)


@dataclass(frozen=True)
class _Source:
    """A JSONL probe file and what its name says: ``hyponymy/test.jsonl``, ``dictionary_qa_dev.jsonl``."""

    path: Path

    @property
    def probe(self) -> str | None:
        return next((RELEASED_PROBES[p] for p in RELEASED_PROBES if self.path.stem.startswith(p)), None)

    @property
    def custom_name(self) -> str:
        """A custom probe's name: the file's stem without a split suffix (``quiz_test.jsonl``: ``quiz``)."""
        split = self.split
        stem = self.path.stem
        return (stem[: -len(split) - 1] if split and stem.endswith(f"_{split}") else stem) or "custom"

    @property
    def folder_probe(self) -> str | None:
        return RELEASED_PROBES.get(self.path.parent.name)

    @property
    def split(self) -> str | None:
        return next((s for s in SPLITS if self.path.stem == s or self.path.stem.endswith(f"_{s}")), None)

    def error(self, line: int, problem: str, fix: str) -> ProbeFormatError:
        return ProbeFormatError(f"{self.path}, line {line}: {problem}; {fix}")


class CustomProbeWarning(UserWarning):
    """A multiple-choice file whose probe could not be inferred was read as a custom probe."""


def arc_records(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each ARC record of a JSONL file with its line number, checked (``ProbeFormatError`` naming the line and the
    fix): a stem, {text, label} choices, an answerKey among the labels; blank lines passed over."""
    source = _Source(Path(path))
    with source.path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise source.error(
                    number, f"not valid UTF-8 (byte {err.start + 1} of the line)", "save the file as UTF-8"
                ) from None
            if line.strip():
                yield number, _arc_record_of(line, source, number)


def _read_jsonl(path: Path) -> pl.DataFrame:
    source = _Source(path)
    rows = []
    for number, record in arc_records(path):
        try:
            rows.append(_probe_row(record, source, number))
        except (TypeError, ValueError, AttributeError) as err:
            raise source.error(
                number, f"notes do not fit the released format ({err})", "fix or drop the offending field"
            ) from err
    if not rows:
        raise ProbeFormatError(f"no questions in {path}; write {ARC_HINT}")
    custom = sorted({row["probe"] for row in rows} - set(PROBES))
    if custom:
        warnings.warn(
            f"{path}: the probe could not be inferred (not a released file name, no notes.probe), so it is read as the "
            f"custom probe {custom[0]!r}: every question its own cluster unless notes.gold_synset names its concept",
            CustomProbeWarning,
            stacklevel=3,
        )
    return checked_questions(conform(pl.DataFrame(rows, schema=PROBE_SCHEMA), PROBE_SCHEMA), path)


def _arc_record_of(line: str, source: _Source, number: int) -> dict[str, Any]:
    """The ARC record on one line, checked: a stem, {text, label} choices, an answerKey among the labels."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise source.error(number, f"not valid JSON ({err.msg} at column {err.colno})", f"write {ARC_HINT}") from err
    except RecursionError:
        raise source.error(number, "JSON nested too deep to read", f"write {ARC_HINT}") from None
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as err:
        raise source.error(
            number, f"a lone surrogate escape {err.object[err.start : err.end]!r} is no character", "fix that escape"
        ) from None
    if not isinstance(record, dict):
        raise source.error(number, f"a JSON {type(record).__name__}, not an object", f"write {ARC_HINT}")
    question = record.get("question")
    stem = question.get("stem") if isinstance(question, dict) else None
    choices = question.get("choices") if isinstance(question, dict) else None
    if not isinstance(stem, str):
        raise source.error(number, "no question.stem string", f"give every record one; the format is {ARC_HINT}")
    if (
        not isinstance(choices, list)
        or not choices
        or not all(isinstance(c, dict) and isinstance(c.get("text"), str) and "label" in c for c in choices)
    ):
        raise source.error(
            number,
            "question.choices is not a non-empty list of {text, label} objects",
            f"fix the choices; the format is {ARC_HINT}",
        )
    if "answerKey" not in record:
        raise source.error(number, "no answerKey", "add the label of the gold choice as answerKey")
    labels = [str(c["label"]) for c in choices]
    if len(set(labels)) < len(labels):
        raise source.error(number, f"choice labels {labels} repeat", "give every choice its own label (A, B, ...)")
    if str(record["answerKey"]) not in labels:
        raise source.error(
            number,
            f"answerKey {record['answerKey']!r} is not one of the choice labels {labels}",
            "set answerKey to the label of the gold choice",
        )
    if not isinstance(record.get("notes") or {}, dict):
        raise source.error(number, "notes is not an object", "write notes as a JSON object or leave them out")
    return record


def _probe_row(record: dict[str, Any], source: _Source, number: int) -> dict[str, Any]:
    """One ``PROBE_SCHEMA`` row from one checked ARC record (the mapping is in the module docstring)."""
    notes = record.get("notes") or {}
    own = OWN_MARKER in notes
    id_probe = RELEASED_PROBES.get(str(record.get("id", "")).split("_")[0])
    probe = source.probe or notes.get("probe") or source.folder_probe or id_probe or source.custom_name
    _one_probe(notes, probe, source, number)
    stem = record["question"]["stem"]
    texts = [c["text"] for c in record["question"]["choices"]]
    answer = [str(c["label"]) for c in record["question"]["choices"]].index(str(record["answerKey"]))
    word = notes.get("surface_form", notes.get("word", ""))
    concept = notes.get("gold_synset", "")
    hops = _whole(notes.get("hops") or 0, "hops")
    chain = [part for part in CHAIN_SEPARATOR.split(notes.get("chain") or "") if part]
    kind = notes.get("distractor_type", "senses" if probe == "wordsense" else "random")
    if kind not in RELEASED_FAMILIES:
        raise source.error(number, f"unknown distractor_type {kind!r}", f"use one of {tuple(RELEASED_FAMILIES)}")
    family = RELEASED_FAMILIES[kind]
    random_concepts = list(notes.get("random_distractors") or [])
    if "distractor_synsets" in notes:
        distractors = [c for c in notes["distractor_synsets"] if c != concept]
        n_random_fill = len(texts) - int(notes.get("sense_choices", len(texts)))
    else:
        distractors = list(notes.get("other_distractors") or []) + random_concepts
        n_random_fill = len(random_concepts)
    context = notes["context"] if own else _released_context(stem, word) if probe != "synonymy" else ""
    return {
        "id": str(record["id"]) if record.get("id") not in (None, "") else question_id(probe, stem, texts, answer),
        "probe": probe,
        "source": notes.get("source", "released") if own else "released",
        "split": source.split or notes.get("split", ""),
        "cluster_id": notes[OWN_MARKER] if own else cluster_id(probe, concept or f"q{number}"),
        "concept": concept,
        "pos": notes.get("pos", concept.rsplit(".", 2)[1] if concept.count(".") >= 2 else ""),
        "word": word,
        "context": context,
        "template": notes.get("template", "released"),
        "question": stem,
        "choices": texts,
        "answer": answer,
        "gold_concept": notes["gold_concept"] if "gold_concept" in notes else (chain[-1] if chain else concept),
        "hops": hops,
        "chain": chain[:1] if hops == 0 else chain,
        "distractor_family": family,
        "distractor_depth": _whole(notes.get("distractor_hops") or 0, "distractor_hops"),
        "distractor_concepts": distractors,
        "n_random_fill": 0 if family == "random" else n_random_fill,
        "population": notes.get("population", "") if own else "released",
    }


CHAIN_PROBES = {"=>": "hypernymy", "<=": "hyponymy"}
"""Which probe a chain's separator is written by (the released files' and ours)."""


def _one_probe(notes: dict, probe: str, source: "_Source", number: int) -> None:
    """Refuse a row of another probe than the file's: a file of two probes was read as one (issue 53)."""
    named = notes.get("probe")
    if named and named != probe:
        raise source.error(number, f"notes.probe is {named!r}, but the file's name says {probe}",
                           "a file holds one probe: split it by probe, or rename it")  # fmt: skip
    chain = str(notes.get("chain") or "")
    written = {CHAIN_PROBES[mark] for mark in CHAIN_PROBES if mark in chain}
    if (probe in CHAIN_PROBES.values() or probe == "wordsense") and written and written != {probe}:
        raise source.error(number, f"its chain {chain[:60]!r} is written as a {' and '.join(sorted(written))} "
                           f"question's, but the file is read as {probe}",
                           "a file holds one probe: split it by probe")  # fmt: skip


def _whole(value: Any, field: str) -> int:
    """A whole number of ``notes`` in 0..``MAX_HOPS`` (a float such as 1e30 or 1.5 is refused, not rounded)."""
    number = float(value) if isinstance(value, str) else value
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise ValueError(f"{field} {value!r} is not a whole number")
    if not 0 <= number <= MAX_HOPS:
        raise ValueError(f"{field} {value!r} is outside 0..{MAX_HOPS}")
    if number != int(number):
        raise ValueError(f"{field} {value!r} is not a whole number")
    return int(number)


def _released_context(stem: str, word: str) -> str:
    """The sentence quoted in a released stem before the quoted ``word``, or "" when there is none."""
    match = re.match(r"[^']*'(.*?)'[^']*'" + re.escape(word) + "'", stem) if word else None
    return match.group(1) if match and word.lower() in match.group(1).lower() else ""


def _arc_record(row: dict[str, Any]) -> dict[str, Any]:
    """The ARC-style record of one probe row; ``_probe_row`` reads it back to the same row."""
    n_fill = 0 if row["distractor_family"] == "random" else row["n_random_fill"]
    kept = len(row["distractor_concepts"]) - n_fill
    separator = "<=" if row["probe"] == "hyponymy" else "=>"
    return {
        "id": row["id"],
        "question": {
            "stem": row["question"],
            "choices": [{"text": text, "label": str(index)} for index, text in enumerate(row["choices"])],
        },
        "answerKey": str(row["answer"]),
        "notes": {
            "gold_synset": row["concept"],
            "hops": row["hops"],
            "chain": separator.join(row["chain"]),
            "distractor_type": FAMILY_TYPES[row["distractor_family"]],
            "distractor_hops": row["distractor_depth"],
            "other_distractors": row["distractor_concepts"][:kept],
            "random_distractors": row["distractor_concepts"][kept:],
            "surface_form": row["word"],
            "pos": row["pos"],
            "source": row["source"],
            "probe": row["probe"],
            "split": row["split"],
            OWN_MARKER: row["cluster_id"],
            "context": row["context"],
            "template": row["template"],
            "gold_concept": row["gold_concept"],
            "population": row["population"],
        },
    }
