"""Models served behind an OpenAI-compatible API (vLLM, llama.cpp, Ollama, TGI, a provider's API) as scorers.

An ``Endpoint`` names the server as lm-eval's ``local-completions`` and Inspect's ``openai-api`` do: a base URL
(``http://127.0.0.1:8000/v1``), the served model's name (``model``; the server's only one by default), the
*name* of the environment variable holding the key (never the key itself) and, for ways that need the model's chat
template, its tokenizer. ``connect`` checks the server before any work: it answers within ``CONNECT_TIMEOUT_S``,
accepts the key and serves the model; chosen fields of what ``/v1/models`` reports of it, checked where they enter,
are its identity (``Server.identity``), which names it in the prediction rows (``served`` column) and in the
fingerprint. Every request goes through one HTTP client (``workbench.scoring.http``: credentials never across
origins, bounded bodies, a deadline per request), and every answer is checked against what the API and the prompt
require before it is cached or scored (``Unlike``).

The ways of asking map onto the API as the harnesses do:

- log-likelihood ways (scorer ``causal``: cloze or letters, shots, chat template, every rule): ``/v1/completions``
  with ``echo`` and prompt log-probabilities (one token generated and dropped); the choice's tokens are the echoed
  tokens that end after the prompt's last character, found by the ``text_offset`` the server returns; ``mi``'s
  question-free term is a second request. ``check_echo`` verifies the server's numbers first (``CANARIES``);
- generation ways (scorer ``generate``, temperature 0): ``/v1/chat/completions`` with the question as chat
  messages and the server's own template (``chat_template="auto"``), else ``/v1/completions`` with the plain
  prompt; ``format="letters"`` reads the letter the model writes (``answers.match_letters``).

Requests run ``concurrency`` at a time, in an order that keeps prompts sharing a prefix (a question's choices, the
shots) together for the server's prompt cache; the ``openai`` client retries 429s, 5xx and timeouts with backoff;
every answer is committed to the prediction cache as it arrives, so a killed run or a dead server resumes without
asking again. Figures and the servers verified: docs/SCORING.md, "Served models".
"""

import hashlib
import json
import math
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import numpy as np

from workbench.errors import SpecError, WorkbenchError
from workbench.io import check_label
from workbench.progress import ProgressBar
from workbench.scoring.cache import PredictionCache, item_key

KEY_ENV = "OPENAI_API_KEY"
CONNECT_TIMEOUT_S = 5.0
"""An unreachable server is refused within this long."""
CANARIES = (
    "The capital of France is Paris",
    "Monday, Tuesday, Wednesday, Thursday",
    "one, two, three, four, five",
)
"""Prompts whose last token a model predicts well, so it is among the top log-probabilities of the next token."""
TOP_LOGPROBS = 20
TOLERANCE = 0.25
"""Nats between a canary's echoed log-probability and the next-token one: the same forward up to the noise of
quantised kernels run on other batch shapes (0.11 nats measured on llama-cpp-python and SmolLM2 Q4_1); a shifted
echo is off by nats."""
SCORERS = ("causal", "generate")
GENERATION_WAYS = "score it with the generation ways instead (--scorer generate, with --format cloze or letters)"
KINDS = {"echo": "served-echo", "chat": "served-chat", "text": "served-text"}
TIMEOUT_HINT = "raise --timeout (a sweep grid's timeout) if it is slow"
LOGPROB_SLACK = 1e-4
"""Nats above 0 a log-probability may show from rounding; more is no log-probability, and the answer is refused."""
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class NoLogprobs(ValueError):
    """The server answered an echo request without prompt log-probabilities."""


class Unlike(ValueError):
    """An answer the API or the prompt rules out: log-probabilities above 0 or not numbers, echoed tokens that do
    not spell the prompt sent. Never cached, never scored."""


def is_endpoint(model: object) -> bool:
    """Whether ``model`` names a served model: an ``Endpoint``, or an ``http://`` / ``https://`` URL."""
    return isinstance(model, Endpoint) or (isinstance(model, str) and model.startswith(("http://", "https://")))


@dataclass(frozen=True)
class Endpoint:
    """A served model: ``url`` the API's base URL (``http://HOST:PORT/v1``), ``model`` its name on the server
    (None: the only one it serves), ``key_env`` the environment variable holding the key (unset: none sent),
    ``tokenizer`` the model's tokenizer (a folder, hub name or ``.gguf`` file) for chat templates and token counts,
    ``concurrency`` requests in flight, ``bos`` text put before every prompt that does not start with it (a BOS
    token, for servers whose echo lines up only after one: llama-cpp-python), ``timeout`` seconds per request, its
    retries included, ``retries`` per request (429, 5xx, timeouts; with backoff).

    >>> Endpoint("http://127.0.0.1:8000/v1", model="smollm2").host
    '127.0.0.1:8000'
    """

    url: str
    model: str | None = None
    key_env: str = KEY_ENV
    tokenizer: str | None = None
    concurrency: int = 8
    bos: str = ""
    timeout: float = 120.0
    retries: int = 5

    def __post_init__(self) -> None:
        texts = {"url": self.url, "model": self.model, "key_env": self.key_env, "tokenizer": self.tokenizer,
                 "bos": self.bos}  # fmt: skip
        for name, value in texts.items():
            if not isinstance(value, str | None) or (value is None and name in ("url", "key_env", "bos")):
                raise SpecError(f"{name}={value!r:.60} is not a text; give one")
        if any(not char.isprintable() or char.isspace() for char in self.url):
            raise SpecError(f"{self.url!r} holds a space, a line break or a character that cannot be printed; give "
                            "the server's base URL, e.g. http://127.0.0.1:8000/v1")  # fmt: skip
        try:
            parts = urlsplit(self.url)
            parts.port, (parts.hostname or "").encode("idna")  # a port out of range, a host no DNS name spells
        except (ValueError, UnicodeError) as err:
            raise SpecError(f"{self.url!r} is not a server's URL ({err}); give its base URL, e.g. "
                            "http://127.0.0.1:8000/v1") from None  # fmt: skip
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SpecError(f"{self.url!r} is not a server's URL; give its base URL, e.g. http://127.0.0.1:8000/v1")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise SpecError(
                f"the URL of {self.host} holds a user, password, query or fragment; give the base URL alone and the "
                f"key in an environment variable (--api-key-env, default {KEY_ENV})"
            )
        if not _ENV_NAME.match(self.key_env):
            raise SpecError(f"key_env={self.key_env!r} is not an environment variable's name; give one like {KEY_ENV}")
        if not self.key_env.upper().endswith("API_KEY"):  # a grid from someone else names the variable and the URL
            raise SpecError(f"key_env={self.key_env!r} does not end in API_KEY: only such a variable's value is sent "
                            "to a server, so that a grid or command cannot send another secret (AWS_SECRET_ACCESS_KEY, "
                            f"GITHUB_TOKEN) to its URL; put the key in one, e.g. {KEY_ENV}")  # fmt: skip
        if not isinstance(self.concurrency, int) or not 1 <= self.concurrency <= 256:
            raise SpecError(f"concurrency={self.concurrency!r} is out of range; use a whole number from 1 to 256")
        if not isinstance(self.retries, int) or not 0 <= self.retries <= 20:
            raise SpecError(f"retries={self.retries!r} is out of range; use a whole number from 0 to 20")
        if not isinstance(self.timeout, int | float) or isinstance(self.timeout, bool) or not 1 <= self.timeout <= 3600:
            raise SpecError(f"timeout={self.timeout!r} is out of range; use 1 to 3600 seconds")

    @property
    def host(self) -> str:
        """The server's host and port, as the prediction rows name it."""
        parts = urlsplit(self.url)
        return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)


@dataclass(eq=False)
class Server:
    """A checked connection to an ``Endpoint``: the client, the served ``model`` name, its ``identity`` (host,
    name and what the server reports of it; never the key), the ``fingerprint`` that names it, and what the
    scorers read of a ``Model`` (``name``, ``scorer``, ``control``, ``max_length``, ``tokenizer``); ``echo_checked``:
    ``check_echo`` passed on this connection (it is not asked again)."""

    endpoint: Endpoint
    client: object
    model: str
    identity: dict
    fingerprint: str
    scorer: str = "causal"
    tokenizer: object = None
    control: str = "none"
    max_length: int = 0
    sent: "Traffic" = field(default_factory=lambda: Traffic())
    echo_checked: bool = False

    @property
    def name(self) -> str:
        return self.model.rsplit("/", 1)[-1]

    @property
    def served(self) -> str:
        """The ``served`` column: the identity as JSON."""
        return json.dumps(self.identity, sort_keys=True, ensure_ascii=False)


@dataclass
class Traffic:
    """What a run sent: requests answered, prompt and completion tokens (as the server counted them), errors (each
    failed attempt, retried or not), answers read from the cache."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: int = 0
    cached: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def line(self, server: "Server") -> str:
        return (f"sent {self.requests:,} requests to {server.endpoint.host} ({server.model}): "
                f"{self.prompt_tokens:,} prompt tokens, {self.completion_tokens:,} completion tokens, "
                f"{self.errors:,} errors; {self.cached:,} answers from the cache")  # fmt: skip


def connect(endpoint: Endpoint, scorer: str = "causal", template: bool = False) -> Server:
    """``endpoint`` checked and named: reachable, the key accepted, the model served (each failure one line).
    ``template``: also ask the server for its chat template (``server_template``), for a log-likelihood way with
    the chat template and no tokenizer; otherwise only the listing of its models is sent."""
    import openai

    from workbench.scoring import http

    if scorer not in SCORERS:
        raise SpecError(
            f"a served model answers through the OpenAI API, which gives log-likelihoods (scorer causal) and "
            f"generations (scorer generate), not scorer={scorer!r}; use one of {list(SCORERS)}"
        )
    key = os.environ.get(endpoint.key_env) or "none"
    traffic = Traffic()

    def count_errors(response) -> None:
        if response.status_code >= 400:
            with traffic.lock:
                traffic.errors += 1

    wire = http.client(event_hooks={"response": [count_errors]})
    client = openai.OpenAI(
        base_url=endpoint.url.rstrip("/"),
        api_key=key,
        max_retries=endpoint.retries,
        timeout=openai.Timeout(endpoint.timeout, connect=CONNECT_TIMEOUT_S),
        http_client=wire,
    )
    try:
        with http.deadline(LISTING_S, "is it running and reachable?"):
            listing = client.with_options(max_retries=0).models.with_raw_response.list().http_response.json()
        listed = _listed(listing)
    except Exception as err:
        raise failure(err, endpoint, key, "listing its models", listing=True) from None
    names = list(listed)
    if endpoint.model is None and len(names) != 1:
        raise SpecError(f"{endpoint.host} serves {len(names)} models {names[:10]}; name one (--served-model)")
    name = endpoint.model or names[0]
    if name not in listed:
        raise WorkbenchError(f"{endpoint.host} does not serve {name!r}; it serves {names[:10]}: pass one of them "
                             "(--served-model)")  # fmt: skip
    identity = {"host": endpoint.host, "model": name, **_reported(name, listed[name], endpoint.host)}
    if endpoint.bos:
        identity["bos"] = endpoint.bos
    tokenizer = load_tokenizer(endpoint.tokenizer)
    if tokenizer is None and template:
        tokenizer = server_template(endpoint, key, wire)
    fingerprint = hashlib.sha256(("served\x1f" + json.dumps(identity, sort_keys=True)).encode()).hexdigest()
    context = identity.get("max_model_len")
    return Server(
        endpoint, client, name, identity, fingerprint, scorer, tokenizer,
        max_length=context if isinstance(context, int) else 0, sent=traffic,
    )  # fmt: skip


LISTING_S = 2 * CONNECT_TIMEOUT_S
"""The listing of a server's models ends within this long."""
LISTED_LIMIT = 10_000
"""Models one listing may name (OpenRouter's names about 300)."""
REPORTED = {"owned_by": str, "created": int, "max_model_len": int}
"""What the identity keeps of what ``/v1/models`` reports of a model, besides its id: these fields where they have
these types, and llama.cpp's ``meta`` numbers (``META``); nothing else a server says of itself is kept."""
META = ("vocab_type", "n_vocab", "n_ctx_train", "n_embd", "n_params", "size")


def _listed(listing: object) -> dict[str, dict]:
    """Each model a ``/v1/models`` answer names, by id; a listing of another shape, or naming a model twice (which
    of the two would it be?), is refused."""
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list) or not all(isinstance(entry, dict) for entry in data):
        raise ValueError(f'a listing of models must be {{"data": [{{"id": ...}}, ...]}}, not {str(listing)[:80]!r}')
    if len(data) > LISTED_LIMIT:
        raise ValueError(f"a listing of {len(data):,} models, more than {LISTED_LIMIT:,}")
    listed = {}
    for entry in data:
        if not isinstance(entry.get("id"), str):
            raise ValueError(f"a model's id must be a text, not {entry.get('id')!r:.60}")
        if entry["id"] in listed:
            raise ValueError(f"a listing that names the model {entry['id']!r:.60} twice")
        listed[entry["id"]] = entry
    return listed


def _reported(name: str, entry: dict, host: str) -> dict:
    """What the identity keeps of the served model's entry (``REPORTED``, ``META``): its id and ``owned_by`` pass
    ``io.check_label`` (a bidi override, a control character, over 100 characters: refused in one line, as
    ``--name``), as does the id's last part, the model's label; numbers are whole (or finite) and below 2**53."""
    check_label(name, f"the model id listed by {host}")
    check_label(name.rsplit("/", 1)[-1], f"the model id listed by {host} ({name!r}), after its last /,")
    kept = {}
    for field_name, kind in REPORTED.items():
        value = entry.get(field_name)
        if kind is str and isinstance(value, str):
            kept[field_name] = check_label(value, f"the {field_name} reported by {host}")
        elif kind is int and _whole(value) and 0 <= value < 2**53:
            kept[field_name] = value
    meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
    return kept | {f"meta.{key}": meta[key] for key in META if _number(meta.get(key)) and abs(meta[key]) < 2**53}


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class ServerTemplate:
    """The chat template a server gives (llama.cpp's ``/props``), read as ``asking.render`` reads a tokenizer's."""

    chat_template: str
    bos_token: str = ""
    eos_token: str = ""

    def apply_chat_template(self, messages: list[dict], tokenize: bool = False, add_generation_prompt: bool = True):
        from transformers.utils.chat_template_utils import render_jinja_template

        rendered, _ = render_jinja_template(
            [messages], chat_template=self.chat_template, bos_token=self.bos_token, eos_token=self.eos_token,
            add_generation_prompt=add_generation_prompt,
        )  # fmt: skip
        return rendered[0]


TEMPLATE_LIMIT = 64 * 1024
"""Characters of a chat template from a server (the longest in the hub's models is about 12 KB)."""
TOKEN_LIMIT = 64
"""Characters of a BOS or EOS token from a server."""


def server_template(endpoint: Endpoint, key: str, client=None) -> ServerTemplate | None:
    """The chat template the server exposes at ``/props`` (llama.cpp's ``llama-server``), or None where it gives
    none (most servers: vLLM, llama-cpp-python, Ollama, APIs). Asked through the one client (``http.client``; the
    ``openai`` client's own, where given), within ``CONNECT_TIMEOUT_S``; only the template and the two tokens are
    read, each bounded."""
    import httpx2

    from workbench.scoring import http

    root = endpoint.url.rstrip("/").removesuffix("/v1")
    own = client is None
    client = http.client() if own else client
    try:
        with http.deadline(CONNECT_TIMEOUT_S, "it gives no chat template in time"):
            response = client.get(f"{root}/props", headers={"Authorization": f"Bearer {key}"})
            props = response.json() if response.status_code == 200 else None
    except (httpx2.HTTPError, http.Refused, ValueError):
        return None
    finally:
        if own:
            client.close()
    props = props if isinstance(props, dict) else {}
    template = props.get("chat_template")
    if not isinstance(template, str) or not template.strip() or len(template) > TEMPLATE_LIMIT:
        return None
    tokens = [props.get(name) for name in ("bos_token", "eos_token")]
    bos, eos = (value if isinstance(value, str) and len(value) <= TOKEN_LIMIT else "" for value in tokens)
    return ServerTemplate(template, bos, eos)


def load_tokenizer(source: str | None):
    """The model's tokenizer from a folder, a hub name in the local cache or a ``.gguf`` file (None: none)."""
    if source is None:
        return None
    from pathlib import Path

    from transformers import AutoTokenizer

    from workbench.scoring.quiet import quiet_transformers

    path = Path(source).expanduser()
    try:
        with quiet_transformers():
            if path.suffix == ".gguf":
                return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
            return AutoTokenizer.from_pretrained(str(path) if path.exists() else source)
    except (OSError, ValueError) as err:
        raise WorkbenchError(
            f"cannot load the tokenizer {source} ({str(err).splitlines()[0][:120]}); give the model's tokenizer as a "
            "folder, a hub name in the local cache, or its .gguf file"
        ) from None


def failure(
    err: Exception, endpoint: Endpoint, key: str, doing: str, kept: str = "", listing: bool = False
) -> WorkbenchError:
    """A one-line error for what the server (or the way to it) did, the key never in it; ``listing``: the error
    came from the listing of its models (within ``LISTING_S``), else from a request (within ``endpoint.timeout``)."""
    import openai

    from workbench.scoring import http

    where = f"{endpoint.url} ({doing})"
    cause = err if isinstance(err, http.Refused) else err.__cause__
    if isinstance(cause, http.Refused):
        message = f"the server at {where} {cause}"
    elif isinstance(err, openai.APITimeoutError) and listing:
        message = f"the server at {where} did not answer within {LISTING_S:g} s: is it running and reachable?"
    elif isinstance(err, openai.APITimeoutError):
        message = f"the server at {where} did not answer within {endpoint.timeout:g} s: {TIMEOUT_HINT}"
    elif isinstance(err, openai.APIConnectionError) and type(cause).__name__ == "TooManyRedirects":
        message = f"the server at {where} redirects in a loop (past 20 redirects): give the URL it serves at"
    elif isinstance(err, openai.APIConnectionError):
        message = f"the server at {where} did not answer: is it running and reachable?"
    elif isinstance(err, openai.AuthenticationError | openai.PermissionDeniedError):
        message = (f"the server at {where} refused the key ({err.status_code}): set the key it expects in "
                   f"${endpoint.key_env} (or name another variable with --api-key-env)")  # fmt: skip
    elif isinstance(err, openai.RateLimitError):
        message = (f"the server at {where} kept refusing for its rate limit (429) after {endpoint.retries} retries "
                   "with backoff: lower --concurrency or wait")  # fmt: skip
    elif isinstance(err, openai.NotFoundError):
        message = f"the server at {where} has no such route or model (404): check the URL (it ends in /v1)"
    elif isinstance(err, openai.BadRequestError):
        said = _said(err)
        too_long = re.search(r"context|too long|exceed|maximum", said, re.I)
        message = (f"the server at {where} refused a prompt longer than its context ({said}): ask with fewer shots, "
                   "or serve the model with a longer context" if too_long else
                   f"the server at {where} refused the request ({said})")  # fmt: skip
    elif isinstance(err, openai.APIStatusError):
        message = f"the server at {where} failed ({err.status_code}: {_said(err)}) after {endpoint.retries} retries"
    elif isinstance(err, Unlike):
        message = f"the server at {where} sent an answer unlike the prompt or the API ({err})"
    elif isinstance(err, openai.APIResponseValidationError | ValueError | LookupError | TypeError | AttributeError
                    | RecursionError):  # fmt: skip
        message = f"the server at {where} sent an answer that is not the OpenAI API's JSON, or is cut short ({err})"
    else:
        message = f"the server at {where} failed: {type(err).__name__}: {err}"
    message = " ".join((message + (f"; {kept}" if kept else "")).split())
    return WorkbenchError(message.replace(key, "***") if key and key != "none" else message)


def _said(err) -> str:
    """What the server said of an error, at most 160 characters, each it cannot print (a terminal's escape, a bidi
    override, a line break) escaped: the line is the workbench's, not the server's."""
    body = getattr(err, "body", None)
    text = body.get("message") or body.get("detail") if isinstance(body, dict) else None
    said = str(text or getattr(err, "message", err))[:160]
    return "".join(char if char.isprintable() else ascii(char)[1:-1] for char in said)


def sent_text(server: Server, prompt: str, continuation: str) -> str:
    """The text an echo request sends for a (prompt, continuation) unit."""
    return _with_bos(server, prompt + continuation)


def uncached(
    server: Server, kind: str, units: Sequence[tuple[str, ...]], cache: PredictionCache | None
) -> set[tuple[str, ...]]:
    """The units of ``kind`` whose answers ``cache`` lacks."""
    keys = {unit: item_key(kind, unit) for unit in dict.fromkeys(units)}
    if cache is None:
        return set(keys)
    found = cache.get(_namespace(server, kind), keys.values())
    return {unit for unit, key in keys.items() if key not in found or not is_answer(kind, found[key])}


def is_answer(kind: str, value: np.ndarray) -> bool:
    """Whether a cached value of ``kind`` can be an answer: log-probabilities finite and at most 0 (an earlier
    version cached a server's NaN, and refused every rerun from the cache); the others are text."""
    if kind != KINDS["echo"]:
        return True
    return value.size > 0 and bool(np.isfinite(value).all()) and bool((value <= LOGPROB_SLACK).all())


def _namespace(server: Server, kind: str) -> str:
    return hashlib.sha256(f"{server.fingerprint}\x1f{kind}".encode()).hexdigest()


def echo_logprobs(server: Server, prompt: str, continuation: str) -> tuple[np.ndarray, tuple[int, int]]:
    """The log-probability of each token of ``continuation`` after ``prompt`` (echoed by ``/v1/completions``),
    and the prompt tokens the server counted."""
    sent = sent_text(server, prompt, continuation)
    tokens, offsets, logprobs, usage = _echo(server, sent)
    end = offsets[-1] + len(tokens[-1])  # the sent text's end, in the server's offsets
    take = [index for index in range(len(tokens)) if offsets[index] + len(tokens[index]) > end - len(continuation)]
    values = [logprobs[index] for index in take]
    if not take or any(value is None for value in values):
        raise NoLogprobs(f"no prompt log-probabilities for the choice {continuation!r}")
    return np.asarray(values, dtype=np.float32), usage


def _with_bos(server: Server, text: str) -> str:
    bos = server.endpoint.bos
    return text if not bos or text.startswith(bos) else bos + text


def _echo(server: Server, text: str) -> tuple[list[str], list[int], list, tuple[int, int]]:
    """``text``'s echoed tokens, their offsets and log-probabilities (the generated token dropped), and the prompt
    tokens counted."""
    response = _request(server, server.client.completions.create, prompt=text, echo=True, logprobs=1, max_tokens=1,
                        temperature=0)  # fmt: skip
    choice = response.choices[0]
    found = choice.logprobs
    if found is None or not found.tokens or found.text_offset is None or found.token_logprobs is None:
        raise NoLogprobs("no logprobs in the answer to an echo request")
    tokens, offsets, logprobs = list(found.tokens), list(found.text_offset), list(found.token_logprobs)
    if not len(tokens) == len(offsets) == len(logprobs):
        raise ValueError("tokens, text_offset and token_logprobs of unequal lengths")
    if not all(isinstance(token, str) for token in tokens) or not all(_whole(offset) for offset in offsets):
        raise ValueError("echoed tokens that are not texts, or offsets that are not whole numbers")
    generated = choice.text[len(text) :] if isinstance(choice.text, str) and choice.text.startswith(text) else None
    if generated is None:
        raise Unlike("the echoed text does not start with the prompt sent")
    made = response.usage.completion_tokens if response.usage is not None else 1
    made = made if _whole(made) and 0 < made < len(tokens) else 0
    if generated and made and "".join(tokens[-made:]) == generated:  # the generated token, where it is listed
        del tokens[-made:], offsets[-made:], logprobs[-made:]
    if not tokens:
        raise NoLogprobs("the echo lists no prompt tokens")
    _check_spelled(text, tokens, offsets, server.endpoint.bos)
    for token, value in zip(tokens, logprobs):
        if value is not None and not (_number(value) and value <= LOGPROB_SLACK):
            raise Unlike(f"the log-probability {value!r:.12} of the token {token!r:.20} is not a number at most 0")
    return tokens, offsets, logprobs, _counted(response)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_spelled(text: str, tokens: list[str], offsets: list[int], bos: str) -> None:
    """Refuse echoed tokens that do not spell ``text``, each at its offset (a server that echoed only the last
    token right had each choice scored on that one token). The server's offsets end where ``text`` ends; it may leave
    out the endpoint's ``bos`` (llama-cpp-python) or list a token it added before the text (vLLM's ``<s>``); a token
    split inside a character (byte-level tokenizers) shows as "", with U+FFFD or as ``bytes:``, and the tokens after
    it go on where the character ends."""
    base = offsets[-1] + len(tokens[-1]) - len(text)  # where text starts, in the server's offsets
    if base < 0 and text[:-base] != bos:
        raise Unlike(f"the echoed tokens spell {len(text) + base} of the prompt's {len(text)} characters")
    at, split = max(base, 0), False
    for token, offset in zip(tokens, offsets):
        if not token or "\ufffd" in token or token.startswith("bytes:"):
            split = True
        elif not (at == max(base, 0) and offset + len(token) <= base):  # not a token added before the text
            if (offset != at and not (split and offset > at)) or text[
                offset - base : offset - base + len(token)
            ] != token:
                raise Unlike(
                    f"the echoed tokens do not spell the prompt sent (at character {at - base}: {token!r:.20})"
                )
            at, split = offset + len(token), False


def check_echo(server: Server) -> None:
    """Refuse a server whose echoed prompt log-probabilities are wrong: for each canary, the log-probability echo
    gives its last token must equal the one the server gives that token as the next token of the canary without it
    (``top_logprobs`` of a one-token completion). Catches llama.cpp's llama-server (echo gives the generated token's
    log-probability only) and llama-cpp-python's server on a prompt without a BOS (shifted by one position). Once
    per connection: a server asked again (an adaptive run, one question at a time) is not checked again."""
    if server.echo_checked:
        return
    key = os.environ.get(server.endpoint.key_env) or "none"
    verdicts = []
    try:
        for canary in CANARIES:
            text, last = _with_bos(server, canary), " " + canary.rsplit(" ", 1)[-1]
            response = _request(
                server,
                server.client.completions.create,
                prompt=text[: len(text) - len(last)],
                max_tokens=1,
                logprobs=TOP_LOGPROBS,
                temperature=0,
            )
            # first: a server that reuses the prompt's keys and values then echoes from the same forward
            found = response.choices[0].logprobs
            top = (found.top_logprobs or [None])[0] if found is not None else None
            tokens, _, logprobs, _ = _echo(server, text)
            if not isinstance(top, dict) or last not in top or tokens[-1] != last:
                continue
            if not (_number(top[last]) and top[last] <= LOGPROB_SLACK):
                raise Unlike(f"the next-token log-probability {top[last]!r:.12} of {last!r} is not a number at most 0")
            verdicts.append((canary, last, logprobs[-1], top[last]))
    except NoLogprobs as err:
        raise WorkbenchError(
            f"{server.endpoint.url} ({server.model}) gives no prompt log-probabilities ({err}), which the "
            f"log-likelihood ways need; {GENERATION_WAYS}"
        ) from None
    except Exception as err:
        raise failure(err, server.endpoint, key, "checking its prompt log-probabilities") from None
    wrong = [verdict for verdict in verdicts if verdict[2] is None or abs(verdict[2] - verdict[3]) > TOLERANCE]
    if not verdicts or wrong:
        canary, last, echoed, expected = (wrong or [("", "", None, None)])[0]
        shown = "none" if echoed is None else f"{echoed:.2f}"
        said = (f"for {canary!r} echo gives {shown} for its last token {last!r}, where the same server gives "
                f"{expected:.2f} as that token's next-token log-probability" if wrong else
                "none of the canary prompts could be checked (their last token is not among the next-token "
                f"top {TOP_LOGPROBS})")  # fmt: skip
        hint = (" (llama-cpp-python's server lines its echo up only after a BOS: try --bos with the model's BOS "
                "token, e.g. '<|im_start|>' or '<s>')") if wrong and not server.endpoint.bos else ""  # fmt: skip
        raise WorkbenchError(
            f"the prompt log-probabilities of {server.endpoint.url} ({server.model}) cannot be trusted: {said}{hint}; "
            + GENERATION_WAYS
        )
    server.echo_checked = True


def _request(server: Server, create: Callable, **arguments):
    """One request through the ``openai`` client, its retries included, ended within ``endpoint.timeout``."""
    from workbench.scoring import http

    with http.deadline(server.endpoint.timeout, TIMEOUT_HINT):
        return create(model=server.model, **arguments)


def _counted(response) -> tuple[int, int]:
    """The prompt and completion tokens the server counted (0 where it says nothing, or no whole number)."""
    usage = response.usage
    counts = (usage.prompt_tokens, usage.completion_tokens) if usage is not None else (0, 0)
    return tuple(count if _whole(count) and count >= 0 else 0 for count in counts)


def chat_answer(server: Server, messages: list[dict], max_tokens: int) -> tuple[str, tuple[int, int]]:
    """The model's greedy answer to ``messages`` (``/v1/chat/completions``, the server's chat template)."""
    response = _request(server, server.client.chat.completions.create, messages=messages, max_tokens=max_tokens,
                        temperature=0, stop=["\n"])  # fmt: skip
    return _answer(response.choices[0].message.content, max_tokens), _counted(response)


def text_answer(server: Server, prompt: str, max_tokens: int) -> tuple[str, tuple[int, int]]:
    """The model's greedy continuation of ``prompt`` (``/v1/completions``), up to its first line break."""
    response = _request(server, server.client.completions.create, prompt=_with_bos(server, prompt),
                        max_tokens=max_tokens, temperature=0, stop=["\n"])  # fmt: skip
    return _answer(response.choices[0].text, max_tokens), _counted(response)


TOKEN_CHARS = 64
"""Characters a generated token may spell at most: an answer longer than this per token asked is no answer."""


def _answer(text: object, max_tokens: int) -> str:
    if not isinstance(text, str):
        raise ValueError(f"an answer without text ({text!r:.40})")
    if len(text) > TOKEN_CHARS * max_tokens:
        raise Unlike(f"an answer of {len(text):,} characters to max_tokens={max_tokens}")
    return text


def ask_all(
    server: Server,
    kind: str,
    units: Sequence[tuple[str, ...]],
    ask: Callable[[tuple[str, ...]], tuple[np.ndarray, tuple[int, int]]],
    cache: PredictionCache | None,
    progress: bool,
) -> dict[tuple[str, ...], np.ndarray]:
    """Every unit's answer: cached ones read back, the rest asked ``concurrency`` at a time in text order (units
    sharing a prefix together, for the server's prompt cache), each committed to ``cache`` as it arrives."""
    unique = list(dict.fromkeys(units))
    namespace = _namespace(server, kind)
    keys = {unit: item_key(kind, unit) for unit in unique}
    values: dict[tuple[str, ...], np.ndarray] = {}
    if cache is not None:
        found = cache.get(namespace, keys.values())
        values = {unit: found[key] for unit, key in keys.items() if key in found and is_answer(kind, found[key])}
    missing = sorted(unit for unit in unique if unit not in values)
    traffic = server.sent
    traffic.cached += len(unique) - len(missing)
    if not missing:
        return values
    key = os.environ.get(server.endpoint.key_env) or "none"
    bar = ProgressBar(total=len(missing), unit="request", desc=f"{server.name} {kind}", disable=not progress)
    started = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=server.endpoint.concurrency, thread_name_prefix="served")
    pending: dict[Future, tuple[str, ...]] = {}
    queue, error, answered = iter(missing), None, 0
    try:
        with bar:
            for unit in _take(queue, 2 * server.endpoint.concurrency):
                pending[pool.submit(ask, unit)] = unit
            while pending:  # after an error, no more is asked, and what is in flight is still kept as it arrives
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    unit = pending.pop(future)
                    try:
                        value, tokens = future.result()
                    except Exception as err:
                        error = error or err
                        continue
                    values[unit], answered = value, answered + 1
                    if cache is not None:
                        cache.put(namespace, {keys[unit]: value})
                    with traffic.lock:
                        traffic.requests += 1
                        traffic.prompt_tokens += tokens[0]
                        traffic.completion_tokens += tokens[1]
                    for following in _take(queue, 0 if error else 1):
                        pending[pool.submit(ask, following)] = following
                    bar.update(1)
                    rate = traffic.requests / max(time.monotonic() - started, 1e-9)
                    bar.set_postfix(req_s=f"{rate:.1f}", tokens=traffic.prompt_tokens, errors=traffic.errors,
                                    refresh=False)  # fmt: skip
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
    if error is not None:
        kept = f"{answered:,} of {len(missing):,} answers of this run are kept in the prediction cache: rerun to go on"
        raise failure(error, server.endpoint, key, f"asking {server.model}", kept)
    return values


def _take(queue, count: int) -> list:
    return [unit for _, unit in zip(range(count), queue)]


def logprob_outputs(server: Server, cache: PredictionCache | None, progress: bool):
    """What ``lm.rule_scores`` reads: each (prompt, continuation) unit's token log-probabilities from the server."""

    def ask(unit: tuple[str, ...]) -> tuple[np.ndarray, tuple[int, int]]:
        return echo_logprobs(server, *unit)

    return lambda units: ask_all(server, KINDS["echo"], units, ask, cache, progress)


def answers(
    server: Server, asked: list, max_tokens: int, chat: bool, cache: PredictionCache | None, progress: bool
) -> list[str]:
    """Each question's greedy answer (first line, stripped): ``asked`` holds its chat messages (``chat``) or its
    prompt text; the answer's UTF-8 bytes are what the cache keeps."""
    texts = [json.dumps(item, ensure_ascii=False) if chat else item for item in asked]
    units = [(text, str(max_tokens)) for text in texts]

    def ask(unit: tuple[str, ...]) -> tuple[np.ndarray, tuple[int, int]]:
        text, tokens = (chat_answer(server, json.loads(unit[0]), max_tokens) if chat
                        else text_answer(server, unit[0], max_tokens))  # fmt: skip
        return np.frombuffer(text.encode(), dtype=np.uint8).astype(np.float32), tokens

    values = ask_all(server, KINDS["chat" if chat else "text"], units, ask, cache, progress)
    decoded = {unit: values[unit].astype(np.uint8).tobytes().decode(errors="replace") for unit in set(units)}
    return [decoded[unit].split("\n", 1)[0].strip() for unit in units]


def report(server: Server, progress: bool) -> None:
    """The run's end: what it sent (stderr, when progress is shown)."""
    if progress:
        print(server.sent.line(server), file=sys.stderr)
