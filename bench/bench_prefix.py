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

One round runs the four in turn, so that they see the same machine load; the case's rounds give medians, its
ratios are the baseline's time over each path's (``speedup``). Case ``prefix`` (a tiny GPT-2) and ``prefix-gpt2``
(width 768, 12 layers).
"""

import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import torch  # noqa: E402
from bench_scoring import probes  # noqa: E402
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


def shared_prefix(questions: int = 400, batch_size: int = 32, width: int = 256, layers: int = 4) -> list[dict]:
    """One round of the four paths on a random GPT-2 of ``layers`` x ``width``, the first ``questions`` released
    hypernymy questions; each row's log-likelihoods checked against the baseline's."""
    frame = probes(None).head(questions)
    with tempfile.TemporaryDirectory() as tmp, torch_threads(None):
        tiny_gpt2(Path(tmp), frame, width, layers)
        model = load_model(tmp, "causal")
        parameters = sum(parameter.numel() for parameter in model.network.parameters())
        pairs = frame.select(
            pl.int_range(pl.len()).alias("row"), "probe", "question", pl.col("choices").alias("choice")
        )
        pairs = render_prompts(pairs.explode("choice"), load_prompts())
        units = list(dict.fromkeys(zip(pairs["prompt"], pairs["continuation"])))
        features = causal.encode(model, units)
        prompt_tokens = float(np.mean([len(item["prompt"]) for item in features]))
        choice_tokens = float(np.mean([len(item["continuation"]) for item in features]))
        order = [features[index] for index in by_prompt(features)]
        step = batch_size * causal.BLOCK
        blocks = [order[start : start + step] for start in range(0, len(order), step)]
        saving = [causal.prefix_saving(causal.block_of(block), batch_size) for block in blocks]
        shared = sum(causal.prefers_shared(causal.block_of(block), batch_size, str(model.device)) for block in blocks)
        sides = {
            "baseline: from scratch, prompt + choice per unit, logits everywhere (harness style)":
                lambda: from_scratch(model, units, batch_size),
            "library, from-scratch path (path='scratch')": lambda: library(model, units, batch_size, "scratch"),
            "library, shared-prefix path (path='shared')": lambda: library(model, units, batch_size, "shared"),
            "score(..., scorer='causal') end to end (a path per block)":
                lambda: score(frame, model, scorer="causal", rule="sum", batch_size=batch_size, cache=False,
                              progress=False),
        }  # fmt: skip
        rows, results = [], {}
        for name, side in sides.items():
            tick = time.perf_counter()
            results[name] = side()
            seconds = time.perf_counter() - tick
            rows.append({"measure": name, "seconds": seconds, "questions_per_s": frame.height / seconds})
        baseline_name = next(iter(sides))
        baseline = np.array([results[baseline_name][unit].sum(dtype=np.float64) for unit in units])
        for row in rows[1:3]:
            sums = np.array([value.sum(dtype=np.float64) for value in results[row["measure"]]])
            row["max_abs_diff"] = float(np.max(np.abs(sums - baseline)))
        lookup = dict(zip(units, baseline))
        expected = np.array([lookup[unit] for unit in zip(pairs["prompt"], pairs["continuation"])])
        scored = np.concatenate(results[rows[3]["measure"]]["scores"].to_list())
        rows[3]["max_abs_diff"] = float(np.max(np.abs(scored - expected)))
    tokens_ours = frame.height * (prompt_tokens - 1) + len(units) * choice_tokens
    tokens_scratch = len(units) * (prompt_tokens + choice_tokens - 1)
    rows[3].update(shared_blocks=shared, blocks=len(blocks))
    rows[0].update(parameters=parameters, questions=frame.height, units=len(units), prompt_tokens=prompt_tokens,
                   choice_tokens=choice_tokens, token_bound=tokens_scratch / tokens_ours,
                   padded_saving_min=min(saving), padded_saving_max=max(saving))  # fmt: skip
    return rows
