"""Servers the served-model tests talk to over HTTP on 127.0.0.1: llama-cpp-python's OpenAI-compatible server on
SmolLM2's GGUF (a real inference server), a misbehaving one (an ``http.server`` answering with the failures a
user meets: 401, 429 storms, non-JSON, cut-short JSON, no log-probabilities), and a proxy in front of a real one
that counts the requests it passes on."""

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def llama_server(gguf: Path, port: int | None = None, alias: str = "smollm2", n_ctx: int = 1024):
    """``python -m llama_cpp.server`` on ``gguf`` at ``http://127.0.0.1:PORT/v1`` (yields the process and its URL),
    stopped on exit. One thread generating and one for prompts: on the suite's shared cores a second prompt thread
    waits on the first, and generating after shots took 0.66 of the server CPU of the defaults (bench/README.md,
    ``served-threads``)."""
    port = port or free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", alias, "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "1", "--n_threads_batch", "1",
         "--verbose", "False"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"llama_cpp.server did not start: {process.stderr.read()[-2000:]}") from None
                time.sleep(0.3)
        yield process, url
    finally:
        process.kill()
        process.wait()


TEMPLATE = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
            "'<|im_end|>' + '\\n'}}{% endfor %}"
            "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
"""A ChatML template, as llama.cpp's server gives one at ``/props``."""


class Misbehaving(BaseHTTPRequestHandler):
    """Answers ``GET /v1/models`` with one model, and every ``POST`` as the server's ``mode`` says."""

    mode = "ok"
    posts: list = []
    key_seen: list = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, kind: str = "application/json", headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.key_seen.append(self.headers.get("Authorization", ""))
        if self.mode == "401":
            key = self.headers.get("Authorization", "").removeprefix("Bearer ")
            return self._send(401, json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}}).encode())
        if self.path.endswith("/props"):
            if self.mode != "props":
                return self._send(404, b'{"error": "not found"}')
            props = {"chat_template": TEMPLATE, "bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}
            return self._send(200, json.dumps(props).encode())
        models = {"object": "list", "data": [{"id": "tiny", "object": "model", "owned_by": "lab", "created": 1}]}
        self._send(200, json.dumps(models).encode())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        self.posts.append(json.loads(self.rfile.read(length) or b"{}"))
        if self.mode == "429":
            return self._send(429, b'{"error": {"message": "rate limited"}}', headers={"Retry-After": "0"})
        if self.mode == "html":
            return self._send(200, b"<html>Bad gateway</html>", kind="text/html")
        if self.mode == "cut":
            return self._send(200, b'{"id": "x", "object": "text_completion", "choices": [{"text": "Par')
        text = self.posts[-1].get("prompt", "")
        choice = {"text": text + " x" if self.posts[-1].get("echo") else " x", "index": 0, "logprobs": None,
                  "finish_reason": "length"}  # fmt: skip
        body = {"id": "x", "object": "text_completion", "created": 1, "model": "tiny", "choices": [choice]}
        self._send(200, json.dumps(body).encode())


@contextmanager
def misbehaving(mode: str):
    """A ``Misbehaving`` server in ``mode`` at ``http://127.0.0.1:PORT/v1``; yields its URL and handler class."""
    handler = type("Handler", (Misbehaving,), {"mode": mode, "posts": [], "key_seen": []})
    with serving(handler) as url:
        yield url, handler


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]):
    """``handler`` served in a thread at ``http://127.0.0.1:PORT``; yields its ``/v1`` URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


FORWARDED = ("authorization", "content-type")
"""The request headers the counting proxy passes on."""


@contextmanager
def counting_proxy(url: str):
    """A pass-through proxy at ``http://127.0.0.1:PORT/v1`` in front of the server at ``url`` (its base URL), that
    counts what it forwards: yields its URL and the ``Counter`` of (method, path) it fills, which a test may clear."""
    target = url.rsplit("/v1", 1)[0]
    sent: Counter = Counter()

    class Forward(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _forward(self, method: str) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0))) if method == "POST" else None
            sent[(method, self.path)] += 1
            kept = {name: value for name, value in self.headers.items() if name.lower() in FORWARDED}
            request = urllib.request.Request(target + self.path, data=body, headers=kept, method=method)
            try:
                with urllib.request.urlopen(request, timeout=300) as response:
                    status, kind, answer = response.status, response.headers.get("Content-Type"), response.read()
            except urllib.error.HTTPError as err:
                status, kind, answer = err.code, err.headers.get("Content-Type"), err.read()
            self.send_response(status)
            self.send_header("Content-Type", kind or "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def do_GET(self) -> None:
            self._forward("GET")

        def do_POST(self) -> None:
            self._forward("POST")

    with serving(Forward) as proxy:
        yield proxy, sent
