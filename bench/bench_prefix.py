"""Shared-prefix benchmark (run on demand, not in tests): the causal scorer, which runs each question's
prompt once and reuses its key/value cache for the choices, against scoring every (question, choice)
string from scratch, on random GPT-2s built from a config (no weights can be downloaded here).

Four ways to the same log-probabilities, on the same tokens (``workbench.scoring.causal.encode``),
batch size and blocks (``causal.BLOCK`` batches, ``lm.by_prompt`` order):

- baseline, from scratch as lm-evaluation-harness does it: prompt + choice per unit, longest first in
  batches, logits at every position;
- the library's from-scratch path (``causal.token_logprobs(..., path="scratch")``);
- the library's shared-prefix path (``path="shared"``);
- ``score(..., scorer="causal")`` end to end, which picks a path per block (``causal.MIN_SAVING``).

They alternate in rounds so that they see the same machine load; each figure is the fastest round (on
a shared machine, the least disturbed one).

    .venv/bin/python bench/bench_prefix.py                       # tiny GPT-2, print the figures
    .venv/bin/python bench/bench_prefix.py --width 768 --layers 12 --questions 100
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import torch  # noqa: E402
from bench_scoring import machine, probes  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast  # noqa: E402

from workbench.scoring import causal, load_model, load_prompts, score  # noqa: E402
from workbench.scoring.batching import pad  # noqa: E402
from workbench.scoring.lm import by_prompt  # noqa: E402
from workbench.scoring.models import torch_threads  # noqa: E402
from workbench.scoring.prompts import render_prompts  # noqa: E402


def tiny_gpt2(folder: Path, frame: pl.DataFrame, width: int, layers: int) -> None:
    """A byte-level BPE trained on the probe texts and a random GPT-2 of that vocabulary, saved to ``folder``."""
    texts = pl.concat([frame["question"], frame["choices"].explode()]).unique().to_list()
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=4096, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(texts, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer), n_positions=512, n_embd=width, n_layer=layers, n_head=width // 64,
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    GPT2LMHeadModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def from_scratch(model, units: list[tuple[str, str]], batch_size: int) -> dict[tuple[str, str], np.ndarray]:
    """Each (prompt, choice) string in one forward, longest first in batches; the choice's log-probabilities."""
    features = causal.encode(model, units)
    order = sorted(range(len(units)), key=lambda index: -len(features[index]["input_ids"]))
    values = {}
    for start in range(0, len(order), batch_size):
        batch = [features[index] for index in order[start : start + batch_size]]
        with torch.inference_mode():
            logits = model.network(**pad(batch, model)).logits.float()
            logprobs = torch.log_softmax(logits, dim=-1)
        for row, (index, item) in enumerate(zip(order[start : start + batch_size], batch)):
            begin, tokens = len(item["prompt"]), item["continuation"]
            positions = torch.arange(begin - 1, begin - 1 + len(tokens))
            values[units[index]] = logprobs[row, positions, tokens].cpu().numpy()
    return values


def library(model, units: list[tuple[str, str]], batch_size: int, path: str) -> list[np.ndarray]:
    """Tokenise as the scorer does, then ``causal.token_logprobs`` over the blocks ``compute`` would hand
    it, in ``lm.by_prompt`` order."""
    features = causal.encode(model, units)
    order = by_prompt(features).tolist()
    values: list[np.ndarray] = [np.empty(0)] * len(features)
    step = batch_size * causal.BLOCK
    for start in range(0, len(order), step):
        block = order[start : start + step]
        with torch.inference_mode():
            outputs = causal.token_logprobs(model, [features[index] for index in block], batch_size, path)
        for index, output in zip(block, outputs):
            values[index] = output
    return values


def run(questions: int, batch_size: int, rounds: int, width: int, layers: int) -> dict:
    frame = probes(None).head(questions)
    figures = {"machine": machine(), "load_before": os.getloadavg(), "questions": frame.height}
    with tempfile.TemporaryDirectory() as tmp, torch_threads(None):
        tiny_gpt2(Path(tmp), frame, width, layers)
        model = load_model(tmp, "causal")
        figures["parameters"] = sum(parameter.numel() for parameter in model.network.parameters())
        pairs = frame.select(
            pl.int_range(pl.len()).alias("row"), "probe", "question", pl.col("choices").alias("choice")
        )
        pairs = render_prompts(pairs.explode("choice"), load_prompts())
        units = list(dict.fromkeys(zip(pairs["prompt"], pairs["continuation"])))
        features = causal.encode(model, units)
        figures["units"] = len(units)
        figures["prompt_tokens"] = float(np.mean([len(item["prompt"]) for item in features]))
        figures["choice_tokens"] = float(np.mean([len(item["continuation"]) for item in features]))
        order = [features[index] for index in by_prompt(features)]
        step = batch_size * causal.BLOCK
        blocks = [order[start : start + step] for start in range(0, len(order), step)]
        figures["padded_saving"] = [causal.prefix_saving(causal.block_of(block), batch_size) for block in blocks]
        figures["shared_blocks"] = sum(
            causal.prefers_shared(causal.block_of(block), batch_size, str(model.device)) for block in blocks
        )
        sides = {
            "baseline": lambda: from_scratch(model, units, batch_size),
            "scratch": lambda: library(model, units, batch_size, "scratch"),
            "shared": lambda: library(model, units, batch_size, "shared"),
            "auto": lambda: score(
                frame, model, scorer="causal", rule="sum", batch_size=batch_size, cache=False, progress=False
            ),
        }
        times: dict[str, list[float]] = {name: [] for name in sides}
        results = {}
        for _ in range(rounds):
            for name, side in sides.items():
                tick = time.perf_counter()
                results[name] = side()
                times[name].append(time.perf_counter() - tick)
        figures.update({f"{name}_s": min(values) for name, values in times.items()})  # the least disturbed round
        baseline = np.array([results["baseline"][unit].sum(dtype=np.float64) for unit in units])
        figures["max_diff"] = max(
            float(np.max(np.abs(np.array([value.sum(dtype=np.float64) for value in results[name]]) - baseline)))
            for name in ("scratch", "shared")
        )
        lookup = dict(zip(units, baseline))
        sums = np.array([lookup[unit] for unit in zip(pairs["prompt"], pairs["continuation"])])
        figures["max_diff"] = max(
            figures["max_diff"], float(np.max(np.abs(np.concatenate(results["auto"]["scores"].to_list()) - sums)))
        )
    figures["load_after"] = os.getloadavg()
    return figures


def report(f: dict, batch_size: int, rounds: int, width: int, layers: int) -> str:
    tokens_ours = f["questions"] * (f["prompt_tokens"] - 1) + f["units"] * f["choice_tokens"]
    tokens_scratch = f["units"] * (f["prompt_tokens"] + f["choice_tokens"] - 1)
    load = lambda values: "/".join(f"{value:.1f}" for value in values)  # noqa: E731
    rows = [
        ("baseline: from scratch, prompt + choice per unit, logits everywhere (harness style)", "baseline"),
        ("library, from-scratch path (`path='scratch'`)", "scratch"),
        ("library, shared-prefix path (`path='shared'`)", "shared"),
        (
            f"`score(..., scorer='causal')` end to end (shared prefix in {f['shared_blocks']} of "
            f"{len(f['padded_saving'])} blocks)",
            "auto",
        ),
    ]
    table = [
        f"| {label} | {f[key + '_s']:.2f} s | {f['questions'] / f[key + '_s']:.1f} | "
        f"{f['baseline_s'] / f[key + '_s']:.2f}x |"
        for label, key in rows
    ]
    return "\n".join(
        [
            f"### {layers} layers, width {width} ({f['parameters'] / 1e6:.1f} M parameters), "
            f"{f['questions']:,} questions",
            "",
            f"`bench/bench_prefix.py --width {width} --layers {layers} --questions {f['questions']} "
            f"--batch-size {batch_size} --rounds {rounds}`, {time.strftime('%Y-%m-%d %H:%M')}: "
            f"{f['units']:,} unique question-choice units of the released hypernymy questions, "
            f"{f['prompt_tokens']:.1f} prompt and {f['choice_tokens']:.1f} choice tokens on average; "
            f"a 4,096-token byte-level BPE trained on the probe texts. Fastest of {rounds} alternating "
            "rounds (the least disturbed).",
            f"Machine: {f['machine']}; load average (1/5/15 min) {load(f['load_before'])} before, "
            f"{load(f['load_after'])} after.",
            "",
            "| path | time | questions/s | speed-up over baseline |",
            "|---|---:|---:|---:|",
            *table,
            "",
            f"Token positions through the model: {tokens_ours:,.0f} with the shared prefix against "
            f"{tokens_scratch:,.0f} from scratch ({tokens_scratch / tokens_ours:.2f}x), the bound on the saving "
            "without padding; with padding (`causal.prefix_saving`) the blocks range "
            f"{min(f['padded_saving']):.2f}-{max(f['padded_saving']):.2f}x, and `causal.prefers_shared` "
            f"(`MIN_SAVING` = {causal.MIN_SAVING}, `GPU_MIN_BATCH` = {causal.GPU_MIN_BATCH}) picks the "
            f"shared prefix for {f['shared_blocks']} of {len(f['padded_saving'])}. The log-likelihoods of all "
            f"paths agree with the baseline within {f['max_diff']:.1e}.",
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=400)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args()
    figures = run(args.questions, args.batch_size, args.rounds, args.width, args.layers)
    section = report(figures, args.batch_size, args.rounds, args.width, args.layers)
    print(section)  # a subsection of bench/README.md, "Shared prefix"


if __name__ == "__main__":
    main()
