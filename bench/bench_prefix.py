"""Shared-prefix benchmark (run on demand, not in tests): the causal scorer, which runs each question's
prompt once and reuses its key/value cache for the choices, against scoring every (question, choice)
string from scratch, on a tiny random GPT-2 built from a config (no weights can be downloaded here).

Both sides get the same tokens (``workbench.scoring.lm.encode_units``), the same batch size and
length-sorted batches; the from-scratch side runs prompt + choice in one forward per unit and reads
the choice's log-probabilities from its logits. The two alternate in rounds so that they see the
same machine load; the figures are medians over rounds.

    .venv/bin/python bench/bench_prefix.py            # print the figures
    .venv/bin/python bench/bench_prefix.py --write    # and put them in bench/README.md ("Shared prefix")
"""

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import torch  # noqa: E402
from bench_scoring import machine, probes, write_section  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast  # noqa: E402

from workbench.scoring import load_model, load_prompts, score  # noqa: E402
from workbench.scoring.batching import pad  # noqa: E402
from workbench.scoring.lm import encode_units  # noqa: E402
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
    features = encode_units(model, units, joint_limit=True, prompt_special=False)
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


def run(questions: int, batch_size: int, rounds: int, width: int, layers: int) -> dict:
    frame = probes(None).head(questions)
    figures = {"machine": machine(), "load_before": os.getloadavg()[0], "questions": frame.height}
    with tempfile.TemporaryDirectory() as tmp, torch_threads(None):
        tiny_gpt2(Path(tmp), frame, width, layers)
        model = load_model(tmp, "causal")
        figures["parameters"] = sum(parameter.numel() for parameter in model.network.parameters())
        pairs = frame.select(pl.int_range(pl.len()).alias("row"), "probe", "question", pl.col("choices").alias("choice"))
        pairs = render_prompts(pairs.explode("choice"), load_prompts())
        units = list(dict.fromkeys(zip(pairs["prompt"], pairs["continuation"])))
        features = encode_units(model, units, joint_limit=True, prompt_special=False)
        figures["units"] = len(units)
        figures["prompt_tokens"] = float(np.mean([len(item["prompt"]) for item in features]))
        figures["choice_tokens"] = float(np.mean([len(item["continuation"]) for item in features]))
        ours_s, scratch_s = [], []
        for _ in range(rounds):
            tick = time.perf_counter()
            ours = score(frame, model, scorer="causal", rule="sum", batch_size=batch_size, cache=False, progress=False)
            ours_s.append(time.perf_counter() - tick)
            tick = time.perf_counter()
            scratch = from_scratch(model, units, batch_size)
            scratch_s.append(time.perf_counter() - tick)
        sums = np.array([scratch[unit].sum(dtype=np.float64) for unit in zip(pairs["prompt"], pairs["continuation"])])
        figures["max_diff"] = float(np.max(np.abs(np.concatenate(ours["scores"].to_list()) - sums)))
        figures["ours_s"], figures["scratch_s"] = statistics.median(ours_s), statistics.median(scratch_s)
        tick = time.perf_counter()
        score(frame, model, scorer="causal", rule="all", batch_size=batch_size, cache=False, progress=False)
        figures["all_s"] = time.perf_counter() - tick
    figures["load_after"] = os.getloadavg()[0]
    return figures


def report(f: dict, batch_size: int, rounds: int, width: int, layers: int) -> str:
    tokens_ours = f["questions"] * f["prompt_tokens"] + f["units"] * f["choice_tokens"]
    tokens_scratch = f["units"] * (f["prompt_tokens"] + f["choice_tokens"])
    return "\n".join(
        [
            "## Shared prefix",
            "",
            f"`bench/bench_prefix.py`, {time.strftime('%Y-%m-%d')}: the causal scorer (`score(..., scorer='causal', "
            f"rule='sum')`, no cache) against scoring each (question, choice) string from scratch, on a tiny random "
            f"GPT-2 built from a config ({layers} layers, width {width}, {f['parameters'] / 1e6:.1f} M parameters, "
            f"a 4,096-token byte-level BPE trained on the probe texts). Data: the first {f['questions']:,} released "
            f"hypernymy questions ({f['units']:,} unique question-choice units; {f['prompt_tokens']:.1f} prompt and "
            f"{f['choice_tokens']:.1f} choice tokens on average). Batch size {batch_size} on both sides; median of "
            f"{rounds} alternating rounds.",
            f"Machine: {f['machine']}; load average {f['load_before']:.1f} before, {f['load_after']:.1f} after.",
            "",
            "| measure | time | throughput |",
            "|---|---|---|",
            f"| from scratch: prompt + choice per unit | {f['scratch_s']:.2f} s | {f['questions'] / f['scratch_s']:.1f} questions/s |",
            f"| causal scorer: prompt once per question, its key/value cache reused for the choices | {f['ours_s']:.2f} s "
            f"| {f['questions'] / f['ours_s']:.1f} questions/s |",
            f"| **saving (from scratch / scorer)** | **{f['scratch_s'] / f['ours_s']:.2f}x** | |",
            f"| causal scorer, `rule='all'` (adds the neutral-prompt units of the MI rule) | {f['all_s']:.2f} s | |",
            "",
            f"Tokens through the model: {tokens_ours:,.0f} with the shared prefix against {tokens_scratch:,.0f} from "
            f"scratch ({tokens_scratch / tokens_ours:.2f}x), the bound on the saving; the summed log-likelihoods of "
            f"the two agree within {f['max_diff']:.1e}.",
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
    parser.add_argument("--write", action="store_true", help="write the figures into bench/README.md")
    args = parser.parse_args()
    figures = run(args.questions, args.batch_size, args.rounds, args.width, args.layers)
    section = report(figures, args.batch_size, args.rounds, args.width, args.layers)
    print(section)
    if args.write:
        write_section(section, "Shared prefix")


if __name__ == "__main__":
    main()
