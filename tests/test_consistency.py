"""Template sensitivity: the share of concept-and-choices groups whose pick survives a change of phrasing."""

import polars as pl
import pytest

from workbench.analysis.consistency import template_consistency
from workbench.probes.phrasings import rephrase
from workbench.probes.templates import fill, load_templates


def asked(concept: str, template: str, choices: list[str], pred: int, answer: int = 0) -> dict:
    return {"concept": concept, "template": template, "choices": choices, "pred": pred, "answer": answer,
            "correct": pred == answer, "probe": "hypernymy", "model": "m", "scorer": "mcqa", "rule": "cls",
            "control": "none", "fingerprint": "f"}  # fmt: skip


def test_a_pick_that_changes_with_the_template_makes_its_group_inconsistent():
    dog, cat = ["canine", "feline", "bird"], ["feline", "canine", "fish"]
    rows = [
        asked("dog", "t1", dog, 0), asked("dog", "t2", dog[::-1], 2, answer=2),  # reordered, same pick: canine
        asked("cat", "t1", cat, 0), asked("cat", "t2", cat, 1),  # feline, then canine: the phrasing changed the pick
        asked("owl", "t1", ["bird", "fish", "tree"], 0),  # asked in one template only: not counted
    ]  # fmt: skip
    row = template_consistency(pl.DataFrame(rows)).row(0, named=True)
    assert (row["n_groups"], row["n_questions"]) == (2, 4)
    assert row["consistency"] == 0.5 and row["accuracy"] == pytest.approx(3 / 4)


@pytest.mark.wordnet
def test_rephrase_asks_each_generated_question_in_other_templates_of_its_probe(wordnet_graph):
    import workbench as wb

    probes = wb.build_probes("hypernymy", graph=wordnet_graph, concepts=["dog.n.01", "firewall.n.01", "run.v.15"])
    texts = load_templates("hypernymy").questions
    both = rephrase(probes, phrasings=3, seed=1)
    assert both.head(probes.height).equals(probes)  # the originals first, unchanged
    new = both.slice(probes.height).join(probes, left_on=pl.col("id").str.replace(r"~[^~]*$", ""), right_on="id")
    assert new.height == 2 * probes.height and (new["template"] != new["template_right"]).all()
    for row in new.iter_rows(named=True):  # the other template, filled with the question's own arguments
        assert row["question"] == fill(texts[row["template"]], {"context": row["context"], "word": row["word"]})
        assert (row["choices"], row["answer"], row["cluster_id"]) == (
            row["choices_right"], row["answer_right"], row["cluster_id_right"]
        )
    groups = both.group_by("concept", "choices").agg(pl.col("template").n_unique())
    assert (groups["template"] == 3).all()  # now template sensitivity has something to compare
    assert rephrase(probes, phrasings=1).equals(probes)
    with pytest.raises(wb.WorkbenchError, match="phrasings=0"):
        rephrase(probes, phrasings=0)


def test_released_questions_are_rephrased_from_their_context_and_word_columns(released_dir):
    from workbench.probes.formats import read_probes

    released = read_probes(released_dir / "hyponymy_test.jsonl").head(50)
    both = rephrase(released, phrasings=2)
    new = both.slice(released.height)
    assert new.height == released.height
    assert new["template"].is_in(list(load_templates("hyponymy").questions)).all()
    assert all(row["context"] in row["question"] and row["word"] in row["question"] for row in new.rows(named=True))
