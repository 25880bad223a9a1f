"""Which way of asking shows what SmolLM2 knows? The released hypernymy, hyponymy and DictionaryQA tests (a seeded
sample of whole clusters each), asked {cloze, letters} x {0, 5 shots} x {chat template, none} and by free answer
(``generate``), each beside the same network with random weights (seed 0): accuracy (rule ``sum``; recall for the
free answer), the paired difference and its exact McNemar p (``compare``), and recognition beside recall per probe
(``recognition_recall``). The shots come from each set's released train file, drawn once (``draw_shots``, seed 0).
Results: docs/REPRODUCTION.md, "Language models".

    .venv/bin/python bench/bench_ways_of_asking.py --questions 100 --markdown ways.md
"""

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import polars as pl  # noqa: E402
import torch  # noqa: E402
from bench_peers import cluster_sample  # noqa: E402
from bench_scoring import machine  # noqa: E402

from workbench.analysis.comparison import compare  # noqa: E402
from workbench.analysis.recall import recognition_recall  # noqa: E402
from workbench.probes.formats import read_probes  # noqa: E402
from workbench.scoring import load_model, score  # noqa: E402
from workbench.scoring.gguf import smollm2_gguf  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "semantic_fragments"
SETS = {"hypernymy": "hypernymy", "hyponymy": "hyponymy", "DictionaryQA": "dictionary_qa"}
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
    return {control: score(probes, model, scorer, shot_pool=train, cache=False, progress=False, control=control,
                           max_length=2048, **kwargs) for control, model in models[scorer].items()}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100, help="per set, whole clusters, seeded")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    started, load_before = time.time(), os.getloadavg()
    models = {scorer: {control: load_model(smollm2_gguf(), scorer, control=control, max_length=2048)
                       for control in ("none", "random-weights")} for scorer in ("causal", "generate")}  # fmt: skip
    rows, recall_rows = [], []
    for label in args.sets:
        stem = SETS[label]
        probes = cluster_sample(read_probes(DATA / f"{stem}_test.jsonl"), args.questions, args.seed)
        train = read_probes(DATA / f"{stem}_train.jsonl")  # DictionaryQA's splits reuse ids: the train's apart
        train = train.with_columns(("train:" + pl.col(column)).alias(column) for column in ("id", "cluster_id"))
        choosing = []
        for way in [*WAYS, None]:
            preds = ask(probes, train, models, way)
            overall = compare(preds["random-weights"], preds["none"], n_boot=0).row(0, named=True)
            name = "free answer (5 shots, chat)" if way is None else f"{way[0]} / {way[1]}-shot / chat {way[2]}"
            rows.append({"set": label, "questions": probes.height, "clusters": probes["cluster_id"].n_unique(),
                         "way": name, "SmolLM2": overall["accuracy_b"], "random weights": overall["accuracy_a"],
                         "diff": overall["diff"], "p": overall["p_mcnemar"]})  # fmt: skip
            print(rows[-1], flush=True)
            if way is None:
                recall_rows.append(recognition_recall(pl.concat(choosing), preds["none"]))
            else:
                choosing.append(preds["none"])
    table = pl.DataFrame(rows)
    recall = pl.concat(recall_rows).select("probe", "way", "n", "recognition", "recall", "near")
    header = (f"Run {time.strftime('%Y-%m-%d %H:%M', time.gmtime(started))} UTC, {time.time() - started:.0f} s, "
              f"{args.threads} thread(s), {machine()}, load {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} "
              f"after; {args.questions}+ questions per set (whole clusters, seed {args.seed}).")  # fmt: skip
    text = "\n\n".join([header, markdown(table), markdown(recall)])
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")


def markdown(frame: pl.DataFrame) -> str:
    """A Markdown table of ``frame``, floats to three places."""
    cell = lambda value: f"{value:.3g}" if isinstance(value, float) else str(value)  # noqa: E731
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * frame.width]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in frame.iter_rows()]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
