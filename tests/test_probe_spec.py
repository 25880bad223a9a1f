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
        ({"probe": "hypernymy", "golds_per_hop": 0}, "golds_per_hop=0 is out of range"),
        ({"probe": "hypernymy", "depths": {"cousin": 2}}, "depths='cousin' is not allowed"),
        ({"probe": "hypernymy", "depths": {"sister": 7}}, r"depths\['sister'\]=7 is out of range"),
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


@pytest.mark.parametrize("probe", ["hypernymy", "hyponymy", "definitions", "synonymy"])
def test_paper_preset_has_the_released_datas_families_depths_and_hops(released_dir, probe):
    """The released WordNetQA files (R&S 2020) use random, sister 1-2 and isa 1-4 distractors, hops up to 5
    (taxonomy probes) and no instance links: ``ProbeSpec.paper`` asks for exactly those options."""
    from workbench.probes.formats import read_probes

    name = {"hypernymy": "hypernymy_test", "hyponymy": "hyponymy_test"}.get(probe, f"{probe}_train")
    released = read_probes(released_dir / f"{name}.jsonl")
    spec = ProbeSpec.paper(probe)
    seen = set(released.select("distractor_family", "distractor_depth").unique().iter_rows())
    assert seen == set(spec.distractor_options())
    assert set(released["hops"].unique()) == set(spec.hop_range)
    assert spec.instance_links is False
    assert ProbeSpec.paper(probe, seed=3).seed == 3  # overrides win


def test_per_family_depths_lower_one_family_only():
    spec = ProbeSpec("hypernymy", max_depth=3, depths={"sister": 1})
    assert spec.distractor_options() == [
        ("random", 0),
        ("sister", 1),
        ("isa_down", 1),
        ("isa_down", 2),
        ("isa_down", 3),
    ]
    assert ProbeSpec.paper("hypernymy", max_depth=1).depth_of("isa") == 1


def test_default_templates_include_table2_and_varied_phrasings():
    templates = load_templates("hypernymy")
    assert (
        templates.questions["table2"] == "In '{context}', the word or concept '{word}' is best described as a type of"
    )
    assert len(templates.questions) > 10
    assert any(text.startswith("Given the fragment") for text in templates.questions.values())
    assert any(text.startswith("Assuming the expression") for text in templates.questions.values())


def test_missing_field_is_an_error_and_fields_never_run_code():
    with pytest.raises(TemplateError, match="needs a value for {word}"):
        fill("the word '{word}'", {"context": "x"})
    assert fill("{word}", {"word": "{context}"}) == "{context}"


def test_user_templates_are_loaded_and_unknown_fields_rejected(tmp_path):
    good = {
        "contexts": ["Reading '{context}',"],
        "probes": {
            "definitions": {"table2": "Define '{word}':", "suffixes": ["'{word}' means"], "choice": "{definition}"}
        },
    }
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
