"""A served model beside the local scorer and lm-evaluation-harness, one run, one machine, one server process:
llama-cpp-python's OpenAI-compatible server on SmolLM2-135M-Instruct's GGUF (Q4_1), the same questions (a seeded
sample of whole clusters of the released hypernymy test), cloze, K shots from the released train, rule ``sum``.

- served: ``score(probes, Endpoint(url, bos="<|im_start|>"), "causal")`` (echo checked on the canaries first);
- local: ``score(probes, load_model(gguf, "causal"), "causal")`` on the GGUF's float32 dequantisation, every prompt
  starting with the same BOS (a template file), so both sides are asked the same tokens;
- lm-eval 0.4.13 (``--lm-eval local-completions gguf``): its two models for such a server, on the export of
  ``workbench export lm-eval`` with the same templates and shots: ``local-completions`` (text requests, the model's
  tokenizer for its context lengths) and ``gguf`` (the choice found by the echo's text offsets).

Reported per K: seconds (wall) of each side, requests/s, per-choice gap in nats between served and local sums
(mean, median, max) and picks agreeing; with ``lm_eval``, each lm-eval model's against ours. Case ``served``.
"""

import json
import os
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
from bench_peers import RELEASED, TRAIN, cluster_sample  # noqa: E402

from workbench.probes.formats import read_probes  # noqa: E402
from workbench.scoring import Endpoint, load_model, score  # noqa: E402
from workbench.scoring.asking import Asking, draw_shots  # noqa: E402
from workbench.scoring.cache import PredictionCache  # noqa: E402
from workbench.scoring.gguf import dequantised, smollm2_gguf  # noqa: E402
from workbench.scoring.harness import export_lm_eval, import_lm_eval  # noqa: E402

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


def start_server(port: int, threads: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()), "--model_alias", "smollm2",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", str(threads),
         "--verbose", "False"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return process
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("the server did not start")


def sums(preds: pl.DataFrame) -> dict[str, list[float]]:
    return dict(preds.filter(pl.col("rule") == "sum").select("id", "scores").iter_rows())


def compare(a: dict, b: dict) -> dict:
    ids = sorted(set(a) & set(b))
    gaps = np.abs(np.concatenate([np.subtract(a[i], b[i]) for i in ids]))
    picks = np.mean([int(np.argmax(a[i])) == int(np.argmax(b[i])) for i in ids])
    return {"questions": len(ids), "gap_mean": float(gaps.mean()), "gap_median": float(np.median(gaps)),
            "gap_max": float(gaps.max()), "picks_agree": float(picks)}  # fmt: skip


def run_lm_eval(probes, shots, asking, templates: Path, url: str, folder: Path, kind: str) -> tuple[dict, float]:
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
                        harness, harness_s = run_lm_eval(probes, drawn, asking, templates, url,
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
