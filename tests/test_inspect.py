"""Inspect, both ways (``workbench.scoring.inspect_eval``): an exported task run by Inspect's own CLI against the real
llama-cpp-python server on SmolLM2, its log read back as predictions and set beside our served scorer's on the same
questions and server; our predictions written as an Inspect log, read back whole and opened by ``inspect view`` in
Chromium; bad logs and folders refused in one line, nothing written."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from servers import free_port, llama_server
from typer.testing import CliRunner

from workbench.errors import WorkbenchError
from workbench.probes.formats import read_probes
from workbench.reports import text_report
from workbench.schema import RULE_NOTES
from workbench.scoring import Endpoint, score
from workbench.scoring.gguf import smollm2_gguf
from workbench.scoring.inspect_eval import PROMPTS_FILE, import_inspect

pytest.importorskip("llama_cpp")
pytest.importorskip("inspect_ai")
INSPECT = Path(sys.executable).parent / "inspect"
QUESTIONS = 10
SHOTS = 3
"""Worked examples before each question: with them SmolLM2-135M answers in Inspect's 'ANSWER: X' form (zero-shot it
writes 'A) <the choice>', which Inspect's multiple_choice reads as no answer)."""


@pytest.fixture(scope="module")
def server():
    with llama_server(smollm2_gguf()) as (_, url):
        yield url


@pytest.fixture(scope="module")
def questions(released_dir) -> pl.DataFrame:
    """The 10 shortest questions of the released hypernymy test."""
    frame = read_probes(released_dir / "hypernymy_test.jsonl")
    size = pl.col("question").str.len_chars() + pl.col("choices").list.eval(pl.element().str.len_chars()).list.sum()
    return frame.sort(size, "id").head(QUESTIONS)


@pytest.fixture(scope="module")
def run(server, questions, released_dir, tmp_path_factory) -> dict:
    """The task exported by the CLI, run by ``inspect eval`` on the server; its log and the probe file."""
    from workbench.cli import make_app

    root = tmp_path_factory.mktemp("inspect")
    probes = root / "questions.parquet"
    questions.write_parquet(probes)
    task = root / "task"
    train = released_dir / "hypernymy_train.jsonl"
    command = ["export", "inspect", str(probes), "--out", str(task), "--shots", str(SHOTS), "--shots-from", str(train)]
    result = CliRunner().invoke(make_app(), command)
    assert result.exit_code == 0, result.output
    assert "inspect eval" in result.output and "--prompts" in result.output
    env = {**os.environ, "LLAMA_API_KEY": "none", "INSPECT_DISPLAY": "none", "INSPECT_LOG_LEVEL": "warning"}
    started = time.perf_counter()
    done = subprocess.run(
        [str(INSPECT), "eval", "task/task.py", "--model", "openai-api/llama/smollm2", "--model-base-url",
         server, "--log-dir", str(root / "logs"), "--max-connections", "1"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    logs = sorted((root / "logs").glob("*.eval"))
    assert len(logs) == 1
    return {"root": root, "probes": probes, "task": task, "log": logs[0], "seconds": time.perf_counter() - started}


@pytest.fixture(scope="module")
def ours(run, server, questions, released_dir) -> pl.DataFrame:
    """Our served scorer on the same questions and server, asked as the exported task asks (its prompts.json)."""
    train = read_probes(released_dir / "hypernymy_train.jsonl")
    return score(questions, Endpoint(server, concurrency=1), "generate", format="letters", chat_template="auto",
                 prompts=run["task"] / PROMPTS_FILE, max_new_tokens=16, shots=SHOTS, shot_pool=train, cache=False,
                 progress=False)  # fmt: skip


def test_the_exported_task_runs_in_inspects_cli_and_imports_as_predictions(run, questions, cli):
    out = run["root"] / "inspect.parquet"
    result = CliRunner().invoke(cli, ["import", "inspect", str(run["log"]), "--probes", str(run["probes"]),
                                      "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    preds = pl.read_parquet(out)
    assert preds.height == QUESTIONS and sorted(preds["id"]) == sorted(questions["id"])
    assert set(preds["scorer"]) == {"inspect"} and set(preds["rule"]) == {"choice"}
    assert set(preds["model"]) == {"smollm2"}
    identity = json.loads(preds["served"][0])
    assert identity["provider"] == "openai-api/llama" and identity["model"] == "smollm2"
    assert identity["host"] == identity["base_url"].split("//")[1].split("/")[0] and identity["run_id"]
    for row in preds.iter_rows(named=True):  # the exact text seen: the question and its choices in the last turn
        last = json.loads(row["prompt"])[-1]
        assert last["role"] == "user" and row["question"] in last["content"]
        assert all(f"{chr(65 + i)}) {choice}" in last["content"] for i, choice in enumerate(row["choices"]))
        picked = row["pred"]
        assert row["scores"] == [float(i == picked) for i in range(len(row["choices"]))]
        assert row["correct"] == (picked == row["answer"])
        if picked is not None:
            assert f"ANSWER: {row['matched']}" in row["generated"].upper()


def test_inspect_and_our_served_scorer_ask_the_same_text_and_mostly_pick_alike(run, ours, questions):
    theirs = import_inspect(run["log"], questions)
    assert set(theirs["asking"]) == set(ours["asking"])  # the way, with the shots' digest
    pair = theirs.select("id", "prompt", "pred", "generated").join(
        ours.select("id", "prompt", "pred", "generated"), on="id", suffix="_ours"
    )
    assert pair.height == QUESTIONS
    for row in pair.iter_rows(named=True):
        assert json.loads(row["prompt"]) == json.loads(row["prompt_ours"]), row["id"]
    both = pl.concat([theirs, ours.select(theirs.columns)])  # one report, side by side
    shown = text_report(both, n_boot=20)
    assert "inspect" in shown and "generate" in shown and RULE_NOTES["choice"] in shown
    assert shown.split("Served models")[1].count("smollm2") >= 2
    same = (pair["pred"].eq_missing(pair["pred_ours"])).mean()
    # the same request at temperature 0: the same answer; our reader also takes a bare letter, Inspect's wants ANSWER:
    assert same >= 0.95, pair.filter(~pair["pred"].eq_missing(pair["pred_ours"])).to_dicts()[:3]


def test_our_predictions_come_back_whole_through_an_inspect_log(run, ours, questions, minilm_path, cli):
    similar = score(questions, str(minilm_path), "similarity", cache=False, progress=False)
    for frame, name in ((ours, "served"), (similar, "similarity")):
        parquet = run["root"] / f"{name}.parquet"
        frame.write_parquet(parquet)
        log = run["root"] / "ours" / f"{name}.eval"
        result = CliRunner().invoke(cli, ["export", "inspect-log", str(parquet), "--out", str(log)])
        assert result.exit_code == 0, result.output
        back = import_inspect(log, questions)
        assert back.sort("id").equals(frame.select(back.columns).sort("id")), name


def test_inspect_view_opens_our_log_in_chromium(run, browser):
    logs = run["root"] / "ours"
    assert any(logs.glob("*.eval")), "the round-trip test writes the logs first"
    port = free_port()
    process = subprocess.Popen([str(INSPECT), "view", "--log-dir", str(logs), "--host", "127.0.0.1", "--port",
                                str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        page = browser.new_page()
        deadline = time.monotonic() + 60
        while True:
            try:
                page.goto(f"http://127.0.0.1:{port}/", timeout=5000)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        page.get_by_text("workbench_hypernymy").first.wait_for(timeout=60_000)
        page.get_by_text("workbench_hypernymy").first.click()
        question = pl.read_parquet(run["root"] / "similarity.parquet")["question"][0]
        page.get_by_text(question[:40]).first.wait_for(timeout=60_000)
        assert question[:40] in page.content()
        page.close()
    finally:
        process.kill()
        process.wait()


def _rewritten(log: Path, out: Path, **changes) -> Path:
    """The log ``log`` changed as ``changes`` say, written by Inspect's own writer."""
    from inspect_ai.log import read_eval_log, write_eval_log

    read = read_eval_log(str(log))
    for name, change in changes.items():
        change(read)
    write_eval_log(read, str(out))
    return out


def _twice(log: Path, folder: Path) -> Path:
    """A folder holding one run's log twice (a copy under another name)."""
    folder.mkdir()
    for name in (log.name, "copy-" + log.name):
        shutil.copy(log, folder / name)
    return folder


def test_bad_logs_are_one_line_and_write_nothing(run, questions, cli, tmp_path):
    from inspect_ai._util.error import EvalError

    def other_task(log):
        log.eval.task, log.eval.metadata = "mmlu", None

    def errors(log):
        log.samples[2].error = EvalError(message="connection reset\nby peer", traceback="", traceback_ansi="")

    changed = questions.with_columns(question=pl.when(pl.col("id") == questions["id"][3]).then(pl.lit("What is it?"))
                                     .otherwise("question"))  # fmt: skip
    changed_file = tmp_path / "changed.parquet"
    changed.write_parquet(changed_file)
    newer = _rewritten(run["log"], tmp_path / "newer.json", keep=lambda log: None)
    newer.write_text(newer.read_text().replace('"version": 2', '"version": 3', 1))
    cases = [
        (_rewritten(run["log"], tmp_path / "other.eval", task=other_task), run["probes"], "not of one written by"),
        (run["log"], changed_file, "changed since the export"),
        (_rewritten(run["log"], tmp_path / "errors.eval", err=errors), run["probes"], "1 of 10 samples ended in an"),
        (newer, run["probes"], "newer"),
        (_twice(run["log"], tmp_path / "twice"), run["probes"], "answer to question"),
    ]  # fmt: skip
    for log, probes, expected in cases:
        out = tmp_path / "out.parquet"
        result = CliRunner().invoke(cli, ["import", "inspect", str(log), "--probes", str(probes), "--out", str(out)])
        assert isinstance(result.exception, WorkbenchError), (log, result.output)
        message = str(result.exception)
        assert expected in message and "\n" not in message and not out.exists(), message


def test_a_log_cut_short_gives_what_it_holds_and_says_how_many(run, questions, tmp_path):
    def cut(log):
        log.samples, log.status, log.results = log.samples[:7], "cancelled", None

    short = _rewritten(run["log"], tmp_path / "short.eval", cut=cut)
    with pytest.warns(UserWarning, match=r"cut short \(status cancelled\): 7 of its 10 questions imported"):
        preds = import_inspect(short, questions)
    assert preds.height == 7


def test_a_task_export_into_a_folder_of_the_users_files_is_refused_and_keeps_them(questions, cli, tmp_path):
    probes = tmp_path / "q.parquet"
    questions.write_parquet(probes)
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    result = CliRunner().invoke(cli, ["export", "inspect", str(probes), "--out", str(folder)])
    assert isinstance(result.exception, WorkbenchError) and "\n" not in str(result.exception)
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    result = CliRunner().invoke(cli, ["export", "inspect", str(probes), "--out", str(tmp_path / "t"), "--format",
                                      "cloze"])  # fmt: skip
    assert "lm-eval" in str(result.exception) and not (tmp_path / "t").exists()
    for _ in range(2):  # its own folder is replaced, with the __pycache__ Inspect leaves
        result = CliRunner().invoke(cli, ["export", "inspect", str(probes), "--out", str(tmp_path / "t")])
        assert result.exit_code == 0, result.output
        (tmp_path / "t" / "__pycache__").mkdir()
    shutil.rmtree(tmp_path / "t")
