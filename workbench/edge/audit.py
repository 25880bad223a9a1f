"""The memorisation audit of a train/test pair (edge-probing artifacts paper §3-5; SPEC §5).

An item is the span text (``word``). For each test row seen in train:
- Mem-Exact (the paper's §3: "a test data point is in the training data and has only one label"): its
  (span, label) pair occurs in train and the span has no other label there;
- Mem-Pair (by name only, not in ``HEURISTICS``): its exact (span, label) pair occurs in train, whatever other
  labels the span has there (the rule the authors' code tests);
- Mem-Freq: its most frequent train label (ties: alphabetical) is the gold label;
- Mem-Uniform: a label drawn uniformly (seeded) from its train labels is the gold label.
``memorisation_flags`` marks each test row; ``memorisation_shares`` is Table 2 (share of the test
set each heuristic classifies); ``audit_table`` is Tables 3-6: for each encoder x probe, accuracy
on the whole test set, on each filtered test set (the rows the heuristic does not flag), and the
relative drop ``(acc - acc_filtered) / acc * 100``; pre-trained and random encoders side by side.
"""

import numpy as np
import polars as pl

from workbench.edge.data import EDGE_SCHEMA
from workbench.errors import WorkbenchError
from workbench.schema import conform

HEURISTICS = ("Mem-Exact", "Mem-Freq", "Mem-Uniform")  # the paper's; "Mem-Pair" is asked for by name
NAMED = (*HEURISTICS, "Mem-Pair")


def memorisation_flags(train: pl.DataFrame, test: pl.DataFrame, seed: int = 0) -> pl.DataFrame:
    """``test`` with one boolean column per heuristic (True: the heuristic classifies the row)."""
    train = conform(train, EDGE_SCHEMA, "train frame")
    if test.is_empty():
        raise WorkbenchError("the test frame is empty; nothing to audit")
    counts = train.group_by("word", "label").len().sort(["word", "len", "label"], descending=[False, True, False])
    per_word = counts.group_by("word", maintain_order=True).agg(
        labels=pl.col("label"), majority=pl.col("label").first(), n_labels=pl.len()
    )
    pairs = train.select("word", "label").unique().with_columns(pair_seen=pl.lit(True))
    joined = test.join(per_word, on="word", how="left").join(pairs, on=["word", "label"], how="left")
    rng = np.random.default_rng(seed)
    uniform = [None if labels is None else labels[rng.integers(len(labels))] for labels in joined["labels"].to_list()]
    seen = pl.col("n_labels").is_not_null()
    return (
        joined.with_columns(uniform=pl.Series(uniform, dtype=pl.String))
        .with_columns(
            **{
                "Mem-Exact": (pl.col("pair_seen") & (pl.col("n_labels") == 1)).fill_null(False),
                "Mem-Pair": pl.col("pair_seen").fill_null(False),
                "Mem-Freq": (seen & (pl.col("majority") == pl.col("label"))).fill_null(False),
                "Mem-Uniform": (seen & (pl.col("uniform") == pl.col("label"))).fill_null(False),
            }
        )
        .drop("labels", "majority", "n_labels", "uniform", "pair_seen")
    )


def memorisation_shares(
    train: pl.DataFrame, test: pl.DataFrame, seed: int = 0, heuristics: tuple[str, ...] = HEURISTICS
) -> pl.DataFrame:
    """Table 2: the percentage of the test set each heuristic classifies (and how many rows are seen in train)."""
    _check_heuristics(heuristics)
    flags = memorisation_flags(train, test, seed)
    seen = flags["word"].is_in(conform(train, EDGE_SCHEMA, "train frame")["word"].implode())
    row = {"task": test["task"][0], "n_test": flags.height, "seen_in_train": float(seen.mean()) * 100}
    row.update({name: float(flags[name].mean()) * 100 for name in heuristics})
    return pl.DataFrame([row])


def _check_heuristics(heuristics: tuple[str, ...]) -> None:
    unknown = [name for name in heuristics if name not in NAMED]
    if unknown or not heuristics:
        raise WorkbenchError(f"heuristics {unknown or '()'} are not known; choose from {list(NAMED)}")


def audit_table(
    train: pl.DataFrame, predictions: pl.DataFrame, seed: int = 0, heuristics: tuple[str, ...] = HEURISTICS
) -> pl.DataFrame:
    """Tables 3-6: per (encoder control, probe, heuristic) accuracy on all test rows, on the filtered
    rows, and the relative drop. ``predictions``: test rows with ``correct``, ``encoder_control``
    and ``probe`` (from ``probe_task``), several encoders and probes stacked."""
    needed = {"correct", "encoder_control", "probe", "word", "label"}
    if not needed <= set(predictions.columns):
        raise WorkbenchError(
            f"predictions lack {sorted(needed - set(predictions.columns))}; pass the 'predictions' of probe_task"
        )
    _check_heuristics(heuristics)
    flags = memorisation_flags(train, predictions, seed)
    rows = []
    for (control, probe), group in flags.group_by("encoder_control", "probe", maintain_order=True):
        overall = float(group["correct"].mean())
        for name in heuristics:
            kept = group.filter(~pl.col(name))
            filtered = float(kept["correct"].mean()) if kept.height else float("nan")
            rows.append({
                "encoder": "random" if control == "random-weights" else "pre-trained", "probe": probe,
                "heuristic": name, "share": float(group[name].mean()) * 100, "accuracy": overall * 100,
                "filtered_accuracy": filtered * 100, "n_filtered": kept.height,
                "drop": (overall - filtered) / overall * 100 if overall else float("nan"),
            })  # fmt: skip
    return pl.DataFrame(rows).sort("heuristic", "probe", "encoder")
