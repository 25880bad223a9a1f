"""What a server sends is checked where it enters (issue 60): one HTTP client for every request (``scoring.http``),
credentials never across origins, bounded bodies, a deadline per request, listings and answers checked against the
API and the prompt before they are cached or scored. Each case is a real HTTP server on 127.0.0.1 that misbehaves
one way (threads bounded in count and time); the good path is ``tests/test_served.py``'s real llama server."""

import gzip
import json
import math
import re
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from workbench.errors import WorkbenchError
from workbench.scoring import Endpoint, PredictionCache, score, served
from workbench.scoring import http as wire
from workbench.scoring.cache import item_key

KEY = "sk-boundary-never-sent-elsewhere-7d2e"
LAST = {canary.rsplit(" ", 1)[0]: " " + canary.rsplit(" ", 1)[1] for canary in served.CANARIES}
"""Each canary's prompt without its last word, and that word: what the fake server predicts next."""
STOP = 20.0
"""The longest any handler holds a request (hanging, trickling, streaming): a test never waits on it longer."""


def _tokens(text: str) -> list[str]:
    return re.findall(r"\s*\S+|\s+", text)


class Fake(BaseHTTPRequestHandler):
    """An OpenAI-compatible server of one model, ``tiny``, whose echo tokens are words and whose log-probabilities
    are all ``logprob``; ``mode`` makes it misbehave one way. ``seen`` records (method, path, Authorization)."""

    mode = "good"
    logprob: float = -1.0
    listing: object = None
    redirect: str = ""
    raw: bytes = b""
    seen: list = []
    stop: threading.Event

    def log_message(self, *args) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), **(headers or {})}
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.seen.append(("GET", self.path, self.headers.get("Authorization")))
        if self.redirect:
            return self._send(302, b"", {"Location": self.redirect + self.path})
        if self.raw:
            return self._send(200, self.raw)
        if self.path.endswith("/props"):
            return self._send(200, json.dumps({"chat_template": "{{ messages }}", "bos_token": "<s>"}).encode())
        if self.mode == "endless":  # an answer that never ends, up to 256 MB
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"data": [')
            block, started = b'{"id": "tiny", "object": "model"}, ' * 2000, time.monotonic()
            for _ in range(256 * 2**20 // len(block)):
                if self.stop.is_set() or time.monotonic() - started > STOP:
                    break
                try:
                    self.wfile.write(block)
                except OSError:
                    break
            return None
        listing = self.listing if self.listing is not None else {"object": "list", "data": [{"id": "tiny"}]}
        body = json.dumps(listing).encode()
        if self.mode == "gzip":
            return self._send(200, gzip.compress(body), {"Content-Encoding": "gzip"})
        return self._send(200, body)

    def do_POST(self) -> None:
        asked = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        self.seen.append(("POST", self.path, self.headers.get("Authorization")))
        if self.mode == "said":  # an error whose message would clear the terminal and reverse the line
            return self._send(400, json.dumps({"error": {"message": "\x1b[2J\u202eno such model"}}).encode())
        if self.mode == "busy":  # a rate limit that asks for a minute each time
            return self._send(429, b'{"error": {"message": "slow down"}}', {"Retry-After": "60"})
        if self.mode == "hang":
            self.stop.wait(STOP)
            return None
        if self.mode == "trickle":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            for _ in range(int(STOP / 0.2)):
                if self.stop.wait(0.2):
                    break
                try:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                except OSError:
                    break
            return None
        prompt, value = asked.get("prompt", ""), self.logprob
        if asked.get("echo"):
            tokens = _tokens(prompt)
            if self.mode == "misspelt":  # the last token right, the rest not the prompt
                tokens = ["junk" * (len(prompt) - len(tokens[-1]) > 0), tokens[-1]]
            offsets = [sum(map(len, tokens[:index])) for index in range(len(tokens))]
            found = {"tokens": [*tokens, " x"], "text_offset": [*offsets, len(prompt)],
                     "token_logprobs": [None, *[value] * (len(tokens) - 1), -1.0], "top_logprobs": None}  # fmt: skip
            choice = {"text": prompt + " x", "index": 0, "logprobs": found, "finish_reason": "length"}
        else:
            word = LAST.get(prompt, " x")
            top = [{following: value for following in LAST.values()}] if asked.get("logprobs") else None
            found = {"tokens": [word], "text_offset": [len(prompt)], "token_logprobs": [value], "top_logprobs": top}
            choice = {"text": word, "index": 0, "logprobs": found, "finish_reason": "length"}
        usage = {"prompt_tokens": len(_tokens(prompt)), "completion_tokens": 1, "total_tokens": 1}
        body = {"id": "x", "object": "text_completion", "created": 1, "model": "tiny", "choices": [choice],
                "usage": usage}  # fmt: skip
        self._send(200, json.dumps(body).encode())  # NaN is written as NaN, as Python's json writes it


@contextmanager
def fake(mode: str = "good", **settings):
    """A ``Fake`` server in ``mode`` at ``http://127.0.0.1:PORT/v1``; yields its URL and handler class."""
    handler = type("Handler", (Fake,), {"mode": mode, "seen": [], "stop": threading.Event(), **settings})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    finally:
        handler.stop.set()
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def few() -> pl.DataFrame:
    from workbench.schema import PROBE_SCHEMA

    rows = [{"id": f"q{i}", "probe": "hypernymy", "concept": f"dog.n.0{i}", "question": "A dog is a kind of",
             "choices": ["animal", "stone", "cloud"], "answer": 0, "split": "test"} for i in range(1, 3)]  # fmt: skip
    frame = pl.DataFrame(rows)
    return frame.with_columns(
        [pl.lit(None, dtype=dtype).alias(name) for name, dtype in PROBE_SCHEMA.items() if name not in frame.columns]
    ).select(list(PROBE_SCHEMA))


def _one_line(caught) -> str:
    message = str(caught.value)
    assert "\n" not in message and KEY not in message
    return message


@pytest.mark.parametrize(
    ("listing", "said"),
    [
        (
            {"data": [{"id": "smol\u202elm2"}]},
            r"model id listed by 127\.0\.0\.1:\d+ 'smol\\u202elm2' holds an invisible",
        ),
        ({"data": [{"id": "tiny", "owned_by": "lab\u2066x"}]}, r"owned_by reported by 127\.0\.0\.1:\d+ .* invisible"),
        ({"data": [{"id": "x" * 101}]}, r"model id listed by .* is 101 characters long"),
        ({"data": [{"id": "lab/"}]}, r"model id listed by .* \('lab/'\), after its last /, is empty"),
        ({"data": [{"id": "tiny"}, {"id": "tiny", "owned_by": "other"}]}, r"names the model 'tiny' twice"),
        ({"data": "x"}, r"not the OpenAI API's JSON.*a listing of models must be"),
        ({"data": [{"id": 5}]}, r"a model's id must be a text"),
        ({"data": [1]}, r"a listing of models must be"),
        ([], r"a listing of models must be"),
    ],
)
def test_a_listing_is_checked_where_it_enters_and_a_bad_one_is_one_line(listing, said):
    with fake(listing=listing) as (url, _):
        with pytest.raises(WorkbenchError, match=said) as caught:
            served.connect(Endpoint(url), "generate")
    _one_line(caught)


def test_only_the_served_models_entry_is_taken_and_what_a_server_says_is_escaped(few, tmp_path):
    listing = {"data": [{"id": "tiny", "owned_by": "lab"}, {"id": "other\u202e", "owned_by": "\x1b[2J"}]}
    with fake("said", listing=listing) as (url, _):
        server = served.connect(Endpoint(url, model="tiny"), "generate")  # another model's odd id is not ours
        assert server.identity["owned_by"] == "lab"
        with pytest.raises(WorkbenchError, match=r"it serves \['tiny', 'other\\u202e'\]"):
            served.connect(Endpoint(url, model="gpt-9"), "generate")
        with pytest.raises(WorkbenchError, match=r"refused the request \(\\x1b\[2J\\u202eno such model\)") as caught:
            score(few, Endpoint(url, model="tiny"), "generate", cache=tmp_path / "c.sqlite", progress=False)
    assert "\x1b" not in _one_line(caught) and "\u202e" not in str(caught.value)


def test_the_identity_keeps_chosen_fields_each_bounded():
    entry = {"id": "tiny", "owned_by": "lab", "created": 10**400, "max_model_len": 2048, "root": "/x" * 10_000,
             "meta": {"n_params": 135_000_000, "size": 1.5e8, "n_vocab": "49152", "extra": 1, "n_embd": float("nan")},
             "permissions": [{"blob": "y" * 100_000}]}  # fmt: skip
    with fake(listing={"data": [entry]}) as (url, _):
        server = served.connect(Endpoint(url), "generate")
    host = url.split("//")[1].split("/")[0]
    assert server.identity == {"host": host, "model": "tiny", "owned_by": "lab", "max_model_len": 2048,
                               "meta.n_params": 135_000_000, "meta.size": 1.5e8}  # fmt: skip
    assert server.max_length == 2048 and len(server.served) < 300


def test_credentials_never_follow_a_redirect_to_another_origin(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with fake() as (elsewhere, other), fake(redirect=elsewhere.removesuffix("/v1")) as (url, first):
        server = served.connect(Endpoint(url), "causal", template=True)
        assert server.model == "tiny" and isinstance(server.tokenizer, served.ServerTemplate)
    assert [path for _, path, _ in first.seen] == ["/v1/models", "/props"]
    assert all(key == f"Bearer {KEY}" for _, _, key in first.seen)
    assert [path for _, path, _ in other.seen] == ["/v1/models", "/props"]  # followed, the key left behind
    assert all(key is None for _, _, key in other.seen), other.seen


def test_a_redirect_loop_and_a_listing_nested_past_pythons_depth_are_one_line():
    with fake() as (url, handler):
        handler.redirect = url.removesuffix("/v1")  # to itself
        with pytest.raises(WorkbenchError, match="redirects in a loop") as caught:
            served.connect(Endpoint(url), "generate")
        _one_line(caught)
    with fake(raw=b"[" * 100_000 + b"]" * 100_000) as (url, _):
        with pytest.raises(WorkbenchError, match="not the OpenAI API's JSON.*recursion") as caught:
            served.connect(Endpoint(url), "generate")
        _one_line(caught)


def test_a_redirect_from_https_to_http_is_refused():
    asked = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        asked.append(str(request.url))
        if request.url.scheme == "https":
            return httpx2.Response(307, headers={"Location": "http://api.example.com/v1/models"})
        return httpx2.Response(200, json={"data": [{"id": "tiny"}]})

    with wire.client(transport=httpx2.MockTransport(answer)) as client:
        with pytest.raises(wire.Refused, match="redirected from https to http"):
            client.get("https://api.example.com/v1/models", headers={"Authorization": f"Bearer {KEY}"})
        assert client.get("http://api.example.com/v1/models").json()["data"][0]["id"] == "tiny"  # plain http: asked
    assert asked == ["https://api.example.com/v1/models", "http://api.example.com/v1/models"]


def test_an_endless_listing_is_cut_at_the_bound_and_the_process_does_not_grow():
    peak = _peak_rss()
    start = time.monotonic()
    with fake("endless") as (url, _):
        with pytest.raises(WorkbenchError, match=r"longer than 32 MB; it was cut off there") as caught:
            served.connect(Endpoint(url), "generate")
    _one_line(caught)
    assert time.monotonic() - start < 15
    if peak is not None:  # /proc/self/clear_refs resets the peak on Linux
        assert _peak_rss() - peak < 300 * 2**20


def _peak_rss() -> int | None:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        with open("/proc/self/status") as handle:
            return int(re.search(r"VmHWM:\s+(\d+) kB", handle.read()).group(1)) * 1024
    except (OSError, AttributeError):
        return None


def test_a_compressed_answer_is_refused_as_its_size_is_not_its_bodys():
    with fake("gzip") as (url, handler):
        with pytest.raises(WorkbenchError, match=r"compressed answer \(Content-Encoding: gzip\)") as caught:
            served.connect(Endpoint(url), "generate")
    _one_line(caught)


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("hang", "did not answer within 2 s"),
        ("trickle", "did not finish its answer within 2 s"),
        ("busy", r"asked to wait 60 s .*\(429\), past the deadline of 2 s"),
    ],
)
def test_a_server_that_never_answers_ends_in_one_line_within_the_deadline(few, mode, said, tmp_path):
    with fake(mode) as (url, handler):
        start = time.monotonic()
        with pytest.raises(WorkbenchError, match=said + r".*--timeout") as caught:
            score(few, Endpoint(url, timeout=2, retries=2), "generate", cache=tmp_path / "c.sqlite", progress=False)
        took = time.monotonic() - start
    assert url.removesuffix("/v1") in _one_line(caught)
    assert took < 2 + 4, took  # the deadline, then the retries' backoff with nothing sent
    assert len([seen for seen in handler.seen if seen[0] == "POST"]) <= 2  # concurrency: both questions once


@pytest.mark.parametrize(
    ("mode", "logprob", "said"),
    [
        ("good", 0.7, r"log-probability 0\.7 of the token .* is not a number at most 0"),
        ("good", math.nan, r"log-probability nan of the token .* is not a number at most 0"),
        ("misspelt", -1.0, r"the echoed tokens (do not spell the prompt sent|spell 10 of the prompt.s 30 characters)"),
    ],
)
def test_log_probabilities_the_api_rules_out_are_refused_and_never_cached(few, mode, logprob, said, tmp_path):
    cache = PredictionCache(tmp_path / "cache.sqlite")
    with fake(mode, logprob=logprob) as (url, handler):
        with pytest.raises(WorkbenchError, match=r"unlike the prompt or the API.*" + said) as caught:
            score(few, Endpoint(url, retries=0), "causal", cache=cache, progress=False)
        _one_line(caught)
        assert len(cache) == 0
        handler.mode, handler.logprob = "good", -1.0  # the server fixed: the rerun asks it
        fixed = score(few, Endpoint(url, retries=0), "causal", cache=cache, progress=False)
    assert fixed.height == 2 and fixed["scores"].explode().is_finite().all()
    assert len(cache) == 3  # the three choices of the one question text


def test_a_nan_an_earlier_version_cached_is_asked_again(few, tmp_path):
    cache = PredictionCache(tmp_path / "cache.sqlite")
    with fake() as (url, handler):
        server = served.connect(Endpoint(url), "causal")
        kind = served.KINDS["echo"]
        units = [(few["question"][0] + " ", choice) for choice in few["choices"][0]]
        namespace = served._namespace(server, kind)
        cache.put(namespace, {item_key(kind, unit): np.array([np.nan], dtype=np.float32) for unit in units})
        assert served.uncached(server, kind, units, cache) == set(units)
        result = score(few, Endpoint(url), "causal", cache=cache, progress=False)
    assert result["scores"].explode().is_finite().all()
    assert sum(method == "POST" for method, _, _ in handler.seen) >= 3


def test_a_dry_run_sends_only_the_listing(few, cli, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    probes = tmp_path / "few.parquet"
    few.write_parquet(probes)
    with fake() as (url, handler):
        for scorer, template in (("generate", "auto"), ("causal", "none")):
            result = CliRunner().invoke(cli, ["score", "--model", url, "--scorer", scorer, "--chat-template", template,
                                              "--probes", str(probes), "--dry-run"])  # fmt: skip
            assert result.exit_code == 0, result.output
        result = CliRunner().invoke(cli, ["score", "--model", url, "--scorer", "causal", "--chat-template", "auto",
                                          "--probes", str(probes), "--dry-run"])  # fmt: skip
        assert "a dry run sends nothing but the listing" in str(result.exception)
    assert {(method, path) for method, path, _ in handler.seen} == {("GET", "/v1/models")}


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://exa\u202emple.com/v1", "cannot be printed"),
        ("http://127.0.0.1:8000/v1\n", "a line break"),
        ("http://[::1/v1", r"not a server's URL \(Invalid IPv6 URL\)"),
        ("http://127.0.0.1:99999/v1", r"not a server's URL \(Port out of range"),
        ("http://127.0.0.1:8000/v1#x", "query or fragment"),
    ],
)
def test_a_url_that_is_no_servers_is_refused_before_anything_is_sent(url, said):
    with pytest.raises(WorkbenchError, match=said) as caught:
        Endpoint(url)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("name", ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "HOME"])
def test_a_key_variable_that_is_not_an_api_key_is_never_sent(name):
    from workbench.errors import SpecError
    from workbench.scoring.served import Endpoint

    with pytest.raises(SpecError, match="does not end in API_KEY"):
        Endpoint("http://127.0.0.1:9/v1", key_env=name)
    assert Endpoint("http://127.0.0.1:9/v1", key_env="TOGETHER_API_KEY").key_env == "TOGETHER_API_KEY"
