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
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_peers import free_port, start_server  # noqa: E402
from harness import ROOT  # noqa: E402

from workbench.probes.formats import read_probes  # noqa: E402
from workbench.scoring import Endpoint, score  # noqa: E402
from workbench.scoring.asking import Asking, draw_shots  # noqa: E402
from workbench.scoring.inspect_eval import PROMPTS_FILE, export_inspect, import_inspect  # noqa: E402

RELEASED = Path(__file__).resolve().parents[2] / "shared" / "data" / "semantic_fragments" / "hypernymy_test.jsonl"
TRAIN = RELEASED.with_name("hypernymy_train.jsonl")


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


def served_start(rev: str = "3e28e91", repeats: int = 3, questions: int = 3) -> list[dict]:
    """The CPU of a served-model command, this tree against ``rev`` (a temporary git worktree: the last commit whose
    served commands imported torch and transformers): ``workbench score --model URL --dry-run``, a ``questions``-
    question log-likelihood run (causal, echo with SmolLM2's BOS, no prediction cache) and ``workbench export
    inspect``, each a fresh ``python -m workbench`` of that tree, ``repeats`` times in turn; medians of the user and
    system CPU each process took (``getrusage`` of the children)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    server = start_server(port, 1)
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        other = scratch / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(other), rev], cwd=ROOT, check=True,
                       capture_output=True)  # fmt: skip
        asked = ["--model", url, "--probes", str(RELEASED), "--max-questions", str(questions), "--scorer", "causal",
                 "--bos", "<|im_start|>"]  # fmt: skip
        commands = {
            "score --dry-run": ["score", *asked, "--dry-run"],
            f"score, {questions} questions (echo)": ["score", *asked, "--no-cache", "--out",
                                                       str(scratch / "p.parquet")],
            "export inspect": ["export", "inspect", str(RELEASED), "--out", str(scratch / "task"), "--shots", "3",
                               "--shots-from", str(TRAIN)],
        }  # fmt: skip
        cpu: dict[tuple[str, str], list[float]] = {}
        try:
            for _ in range(repeats):
                for tree in (ROOT, other):
                    env = {**os.environ, "PYTHONPATH": str(tree), "WORKBENCH_HOME": str(scratch / "home")}
                    for name, args in commands.items():
                        for made in (scratch / "p.parquet", scratch / "task"):
                            subprocess.run(["rm", "-rf", str(made)], check=True)
                        before = resource.getrusage(resource.RUSAGE_CHILDREN)
                        done = subprocess.run([sys.executable, "-m", "workbench", *args], cwd=tree, env=env,
                                              capture_output=True, text=True)  # fmt: skip
                        after = resource.getrusage(resource.RUSAGE_CHILDREN)
                        if done.returncode:
                            raise RuntimeError(f"{name} ({tree}) failed: {done.stderr[-2000:]}")
                        spent = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                        cpu.setdefault((name, str(tree)), []).append(spent)
        finally:
            server.kill()
            server.wait()
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, check=False)
    rows = []
    for name in commands:
        now, then = (statistics.median(cpu[(name, str(tree))]) for tree in (ROOT, other))
        rows.append({"measure": name, "cpu_s": now, f"{rev}_cpu_s": then, "ratio": now / then})
    return rows
