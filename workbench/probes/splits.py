"""Train/dev/test splits by concept, so that no semantic cluster straddles two splits."""

import random

import polars as pl


def split_by_concept(probes: pl.DataFrame, train_size: int = 3000, seed: int = 0) -> pl.DataFrame:
    """Set the ``split`` column: whole concepts go to train until ``train_size`` questions, the rest
    alternate between dev and test.

    Concepts are visited in a seeded random order; one whose questions would overflow the train
    budget goes to dev/test instead, so train never exceeds ``train_size``.
    """
    counts = probes.group_by("concept").len().sort("concept")
    order = list(zip(counts["concept"].to_list(), counts["len"].to_list()))
    random.Random(f"{seed}:split").shuffle(order)
    assignment: dict[str, str] = {}
    sizes = {"train": 0, "dev": 0, "test": 0}
    for concept, count in order:
        if sizes["train"] + count <= train_size:
            split = "train"
        else:
            split = "dev" if sizes["dev"] <= sizes["test"] else "test"
        assignment[concept] = split
        sizes[split] += count
    mapping = pl.DataFrame({"concept": list(assignment), "assigned": list(assignment.values())})
    return (
        probes.join(mapping, on="concept", how="left", maintain_order="left")
        .with_columns(pl.col("assigned").alias("split"))
        .drop("assigned")
    )
