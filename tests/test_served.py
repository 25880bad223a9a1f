"""Served models (``workbench.scoring.served``) against real servers: llama-cpp-python's OpenAI-compatible server on
SmolLM2's GGUF (its echo shifted without a BOS, lined up with one: both checked), and a misbehaving HTTP server for
the failures a user meets."""

import json
import os
import threading
import time

import numpy as np
import polars as pl
import pytest
from servers import free_port, llama_server, misbehaving
from typer.testing import CliRunner

from workbench.errors import SpecError, WorkbenchError
from workbench.probes.formats import read_probes
from workbench.reports import text_report
from workbench.scoring import Endpoint, PredictionCache, load_model, plan_requests, score
from workbench.scoring.gguf import smollm2_gguf

pytest.importorskip("llama_cpp")
BOS = "<|im_start|>"
KEY = "sk-test-never-written-4f1c"


@pytest.fixture(scope="module")
def server():
    with llama_server(smollm2_gguf()) as (_, url):
        yield url


@pytest.fixture(scope="module")
def few(released_dir) -> pl.DataFrame:
    """The three shortest questions of the released hypernymy test."""
    frame = read_probes(released_dir / "hypernymy_test.jsonl")
    size = pl.col("question").str.len_chars() + pl.col("choices").list.eval(pl.element().str.len_chars()).list.sum()
    return frame.sort(size, "id").head(3)


@pytest.fixture(scope="module")
def bos_templates(tmp_path_factory):
    """The packaged prompt templates with every prompt starting with SmolLM2's BOS, so that a local model and the
    served one are asked the same tokens."""
    from importlib.resources import files

    templates = json.loads(files("workbench.scoring").joinpath("prompt_templates/default.json").read_text())
    for entry in [templates["default"], *templates["probes"].values()]:
        entry["prompt"], entry["neutral"] = BOS + entry["prompt"], BOS + entry["neutral"]
    path = tmp_path_factory.mktemp("templates") / "bos.json"
    path.write_text(json.dumps(templates))
    return path


def test_a_shifted_echo_is_refused_before_any_work_naming_the_generation_ways(server, few, cli, tmp_path):
    out = tmp_path / "shifted.parquet"
    result = CliRunner().invoke(cli, ["score", "--model", server, "--scorer", "causal", "--probes",
                                      str(_file(few, tmp_path)), "--out", str(out)])  # fmt: skip
    message = str(result.exception)
    assert isinstance(result.exception, WorkbenchError), result.output
    assert "cannot be trusted" in message and "--scorer generate" in message and "--bos" in message
    assert "\n" not in message and not out.exists()
    cache = PredictionCache(tmp_path / "cache.sqlite")
    with pytest.raises(WorkbenchError, match="cannot be trusted"):
        score(few, server, "causal", cache=cache, progress=False)
    assert len(cache) == 0


def test_served_log_likelihoods_agree_with_the_local_scorer_on_the_same_weights(server, few, bos_templates, tmp_path):
    two = few.head(2)
    os.environ["OPENAI_API_KEY"] = KEY
    try:
        cache = PredictionCache(tmp_path / "cache.sqlite")
        endpoint = Endpoint(server, bos=BOS, concurrency=4)
        served = score(two, endpoint, "causal", rule="all", prompts=bos_templates, cache=cache, progress=False)
    finally:
        del os.environ["OPENAI_API_KEY"]
    local = score(two, load_model(smollm2_gguf(), "causal"), "causal", rule="all", prompts=bos_templates, cache=False,
                  progress=False)  # fmt: skip
    pair = served.select("id", "rule", "scores", "prompt").join(
        local.select("id", "rule", "scores", "prompt"), on=["id", "rule"], suffix="_local"
    )
    assert pair.height == 8 and (pair["prompt"] == pair["prompt_local"]).all()
    sums = pair.filter(pl.col("rule") == "sum")
    gaps = np.abs(np.concatenate([np.subtract(a, b) for a, b in zip(sums["scores"], sums["scores_local"])]))
    # Q4_1 weights with 8-bit activations (llama.cpp) against their float32 dequantisation: near, not equal
    assert gaps.mean() < 0.6 and gaps.max() < 2.0, gaps
    identity = json.loads(served["served"][0])
    assert identity["host"] == server.split("//")[1].split("/")[0] and identity["model"] == "smollm2"
    assert identity["bos"] == BOS and identity["owned_by"] == "me"
    assert (local["served"] == "").all() and set(served["fingerprint"]).isdisjoint(local["fingerprint"])
    path = tmp_path / "served.parquet"
    served.write_parquet(path)
    assert KEY.encode() not in path.read_bytes() and KEY.encode() not in cache.path.read_bytes()
    assert "smollm2" in text_report(served, n_boot=20).split("Served models")[1].splitlines()[1]
    # every answer was kept: asked again, the server is not asked
    again = score(two, endpoint, "causal", rule="all", prompts=bos_templates, cache=cache, progress=False)
    assert again["scores"].to_list() == served["scores"].to_list()


def test_generation_ways_ask_the_servers_chat_and_read_letters(server, few, tmp_path):
    cache = PredictionCache(tmp_path / "cache.sqlite")
    free = score(few, server, "generate", chat_template="auto", max_new_tokens=8, cache=cache, progress=False)
    assert free["generated"].str.len_chars().min() > 0 and set(free["match"]) <= {"exact", "near", "choice", "other"}
    messages = json.loads(free["prompt"][0])
    assert messages[-1]["role"] == "user" and few["question"][0] in messages[-1]["content"]
    lettered = score(few, server, "generate", format="letters", chat_template="auto", max_new_tokens=4, cache=cache,
                     progress=False)  # fmt: skip
    letters = lettered.filter(pl.col("match") != "other")
    assert (letters["matched"].str.len_chars() == 1).all()
    assert (letters["pred"] == letters["matched"].map_elements(lambda x: ord(x) - 65, return_dtype=pl.Int64)).all()
    plain = score(few, Endpoint(server, bos=BOS), "generate", max_new_tokens=8, cache=cache, progress=False)
    assert plain["prompt"][0].startswith(few["question"][0][:20])


def test_a_server_killed_mid_run_loses_no_answer_and_the_run_resumes(released_dir, tmp_path):
    questions = read_probes(released_dir / "hyponymy_test.jsonl").head(8)
    cache = PredictionCache(tmp_path / "cache.sqlite")
    port = free_port()
    endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", concurrency=1, retries=0)
    with llama_server(smollm2_gguf(), port=port) as (process, _):

        def kill_after_three() -> None:
            while len(cache) < 3:
                time.sleep(0.05)
            process.kill()

        killer = threading.Thread(target=kill_after_three)
        killer.start()
        with pytest.raises(WorkbenchError, match=r"did not answer.*answers of this run are kept.*rerun"):
            score(questions, endpoint, "generate", chat_template="auto", max_new_tokens=4, cache=cache, progress=False)
        killer.join()
    kept = len(cache)
    assert 3 <= kept < 8
    with llama_server(smollm2_gguf(), port=port):
        from workbench.scoring import served

        server = served.connect(endpoint, "generate")
        answers = served.answers(server, [[{"role": "user", "content": "x"}]], 4, True, None, False)
        assert len(answers) == 1
        done = score(questions, endpoint, "generate", chat_template="auto", max_new_tokens=4, cache=cache,
                     progress=False)  # fmt: skip
    assert done.height == 8 and len(cache) == 8


def test_a_prompt_past_the_servers_context_is_one_line(server, few):
    with pytest.raises(WorkbenchError, match="longer than its context") as caught:
        score(few.head(1), server, "generate", chat_template="auto", system="word " * 3000, progress=False,
              cache=False)  # fmt: skip
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("mode", "scorer", "expected"),
    [
        ("401", "generate", r"refused the key \(401\).*\$OPENAI_API_KEY"),
        ("429", "generate", r"rate limit \(429\) after 1 retries.*--concurrency.*0 of 1 answers"),
        ("html", "generate", r"not the OpenAI API's JSON"),
        ("cut", "generate", r"not the OpenAI API's JSON"),
        ("ok", "causal", r"gives no prompt log-probabilities.*--scorer generate"),
    ],
)
def test_a_misbehaving_server_is_one_line_and_never_shows_the_key(few, mode, scorer, expected, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with misbehaving(mode) as (url, handler):
        with pytest.raises(WorkbenchError, match=expected) as caught:
            score(few.head(1), Endpoint(url, retries=1), scorer, cache=tmp_path / "cache.sqlite", progress=False)
    assert KEY not in str(caught.value) and "\n" not in str(caught.value)
    assert handler.key_seen and all(seen == f"Bearer {KEY}" for seen in handler.key_seen)
    if mode == "429":
        assert len(handler.posts) == 2  # the request and its one retry


def test_unreachable_unknown_model_and_dry_run(few, cli, tmp_path):
    closed = f"http://127.0.0.1:{free_port()}/v1"
    start = time.monotonic()
    with pytest.raises(WorkbenchError, match="did not answer"):
        score(few, closed, "generate", progress=False)
    assert time.monotonic() - start < 5
    with misbehaving("ok") as (url, handler):
        with pytest.raises(WorkbenchError, match=r"does not serve 'gpt-9'; it serves \['tiny'\]"):
            score(few, Endpoint(url, model="gpt-9"), "generate", progress=False)
        plan = plan_requests(few, url, "causal", rule="mi", cache=tmp_path / "cache.sqlite")
        pairs = few.select("question", "choices").explode("choices").unique().height
        assert plan["requests"][0] == pairs + few["choices"].explode().n_unique()  # the mi rule's neutral prompt too
        assert plan["cached"][0] == 0 and plan["prompt_tokens"][0] > 0 and not plan["counted"][0]
        result = CliRunner().invoke(cli, ["score", "--model", url, "--scorer", "generate", "--probes",
                                          str(_file(few, tmp_path)), "--dry-run"])  # fmt: skip
        assert result.exit_code == 0, result.output
        asked = few["question"].n_unique()  # one free answer per distinct prompt
        assert f"would send {asked} requests" in result.output and "nothing was sent" in result.output
        assert handler.posts == []


def _file(probes: pl.DataFrame, folder) -> object:
    path = folder / "few.parquet"
    probes.write_parquet(path)
    return path


def test_a_sweep_takes_a_served_model_beside_a_local_one(server, few, minilm_path, tmp_path):
    from workbench.sweep import plan_sweep, run_sweep

    probes = _file(few, tmp_path)
    served = {"path": server, "scorers": ["generate"], "concurrency": 2, "bos": BOS}
    grid = {"models": {"minilm": str(minilm_path), "smollm2": served}, "probes": {"few": str(probes)},
            "scorers": ["similarity"]}  # fmt: skip
    plan = plan_sweep(grid, out=tmp_path / "sweep", split=None, cache=False)
    assert plan.sort("model")["endpoint"].is_null().to_list() == [True, False]
    assert json.loads(plan.filter(pl.col("model") == "smollm2")["endpoint"][0])["concurrency"] == 2
    summary = run_sweep(plan, cache=False, progress=False)
    assert summary["status"].to_list() == ["scored", "scored"]
    written = pl.read_parquet(plan.filter(pl.col("model") == "smollm2")["file"][0])
    assert written["model"].unique().to_list() == ["smollm2"] and json.loads(written["served"][0])["model"] == "smollm2"
    assert plan_sweep(grid, out=tmp_path / "sweep", split=None, cache=False)["done"].all()
    with pytest.raises(SpecError, match="unknown keys \\['bos'\\].*for a served model"):
        plan_sweep({**grid, "models": {"m": {"path": str(minilm_path), "bos": BOS}}}, out=tmp_path / "other")


def test_a_chat_template_for_log_likelihoods_comes_from_the_tokenizer_or_the_server(server, few, tmp_path):
    with pytest.raises(WorkbenchError, match=r"needs the chat template of smollm2.*--tokenizer"):
        score(few, Endpoint(server, bos=BOS), "causal", chat_template="auto", progress=False, cache=False)
    plan = plan_requests(few, Endpoint(server, bos=BOS, tokenizer=str(smollm2_gguf())), "causal",
                         chat_template="auto", cache=False)  # fmt: skip
    pairs = few.select("question", "choices").explode("choices").unique().height
    assert plan["counted"][0] and plan["requests"][0] == pairs
    local = load_model(smollm2_gguf(), "causal").tokenizer
    with misbehaving("props") as (url, _):
        from workbench.scoring import served

        given = served.connect(Endpoint(url), "causal", template=True)
        messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "A dog is a kind of"}]
        assert given.tokenizer.apply_chat_template(messages) == local.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True
        )
        assert set(given.identity) == {"host", "model", "owned_by", "created"}  # the prompts carry the template


@pytest.mark.wordnet
def test_the_explorer_shows_a_served_models_picks_as_a_local_ones(server, few, wordnet_graph, tmp_path):
    from widgets import ClusterBrowser, ProbeControls, Session

    served = score(few, server, "generate", chat_template="auto", format="letters", max_new_tokens=4,
                   cache=tmp_path / "cache.sqlite", progress=False)  # fmt: skip
    session = Session(graph=wordnet_graph, probes=few, predictions=served)
    browser, controls = ClusterBrowser(session), ProbeControls(session)
    controls.probe.value = "hypernymy"
    session.concept = few["concept"][0]
    shown = served.filter(pl.col("concept") == few["concept"][0])
    assert f"{int(shown['correct'].sum())}/{shown.height}" in browser.summary.value
    assert browser.body.value.count("wb-question") == shown.height


def test_a_served_model_sweeps_from_the_command_line_in_every_documented_form(server, few, cli, tmp_path):
    import textwrap
    import tomllib
    from pathlib import Path

    probes = _file(few.head(2), tmp_path)
    docs = (Path(__file__).resolve().parents[1] / "docs" / "SCORING.md").read_text()
    block = textwrap.dedent(docs.split("**A sweep**")[1].split("```toml\n")[1].split("```")[0])
    assert tomllib.loads(block)["models"]["smollm2"]["path"] == "http://127.0.0.1:8000/v1"  # the docs' grid parses
    table = block.split("[models.smollm2]")[1].split("\n\n")[0]  # its served model as written, on our server
    table = table.replace("http://127.0.0.1:8000/v1", server).replace(', "cloze/5-shot/plain"', "")
    grid = tmp_path / "grid.toml"
    grid.write_text(f'[models.smollm2]{table}\n\n[probes]\nfew = "{probes}"\n')
    plain = tmp_path / "plain.toml"  # a plain URL as a model's path
    plain.write_text(f'scorers = ["generate"]\n\n[models]\nsmollm2 = "{server}"\n\n[probes]\nfew = "{probes}"\n')
    forms = {
        "grid": ["--grid", str(grid)],
        "plain": ["--grid", str(plain)],
        "option": ["--model", f"smollm2={server}", "--scorers", "generate", "--probes", f"few={probes}"],
    }
    for form, arguments in forms.items():
        out = tmp_path / f"sweep-{form}"
        result = CliRunner().invoke(cli, ["sweep", *arguments, "--out", str(out)])
        assert result.exit_code == 0, (form, result.output, result.exception)
        assert "scored" in result.output and "1 units (0 done)" in result.output, result.output
        written = pl.read_parquet(next((out / "predictions").glob("*.parquet")))
        assert written.height == 2 and json.loads(written["served"][0])["model"] == "smollm2"
        again = CliRunner().invoke(cli, ["sweep", *arguments, "--out", str(out), "--dry-run"])
        assert "1 units (1 done)" in again.output, again.output  # the key the same when the grid is read again
    result = CliRunner().invoke(cli, ["sweep", "--model", f"smollm2={server}", "--probes", f"few={probes}",
                                      "--out", str(tmp_path / "similarity")])  # fmt: skip
    assert "answers the scorers ['causal', 'generate'], not ['similarity']" in str(result.exception)


def test_a_connected_server_is_asked_again_without_listing_its_models_again(few):
    from workbench.scoring import served

    with misbehaving("ok") as (url, handler):
        server = served.connect(Endpoint(url), "generate")
        for _ in range(2):  # as an adaptive run asks it, one question at a time
            score(few.head(1), server, "generate", cache=False, progress=False)
        assert len(handler.key_seen) == 1 and len(handler.posts) == 2  # one listing, then one answer a call
        assert server.sent.requests == 2
        with pytest.raises(SpecError, match="connected for scorer 'generate', not 'causal'"):
            score(few.head(1), server, "causal", cache=False, progress=False)


WITHOUT_TORCH = """import atexit, sys
atexit.register(lambda: print("loaded:", sorted({"torch", "transformers"} & set(sys.modules)), file=sys.stderr))
from workbench.cli import main
sys.argv = ["workbench", *sys.argv[1:]]
main()"""
"""``workbench`` as its entry point runs it, saying at exit which of torch and transformers it imported."""


def test_a_served_model_is_scored_from_the_command_line_without_importing_torch(server, few, tmp_path):
    """Asking a server needs no local model, so neither torch nor transformers is imported (about 2 s of CPU a
    command): the dry run, log-likelihoods from the echo and letters from the chat, each written and read back."""
    import subprocess
    import sys

    from workbench.io import read_predictions

    probes = _file(few, tmp_path)
    common = ["score", "--model", server, "--probes", str(probes)]
    ways = {
        "dry-run": ["--scorer", "causal", "--bos", BOS, "--dry-run"],
        "echo": ["--scorer", "causal", "--bos", BOS, "--out", str(tmp_path / "echo.parquet")],
        "letters": ["--scorer", "generate", "--chat-template", "auto", "--format", "letters",
                    "--out", str(tmp_path / "letters.parquet")],
    }  # fmt: skip
    for way, options in ways.items():
        run = subprocess.run([sys.executable, "-c", WITHOUT_TORCH, *common, *options], capture_output=True, text=True,
                             timeout=300)  # fmt: skip
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stderr.splitlines()[-1] == "loaded: []", (way, run.stderr[-2000:])
    for name in ("echo", "letters"):
        preds = read_predictions(tmp_path / f"{name}.parquet")
        assert preds.height == few.height and preds["served"].str.contains("smollm2").all()
