"""Inspect beside our own served scorer, one run, one machine, one server process: llama-cpp-python's
OpenAI-compatible server on SmolLM2-135M-Instruct's GGUF (Q4_1), the same released questions (the first N of the
released hypernymy test by id), asked the same way (letters, Inspect's multiple-choice template, 3 shots from the
released train as chat turns, the server's chat template, temperature 0, at most 16 tokens, stop at a newline):

- Inspect: ``workbench export inspect``, then ``inspect eval task.py --model openai-api/llama/smollm2`` (Inspect's
  own CLI, one connection), its log read back with ``import_inspect``;
- ours: ``score(probes, Endpoint(url, concurrency=1), "generate", format="letters", chat_template="auto",
  prompts=task/prompts.json)``, no cache.

The two sides run at the same time, each against its own server process (the same GGUF and settings, one thread
each), so that both meet the same load on a shared machine; Inspect's time includes its CLI's start.

Rows: seconds (wall) of each side, with Inspect's ratio to ours (ours is the baseline); questions whose messages
are the same; picks agreeing, and each disagreement with both answers. The server is started as bench_peers starts
it. A harness case (``python bench/run.py inspect``, bench/cases.py); bench/README.md renders its record.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_peers import start_server  # noqa: E402

from workbench.probes.formats import read_probes  # noqa: E402
from workbench.scoring import Endpoint, score  # noqa: E402
from workbench.scoring.asking import Asking, draw_shots  # noqa: E402
from workbench.scoring.inspect_eval import PROMPTS_FILE, export_inspect, import_inspect  # noqa: E402

RELEASED = Path(__file__).resolve().parents[2] / "shared" / "data" / "semantic_fragments" / "hypernymy_test.jsonl"
TRAIN = RELEASED.with_name("hypernymy_train.jsonl")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def beside(questions: int = 50, threads: int = 1, shots: int = 3) -> list[dict]:
    """Inspect's CLI and our served scorer on the first ``questions`` released hypernymy questions, at the same time,
    each against its own server (``threads`` each), ``shots`` from the released train (0: zero-shot)."""
    probes = read_probes(RELEASED).sort("id").head(questions)
    train = read_probes(TRAIN)
    asking = Asking("letters", shots=shots, chat_template="auto")
    drawn = draw_shots(train, probes, asking, source=str(TRAIN))
    ports = free_port(), free_port()
    urls = [f"http://127.0.0.1:{port}/v1" for port in ports]
    servers = [start_server(port, threads) for port in ports]  # one each: the two sides run at once
    try:
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            export_inspect(probes, root / "task", asking=asking, shots=drawn)
            env = {**os.environ, "LLAMA_API_KEY": "none", "INSPECT_DISPLAY": "none"}
            started = time.perf_counter()
            inspect = subprocess.Popen(
                [str(Path(sys.executable).parent / "inspect"), "eval", "task/task.py", "--model",
                 "openai-api/llama/smollm2", "--model-base-url", urls[0], "--log-dir", str(root / "logs"),
                 "--max-connections", "1"],
                cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            ours = score(probes, Endpoint(urls[1], concurrency=1), "generate", format="letters", chat_template="auto",
                         prompts=root / "task" / PROMPTS_FILE, max_new_tokens=16, shots=shots, shot_pool=train,
                         cache=False, progress=False)  # fmt: skip
            ours_s = time.perf_counter() - started
            out, err = inspect.communicate()
            inspect_s = time.perf_counter() - started
            if inspect.returncode:
                raise RuntimeError(f"inspect eval failed: {out[-3000:]} {err[-3000:]}")
            theirs = import_inspect(next((root / "logs").glob("*.eval")), probes)
    finally:
        for server in servers:
            server.kill()
            server.wait()
    pair = theirs.select("id", "prompt", "pred", "generated").join(
        ours.select("id", "prompt", "pred", "generated"), on="id", suffix="_ours"
    )
    same = sum(json.loads(a) == json.loads(b) for a, b in zip(pair["prompt"], pair["prompt_ours"]))
    agree = pair["pred"].eq_missing(pair["pred_ours"])
    rows = [
        {"measure": "ours: score(Endpoint, generate, letters)", "questions": pair.height, "seconds": ours_s,
         "accuracy": float(ours["correct"].mean())},
        {"measure": "Inspect: inspect eval (openai-api provider)", "questions": pair.height, "seconds": inspect_s,
         "accuracy": float(theirs["correct"].mean()), "same messages": same, "same pick": int(agree.sum())},
    ]  # fmt: skip
    for row in pair.filter(~agree).iter_rows(named=True):
        rows.append({"measure": f"differs: {row['id']}", "Inspect wrote": row["generated"], "Inspect pick": row["pred"],
                     "we read": row["generated_ours"], "our pick": row["pred_ours"]})  # fmt: skip
    return rows
