"""The teaching notebooks as a course: executed on the offline data, rendered with their outputs, a static site.

``build_course(out)`` runs every notebook of ``notebooks/`` top to bottom in a fresh kernel at the sizes a student
runs (its ``parameters`` cell; ``sizes="test"`` injects the suite's smaller ``workbench.test_parameters``), keeps each
executed notebook in a cache keyed by its code, its parameters and the library, so a rebuild re-executes only what
changed, and renders the pages with nbconvert: every output, the altair charts live (Vega vendored as in
``workbench publish``), a table of contents, when, where and in how long each page was executed, how to run it
yourself and the docs of each workbench function it calls. The folder opens from ``file://``; nothing is loaded from
the internet. ``tests/test_notebooks.py`` executes through the same ``execute`` and cache.

    >>> build_course("course")  # doctest: +SKIP
    PosixPath('course/index.html')
"""

import ast
import hashlib
import html
import importlib
import importlib.metadata
import inspect
import json
import os
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib.resources import files
from pathlib import Path

import nbformat
import polars as pl
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode

from workbench import markup
from workbench.errors import WorkbenchError
from workbench.io import MARKER, exclusive, mark_folder, marked_files, staged_folder, write_text
from workbench.paths import cache_dir
from workbench.reports import script_json

SIZES = ("student", "test")
"""``student``: the values of each notebook's ``parameters`` cell; ``test``: its ``workbench.test_parameters``."""
CELL_TIMEOUT_S = 3600
"""How long one cell may run: notebook 10's sweep cell takes over 10 minutes at student sizes on two cores."""
INJECTED_TAG = "injected-parameters"
MANIFEST = "course.json"
"""The file that marks a folder as a built course (so that building again may replace it whole)."""
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LIVE_NOTE = (
    "This panel is live in a kernel; here is what it showed when the course was built. To use it, run the notebook "
    "in JupyterLab (<code>jupyter lab {path}</code>) or open the Voilà apps (<code>workbench serve explorer</code>, "
    "<code>workbench serve dashboard</code>, <code>workbench serve inoculation</code>)."
)
CACHE_KIND = "course-cache"
"""The ``io.FOLDER_KINDS`` kind of a folder of executed notebooks (``execute``'s ``cache``)."""
RESULTS = "results"
"""The folder of a course's results site (``workbench publish``), when predictions are published beside it."""
KERNEL_SETUP = (
    "__import__('workbench.startup').startup.skip_iri_grammar(); "
    "import altair as alt; alt.renderers.register('workbench-course', lambda spec, **_: "
    "{f'application/vnd.vegalite.{alt.SCHEMA_VERSION.split(\".\")[0]}+json': spec, 'text/plain': '<altair chart>'}); "
    "alt.renderers.enable('workbench-course')"
)
"""Run in each kernel before the notebook: a chart shown with altair's default renderer (HTML that loads Vega from a
CDN) is kept as its Vega-Lite spec instead, drawn offline on the page (altair's own ``mimetype`` renderer names it
``application/vnd.vegalite.v6.json``, which nbformat refuses); notebooks that enable the widget renderer
(``alt.renderers.enable("jupyter")``) override it, as in JupyterLab. First it keeps jsonschema's IRI grammar out of
the kernel (``workbench.startup``): the kernel is the course's, not a person's, and the grammar was 0.9 of the CPU
seconds each kernel spent before its first cell."""
LIBRARIES = ("workbench", "widgets")
"""The packages whose source is part of a notebook's cache key, and whose functions a page links to."""


@dataclass(frozen=True)
class Executed:
    """One notebook run top to bottom: the notebook with its outputs, where it lies, and how it was run."""

    path: Path
    notebook: NotebookNode
    sizes: str
    cached: bool

    @property
    def record(self) -> dict:
        """When, on what machine, in how long and with which parameters the notebook was executed."""
        return self.notebook.metadata["workbench"]["executed"]


def notebook_dir() -> Path:
    """The teaching notebooks of this checkout (``notebooks/`` beside the package)."""
    return Path(__file__).resolve().parents[1] / "notebooks"


def course_notebooks(folder: str | Path | None = None) -> list[Path]:
    """The notebooks of ``folder`` (default ``notebook_dir()``) in teaching order: by name, ``01_...`` first."""
    folder = Path(folder) if folder is not None else notebook_dir()
    found = sorted(folder.glob("*.ipynb"))
    if not found:
        raise WorkbenchError(f"no notebooks (*.ipynb) in {folder}; give the folder of the teaching notebooks")
    return found


def test_parameters(nb: NotebookNode) -> dict:
    """The smaller values the test suite runs ``nb`` at (its metadata ``workbench.test_parameters``)."""
    return dict(nb.metadata.get("workbench", {}).get("test_parameters", {}))


def with_parameters(nb: NotebookNode, values: dict) -> NotebookNode:
    """``nb`` with a cell setting ``values`` right after its ``parameters`` cell (papermill's convention)."""
    if not values:
        return nb
    tagged = [i for i, cell in enumerate(nb.cells) if "parameters" in cell.get("metadata", {}).get("tags", [])]
    if len(tagged) != 1:
        raise WorkbenchError(f"the notebook sets parameters {sorted(values)} but has {len(tagged)} cells tagged "
                             "'parameters' (it needs one)")  # fmt: skip
    source = "# injected by workbench.course: small sizes for the test suite\n"
    source += "".join(f"{name} = {value!r}\n" for name, value in values.items())
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": [INJECTED_TAG]})
    cell["id"] = INJECTED_TAG
    nb.cells.insert(tagged[0] + 1, cell)
    return nb


def cache_key(nb: NotebookNode) -> str:
    """What a notebook's outputs depend on: its code cells (parameters injected), the kernel's Python, the source of
    the workbench and widgets packages (but the course's own and the CLI's) and the versions of every installed
    distribution. Prose is not in it: a page whose text changed is rendered again without running it; nor are the
    comments and layout of the code (``code_identity``). The data (WordNet, GCIDE, ``SHARED_DATA``) is not either:
    after changing it, build into a fresh ``cache``."""
    code = [code_identity(cell.source) for cell in nb.cells if cell.cell_type == "code"]
    blob = json.dumps([code, sys.version, KERNEL_SETUP, _library_digest()])
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def code_identity(source: str) -> str:
    """What a code cell runs: its syntax tree, so an edited comment, blank line or line break runs nothing again.
    Lines of IPython magics and shell escapes (``%``, ``!``) count as written; a cell Python cannot parse, whole."""
    magics = [line.strip() for line in source.splitlines() if _magic(line)]
    try:
        return json.dumps([magics, ast.dump(ast.parse(_python(source)))])
    except SyntaxError:
        return source


def _magic(line: str) -> bool:
    return line.lstrip().startswith(("%", "!"))


def _python(source: str) -> str:
    """A code cell without its lines of IPython magics and shell escapes."""
    return "\n".join(line for line in source.splitlines() if not _magic(line))


@cache
def _library_digest() -> str:
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for package in LIBRARIES:
        for path in sorted((root / package).rglob("*.py")):
            if path.name == "course.py" or "cli" in path.relative_to(root).parts:  # how pages are made, not outputs
                continue
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    versions = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    digest.update("\n".join(versions).encode())
    return digest.hexdigest()


def execute(
    path: str | Path, sizes: str = "student", cache: str | Path | None = None, timeout: int = CELL_TIMEOUT_S
) -> Executed:
    """Run the notebook ``path`` top to bottom in a fresh kernel in its folder, or take it from ``cache``.

    ``cache`` (default: the workspace's ``course/``) keeps each executed notebook under its ``cache_key``; a second
    process asking for the same one waits for the first and reads it. A failing cell raises ``WorkbenchError``
    naming the notebook and the cell.
    """
    if sizes not in SIZES:
        raise WorkbenchError(f"sizes={sizes!r}: choose one of {list(SIZES)}")
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    nb = with_parameters(nb, test_parameters(nb) if sizes == "test" else {})
    folder = Path(cache) if cache is not None else cache_dir("course")
    kept = folder / f"{path.stem}.{sizes}.{cache_key(nb)}.ipynb"
    with exclusive(kept, wait=True):
        if kept.is_file():
            return Executed(path, _with_prose(nb, nbformat.read(kept, as_version=4)), sizes, cached=True)
        ran = _run(nb, path, sizes, timeout)
        _keep(folder, kept, f"{path.stem}.{sizes}.")
        write_text(nbformat.writes(ran), kept)
    return Executed(path, ran, sizes, cached=False)


def check_cache(cache: str | Path, out: str | Path) -> Path:
    """``cache`` if the course may keep executed notebooks there: a new or empty folder, or one whose marker lists
    every file in it (``io.mark_folder``), apart from the course's folder ``out``; a folder holding anything else (a
    user's notebooks) is refused in one line, before any work, since the cache deletes the runs it replaces."""
    from workbench.io import check_output

    cache, real, built = Path(cache), Path(os.path.realpath(cache)), Path(os.path.realpath(out))
    if real == built or built in real.parents or real in built.parents:
        raise WorkbenchError(f"the cache {cache} and the course's folder {out} overlap (building replaces the course "
                             "whole, and the cache keeps only its own files); give them separate folders")  # fmt: skip
    return check_output(cache, kind=CACHE_KIND)


def _keep(folder: Path, kept: Path, prefix: str) -> None:
    """List ``kept`` in the cache's marker and delete the earlier runs of the same notebook and sizes, but only those
    the marker lists: a file the cache did not write is never deleted by its name (issue 60: a user's
    ``01_quickstart.test.mine.ipynb`` was)."""
    folder.mkdir(parents=True, exist_ok=True)
    with exclusive(folder / MARKER, wait=True):  # one read-modify-write of the list at a time
        listed = marked_files(folder, CACHE_KIND) or []
        old = [
            name
            for name in listed  # a run is a file of the folder itself: a hand-edited list reaches no further
            if name.startswith(prefix) and name.endswith(".ipynb") and "/" not in name and name != kept.name
        ]
        mark_folder(folder, CACHE_KIND, [*(name for name in listed if name not in old), kept.name])
        for name in old:  # one kept run per notebook and sizes
            (folder / name).unlink(missing_ok=True)
            (folder / f".{name}.lock").unlink(missing_ok=True)


def _run(nb: NotebookNode, path: Path, sizes: str, timeout: int) -> NotebookNode:
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    running: list[int] = []  # the cells started, in order: the last is the one that failed or ran too long
    client = NotebookClient(
        nb,
        kernel_name="python3",  # jupyter_client starts a 'python3' kernel with sys.executable: this interpreter
        timeout=timeout,
        allow_errors=False,
        store_widget_state=True,  # the charts' specs and the panels' state, for the rendered page
        extra_arguments=[f"--IPKernelApp.exec_lines={KERNEL_SETUP}"],
        resources={"metadata": {"path": str(path.parent)}},
        on_cell_execute=lambda cell, cell_index: running.append(cell_index),
    )
    started, clock = datetime.now(UTC), time.perf_counter()
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError) as err:
        where = f"cell {running[-1]} ({_first_line(nb.cells[running[-1]].source)!r})"
        if isinstance(err, CellExecutionError):
            raise WorkbenchError(f"{path.name}: {where} failed: {err.ename}: {err.evalue}") from err
        raise WorkbenchError(f"{path.name}: {where} ran past the {timeout} s limit of a cell; build again with a "
                             "longer --cell-timeout (work the workbench resumes, scores, sweeps and inoculation "
                             "runs, is kept)") from err  # fmt: skip
    nb.metadata.setdefault("workbench", {})["executed"] = {
        "at": started.strftime("%Y-%m-%d %H:%M:%S UTC"),
        "seconds": round(time.perf_counter() - clock, 1),
        "machine": _machine(),
        "sizes": sizes,
        "parameters": test_parameters(nb) if sizes == "test" else {},
    }
    return nb


def _first_line(source: str) -> str:
    return next((line for line in source.splitlines() if line.strip() and not line.startswith("#")), "")[:80]


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        lines = cpuinfo.read_text().splitlines()
        names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
        cpu = names[0] if names else cpu
    return f"{platform.node()} ({cpu}, {os.cpu_count()} cores; {platform.system()}, Python {platform.python_version()})"


def _with_prose(nb: NotebookNode, ran: NotebookNode) -> NotebookNode:
    """The current notebook ``nb`` with the outputs of the run ``ran`` of the same code (the prose may be newer)."""
    code = [cell for cell in ran.cells if cell.cell_type == "code"]
    for cell, done in zip([cell for cell in nb.cells if cell.cell_type == "code"], code, strict=True):
        cell.outputs, cell.execution_count = done.outputs, done.execution_count
    nb.metadata = ran.metadata
    return nb


def functions_called(nb: NotebookNode) -> list[str]:
    """The workbench and widgets functions and classes the notebook's code calls, as dotted names, in order."""
    names: dict[str, str] = {}  # local name -> dotted name
    called: list[str] = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(_python(cell.source))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {(a.asname or a.name): a.name for a in node.names if a.name.split(".")[0] in LIBRARIES}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in LIBRARIES:
                names |= {(a.asname or a.name): f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Call) and (dotted := _dotted(node.func, names)) and dotted not in called:
                called.append(dotted)
    return [name for name in called if _documented(name) is not None]


def _dotted(func: ast.expr, names: dict[str, str]) -> str | None:
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in names:
        return None
    return ".".join([names[func.id], *reversed(parts)])


@cache
def _documented(dotted: str) -> object | None:
    """The function or class ``dotted`` names (``workbench.metrics.drilldown``), or None if it is neither."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                obj = getattr(obj, part)
        except AttributeError:
            return None
        return obj if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismethod(obj) else None
    return None


def build_course(
    out: str | Path,
    sizes: str = "student",
    notebooks: Sequence[str | Path] | None = None,
    cache: str | Path | None = None,
    *,
    results: pl.DataFrame | None = None,
    probes: pl.DataFrame | None = None,
    results_link: str | None = None,
    title: str = "Probe Workbench: the course",
    cell_timeout: int = CELL_TIMEOUT_S,
) -> Path:
    """Execute (or take from ``cache``) every notebook and write the course into the folder ``out``, replacing it.

    Parameters
    ----------
    out : str or Path
        The site's folder: new, empty, or a course built before (anything else is refused, not deleted).
    sizes : str
        ``student`` (each notebook's ``parameters`` cell) or ``test`` (the suite's smaller values).
    notebooks : sequence of paths, optional
        The notebooks, in teaching order (default: ``course_notebooks()``).
    cache : str or Path, optional
        Where executed notebooks are kept (default: the workspace's ``course/``).
    results : polars.DataFrame, optional
        Predictions to publish beside the course (``workbench publish``'s site in ``out/results/``, linked both
        ways), with their ``probes`` set: a lab sends one link.
    results_link : str, optional
        Or a results site published elsewhere, linked from the course's first page (a URL or a relative path).
    cell_timeout : int
        Seconds one cell may run; a cell running longer stops the build, naming it.

    Returns
    -------
    Path
        ``out/index.html``.
    """
    out = Path(out)
    _check_replaceable(out)
    if cache is not None:
        check_cache(cache, out)
    if results_link is not None:
        results_link = markup.link(results_link, "--results-link")
    paths = [Path(p) for p in notebooks] if notebooks is not None else course_notebooks()
    runs = [execute(path, sizes, cache, cell_timeout) for path in paths]
    pages = [f"{run.path.stem}.html" for run in runs]
    called = {run.path.stem: functions_called(run.notebook) for run in runs}
    if results is not None and results_link is not None:
        raise WorkbenchError("give predictions to publish beside the course or a link to a results site, not both")
    link = RESULTS + "/index.html" if results is not None else results_link
    with exclusive(out), staged_folder(out) as staging:
        if results is not None:
            from workbench.site import Section, publish

            back_html = f"<p>How these results are made, step by step: {markup.anchor('../index.html', title)}.</p>"
            back = Section("course", "The course", back_html)
            publish(results, staging / RESULTS, probes, sections=[back])
        (staging / "assets").mkdir()
        (staging / "assets" / "vega.js").write_text(_vega_bundle(), encoding="utf-8")
        for name in ("course.js", "course.css"):
            (staging / "assets" / name).write_text(_asset(name), encoding="utf-8")
        for i, run in enumerate(runs):
            neighbours = (pages[i - 1] if i else None, pages[i + 1] if i + 1 < len(pages) else None)
            page = render_page(run, called[run.path.stem], neighbours, title)
            (staging / pages[i]).write_text(page, encoding="utf-8")
        (staging / "api.html").write_text(_api_page(called, title), encoding="utf-8")
        (staging / "index.html").write_text(_index_page(runs, pages, title, link), encoding="utf-8")
        manifest = {
            "generator": "workbench course",
            "title": title,
            "sizes": sizes,
            "notebooks": {run.path.name: {**run.record, "from_cache": run.cached} for run in runs},
            "results": link,
        }
        manifest["files"] = sorted(str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file())
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return out / "index.html"


def render_page(run: Executed, called: Sequence[str], neighbours: tuple, title: str) -> str:
    """One notebook as an HTML page (nbconvert's ``lab`` look, no CDN): its cells and outputs, the charts live,
    a header saying how it was executed and how to run it yourself, and links to the functions it calls."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="course", extra_template_basedirs=[str(_assets() / "templates")])
    exporter.register_preprocessor(WidgetSnapshots(live_path=_shown_path(run.path)), enabled=True)
    resources = {"course": {"header": _page_header(run, called, neighbours, title)}}
    body, _ = exporter.from_notebook_node(run.notebook, resources=resources)
    return body


def _shown_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _page_header(run: Executed, called: Sequence[str], neighbours: tuple, title: str) -> str:
    record, path = run.record, _shown_path(run.path)
    before, after = neighbours
    nav_html = [markup.anchor("index.html", title)]
    nav_html += [f'<a href="{markup.attr(markup.local(before))}">← previous</a>'] if before else []
    nav_html += [f'<a href="{markup.attr(markup.local(after))}">next →</a>'] if after else []
    params = _parameters(run.notebook)
    rows_html = "".join(
        f"<tr><td><code>{html.escape(name)}</code></td><td><code>{html.escape(value)}</code></td>"
        f"<td>{html.escape(note)}</td></tr>"
        for name, value, note in params
    )
    papermill = " ".join(f"-p {name} VALUE" for name, *_ in params[:2])
    sizes = "the suite's test sizes (workbench.test_parameters)" if record["sizes"] == "test" else "student sizes"
    reused = "; cached runs are reused until the code changes" if run.cached else ""
    links_html = " · ".join(
        f'<a href="api.html#{markup.attr(name)}"><code>{html.escape(_short(name))}</code></a>' for name in called
    )
    return f"""<nav class="wb-course-nav">{" · ".join(nav_html)}</nav>
<aside class="wb-course-about">
<p class="wb-course-executed">Executed {html.escape(record["at"])} on {html.escape(record["machine"])} in
{record["seconds"]:,} s, at {html.escape(sizes)}{html.escape(reused)}.</p>
<details><summary>Run it yourself</summary>
<pre>jupyter lab {html.escape(path)}                  # step through it
jupyter nbconvert --to notebook --execute {html.escape(path)} --output run.ipynb
papermill {html.escape(path)} run.ipynb {html.escape(papermill)}   # other sizes (pip install papermill)
workbench course build --only {html.escape(run.path.stem)} --out page/   # this page alone</pre>
<p>Its parameters (the first code cell, tagged <code>parameters</code>):</p>
<table class="wb-course-params"><thead><tr><th>name</th><th>value</th><th></th></tr></thead>
<tbody>{rows_html}</tbody></table>
</details>
{f'<p class="wb-course-calls">Functions it calls: {links_html}</p>' if links_html else ""}
</aside>"""


def _parameters(nb: NotebookNode) -> list[tuple[str, str, str]]:
    """(name, value as run, comment) of the notebook's ``parameters`` cell, with injected values in place."""
    cells = [cell.source for cell in nb.cells if "parameters" in cell.get("metadata", {}).get("tags", [])]
    injected = next((cell.source for cell in nb.cells if cell.get("id") == INJECTED_TAG), "")
    override = {n.targets[0].id: ast.unparse(n.value) for n in ast.parse(injected).body if _simple(n)}
    found = []
    for source in cells[:1]:
        lines = source.splitlines()
        for node in ast.parse(source).body:
            if _simple(node):
                name = node.targets[0].id
                line = lines[node.end_lineno - 1]
                note = line.split("#", 1)[1].strip() if "#" in line[node.end_col_offset :] else ""
                found.append((name, override.get(name, ast.unparse(node.value)), note))
    return found


def _simple(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)


def _short(dotted: str) -> str:
    return dotted.rsplit(".", 1)[-1]


def _index_page(runs: Sequence[Executed], pages: Sequence[str], title: str, results: str | None) -> str:
    items_html = []
    for run, page in zip(runs, pages, strict=True):
        heading, intro = _title_and_intro(run.notebook, run.path.stem)
        record = run.record
        items_html.append(
            f"<li>{markup.anchor(markup.local(page), heading)} "
            f'<span class="wb-course-file">{markup.text(run.path.name)}</span>'
            f'<p>{html.escape(intro)}</p><p class="wb-course-executed">executed {html.escape(record["at"])}, '
            f"{record['seconds']:,} s</p></li>"
        )
    machines = sorted({run.record["machine"] for run in runs})
    total = sum(run.record["seconds"] for run in runs)
    link_html = (
        f'<p class="wb-course-results">Results of this lab\'s models: '
        f"{markup.anchor(results, 'the published results site', '--results-link')}.</p>"
        if results is not None
        else ""
    )
    return _PAGE.format(
        title=html.escape(title),
        body=f"<h1>{html.escape(title)}</h1>\n{link_html}"
        f"<p>The teaching notebooks, executed top to bottom on the offline data (WordNet, GCIDE, all-MiniLM-L6-v2) "
        f"and shown with their outputs; the charts are live (hover, click). Step through them in order. Executed on "
        f'{html.escape("; ".join(machines))}, {total:,.0f} s in all. <a href="api.html">The functions they call'
        f'</a>.</p>\n<ol class="wb-course-toc">{"".join(items_html)}</ol>',
    )


def _title_and_intro(nb: NotebookNode, fallback: str) -> tuple[str, str]:
    text = next((cell.source for cell in nb.cells if cell.cell_type == "markdown"), "")
    lines = [line.strip() for line in text.splitlines()]
    heading = next((line.lstrip("#").strip() for line in lines if line.startswith("#")), fallback)
    intro = next((line for line in lines if line and not line.startswith("#")), "")
    return heading, intro[:300] + ("…" if len(intro) > 300 else "")


def _api_page(called: dict[str, list[str]], title: str) -> str:
    """Every function the notebooks call: signature, docstring, source file, and the pages that call it."""
    users: dict[str, list[str]] = {}
    for stem, names in called.items():
        for name in names:
            users.setdefault(name, []).append(stem)
    root = Path(__file__).resolve().parents[1]
    entries_html = []
    for name in sorted(users):
        obj = _documented(name)
        try:
            signature = str(inspect.signature(obj))
        except (TypeError, ValueError):
            signature = "(...)"
        source = inspect.getsourcefile(obj) or ""
        where = str(Path(source).relative_to(root)) if source.startswith(str(root)) else source
        pages_html = ", ".join(markup.anchor(markup.local(f"{stem}.html"), stem) for stem in users[name])
        entries_html.append(
            f'<section id="{markup.attr(name)}"><h2><code>{html.escape(name)}{html.escape(signature)}</code></h2>'
            f"<pre>{html.escape(inspect.getdoc(obj) or '(no docstring)')}</pre>"
            f'<p class="wb-course-file">{html.escape(where)}; called in {pages_html}</p></section>'
        )
    body_html = f'<nav class="wb-course-nav">{markup.anchor("index.html", title)}</nav>'
    body_html += "<h1>Functions the notebooks call</h1>"
    return _PAGE.format(title=f"Functions · {html.escape(title)}", body=body_html + "\n".join(entries_html))


def _check_replaceable(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise WorkbenchError(f"the output {out} is a file; give a folder for the course (new, or a built course)")
    from workbench.io import folder_kind, unlisted_files

    if folder_kind(out) not in (None, "course"):
        raise WorkbenchError(f"{out} is not empty and holds no built course ({MANIFEST}); building replaces the whole "
                             "folder, so give a new folder or one that `workbench course build` wrote")  # fmt: skip
    if out.is_dir() and (theirs := unlisted_files(out, MANIFEST)):
        raise WorkbenchError(f"{out} holds files the course did not write ({', '.join(theirs[:5])}): building "
                             "replaces the whole folder; move them out, or build elsewhere")  # fmt: skip


def _assets():
    return files("workbench") / "course_assets"


def _asset(name: str) -> str:
    return (_assets() / name).read_text(encoding="utf-8")


def _vega_bundle() -> str:
    from workbench.site import _vega_bundle

    return _vega_bundle()  # the one `workbench publish` vendors, kept in the workspace per version


def chart_html(spec: dict) -> str:
    """A live chart of the page: a Vega-Lite spec that ``assets/course.js`` embeds with the vendored vega-embed."""
    if spec.get("data", {}).get("values") == [] and not spec.get("datasets") and "encoding" not in spec:
        return ""  # a panel's placeholder before its first draw (Vega-Lite cannot draw a mark without encoding)
    spec = {key: value for key, value in spec.items() if key != "$schema"}  # a URL; the mode is given
    return f'<div class="wb-course-chart"><script type="application/json">{script_json(spec)}</script></div>'


class WidgetSnapshots(Preprocessor):
    """nbconvert preprocessor: each widget output becomes static HTML. An altair ``JupyterChart`` becomes its live
    chart (its spec, from the widget state the run stored); a panel, what it showed (its text, HTML, values and
    charts) under a note on how to run it live. The widget state is then dropped, so no widget manager is loaded."""

    def __init__(self, live_path: str = "the notebook", **kwargs):
        super().__init__(**kwargs)
        self.live_path = live_path

    def preprocess(self, nb, resources):
        self.state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
        nb, resources = super().preprocess(nb, resources)
        nb.metadata.pop("widgets", None)
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            spec = next((value for key, value in data.items() if key.startswith("application/vnd.vegalite")), None)
            if spec is not None:  # a chart of altair's mimetype renderer (KERNEL_SETUP)
                output.data = {"text/html": chart_html(spec), "text/plain": output.data.get("text/plain", "")}
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                continue
            model = self.state.get(view.get("model_id"), {})
            if model.get("state", {}).get("spec"):
                shown = chart_html(model["state"]["spec"])
            else:
                note_html = LIVE_NOTE.format(path=html.escape(self.live_path))
                snapshot_html = self._snapshot_html(view.get("model_id"))
                shown = f'<div class="wb-course-panel"><p class="wb-course-live">{note_html}</p>{snapshot_html}</div>'
            output.data = {"text/html": shown, "text/plain": output.data.get("text/plain", "")}
        return cell, resources

    def _snapshot_html(self, model_id: str | None, depth: int = 0) -> str:
        """What the widget ``model_id`` showed: its children, text, values and charts, read from its stored state."""
        model = self.state.get(model_id or "", {})
        state = model.get("state", {})
        if depth > 30 or not state:
            return ""
        if state.get("spec"):
            return chart_html(state["spec"])
        if "children" in state:
            kids_html = "".join(
                self._snapshot_html(child.removeprefix("IPY_MODEL_"), depth + 1) for child in state["children"]
            )
            return f'<div class="wb-course-box">{kids_html}</div>'
        if "outputs" in state:  # an Output widget
            return "".join(_output_html(out) for out in state["outputs"])
        label_html = html.escape(str(state.get("description", "")))
        name = model.get("model_name", "")
        if name in ("HTMLModel", "HTMLMathModel"):  # the panel's own markup, made by the rule of tests/test_markup.py
            value_html = str(state.get("value", ""))
            return f"<div>{value_html}</div>"
        if name == "ButtonModel":
            return f"<button disabled>{label_html}</button>"
        if "value" in state and not isinstance(state["value"], dict):
            value = state["value"]
            if "options" in state and "index" in state and isinstance(state.get("_options_labels"), list):
                value = state["_options_labels"][state["index"]] if isinstance(state["index"], int) else value
            return f'<div class="wb-course-control">{label_html} <b>{html.escape(str(value))}</b></div>'
        return ""


def _output_html(output: dict) -> str:
    data = output.get("data", {})
    if "text/html" in data:
        return data["text/html"]
    text = data.get("text/plain") or output.get("text", "")
    return f"<pre>{html.escape(text)}</pre>" if text else ""


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="assets/course.css">
</head>
<body class="wb-course">
<main>
{body}
</main>
</body>
</html>
"""
