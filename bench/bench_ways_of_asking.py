"""Which way of asking shows what SmolLM2 knows? The released hypernymy, hyponymy and DictionaryQA tests and the
paper preset's definitions and synonymy (test split, built from WordNet 3.0; a seeded sample of whole clusters
each), asked {cloze, letters} x {0, 5 shots} x {chat template, none} and by free answer (``generate``), each beside
the same network with random weights (seed 0): accuracy (rule ``sum``; recall for the free answer), the paired
difference and its exact McNemar p (``compare``), and recognition beside recall per probe (``recognition_recall``).
The shots come from each set's train (the released train file; the preset's train split), drawn once
(``draw_shots``, seed 0). ``out`` gets ``ways.csv`` and ``recall.csv``, rewritten after every way; scores go
through the workspace's prediction cache, so a stopped run resumes where it stopped. Results: docs/REPRODUCTION.md,
"Language models", and notebook 09, which reads the two tables (``bench/ways``, case ``ways-of-asking``).
"""

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import polars as pl  # noqa: E402
import torch  # noqa: E402
from bench_peers import cluster_sample  # noqa: E402
from harness import SHARED  # noqa: E402

from workbench.analysis.comparison import compare  # noqa: E402
from workbench.analysis.recall import recognition_recall  # noqa: E402
from workbench.io import atomic_path  # noqa: E402
from workbench.probes import ProbeSpec, build_probes  # noqa: E402
from workbench.probes.formats import read_probes  # noqa: E402
from workbench.scoring import load_model, score  # noqa: E402
from workbench.scoring.gguf import smollm2_gguf  # noqa: E402

DATA = SHARED / "data" / "semantic_fragments"
SETS = {"hypernymy": "hypernymy", "hyponymy": "hyponymy", "DictionaryQA": "dictionary_qa",
        "definitions (preset)": "definitions", "synonymy (preset)": "synonymy"}  # fmt: skip
RELEASED = ("hypernymy", "hyponymy", "DictionaryQA")
WAYS = [(format, shots, chat) for format in ("cloze", "letters") for shots in (0, 5) for chat in ("none", "auto")]


def ask(probes: pl.DataFrame, train: pl.DataFrame, models: dict, way: tuple | None) -> dict[str, pl.DataFrame]:
    """The model and its control asked one way (None: a 5-shot free answer with the chat template)."""
    if way is None:
        kwargs = {"shots": 5, "chat_template": "auto", "max_new_tokens": 8}
        scorer = "generate"
    else:
        format, shots, chat = way
        kwargs = {"format": format, "shots": shots, "chat_template": chat}
        scorer = "causal"
    return {control: score(probes, model, scorer, shot_pool=train, progress=False, control=control,
                           max_length=2048, **kwargs) for control, model in models[scorer].items()}  # fmt: skip


def questions_and_shots(label: str, questions: int, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A seeded cluster sample of ``label``'s test and the train it draws its shots from."""
    stem = SETS[label]
    if label in RELEASED:
        test, train = (read_probes(DATA / f"{stem}_{split}.jsonl") for split in ("test", "train"))
        # DictionaryQA's released splits reuse ids for other questions: the train's set apart
        train = train.with_columns(("train:" + pl.col(column)).alias(column) for column in ("id", "cluster_id"))
    else:
        built = build_probes(ProbeSpec.paper(stem, seed=seed), progress=False)
        test, train = (built.filter(pl.col("split") == split) for split in ("test", "train"))
    return cluster_sample(test, questions, seed), train


def write_csv(frame: pl.DataFrame, path: Path) -> None:
    """``frame`` as CSV at ``path``, whole or not at all."""
    with atomic_path(path) as tmp:
        frame.write_csv(tmp)


def ways_of_asking(
    questions: int = 100, seed: int = 0, threads: int = 1, sets: tuple[str, ...] = tuple(SETS), out: str | None = None
) -> list[dict]:
    """Every set asked every way, SmolLM2 beside its random-weights control: a row per set and way, then the
    recognition-beside-recall rows; ``questions`` per set (whole clusters, seeded); ``out``: ways.csv, recall.csv."""
    torch.set_num_threads(threads)
    models = {scorer: {control: load_model(smollm2_gguf(), scorer, control=control, max_length=2048)
                       for control in ("none", "random-weights")} for scorer in ("causal", "generate")}  # fmt: skip
    rows, recall_rows = [], []
    for label in sets:
        probes, train = questions_and_shots(label, questions, seed)
        choosing = []
        for way in [*WAYS, None]:
            preds = ask(probes, train, models, way)
            overall = compare(preds["random-weights"], preds["none"], n_boot=0).row(0, named=True)
            name = "free answer (5 shots, chat)" if way is None else f"{way[0]} / {way[1]}-shot / chat {way[2]}"
            rows.append({"set": label, "questions": probes.height, "clusters": probes["cluster_id"].n_unique(),
                         "way": name, "SmolLM2": overall["accuracy_b"], "random weights": overall["accuracy_a"],
                         "diff": overall["diff"], "p": overall["p_mcnemar"]})  # fmt: skip
            if way is None:
                paired = recognition_recall(pl.concat(choosing), preds["none"])
                recall_rows.append(paired.with_columns(set=pl.lit(label)))
            else:
                choosing.append(preds["none"])
            if out:
                write_csv(pl.DataFrame(rows), Path(out) / "ways.csv")
                if recall_rows:
                    write_csv(recall_table(recall_rows), Path(out) / "recall.csv")
    recall = recall_table(recall_rows).with_columns(measure=pl.format("{} recall: {}", "set", "way"))
    return [{"measure": f"{row['set']}: {row['way']}", **row} for row in rows] + recall.to_dicts()


def recall_table(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """Recognition (each way of choosing) beside recall (the free answer) on the same questions, per set."""
    way = pl.col("way").str.replace(r"/shots=\w+", "")  # the shots' digest: one draw per set, in ways.csv's rows
    return pl.concat(parts).select("set", "probe", way, "n", "recognition", "recall", "near", "both")
