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

Reported: seconds (wall) of each side, Inspect's as the ratio to ours; questions whose messages are the same; picks
agreeing, and each disagreement with both answers. The server is started as bench_peers starts it. Results:
bench/README.md, "Inspect beside our served scorer".

    .venv/bin/python bench/bench_inspect.py --questions 50 --json inspect.json
"""

import argparse
import json
import os
import platform
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


def machine() -> str:
    """The CPU, its cores here, the Python."""
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())  # fmt: skip
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1, help="The server's threads.")
    parser.add_argument("--shots", type=int, default=3, help="Shots from the released train (0: zero-shot).")
    parser.add_argument("--json", type=Path, help="Write the figures here too.")
    args = parser.parse_args()
    probes = read_probes(RELEASED).sort("id").head(args.questions)
    train = read_probes(TRAIN)
    asking = Asking("letters", shots=args.shots, chat_template="auto")
    shots = draw_shots(train, probes, asking, source=str(TRAIN))
    ports = free_port(), free_port()
    urls = [f"http://127.0.0.1:{port}/v1" for port in ports]
    servers = [start_server(port, args.threads) for port in ports]  # one each: the two sides run at once
    try:
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            export_inspect(probes, root / "task", asking=asking, shots=shots)
            env = {**os.environ, "LLAMA_API_KEY": "none", "INSPECT_DISPLAY": "none"}
            started = time.perf_counter()
            inspect = subprocess.Popen(
                [str(Path(sys.executable).parent / "inspect"), "eval", "task/task.py", "--model",
                 "openai-api/llama/smollm2", "--model-base-url", urls[0], "--log-dir", str(root / "logs"),
                 "--max-connections", "1"],
                cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            ours = score(probes, Endpoint(urls[1], concurrency=1), "generate", format="letters", chat_template="auto",
                         prompts=root / "task" / PROMPTS_FILE, max_new_tokens=16, shots=args.shots, shot_pool=train,
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
    same_text = sum(json.loads(a) == json.loads(b) for a, b in zip(pair["prompt"], pair["prompt_ours"]))
    agree = pair["pred"].eq_missing(pair["pred_ours"])
    differ = pair.filter(~agree).select("id", "generated", "pred", "generated_ours", "pred_ours").to_dicts()
    figures = {
        "machine": machine(),
        "questions": pair.height,
        "inspect_s": round(inspect_s, 2),
        "ours_s": round(ours_s, 2),
        "inspect_over_ours": round(inspect_s / ours_s, 2),
        "same_messages": same_text,
        "same_pick": int(agree.sum()),
        "inspect_accuracy": round(float(theirs["correct"].mean()), 4),
        "ours_accuracy": round(float(ours["correct"].mean()), 4),
        "differences": differ,
    }
    print(json.dumps(figures, indent=1, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
