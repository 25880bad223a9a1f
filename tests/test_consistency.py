"""Template sensitivity: the share of concept-and-choices groups whose pick survives a change of phrasing."""

import polars as pl
import pytest

from workbench.consistency import template_consistency


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
