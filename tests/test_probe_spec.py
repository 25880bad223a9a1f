"""Probe configuration and templates: early, precise errors; safe filling."""

import json

import pytest

from workbench.errors import SpecError
from workbench.probes import ProbeSpec
from workbench.probes.templates import TemplateError, fill, load_templates


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"probe": "antonymy"}, "probe='antonymy' is not allowed"),
        ({"probe": "hypernymy", "max_hops": 6}, "max_hops=6 is out of range"),
        ({"probe": "hypernymy", "max_hops": 0}, "max_hops=0 is out of range"),
        ({"probe": "hypernymy", "max_depth": 9}, "max_depth=9"),
        ({"probe": "hypernymy", "families": ("cousin",)}, "families='cousin' is not allowed"),
        ({"probe": "hypernymy", "families": ()}, "families is empty"),
    ],
)
def test_bad_spec_names_the_parameter_and_the_allowed_values(kwargs, message):
    with pytest.raises(SpecError, match=message):
        ProbeSpec(**kwargs)


def test_families_accept_a_comma_list_and_map_isa_per_probe():
    spec = ProbeSpec("hypernymy", families="random, isa", max_depth=2)
    assert spec.families == ("random", "isa")
    assert spec.distractor_options() == [("random", 0), ("isa_down", 1), ("isa_down", 2)]
    assert ("isa_up", 1) in ProbeSpec("hyponymy").distractor_options()
    assert ProbeSpec("wordsense").distractor_options() == [("senses", 0)]


def test_default_templates_include_table2_and_varied_phrasings():
    templates = load_templates("hypernymy")
    assert templates.questions["table2"] == "In '{context}', the word or concept '{word}' is best described as a type of"
    assert len(templates.questions) > 10
    assert any(text.startswith("Given the fragment") for text in templates.questions.values())
    assert any(text.startswith("Assuming the expression") for text in templates.questions.values())


def test_missing_field_is_an_error_and_fields_never_run_code():
    with pytest.raises(TemplateError, match="needs a value for {word}"):
        fill("the word '{word}'", {"context": "x"})
    assert fill("{word}", {"word": "{context}"}) == "{context}"


def test_user_templates_are_loaded_and_unknown_fields_rejected(tmp_path):
    good = {"contexts": ["Reading '{context}',"], "probes": {"definitions": {"table2": "Define '{word}':", "suffixes": ["'{word}' means"], "choice": "{definition}"}}}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(good))
    templates = load_templates("definitions", path)
    assert templates.questions == {"table2": "Define '{word}':", "c0s0": "Reading '{context}', '{word}' means"}
    bad = {"probes": {"definitions": {"table2": "Define '{word.__class__}':", "choice": "{definition}"}}}
    path.write_text(json.dumps(bad))
    with pytest.raises(TemplateError, match="unknown field"):
        load_templates("definitions", path)
    with pytest.raises(TemplateError, match="expected JSON"):
        load_templates("hyponymy", path)
