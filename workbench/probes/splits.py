"""Train/dev/test splits by concept, so that no semantic cluster straddles two splits."""

import math
import random
from collections import defaultdict
from collections.abc import Mapping

import polars as pl

from workbench.probes.stats import MEASURES


def split_by_concept(
    probes: pl.DataFrame,
    train_size: int = 3000,
    seed: int = 0,
    train_pool: float | None = None,
    held_out_golds: bool = False,
    test_size: int | None = None,
    test_pool: float = 1.0,
    test_mix: tuple[tuple[str, float], ...] = (),
    test_leave_out: pl.Expr | None = None,
    test_measures: Mapping[str, pl.Expr] | None = None,
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

    With ``test_size``, test is drawn as the paper drew its gold-standard tests (R&S 2020 §3.1.3: "a sample of around
    2,000 random questions that cover a large proportion of the concepts"): ``test_size`` questions at random from
    the questions of ``test_pool`` (a share) of the concepts without a train question, each question weighted so that
    the draw holds ``test_mix``'s shares (``gold_test``); the other questions of a drawn concept are left out, and
    every other concept without a train question is dev, the large silver set (a train-pool concept that no train
    question was drawn from among them; with ``held_out_golds``, less its questions whose answer a train question has).
    ``test_leave_out`` (a boolean expression over the questions) names those the test may not draw: the automatic
    stand-in for the paper's human filter (``ProbeSpec.test_max_below``). ``test_measures`` are measures beyond
    ``MEASURES`` that ``test_mix`` may name, each an expression over the questions (the gold's generality, ``below``).
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
        split = _without_shared_answers(split)
    if train_pool is not None:
        split = split.with_row_index("_row")
        drawn = split.filter(pl.col("split") == "train")["_row"]
        keep = set(random.Random(f"{seed}:train-draw").sample(drawn.to_list(), min(train_size, drawn.len())))
        kept = pl.col("_row").is_in(list(keep))
        if test_size is None:
            split = split.filter((pl.col("split") != "train") | kept)
        else:  # a pool concept no train question was drawn from is a dev or test concept
            asked = split.filter(kept)["concept"].unique().implode()
            moved = (pl.col("split") == "train") & ~pl.col("concept").is_in(asked)
            split = split.filter(kept | moved | (pl.col("split") != "train")).with_columns(
                split=pl.when(moved).then(pl.lit("dev")).otherwise(pl.col("split"))
            )
        split = split.drop("_row")
        if test_size is not None and held_out_golds:
            split = _without_shared_answers(split, held_by_train=True)
    if test_size is None:
        return split
    return gold_test(split, test_size, test_pool, test_mix, seed, test_leave_out, test_measures)


def gold_test(
    split: pl.DataFrame,
    size: int,
    pool: float = 1.0,
    mix: tuple[tuple[str, float], ...] = (),
    seed: int = 0,
    leave_out: pl.Expr | None = None,
    measures: Mapping[str, pl.Expr] | None = None,
) -> pl.DataFrame:
    """``split`` with its test drawn anew from every concept without a train question: ``size`` questions at random
    from the questions of ``pool`` (a share, in a seeded order) of those concepts, each weighted by ``mixed_weights``
    so that the draw holds ``mix``'s shares (of ``MEASURES`` and of ``measures``), none of those ``leave_out`` names;
    the drawn questions are test, the other questions of their concepts are left out, and every other concept's
    questions are dev."""
    rest = split.filter(pl.col("split") != "train")
    concepts = sorted(rest["concept"].unique().to_list())
    random.Random(f"{seed}:test-pool").shuffle(concepts)
    pooled = rest.filter(pl.col("concept").is_in(concepts[: math.ceil(pool * len(concepts))]))
    if leave_out is not None:
        pooled = pooled.filter(~leave_out)
    weight = mixed_weights(pooled, mix, {**MEASURES, **(measures or {})})
    rows = pooled.with_row_index("_row").select("_row").with_columns(weight=weight)
    rng = random.Random(f"{seed}:test-draw")  # weighted sampling without replacement: the largest u ** (1 / w)
    keys = [(rng.random() ** (1 / weight), row) for row, weight in rows.iter_rows() if weight > 0]
    drawn = pooled.with_row_index("_row").filter(pl.col("_row").is_in([row for _, row in sorted(keys)[-size:]]))
    ids, tested = drawn["id"].implode(), drawn["concept"].unique().implode()
    return split.filter(~pl.col("concept").is_in(tested) | pl.col("id").is_in(ids)).with_columns(
        split=pl.when(pl.col("split") == "train")
        .then(pl.lit("train"))
        .when(pl.col("concept").is_in(tested))
        .then(pl.lit("test"))
        .otherwise(pl.lit("dev"))
    )


def mixed_weights(
    frame: pl.DataFrame,
    mix: tuple[tuple[str, float], ...],
    measures: Mapping[str, pl.Expr] = MEASURES,
    rounds: int = 50,
) -> pl.Series:
    """A weight per question of ``frame`` such that the weighted shares of each measure of ``mix`` (keys
    ``"measure:value"`` of ``measures``, by default ``workbench.probes.stats.MEASURES``: ``"pos:n"``, ``"hops:1"``,
    ``"kind:sister_1"``) are
    the mix's, as near as the questions allow: raking (iterative proportional fitting) over the cells of the measures
    the mix names; a value the mix does not name gets weight 0. Without ``mix``, weight 1."""
    if not mix:
        return pl.Series("weight", [1.0] * frame.height)
    target: dict[str, dict[str, float]] = {}
    for key, share in mix:
        measure, _, value = key.partition(":")
        target.setdefault(measure, {})[value] = share
    keyed = frame.select(**{measure: measures[measure] for measure in target})
    cells = keyed.group_by(list(target), maintain_order=True).len()
    counts, weight = cells["len"].to_list(), [1.0] * cells.height
    for _ in range(rounds):
        for measure, shares in target.items():
            values, held = cells[measure].to_list(), defaultdict(float)
            for value, count, w in zip(values, counts, weight):
                held[value] += count * w
            total = sum(held.values())
            weight = [w * shares.get(v, 0.0) * total / held[v] if held[v] else 0.0 for v, w in zip(values, weight)]
    table = cells.select(*target).with_columns(weight=pl.Series(weight, dtype=pl.Float64))
    return keyed.join(table, on=list(target), how="left", maintain_order="left")["weight"].fill_null(0.0)


def _answer_parts() -> pl.Expr:
    """What each question's correct answer is made of: a synonymy gold's lemmas (case folded), else its concept."""
    lemmas = pl.col("choices").list.get(pl.col("answer")).str.to_lowercase().str.split(", ")
    return pl.when(pl.col("probe") == "synonymy").then(lemmas).otherwise(pl.concat_list(pl.col("gold_concept")))


def _without_shared_answers(split: pl.DataFrame, held_by_train: bool = False) -> pl.DataFrame:
    """``split`` less the train questions whose correct answer shares a part with a dev or test question's (with
    ``held_by_train``: less the dev and test questions whose answer shares a part with a train question's)."""
    indexed = split.with_row_index("_row")
    parts = indexed.select("_row", "split", part=_answer_parts()).explode("part")
    in_train = pl.col("split") == "train"
    held = parts.filter(in_train if held_by_train else ~in_train)["part"].unique().implode()
    dropped = parts.filter(~in_train if held_by_train else in_train, pl.col("part").is_in(held))["_row"]
    return indexed.filter(~pl.col("_row").is_in(dropped.unique().implode())).drop("_row")
