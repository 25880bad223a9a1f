"""The Voilà server that ``workbench serve`` runs: Voilà with a Host allowlist, a kernel cap and a token from the env.

Run as ``python -m workbench.cli.voila_server NOTEBOOK [voila options]``. Beside Voilà's own options it reads
``--WorkbenchVoila.allowed_hosts=[...]``, ``--CappedKernelManager.max_kernels=N`` and jupyter_server's
``--MappingKernelManager.cull_*`` settings, and the token from ``$WORKBENCH_SERVE_TOKEN`` (never on a command
line, where other users of the machine could read it; removed from the environment the kernels inherit).
"""

# ruff: noqa: E402 (the imports below come after the one call that must precede them)
from workbench.startup import skip_iri_grammar

skip_iri_grammar()  # jupyter_server's event schemas import jsonschema: the server starts 0.9 s of CPU sooner

import asyncio
import html
import logging
import os
import re
import sys
import tempfile
import time

import psutil
import tornado.web
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from jupyter_server.utils import url_path_join
from traitlets import Float, Integer, List, Unicode
from voila.app import Voila
from voila.static_file_handler import TemplateStaticFileHandler
from voila.tornado.handler import TornadoVoilaHandler

TOKEN_ENV = "WORKBENCH_SERVE_TOKEN"
RETRY_AFTER_S = 120
SECRET_PARAMETERS = ("token", "annotator", "xsrf", "auth", "key", "secret", "password")
"""What the name of a query parameter that carries a secret holds: the lab's token, a person's annotation link
(``annotator``), the XSRF value, and the usual others (``access_token``, ``api_key``)."""
_SECRET = re.compile(
    r"(?i)(?<![\w.-])([\w.-]*(?:"
    + "|".join(SECRET_PARAMETERS)
    + r")[\w.-]*)(=|%3D|%253D)(?:(?!%26|%2526)[^&\s\"'#<>])+"
)
HIDDEN = "[hidden]"


def masked(text: str) -> str:
    """``text`` with the value of every secret query parameter (``SECRET_PARAMETERS``, also percent-encoded inside
    a ``next=`` address) replaced by ``HIDDEN``."""
    return _SECRET.sub(lambda found: f"{found[1]}{found[2]}{HIDDEN}", text)


def mask_logs() -> None:
    """Mask secrets in every log record this process makes, whichever logger and handler writes it (issue 60:
    tornado's access log wrote the full URL of 403, 404 and 503 answers, the lab's token and a person's
    annotation link in it, as when a person opens their link while the app is full). The record factory is the
    one place every record passes through; a handler or a logger added later is covered too."""
    make = logging.getLogRecordFactory()

    def record(*args, **kwargs) -> logging.LogRecord:
        made = make(*args, **kwargs)
        try:
            message = made.getMessage()
        except Exception:  # noqa: BLE001 (a malformed record: logging reports it where it is written)
            return made
        if (clean := masked(message)) != message:
            made.msg, made.args = clean, None
        return made

    logging.setLogRecordFactory(record)


def page(title: str, text_html: str) -> str:
    """A small self-contained HTML page (no script, no asset) telling a visitor why the app is not there."""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>" + html.escape(title) + "</title>"
        "<style>body{font-family:sans-serif;max-width:40em;margin:4em auto;line-height:1.5;color:#222}</style>"
        "</head><body><h1>" + html.escape(title) + "</h1><p>" + text_html + "</p></body></html>"
    )


def host_pattern(hosts: list[str]) -> str:
    """The regular expression tornado matches a request's host name (``Host:`` without the port) against."""
    return "^(" + "|".join(re.escape(host.lower()) for host in hosts) + ")$"


def busy_share(before, after) -> float:
    """The share of the CPUs' time that was busy between two ``psutil.cpu_times()``, as ``psutil.cpu_percent`` reckons
    it (each counter's change at least 0: counters can go back; guest time is already in user time), on samples of our
    own: ``cpu_percent`` keeps one sample per thread, which refills waiting at once on the server's thread would each
    reset for the others. A counter going back made a busy machine read as below 0, quiet (tests/test_serve.py)."""
    change = {name: max(0.0, getattr(after, name) - getattr(before, name)) for name in after._fields}
    total = sum(change.values()) - change.get("guest", 0.0) - change.get("guest_nice", 0.0)
    idle = change["idle"] + change.get("iowait", 0.0)
    return 1.0 - idle / total if total > 0 else 1.0


class CappedKernelManager(AsyncMappingKernelManager):
    """jupyter_server's kernel manager that refuses a visitor a kernel once ``max_kernels`` visitors hold one, and
    whose culler spares a kernel no page has connected to while pages are still being asked for, and a kernel whose
    page connected less than ``render_grace`` seconds ago.

    Kernels waiting in Voilà's preheated pool are not visitors' and do not count: the pool keeps its size. A
    kernel is handed to a visitor with the page, and the page's websocket connects only once its scripts ran: on
    a busy machine that can take longer than the cull timeout, and culling then would break the page; once
    connected, the page still fetches and draws its widgets, which on a busy machine can outlast a short timeout too.
    """

    max_kernels = Integer(8, config=True, help="The most kernels visitors may hold at once (the pool aside).")
    page_grace = Integer(120, config=True, help="Seconds after a page request that unconnected kernels are spared.")
    render_grace = Integer(30, config=True, help="Seconds after its page connected that a kernel is spared.")
    refill_delay = Float(5, config=True, help="Seconds a kernel started in place of one a visitor took waits first.")
    refill_busy = Float(0.5, config=True, help="Then it waits until the CPUs are less busy than this (over 1 s)...")
    refill_wait = Float(30, config=True, help="...for at most this many seconds, or until a visitor waits on it.")

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.pending: set[str] = set()  # kernels asked for and not yet started, by id
        self.connected: dict[str, float] = {}  # kernels a page has connected to, and when it first did
        self.last_page = time.monotonic()  # when a visitor last asked for a page
        self.visited = False  # whether a visitor has asked for a page: later pool kernels are refills

    def visitor_kernels(self) -> int:
        """Live kernels (listed or starting, each once) minus those waiting in the preheated pool. A starting kernel
        is listed before its start returns: counted by number, it counted twice for a moment, and a visitor was told
        "the app is full" below the cap (bench/README.md)."""
        notebook = os.path.relpath(self.parent.notebook_path, self.parent.root_dir)
        live = set(self.list_kernel_ids()) | self.pending
        return len(live) - self.get_pool_size(notebook)  # get_pool_size: Voilà's subclass

    def full(self) -> bool:
        return self.visitor_kernels() >= self.max_kernels

    async def start_kernel(self, *args, **kwargs) -> str:
        preheat = (kwargs.get("env") or {}).get("VOILA_PREHEAT")  # "True": the pool's kernel, "False": a visitor's
        if preheat == "False" and self.full():
            raise tornado.web.HTTPError(503, "all %d kernels are taken", self.max_kernels)
        kernel_id = kwargs["kernel_id"] = kwargs.get("kernel_id") or self.new_kernel_id()
        self.pending.add(kernel_id)  # counted from now on: a refill waiting below is not a free place
        try:
            if preheat == "True" and self.visited:
                await self.until_quiet()
            return await super().start_kernel(*args, **kwargs)
        finally:
            self.pending.discard(kernel_id)

    async def until_quiet(self) -> None:
        """Hold a refill of the pool (a kernel started in place of one a visitor took: 3-5 s of CPU for its start and
        the app) ``refill_delay`` seconds, then until the machine's CPUs are less busy than ``refill_busy`` over a
        second, at most ``refill_wait`` seconds, or until a visitor waits on it (it left the pool). Visitors arriving
        at once drew their pages while their kernels' refills competed for the cores: the dashboard's first page
        took 9.5 s for each of three visitors on 2 cores (bench/README.md, serve-first-page)."""
        me = asyncio.current_task()  # the pool's entry: Voilà awaits the start within it
        await asyncio.sleep(self.refill_delay)
        deadline, before = time.monotonic() + self.refill_wait, psutil.cpu_times()
        while time.monotonic() < deadline and any(me in pool for pool in self._pools.values()):
            await asyncio.sleep(1)
            after = psutil.cpu_times()
            if busy_share(before, after) < self.refill_busy:
                return
            before = after

    def notify_connect(self, kernel_id: str) -> None:
        self.connected.setdefault(kernel_id, time.monotonic())
        super().notify_connect(kernel_id)

    async def cull_kernel_if_idle(self, kernel_id: str) -> None:
        now, connected = time.monotonic(), self.connected.get(kernel_id)
        if connected is None and now - self.last_page < self.page_grace:
            return  # perhaps a page still loading
        if connected is not None and now - connected < self.render_grace:
            return  # its page may still be drawing its widgets
        await super().cull_kernel_if_idle(kernel_id)

    async def shutdown_kernel(self, kernel_id: str, *args, **kwargs) -> None:
        self.connected.pop(kernel_id, None)
        await super().shutdown_kernel(kernel_id, *args, **kwargs)


class CappedVoilaHandler(TornadoVoilaHandler):
    """Voilà's page handler that answers "the app is full" (HTTP 503) instead of starting a kernel over the cap."""

    @tornado.web.authenticated
    async def get(self, path=None) -> None:
        self.kernel_manager.last_page, self.kernel_manager.visited = time.monotonic(), True
        self.xsrf_token  # noqa: B018 (sets the _xsrf cookie: the page's shutdown beacon sends it back; without it the
        # beacon was refused with a 403 and a closed tab kept its kernel until the culler, 10 minutes by default)
        if self.kernel_manager.full():  # checked and the pooled kernel taken with no await between: no race
            raise tornado.web.HTTPError(503, "all %d kernels are taken", self.kernel_manager.max_kernels)
        try:
            await super().get(path)
        finally:
            self.kernel_manager.last_page = time.monotonic()  # the page's scripts start now

    def write_error(self, status_code: int, **kwargs) -> None:
        if status_code != 503:
            return super().write_error(status_code, **kwargs)
        self.set_header("Retry-After", str(RETRY_AFTER_S))
        self.set_header("Content-Type", "text/html")
        self.finish(
            page(
                "The app is full",
                f"This app serves {self.kernel_manager.max_kernels} visitor(s) at once, and all places are taken. "
                "Try again in a few minutes: a place frees up when a visitor closes the page or leaves it idle.",
            )
        )


class ForeignHostHandler(tornado.web.RequestHandler):
    """Every request whose ``Host:`` is not in the allowlist (a DNS-rebinding page, a wrong name): 403."""

    def prepare(self) -> None:
        self.set_status(403)
        self.finish(
            page(
                "Unknown host name",
                f"This server does not answer to the name <code>{html.escape(self.request.host_name)}</code>. "
                "Whoever runs it can add the name with <code>workbench serve --allow-host NAME</code>.",
            )
        )


class TemplateFileHandler(TemplateStaticFileHandler):
    """Voilà's template files, where a path without ``TEMPLATE/static/FILE`` (``/voila/templates/.../../``) is a
    quiet 404 instead of a 500 with a traceback in the log."""

    def parse_url_path(self, url_path: str) -> str:
        parts = url_path.split("/")
        if len(parts) < 3 or parts[1] != "static":  # Voilà asserts this shape (an AssertionError: a 500)
            raise tornado.web.HTTPError(404)
        try:
            return super().parse_url_path(url_path)
        except ValueError:
            raise tornado.web.HTTPError(404) from None


class NoLogoutHandler(tornado.web.RequestHandler):
    """``/logout``: jupyter_server's page needs assets this server does not have (a 500); there is no session to end
    (the token is in the URL or a cookie), so the answer is a quiet 404."""

    def prepare(self) -> None:
        self.set_status(404)
        self.finish(page("Not found", "There is nothing to log out of: close the page."))


class ChartModuleHandler(tornado.web.StaticFileHandler):
    """The charts' Vega bundle (``workbench.charts.offline``): its name holds the versions it was made from, so a
    browser may keep it as long as it likes."""

    def set_extra_headers(self, path: str) -> None:
        self.set_header("Cache-Control", "public, max-age=31536000, immutable")


class WorkbenchVoila(Voila):
    """Voilà whose routes answer only the allowlisted host names, with the kernel cap and the token from the env;
    it serves the charts' Vega bundle once for all the charts of a page (``workbench.charts.offline``)."""

    name = "workbench-voila"
    allowed_hosts = List(Unicode(), ["localhost", "127.0.0.1", "[::1]"], config=True, help="Host names served.")
    classes = [*Voila.classes, CappedKernelManager]

    def initialize(self, argv=None) -> None:
        from workbench.charts.offline import MODULE_ENV, chart_bundle

        self.chart_bundle = chart_bundle()  # before the kernels start: they inherit MODULE_ENV
        os.environ.pop(MODULE_ENV, None)
        super().initialize(argv)
        if self.chart_bundle is not None:  # a read-only workspace: each chart carries the bundle, as in a notebook
            os.environ[MODULE_ENV] = f"workbench/charts/{self.chart_bundle.name}"
        self.token = os.environ.pop(TOKEN_ENV, None) or None  # None: no token (served on loopback only)
        self.voila_configuration.multi_kernel_manager_class = CappedKernelManager

    def init_handlers(self) -> list:
        replaced = {TornadoVoilaHandler: CappedVoilaHandler, TemplateStaticFileHandler: TemplateFileHandler}
        rules = [(rule[0], replaced.get(rule[1], rule[1]), *rule[2:]) for rule in super().init_handlers()]
        if self.chart_bundle is not None:
            module = url_path_join(self.base_url, "workbench", "charts", f"({re.escape(self.chart_bundle.name)})")
            rules.insert(0, (module, ChartModuleHandler, {"path": str(self.chart_bundle.parent)}))
        return [(r"/logout", NoLogoutHandler), *rules]

    def start(self) -> None:
        """Voilà's ``start`` with the handlers under tornado's host routing: another ``Host:`` gets a 403 page."""
        self.connection_dir = tempfile.mkdtemp(prefix="voila_", dir=self.connection_dir_root)
        settings = {**self.init_settings(), "default_handler_class": ForeignHostHandler}
        self.app = tornado.web.Application(**settings)
        self.app.settings.update(self.tornado_settings)
        self.app.add_handlers(host_pattern(self.allowed_hosts), self.init_handlers())
        self.listen()


if __name__ == "__main__":
    mask_logs()
    sys.exit(WorkbenchVoila.launch_instance())
