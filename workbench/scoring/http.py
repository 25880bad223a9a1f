"""The one HTTP client for every request the workbench sends a server (``workbench.scoring.served``: the OpenAI API's
requests through the ``openai`` package, llama.cpp's ``/props``): ``openai``'s own ``httpx2`` client, configured
through its hooks, not rewritten.

- Credentials never cross origins: httpx2 drops ``Authorization`` on a redirect to another scheme, host or port
  (``tests/test_served_boundary.py`` checks it against two servers); a redirect from https to http is refused, so
  the request is never sent again in the clear.
- Bodies are bounded: an answer past ``BODY_LIMIT`` bytes is cut off where it crosses it (an endless ``/v1/models``
  once grew the process to 23.7 GB); answers come uncompressed (``Accept-Encoding: identity``, a compressed one
  refused), so the bound holds for what is parsed.
- Each request has a deadline (``deadline``): no attempt of it, the ``openai`` client's retries included, starts or
  waits past it, so a server that never answers, or answers a byte at a time, ends in one line.

``Refused`` is an ``openai.OpenAIError``, which the ``openai`` client raises as it is, without retrying.
"""

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
import openai

BODY_LIMIT = 32 * 2**20
"""Bytes of one answer: an echo of a 128k-token prompt with its log-probabilities is about 13 MB."""
_local = threading.local()


class Refused(openai.OpenAIError):
    """What the client refused of a server (past the deadline, too large, compressed, a downgrade), as the end of a
    line that starts with the server's URL."""


@contextmanager
def deadline(seconds: float, hint: str) -> Iterator[None]:
    """Every request this thread sends inside ends within ``seconds`` from now (``hint``: what to do past it)."""
    _local.deadline = (time.monotonic() + seconds, seconds, hint)
    try:
        yield
    finally:
        _local.deadline = None


def client(**options) -> httpx2.Client:
    """``openai``'s own client (its timeouts, pool and redirects) with the bounds above; ``options`` are
    ``httpx2.Client``'s (``event_hooks`` run after ours)."""
    hooks = options.pop("event_hooks", {})
    return openai.DefaultHttpxClient(
        headers={"Accept-Encoding": "identity"},
        event_hooks={"request": [_on_request, *hooks.get("request", [])],
                     "response": [_on_response, *hooks.get("response", [])]},
        **options,
    )  # fmt: skip


def _held() -> tuple[float, float, str] | None:
    """This thread's deadline (a ``time.monotonic`` time), its length and its hint; None outside one."""
    return getattr(_local, "deadline", None)


def _on_request(request: httpx2.Request) -> None:
    """No attempt starts past the deadline, and none waits on the server beyond it."""
    held = _held()
    if held is None:
        return
    ends, seconds, hint = held
    left = ends - time.monotonic()
    if left <= 0:
        raise Refused(f"did not answer within {seconds:g} s: {hint}")
    timeouts = {"connect": None, "read": None, "write": None, "pool": None, **request.extensions.get("timeout", {})}
    request.extensions["timeout"] = {
        name: left if value is None else min(value, left) for name, value in timeouts.items()
    }


def _on_response(response: httpx2.Response) -> None:
    """A downgrade from https to http refused; a wait the server asks for past the deadline refused now, not slept
    (the ``openai`` client honours ``Retry-After`` up to two minutes); the body bounded in size, time and encoding."""
    held = _held()
    wait = _retry_after(response)
    if held is not None and wait is not None and time.monotonic() + wait >= held[0]:
        response.close()
        raise Refused(f"asked to wait {wait:g} s before asking again ({response.status_code}), past the deadline of "
                      f"{held[1]:g} s: {held[2]}")  # fmt: skip
    if response.has_redirect_location:
        target = response.request.url.join(response.headers["Location"])
        if response.request.url.scheme == "https" and target.scheme != "https":
            response.close()
            raise Refused(f"redirected from https to {target.scheme} ({target.host}); give the https URL it serves")
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        response.close()
        raise Refused(f"sent a compressed answer (Content-Encoding: {encoding:.40}) though asked for none")
    response.stream = _Bounded(response.stream, _held())


def _retry_after(response: httpx2.Response) -> float | None:
    """The seconds a 429 or 5xx answer asks to wait (``retry-after-ms``, ``Retry-After`` in seconds), else None."""
    if response.status_code != 429 and response.status_code < 500:
        return None
    for name, scale in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            return float(response.headers[name]) / scale
        except (KeyError, ValueError):
            continue
    return None


class _Bounded(httpx2.SyncByteStream):
    """A response's bytes, cut off past ``BODY_LIMIT`` or the thread's deadline."""

    def __init__(self, stream: httpx2.SyncByteStream, held: tuple[float, float, str] | None) -> None:
        self._stream = stream
        self._ends, self._seconds, self._hint = held or (math.inf, math.inf, "")

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        for chunk in self._stream:
            seen += len(chunk)
            if seen > BODY_LIMIT:
                raise Refused(f"sent an answer longer than {BODY_LIMIT // 2**20} MB; it was cut off there")
            if time.monotonic() > self._ends:
                raise Refused(f"did not finish its answer within {self._seconds:g} s: {self._hint}")
            yield chunk

    def close(self) -> None:
        self._stream.close()
