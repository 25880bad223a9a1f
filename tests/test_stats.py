"""Probe statistics: SPEC Table 4 and the hops x distractor family/depth counts."""

import json
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from workbench.probes.formats import read_probes
from workbench.probes.stats import TABLE4_SCHEMA, hops_by_family, table4
from workbench.schema import PROBE_SCHEMA, cluster_id


def row(probe: str, concept: str, context: str, gold: str, hops: int, family: str, depth: int) -> dict:
    """A probe row with only the fields the statistics read made meaningful."""
    return {
        "id": f"{probe}-{concept}-{context}-{gold}-{hops}-{family}-{depth}",
        "probe": probe,
        "source": "wordnet",
        "split": "test",
        "cluster_id": cluster_id(probe, concept),
        "concept": concept,
        "pos": "n",
        "word": concept.split(".")[0],
        "context": context,
        "template": "t",
        "question": f"q {context}",
        "choices": ["d1", gold, "d2"],
        "answer": 1,
        "gold_concept": gold,
        "hops": hops,
        "chain": [concept, gold],
        "distractor_family": family,
        "distractor_depth": depth,
        "distractor_concepts": ["d1", "d2"],
        "n_random_fill": 0,
    }


@pytest.fixture
def small() -> pl.DataFrame:
    rows = [
        # cluster dog: question "canine" perturbed three ways, a 2-hop question, and "canine" again in another
        # sentence: one cluster, as a cluster is every question about one concept (R&S 2020 §3.1)
        row("hypernymy", "dog.n.01", "s1", "canine", 1, "random", 0),
        row("hypernymy", "dog.n.01", "s1", "canine", 1, "sister", 1),
        row("hypernymy", "dog.n.01", "s1", "canine", 1, "sister", 2),
        row("hypernymy", "dog.n.01", "s1", "carnivore", 2, "isa_down", 1),
        row("hypernymy", "dog.n.01", "s2", "canine", 1, "sister", 1),
        # cluster cat
        row("hypernymy", "cat.n.01", "s3", "feline", 1, "random", 0),
        row("wordsense", "bank.u.1", "s4", "shore", 0, "senses", 0),
        row("wordsense", "bank.u.2", "s5", "money", 0, "senses", 0),
    ]
    return pl.DataFrame(rows, schema=PROBE_SCHEMA)


def test_table4_counts_questions_once_whatever_their_perturbations(small):
    """Table 4's caption counts "unique (Q, A) pairs": a question perturbed three ways is one; the same gold asked
    in another sentence (another stem) is another."""
    expected = pl.DataFrame(
        {
            "probe": ["hypernymy", "wordsense"],
            "unique_questions": [4, 2],
            "with_perturbations": [6, 2],
            "avg_cluster_size": [3.0, 1.0],
            "concepts": [2, 2],
        },
        schema=TABLE4_SCHEMA,
    )
    assert table4(small).equals(expected)


def test_hops_by_family_counts_every_family_and_depth(small):
    expected = pl.DataFrame(
        {
            "probe": ["hypernymy", "hypernymy", "wordsense"],
            "hops": [1, 2, 0],
            "random": [2, 0, 0],
            "sister_1": [2, 0, 0],
            "sister_2": [1, 0, 0],
            "isa_down_1": [0, 1, 0],
            "senses": [0, 0, 2],
        }
    )
    assert hops_by_family(small).equals(expected)


@pytest.fixture(scope="module")
def hypernymy_test(released_dir: Path) -> tuple[pl.DataFrame, list[dict]]:
    path = released_dir / "hypernymy_test.jsonl"
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return read_probes(path), raw


def test_table4_of_the_released_hypernymy_test(hypernymy_test):
    frame, raw = hypernymy_test
    stats = table4(frame).row(0, named=True)
    gold_texts = {  # Table 4's caption: unique (Q, A) pairs
        (r["question"]["stem"], next(c["text"] for c in r["question"]["choices"] if c["label"] == r["answerKey"]))
        for r in raw
    }
    assert stats["with_perturbations"] == len(raw) == 2254
    assert stats["concepts"] == len({r["notes"]["gold_synset"] for r in raw})
    assert stats["unique_questions"] == len(gold_texts)
    assert stats["concepts"] <= stats["unique_questions"] < stats["with_perturbations"]
    assert stats["avg_cluster_size"] == pytest.approx(len(raw) / frame["cluster_id"].n_unique())


def test_hops_by_family_of_the_released_hypernymy_test_adds_up(hypernymy_test):
    frame, raw = hypernymy_test
    counts = hops_by_family(frame)
    families = [c for c in counts.columns if c not in ("probe", "hops")]
    totals = counts.select(pl.sum_horizontal(families)).to_series()
    assert dict(zip(counts["hops"].to_list(), totals.to_list(), strict=True)) == Counter(
        r["notes"]["hops"] for r in raw
    )
    assert counts["random"].sum() == sum(r["notes"]["distractor_type"] == "random" for r in raw)
    hyponym_depths = Counter(r["notes"]["distractor_hops"] for r in raw if r["notes"]["distractor_type"] == "hyponym")
    assert {int(c.rsplit("_", 1)[1]): counts[c].sum() for c in families if c.startswith("isa_down_")} == hyponym_depths
    assert not any(c.startswith("isa_up") for c in families)
