"""Nothing silently wrong on input: malformed questions, damaged numbers and text are one line naming the file and
row (issue 28; docs/RELIABILITY.md). The commands run in-process (``inprocess.workbench``)."""

import json
import unicodedata
from pathlib import Path

import polars as pl
import pytest
from inprocess import refused, workbench

from workbench.errors import ProbeFormatError
from workbench.probes.formats import read_probes


@pytest.fixture(scope="module")
def record(released_dir) -> dict:
    """The first released hypernymy test question, as its JSON record."""
    return json.loads((released_dir / "hypernymy_test.jsonl").open(encoding="utf-8").readline())


def _jsonl(folder: Path, *records: dict | str) -> Path:
    path = folder / "hypernymy_test.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def _damaged(record: dict, change) -> dict:
    copy = json.loads(json.dumps(record))
    change(copy)
    return copy


def test_malformed_questions_are_one_line_naming_the_row(record, tmp_path, minilm_path):
    def same_labels(r):
        for choice in r["question"]["choices"]:
            choice["label"] = "0"
        r["answerKey"] = "0"

    def same_texts(r):
        for choice in r["question"]["choices"]:
            choice["text"] = "a dog"

    def gold_up_to_case(r):  # a distractor that is the gold in capitals with a space more (issue 53)
        choices, gold = r["question"]["choices"], int(r["answerKey"])
        choices[(gold + 1) % len(choices)]["text"] = " " + choices[gold]["text"].upper().replace(" ", "  ") + " "

    def empty_choice(r):
        r["question"]["choices"][(int(r["answerKey"]) + 1) % 5]["text"] = "  "

    def invisible_choice(r):  # shows as nothing: a zero-width space and a soft hyphen
        r["question"]["choices"][(int(r["answerKey"]) + 1) % 5]["text"] = "\u200b\u00ad"

    def gold_decomposed(r):  # the gold again, its letters decomposed (NFD) and a zero-width space inside
        choices, gold = r["question"]["choices"], int(r["answerKey"])
        text = unicodedata.normalize("NFD", choices[gold]["text"] + " café")
        choices[gold]["text"] += " café"
        choices[(gold + 1) % len(choices)]["text"] = text[:3] + "\u200b" + text[3:]

    cases = {
        "choice labels ['0', '0', '0', '0', '0'] repeat": same_labels,
        "two choices have the same text": same_texts,
        "two choices have the same text (up to case and spaces)": gold_up_to_case,
        "a choice is empty": empty_choice,
        "a choice is empty (or invisible)": invisible_choice,
        "it repeats an earlier row": lambda r: None,  # the same question twice would count twice
        "two choices have the same text (up to case and spaces);": gold_decomposed,
        "hops 1e+30 is outside 0..1000": lambda r: r["notes"].update(hops=1e30),
        "distractor_hops 1.5 is not a whole number": lambda r: r["notes"].update(distractor_hops=1.5),
    }
    score = ("score", "--model", minilm_path, "--scorer", "similarity", "--out", tmp_path / "p.parquet")
    for expected, change in cases.items():
        path = _jsonl(tmp_path, record, _damaged(record, change))
        with pytest.raises(ProbeFormatError, match="line 2|row 2"):
            read_probes(path)
        refused(workbench(*score, "--probes", path), expected)
    assert not (tmp_path / "p.parquet").exists()


def test_a_parquet_probe_set_with_an_answer_out_of_range_is_refused(released_dir, tmp_path, minilm_path):
    probes = read_probes(released_dir / "dictionary_qa_test.jsonl").head(20)
    probes.with_columns(answer=pl.when(pl.int_range(pl.len()) == 7).then(99).otherwise("answer")).write_parquet(
        tmp_path / "test.parquet"
    )
    score = ("score", "--model", minilm_path, "--scorer", "similarity", "--out", tmp_path / "p.parquet")
    refused(workbench(*score, "--probes", tmp_path / "test.parquet"), "row 8 (id ")
    refused(workbench(*score, "--probes", tmp_path / "test.parquet"), "answer is not the index of a choice")


def test_deep_json_and_lone_surrogates_are_one_line_naming_the_file_and_line(record, tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(ProbeFormatError, match=r"hypernymy_test.jsonl, line 2: JSON nested too deep"):
        read_probes(_jsonl(tmp_path, record, deep))
    lone = json.dumps(record).replace('"stem": "', '"stem": "\\ud800', 1)
    with pytest.raises(ProbeFormatError, match=r"line 3: a lone surrogate escape '\\ud800'"):
        read_probes(_jsonl(tmp_path, record, record, lone))


def test_a_huge_n_boot_is_one_line_naming_it(released_dir, tmp_path):
    from fake_scores import predictions_of

    preds = tmp_path / "p.parquet"
    predictions_of(read_probes(released_dir / "dictionary_qa_test.jsonl").head(30)).write_parquet(preds)
    for command in (("publish", preds, "--out", tmp_path / "site"), ("report", preds), ("compare", preds, preds)):
        refused(workbench(*command, "--n-boot", "99999999999"), "n_boot=99999999999 must lie between")
    assert not (tmp_path / "site").exists()
    (tmp_path / "table.csv").write_text("a,b\n1,2\n2,3\n3,5\n")
    (tmp_path / "model.txt").write_text("A =~ a\nB =~ b\nB ~ A\n")
    refused(workbench("pls", "--data", tmp_path / "table.csv", "--model", tmp_path / "model.txt", "--bootstrap",
                      "99999999999"), "bootstrap=99999999999 must be 0")  # issue 42: a MemoryError  # fmt: skip


def test_a_probe_set_that_is_not_the_predictions_is_refused_or_warned_of(released_dir, tmp_path):
    from fake_scores import predictions_of

    hypo = read_probes(released_dir / "hyponymy_test.jsonl").head(40)
    preds = tmp_path / "hypo.parquet"
    predictions_of(hypo).write_parquet(preds)
    other = released_dir / "hypernymy_test.jsonl"
    refused(workbench("publish", preds, "--probes", other, "--out", tmp_path / "site"), "holds none of the 40")
    refused(workbench("report", preds, "--probes", other), "scored on another probe set")
    hypo.head(30).write_parquet(tmp_path / "part.parquet")
    code, _, err = workbench("report", preds, "--probes", tmp_path / "part.parquet", "--n-boot", "10")
    assert code == 0 and "WARNING: 10 of 40 questions predicted are not in" in err


@pytest.fixture(scope="module")
def logged(released_dir) -> list[dict]:
    """12 released DictionaryQA questions as lm-eval ``--log_samples`` logs them on an exported task."""
    frame = read_probes(released_dir / "dictionary_qa_test.jsonl").head(12)
    return [{"doc_id": i, "doc": row, "target": row["answer"], "filtered_resps": [
        [str(-1.0 - abs(j - row["answer"])), "False"] for j in range(len(row["choices"]))]}
        for i, row in enumerate(frame.iter_rows(named=True))]  # fmt: skip  # as lm-eval logs them: text


def _logged(folder: Path, records: list) -> Path:
    path = folder / "samples_workbench_dictionary_qa_2026-11-27.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def test_lm_eval_samples_that_would_give_a_wrong_number_are_one_line_naming_the_line(logged, tmp_path):
    """Issue 42: a doc logged twice, NaN, inf or true as log-likelihoods, an answer 7 of 5 choices, missing
    filtered_resps, an empty choice, a null doc or choices, flat responses."""
    out = tmp_path / "lm.parquet"
    code, text, err = workbench("import", "lm-eval", _logged(tmp_path, logged), "--out", out)
    assert code == 0 and "wrote 12 questions" in text, err
    assert pl.read_parquet(out).filter(pl.col("rule") == "sum")["correct"].all()  # the gold is the most likely
    flat = [{**r, "filtered_resps": [float(pair[0]) for pair in r["filtered_resps"]]} for r in logged]
    code, text, err = workbench("import", "lm-eval", _logged(tmp_path, flat), "--out", out)
    assert code == 0 and "wrote 12 questions" in text, err  # bare numbers are log-likelihoods too

    def changed(index: int, change) -> list:
        records = json.loads(json.dumps(logged))
        change(records[index])
        return records

    def value(number):
        return lambda r: r["filtered_resps"][1].__setitem__(0, number)

    cases = {
        "is logged again (first on line 4)": [*logged, logged[3]],
        "not a finite log-likelihood": changed(2, value(float("nan"))),
        "filtered_resps holds ['nan'": changed(2, value("nan")),
        "filtered_resps holds ['-1e999'": changed(2, value("-1e999")),
        "filtered_resps holds ['0.5'": changed(2, value("0.5")),
        "filtered_resps holds [inf": changed(2, value(float("inf"))),
        "filtered_resps holds [True": changed(2, value(True)),
        "doc.answer 7 is not the index": changed(5, lambda r: r["doc"].__setitem__("answer", 7)),
        "filtered_resps must hold one log-likelihood per choice": changed(0, lambda r: r.pop("filtered_resps")),
        "doc.choices must be two or more non-empty texts": changed(1, lambda r: r["doc"]["choices"].__setitem__(0, "")),
        "does not carry the probe columns": changed(1, lambda r: r.__setitem__("doc", None)),
        "doc.choices must be": changed(1, lambda r: r["doc"].__setitem__("choices", None)),
        "not a JSON record": [*logged[:3], '{"doc_id": 3, "doc": {'],
    }
    for expected, records in cases.items():
        refused(workbench("import", "lm-eval", _logged(tmp_path, records), "--out", out), expected)
    assert "line" in workbench("import", "lm-eval", _logged(tmp_path, cases["not a JSON record"]), "--out", out)[2]


def test_a_partial_comparison_says_how_many_questions_were_paired_and_one_cluster_gives_no_interval(
    released_dir, tmp_path
):
    """Issue 42: ``compare`` of partly overlapping files said nothing of the questions it left out, and ``report``
    on one question printed ``100.0 [100.0, 100.0]``."""
    from fake_scores import predictions_of

    probes = read_probes(released_dir / "dictionary_qa_test.jsonl").head(60)
    predictions_of(probes, "a").write_parquet(tmp_path / "a.parquet")
    predictions_of(probes.head(40), "b", seed=1).write_parquet(tmp_path / "b.parquet")
    code, out, err = workbench("compare", tmp_path / "a.parquet", tmp_path / "b.parquet", "--n-boot", "20")
    assert code == 0 and "paired 40 questions scored by both; left out 20 of A's (a.parquet) and 0 of B's" in err, err
    code, _, err = workbench("compare", tmp_path / "a.parquet", tmp_path / "a.parquet", "--n-boot", "20")
    assert code == 0 and "paired" not in err, err  # a full overlap needs no note
    predictions_of(probes.head(1), "one").write_parquet(tmp_path / "one.parquet")
    code, out, err = workbench("report", tmp_path / "one.parquet", "--n-boot", "20")
    assert code == 0 and "too few clusters for an interval" in out and "[100.0, 100.0]" not in out, err
    code, out, err = workbench(
        "compare", tmp_path / "one.parquet", tmp_path / "one.parquet", "--n-boot", "20", "--json"
    )
    assert code == 0 and json.loads(out)[0]["diff_lo"] is None, err


def test_names_are_checked_where_they_enter(released_dir, logged, tmp_path, minilm_path):
    """Issue 42: a 300-character --name was accepted by score, then report, report --html and publish failed with
    "File name too long"; a name with a line break or control character broke one-line labels."""
    probes = _jsonl(tmp_path, *[json.loads(line) for line in (released_dir / "hypernymy_test.jsonl").open()][:3])
    score = (
        "score",
        "--model",
        minilm_path,
        "--scorer",
        "similarity",
        "--probes",
        probes,
        "--out",
        tmp_path / "p.parquet",
    )
    refused(workbench(*score, "--name", "m" * 300), "--name is 300 characters long; give at most 100")
    refused(workbench(*score, "--name", "two\nlines"), "holds a control character or line break")
    # issue 53: a right-to-left override showed a control as "gpt-4" on the site; a zero-width joiner hid itself
    refused(workbench(*score, "--name", "4-tpg\u202e"), "U+202E RIGHT-TO-LEFT OVERRIDE")
    refused(workbench(*score, "--name", "mini\u200dlm"), "U+200D ZERO WIDTH JOINER")
    refused(workbench(*score, "--name", "minilm\u034f"), "U+034F COMBINING GRAPHEME JOINER")  # invisible, not Cf
    refused(workbench(*score, "--name", "minilm\u3164"), "U+3164 HANGUL FILLER")
    samples = _logged(tmp_path, logged)
    refused(workbench("import", "lm-eval", samples, "--out", tmp_path / "l.parquet", "--name", "x\x1by"), "control")
    assert not (tmp_path / "p.parquet").exists() and not (tmp_path / "l.parquet").exists()


def test_one_models_answers_to_one_question_are_read_once(released_dir, tmp_path):
    from fake_scores import predictions_of

    probes = read_probes(released_dir / "hypernymy_test.jsonl").head(40)
    first = predictions_of(probes, "MiniLM", seed=0)
    first.write_parquet(tmp_path / "a.parquet")
    changed = first.with_columns(answer=(pl.col("answer") + 1) % 5).with_columns(
        correct=pl.col("pred") == pl.col("answer")
    )
    changed.write_parquet(tmp_path / "b.parquet")  # the probe file's answer keys changed between two runs (issue 53)
    refused(workbench("report", tmp_path / "a.parquet", tmp_path / "b.parquet"), "with different answer keys")
    refused(workbench("report", tmp_path / "a.parquet", tmp_path / "a.parquet"), "would count twice")
    pl.concat([first, first.head(3)]).write_parquet(tmp_path / "stacked.parquet")  # one file, rows twice
    refused(workbench("report", tmp_path / "stacked.parquet"), "holds MiniLM's answers to the same 3 question(s) twice")
    other = predictions_of(probes, "other", seed=1)  # another model on the same questions is read beside it
    other.write_parquet(tmp_path / "c.parquet")
    assert workbench("report", tmp_path / "a.parquet", tmp_path / "c.parquet", "--n-boot", "10")[0] == 0


def test_a_file_of_two_probes_is_never_read_as_one(released_dir, tmp_path):
    hyper = [json.loads(line) for line in (released_dir / "hypernymy_test.jsonl").read_text().splitlines()[:5]]
    hypo = [json.loads(line) for line in (released_dir / "hyponymy_test.jsonl").read_text().splitlines()[:5]]
    path = _jsonl(tmp_path, *hyper, *hypo)  # named hypernymy_test.jsonl, its last five rows hyponymy's (issue 53)
    with pytest.raises(ProbeFormatError, match=r"line 6: its chain .* is written as a hyponymy question's"):
        read_probes(path)
    senses = [json.loads(line) for line in (released_dir / "dictionary_qa_test.jsonl").read_text().splitlines()[:2]]
    mixed = tmp_path / "dictionary_qa_test.jsonl"
    mixed.write_text("".join(json.dumps(record) + "\n" for record in [*senses, hyper[0]]))
    with pytest.raises(ProbeFormatError, match=r"line 3: its chain .* is written as a hypernymy question's"):
        read_probes(mixed)
    ours = [dict(record, notes={**record["notes"], "probe": "hyponymy"}) for record in hyper[:2]]
    with pytest.raises(
        ProbeFormatError, match=r"line 1: notes.probe is 'hyponymy', but the file's name says hypernymy"
    ):
        read_probes(_jsonl(tmp_path, *ours))


def test_lm_eval_samples_in_a_folder_named_as_markup_or_with_a_bidi_override_are_refused(logged, tmp_path):
    """The default label is the folder lm-eval wrote into: a name from outside passes the names' check (issue 60)."""
    for name in ("Mini\u202eLM", "x" * 101):
        folder = tmp_path / name
        folder.mkdir()
        refused(workbench("import", "lm-eval", _logged(folder, logged), "--out", tmp_path / "lm.parquet"),
                "the model label (from the folder")  # fmt: skip
    code, _, err = workbench("import", "lm-eval", _logged(folder, logged), "--out", tmp_path / "lm.parquet",
                             "--name", "smollm2")  # fmt: skip
    assert code == 0, err
