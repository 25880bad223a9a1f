"""Train/dev/test splits by concept, so that no semantic cluster straddles two splits."""

import math
import random

import polars as pl


def split_by_concept(
    probes: pl.DataFrame,
    train_size: int = 3000,
    seed: int = 0,
    train_pool: float | None = None,
    held_out_golds: bool = False,
) -> pl.DataFrame:
    """Set the ``split`` column: train as below, the other concepts alternating between dev and test.

    Concepts are visited in a seeded random order. With ``train_pool`` None, whole concepts go to train until
    ``train_size`` questions (one that would overflow it goes to dev/test instead). With ``train_pool`` (a share
    of the concepts), train is drawn as the paper drew its training sets: ``train_size`` questions at random from
    the questions of that share of the concepts; their other questions are left out, so that no cluster
    straddles two splits (docs/REPRODUCTION.md: the released train files hold 3,000 questions spread over
    1,341-2,712 clusters, which whole clusters cannot give). With ``held_out_golds``, train keeps no question whose
    gold answer (``gold_concept``) is the gold of a dev or test question, before the draw: the paper's splits were
    "de-duplicated with respect to correct answer" (R&S 2020 §5.1), so a gold that many concepts share (a general
    hypernym) lands in dev or test and never in train. A synonymy answer is its lemmas: train keeps no question whose
    gold lists a lemma a dev or test gold lists.
    """
    counts = probes.group_by("concept").len().sort("concept")
    order = list(zip(counts["concept"].to_list(), counts["len"].to_list()))
    random.Random(f"{seed}:split").shuffle(order)
    pooled = math.ceil(train_pool * len(order)) if train_pool is not None else 0
    assignment: dict[str, str] = {}
    sizes = {"train": 0, "dev": 0, "test": 0}
    for index, (concept, count) in enumerate(order):
        if index < pooled or (train_pool is None and sizes["train"] + count <= train_size):
            split = "train"
        else:
            split = "dev" if sizes["dev"] <= sizes["test"] else "test"
        assignment[concept] = split
        sizes[split] += count
    mapping = pl.DataFrame({"concept": list(assignment), "assigned": list(assignment.values())})
    split = (
        probes.join(mapping, on="concept", how="left", maintain_order="left")
        .with_columns(pl.col("assigned").alias("split"))
        .drop("assigned")
    )
    if held_out_golds:
        split = _without_held_out_answers(split)
    if train_pool is None:
        return split
    drawn = split.with_row_index("_row").filter(pl.col("split") == "train")["_row"]
    keep = set(random.Random(f"{seed}:train-draw").sample(drawn.to_list(), min(train_size, drawn.len())))
    return (
        split.with_row_index("_row")
        .filter((pl.col("split") != "train") | pl.col("_row").is_in(list(keep)))
        .drop("_row")
    )


def _answer_parts() -> pl.Expr:
    """What each question's correct answer is made of: a synonymy gold's lemmas (case folded), else its concept."""
    lemmas = pl.col("choices").list.get(pl.col("answer")).str.to_lowercase().str.split(", ")
    return pl.when(pl.col("probe") == "synonymy").then(lemmas).otherwise(pl.concat_list(pl.col("gold_concept")))


def _without_held_out_answers(split: pl.DataFrame) -> pl.DataFrame:
    """``split`` less the train questions whose correct answer shares a part with a dev or test question's."""
    indexed = split.with_row_index("_row")
    parts = indexed.select("_row", "split", part=_answer_parts()).explode("part")
    held = parts.filter(pl.col("split") != "train")["part"].unique().implode()
    dropped = parts.filter(pl.col("split") == "train", pl.col("part").is_in(held))["_row"].unique().implode()
    return indexed.filter(~pl.col("_row").is_in(dropped)).drop("_row")
