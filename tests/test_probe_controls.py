"""oLMpics language controls (NO-LANG, PERTURBED-LANG) of probe sets: arguments kept, language removed or
replaced by nonsense words, everything but the question stem unchanged.

Questions are phrased here from the packaged templates (every template of every probe) with known
argument values, so what the control must keep is known independently of the code under test.
"""

import re
import subprocess
import sys

import polars as pl
import pytest

from workbench.errors import SpecError, WorkbenchError
from workbench.probes.formats import read_probes
from workbench.probes.language_controls import NONSENSE_WORDS, ControlSpec, language_control, nonsense
from workbench.probes.templates import fill, load_templates
from workbench.schema import PROBE_SCHEMA, PROBES

VALUES = {"context": "the old dog barked at the mailman", "word": "dog", "definition": "a member of the genus Canis"}


def _phrased() -> pl.DataFrame:
    """One question per template of every probe, with its argument values (in template order) kept aside."""
    rows = []
    for probe in PROBES:
        for template_id, text in load_templates(probe).questions.items():
            fields = re.findall(r"\{(\w+)\}", text)
            rows.append({
                "id": f"{probe}-{template_id}", "probe": probe, "source": "wordnet",
                "split": ["train", "dev", "test"][len(rows) % 3],
                "cluster_id": f"{probe}:dog.n.01:0", "concept": "dog.n.01", "pos": "n", "word": VALUES["word"],
                "context": VALUES["context"] if "context" in fields else "", "template": template_id,
                "question": fill(text, VALUES), "choices": ["a dog", "a cat", "a saw"], "answer": 0,
                "gold_concept": "canine.n.02", "hops": 1, "chain": ["dog.n.01", "canine.n.02"],
                "distractor_family": "sister", "distractor_depth": 1,
                "distractor_concepts": ["cat.n.01", "saw.n.02"], "n_random_fill": 0,
                "_arguments": [VALUES[f] for f in fields],
            })  # fmt: skip
    return pl.DataFrame(rows, schema={**PROBE_SCHEMA, "_arguments": pl.List(pl.String)})


PHRASED = _phrased()


def test_no_lang_keeps_only_the_arguments_in_template_order():
    control = language_control(PHRASED.drop("_arguments"), ControlSpec("no-lang"))
    expected = [" ".join(arguments) for arguments in PHRASED["_arguments"]]
    assert control["question"].to_list() == expected
    assert PHRASED.height > 40  # every template of the five probes was exercised


def test_perturbed_lang_replaces_every_template_word_and_keeps_the_arguments():
    control = language_control(PHRASED.drop("_arguments"), ControlSpec("perturbed-lang", seed=3))
    for question, arguments, original in zip(control["question"], PHRASED["_arguments"], PHRASED["question"]):
        rest = question
        for argument in arguments:
            assert argument in rest, (question, argument)
            rest = rest.replace(argument, " ", 1)
        words = re.findall(r"[^\W\d_]+", rest)
        assert words and {w.lower() for w in words} <= set(NONSENSE_WORDS), question
        assert question != original


def test_perturbed_lang_is_seeded_and_maps_a_word_to_one_nonsense_word():
    frame = PHRASED.drop("_arguments")
    first, again = (language_control(frame, ControlSpec("perturbed-lang", seed=0))["question"] for _ in range(2))
    assert first.to_list() == again.to_list()
    other = language_control(frame, ControlSpec("perturbed-lang", seed=1))["question"]
    assert other.to_list() != first.to_list()
    assert {nonsense("word", 0), nonsense("Word", 0).lower()} == {nonsense("word", 0)}
    assert nonsense("Sentence", 5)[0].isupper()


@pytest.mark.parametrize("kind", ["no-lang", "perturbed-lang"])
def test_controls_change_only_the_question_stem_and_tag_ids(kind):
    frame = PHRASED.drop("_arguments")
    control = language_control(frame, ControlSpec(kind))
    unchanged = [c for c in PROBE_SCHEMA if c not in ("question", "id", "template")]
    assert control.select(unchanged).equals(frame.select(unchanged))
    assert control["id"].to_list() == [f"{i}:{kind}" for i in frame["id"]]
    assert control["id"].n_unique() == frame.height


def test_released_questions_in_other_phrasings_fall_back_to_columns_and_quotes(released_dir):
    synonymy = read_probes(released_dir / "synonymy_train.jsonl")
    control = language_control(synonymy, ControlSpec("no-lang"))
    quoted = synonymy["question"].str.extract(r"^[^']*'(.+)'", 1)  # from the first quote to the last
    assert control["question"].to_list() == quoted.to_list()  # the definition, and nothing else
    hypernymy = read_probes(released_dir / "hypernymy_test.jsonl")
    no_lang = language_control(hypernymy, ControlSpec("no-lang"))
    assert (no_lang["question"] == hypernymy["context"] + " " + hypernymy["word"]).mean() > 0.95


def test_a_question_without_findable_arguments_is_a_clear_error():
    frame = (
        PHRASED.drop("_arguments")
        .head(1)
        .with_columns(question=pl.lit("What is this?"), context=pl.lit(""), word=pl.lit("zebra"))
    )
    with pytest.raises(WorkbenchError, match=r"1 question\(s\) match no template .*pass the template file"):
        language_control(frame, ControlSpec("no-lang"))


def test_control_spec_names_the_bad_value():
    with pytest.raises(SpecError, match=r"kind='no_lang' .*\['no-lang', 'perturbed-lang'\]"):
        ControlSpec("no_lang")
    with pytest.raises(SpecError, match="seed=-1"):
        ControlSpec("no-lang", seed=-1)


def test_cli_probes_control_writes_every_split(tmp_path):
    source = tmp_path / "probes"
    from workbench.probes.formats import write_probes

    write_probes(PHRASED.drop("_arguments"), source)
    result = subprocess.run(
        [sys.executable, "-m", "workbench", "probes", "control", "--kind", "no-lang", "--probes", str(source),
         "--out", str(tmp_path / "ctl")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    control = read_probes(tmp_path / "ctl")
    assert sorted(p.name for p in (tmp_path / "ctl").iterdir()) == ["dev.parquet", "test.parquet", "train.parquet"]
    assert sorted(control["question"].to_list()) == sorted(" ".join(a) for a in PHRASED["_arguments"])
