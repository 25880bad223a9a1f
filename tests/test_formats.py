"""Probe files: the released data, our JSONL and Parquet, atomic and deterministic writes, HF export."""

import json
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from workbench.errors import ProbeFormatError, SpecError, WorkbenchError
from workbench.probes import formats
from workbench.probes.formats import read_probes, to_hf_dataset, write_jsonl, write_probes
from workbench.schema import PROBE_SCHEMA, SPLITS

# SOURCES.md counts lines with `wc -l`, which misses dictionary_qa_test's unterminated last record (1113).
RECORDS = {
    "definitions_train": 3000,
    "dictionary_qa_dev": 3000,
    "dictionary_qa_test": 1114,
    "dictionary_qa_train": 3000,
    "hypernymy_test": 2254,
    "hypernymy_train": 3000,
    "hyponymy_test": 2020,
    "hyponymy_train": 3000,
    "synonymy_train": 3000,
}


def raw_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def released(released_dir: Path) -> dict[str, pl.DataFrame]:
    return {name: read_probes(released_dir / f"{name}.jsonl") for name in RECORDS}


def probe_row(**overrides) -> dict:
    """A row of our own (non-released) kind, with fields that only our notes can carry."""
    row = {
        "id": "hypernymy-0",
        "probe": "hypernymy",
        "source": "wordnet",
        "split": "train",
        "cluster_id": "hypernymy:dog.n.01:the dog barked",
        "concept": "dog.n.01",
        "pos": "n",
        "word": "dog",
        "context": "the dog barked",
        "template": "hypernymy/0",
        "question": "In 'the dog barked', the word or concept 'dog' is best described as a type of",
        "choices": ["canine", "cat", "tree", "rock", "idea"],
        "answer": 0,
        "gold_concept": "canine.n.02",
        "hops": 2,
        "chain": ["dog.n.01", "canine.n.02", "carnivore.n.01"],
        "distractor_family": "isa_down",
        "distractor_depth": 1,
        "distractor_concepts": ["cat.n.01", "tree.n.01", "rock.n.01", "idea.n.01"],
        "n_random_fill": 2,
    }
    return row | overrides


@pytest.fixture
def own_frame() -> pl.DataFrame:
    rows = [
        probe_row(),
        probe_row(id="hypernymy-1", split="dev", distractor_family="sister", distractor_depth=2, n_random_fill=0),
        probe_row(
            id="hypernymy-2", split="test", distractor_family="random", distractor_depth=0, n_random_fill=0, answer=3
        ),
        probe_row(
            id="hyponymy-0",
            probe="hyponymy",
            split="test",
            chain=["dog.n.01", "puppy.n.01"],
            hops=1,
            gold_concept="puppy.n.01",
            distractor_family="isa_up",
        ),
        probe_row(
            id="definitions-0",
            probe="definitions",
            split="train",
            hops=0,
            chain=["dog.n.01"],
            gold_concept="dog.n.01",
            context="",
            cluster_id="definitions:dog.n.01:",
        ),
        probe_row(
            id="wordsense-0",
            probe="wordsense",
            source="gcide",
            split="dev",
            pos="",
            hops=0,
            chain=[],
            gold_concept="dog.u.1",
            concept="dog.u.1",
            distractor_family="senses",
            distractor_depth=0,
            n_random_fill=1,
            question="Given 'a dog's life', 'dog' is best defined as",
        ),
    ]
    return pl.DataFrame(rows, schema=PROBE_SCHEMA)


@pytest.mark.parametrize("name", list(RECORDS))
def test_every_released_file_loads_with_its_record_count(released, released_dir, name):
    frame = released[name]
    assert frame.height == RECORDS[name] == len(raw_records(released_dir / f"{name}.jsonl"))
    assert frame.schema == pl.Schema(PROBE_SCHEMA)
    assert frame.select((pl.col("answer") >= 0) & (pl.col("answer") < pl.col("choices").list.len())).to_series().all()
    probe, split = name.rsplit("_", 1)
    assert frame["split"].unique().to_list() == [split]
    assert frame["probe"].unique().to_list() == ["wordsense" if probe == "dictionary_qa" else probe]
    assert frame["source"].unique().to_list() == ["released"]


@pytest.mark.parametrize(
    "name", ["hypernymy_test", "hyponymy_test", "dictionary_qa_test", "synonymy_train", "definitions_train"]
)
def test_gold_choice_is_the_raw_answer_key_choice(released, released_dir, name):
    raw = raw_records(released_dir / f"{name}.jsonl")
    frame = released[name]
    for index in (0, 1, 100, len(raw) - 1):
        record = raw[index]
        gold = next(c["text"] for c in record["question"]["choices"] if str(c["label"]) == str(record["answerKey"]))
        row = frame.row(index, named=True)
        assert row["choices"][row["answer"]] == gold
        assert row["id"] == str(record["id"])
        assert row["concept"] == record["notes"]["gold_synset"]


def test_first_hypernymy_test_question_asks_for_sit(released):
    row = released["hypernymy_test"].row(0, named=True)
    assert row["choices"][row["answer"]] == "sit (or sit down) event, defined as 'be seated'"
    assert row["chain"] == ["squat.v.01", "sit.v.01"]
    assert row["gold_concept"] == "sit.v.01"
    assert row["context"] == "The children hunkered down to protect themselves from the sandstorm"
    assert (
        row["cluster_id"] == "hypernymy:squat.v.01"  # one cluster per concept (R&S 2020 §3.1), the sentence aside
    )


def test_released_distractor_types_map_to_our_families(released, released_dir):
    for name, flipped in (("hypernymy_test", ("hyponym", "isa_down")), ("hyponymy_test", ("hypernym", "isa_up"))):
        raw = Counter(r["notes"]["distractor_type"] for r in raw_records(released_dir / f"{name}.jsonl"))
        ours = dict(released[name]["distractor_family"].value_counts().iter_rows())
        assert ours == {"random": raw["random"], "sister": raw["sister"], flipped[1]: raw[flipped[0]]}
        random_rows = released[name].filter(pl.col("distractor_family") == "random")
        assert (random_rows["distractor_depth"] == 0).all() and (random_rows["n_random_fill"] == 0).all()


def test_released_chains_start_at_the_concept_and_end_at_the_gold(released):
    for name in ("hypernymy_test", "hyponymy_test", "definitions_train"):
        frame = released[name]
        assert (frame["chain"].list.first() == frame["concept"]).all()
        assert (frame["chain"].list.last() == frame["gold_concept"]).all()
        expected_length = pl.when(pl.col("hops") == 0).then(1).otherwise(2)
        assert frame.select(pl.col("chain").list.len() == expected_length).to_series().all()


def test_dictionary_qa_distractors_are_the_other_senses_plus_random_fill(released, released_dir):
    raw = raw_records(released_dir / "dictionary_qa_test.jsonl")
    frame = released["dictionary_qa_test"]
    assert (frame["distractor_family"] == "senses").all()
    assert frame["id"].to_list() == [str(r["id"]) for r in raw]
    for row, record in zip(frame.iter_rows(named=True), raw, strict=True):
        assert row["concept"] not in row["distractor_concepts"] and len(row["distractor_concepts"]) == 4
        word = row["concept"].rsplit(".", 2)[0]
        assert row["n_random_fill"] == sum(c.rsplit(".", 2)[0] != word for c in row["distractor_concepts"])
        assert row["n_random_fill"] == 5 - record["notes"]["sense_choices"]


def test_context_is_the_quoted_sentence_holding_the_word(released):
    for name in ("hypernymy_test", "hyponymy_test", "dictionary_qa_dev", "definitions_train"):
        frame = released[name]
        assert (frame["context"] != "").all()
        assert (
            frame.select(pl.col("question").str.contains("'" + pl.col("context") + "'", literal=True)).to_series().all()
        )
        assert (
            frame.select(
                pl.col("context").str.to_lowercase().str.contains(pl.col("word").str.to_lowercase(), literal=True)
            )
            .to_series()
            .all()
        )
    assert (released["synonymy_train"]["context"] == "").all()


def test_our_jsonl_round_trips_exactly(own_frame, tmp_path):
    path = write_jsonl(own_frame, tmp_path / "probes.jsonl")
    assert read_probes(path).equals(own_frame)
    notes = json.loads(path.read_text().splitlines()[3])["notes"]
    assert notes["chain"] == "dog.n.01<=puppy.n.01" and notes["distractor_type"] == "hypernym"
    assert notes["other_distractors"] == ["cat.n.01", "tree.n.01"] and notes["random_distractors"] == [
        "rock.n.01",
        "idea.n.01",
    ]


def test_released_frames_round_trip_through_our_jsonl(released, tmp_path):
    frame = pl.concat([released["hyponymy_test"], released["dictionary_qa_test"], released["synonymy_train"]])
    assert read_probes(write_jsonl(frame, tmp_path / "mixed.jsonl")).equals(frame)


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_a_written_folder_reads_back_and_is_byte_identical(own_frame, tmp_path, fmt):
    first = write_probes(own_frame, tmp_path / "a", fmt=fmt)
    second = write_probes(own_frame.clone(), tmp_path / "b", fmt=fmt)
    assert [p.name for p in first] == [f"{split}.{fmt}" for split in SPLITS]
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    by_split = pl.concat([own_frame.filter(pl.col("split") == split) for split in SPLITS])
    assert read_probes(tmp_path / "a").equals(by_split)
    assert read_probes(first[0]).equals(own_frame.filter(pl.col("split") == "train"))


def test_a_folder_of_probe_folders_reads_every_set(own_frame, released, tmp_path):
    other = released["hyponymy_test"]
    write_probes(own_frame, tmp_path / "own")
    write_probes(other, tmp_path / "released", fmt="jsonl")
    (tmp_path / "notes").mkdir()  # a folder without probe files is passed over
    both = read_probes(tmp_path)
    assert both.height == own_frame.height + other.height
    assert both.filter(pl.col("source") == other["source"][0]).height == other.height


def test_rewriting_a_folder_removes_splits_the_frame_no_longer_has(own_frame, tmp_path):
    write_probes(own_frame, tmp_path, fmt="jsonl")
    train_only = own_frame.filter(pl.col("split") == "train")
    assert write_probes(train_only, tmp_path, fmt="jsonl") == [tmp_path / "train.jsonl"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.jsonl"]
    assert read_probes(tmp_path).equals(train_only)


def test_a_failed_write_leaves_no_partial_files(own_frame, tmp_path, monkeypatch):
    old, fresh = tmp_path / "old", tmp_path / "fresh"
    write_probes(own_frame.filter(pl.col("split") == "train").with_columns(question=pl.lit("old")), old)
    before = (old / "train.parquet").read_bytes()
    for out in (old, fresh):
        monkeypatch.setattr(formats, "write_parquet", _fail_on_call(2, formats.write_parquet))
        with pytest.raises(OSError, match="disk full"):
            write_probes(own_frame, out)
        monkeypatch.undo()
    assert sorted(p.name for p in old.iterdir()) == ["train.parquet"]
    assert (old / "train.parquet").read_bytes() == before
    assert not fresh.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == ["old"]  # no staging left


def _fail_on_call(n: int, write):
    """``write``, except that its ``n``-th call raises."""
    calls = []

    def wrapped(frame, path, **options):
        calls.append(path)
        if len(calls) == n:
            raise OSError("disk full")
        return write(frame, path, **options)

    return wrapped


def test_an_unwritable_family_fails_before_any_file(own_frame, tmp_path):
    bad = own_frame.with_columns(distractor_family=pl.lit("cousin"))
    with pytest.raises(WorkbenchError, match="cousin"):
        write_probes(bad, tmp_path / "out", fmt="jsonl")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_write_probes_needs_a_split_and_a_known_format(own_frame, tmp_path):
    with pytest.raises(WorkbenchError, match=r"split \[''\]"):
        write_probes(own_frame.with_columns(split=pl.lit("")), tmp_path)
    with pytest.raises(SpecError, match="fmt='csv'"):
        write_probes(own_frame, tmp_path, fmt="csv")
    assert list(tmp_path.iterdir()) == []


BROKEN_LINES = {
    "not json": ('{"id": "x", "question": ', "not valid JSON"),
    "no stem": (
        json.dumps({"id": "x", "question": {"choices": [{"text": "a", "label": "0"}]}, "answerKey": "0"}),
        "no question.stem",
    ),
    "no choices": (json.dumps({"id": "x", "question": {"stem": "q"}, "answerKey": "0"}), "question.choices"),
    "no answerKey": (
        json.dumps({"id": "x", "question": {"stem": "q", "choices": [{"text": "a", "label": "0"}]}}),
        "no answerKey",
    ),
    "bad answerKey": (
        json.dumps({"id": "x", "question": {"stem": "q", "choices": [{"text": "a", "label": "0"}]}, "answerKey": "7"}),
        "answerKey '7' is not one of the choice labels",
    ),
}


@pytest.mark.parametrize("broken", list(BROKEN_LINES))
def test_a_malformed_line_is_reported_with_file_and_line(released_dir, tmp_path, broken):
    good = (released_dir / "hypernymy_test.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    line, problem = BROKEN_LINES[broken]
    path = tmp_path / "hypernymy_test.jsonl"
    path.write_text("\n".join([*good, line, good[0]]) + "\n", encoding="utf-8")
    with pytest.raises(ProbeFormatError) as caught:
        read_probes(path)
    message = str(caught.value)
    assert f"{path}, line 3: " in message and problem in message
    path.write_text("\n".join(good) + "\n", encoding="utf-8")
    assert read_probes(path).height == 2


def test_missing_paths_folders_and_columns_are_clear_errors(own_frame, tmp_path):
    with pytest.raises(ProbeFormatError, match="no probe file or folder at .*nowhere.jsonl"):
        read_probes(tmp_path / "nowhere.jsonl")
    with pytest.raises(ProbeFormatError, match="holds no probe files"):
        read_probes(tmp_path)
    (tmp_path / "probes.csv").write_text("id\n")
    with pytest.raises(ProbeFormatError, match="unknown probe file type '.csv'"):
        read_probes(tmp_path / "probes.csv")
    own_frame.drop("chain").write_parquet(tmp_path / "train.parquet")
    with pytest.raises(WorkbenchError, match=r"lacks the columns \['chain'\]"):
        read_probes(tmp_path / "train.parquet")


def test_a_record_without_an_id_gets_a_content_hash(tmp_path):
    record = {
        "question": {"stem": "q", "choices": [{"text": "a", "label": "A"}, {"text": "b", "label": "B"}]},
        "answerKey": "B",
    }
    path = tmp_path / "hypernymy_dev.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps(record | {"answerKey": "A"}) + "\n")
    frame = read_probes(path)
    assert frame["answer"].to_list() == [1, 0]
    assert frame["id"].str.starts_with("hypernymy-").all() and frame["id"].n_unique() == 2
    assert read_probes(path)["id"].equals(frame["id"])


def test_hf_dataset_holds_the_multiple_choice_columns(released):
    frame = released["hypernymy_test"]
    dataset = to_hf_dataset(frame)
    assert len(dataset) == frame.height
    assert dataset.column_names == [
        "id",
        "question",
        "choices",
        "label",
        "probe",
        "cluster_id",
        "hops",
        "distractor_family",
        "distractor_depth",
        "concept",
    ]
    first = dataset[0]
    assert first["choices"][first["label"]] == "sit (or sit down) event, defined as 'be seated'"
    assert first["concept"] == "squat.v.01" and first["hops"] == 1


def test_the_folder_names_the_probe_unless_the_notes_do(released_dir, own_frame, tmp_path):
    lines = (released_dir / "hyponymy_test.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    (tmp_path / "hyponymy").mkdir()
    (tmp_path / "hyponymy" / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    frame = read_probes(tmp_path / "hyponymy")
    assert frame["probe"].to_list() == ["hyponymy"] * 3 and frame["split"].to_list() == ["test"] * 3
    mixed = own_frame.filter(pl.col("split") == "test")
    assert mixed["probe"].n_unique() == 2
    write_probes(mixed, tmp_path / "hypernymy", fmt="jsonl")
    assert read_probes(tmp_path / "hypernymy").equals(mixed)


def test_notes_of_the_wrong_type_are_reported_with_the_line(released_dir, tmp_path):
    good = json.loads((released_dir / "hypernymy_test.jsonl").read_text(encoding="utf-8").splitlines()[0])
    good["notes"]["hops"] = "two"
    path = tmp_path / "hypernymy_test.jsonl"
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    with pytest.raises(ProbeFormatError, match=r"line 1: notes do not fit the released format"):
        read_probes(path)
