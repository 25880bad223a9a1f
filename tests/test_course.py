"""The course: every teaching notebook executed at the suite's sizes, rendered with its outputs, opened in Chromium
from file:// with nothing requested off the machine; the cache re-executes only what changed.

The notebooks are executed once per run: tests/test_notebooks.py runs them through the same executor into the
shared ``course_cache``, and the course is built from it (a notebook not yet there is executed here, once).
"""

import json
import re
from pathlib import Path

import nbformat
import pytest
from test_notebooks import NOTEBOOKS, course_cache  # noqa: F401  (the run's shared cache of executed notebooks)

from workbench import course
from workbench.errors import WorkbenchError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def built(tmp_path_factory, course_cache: Path) -> Path:  # noqa: F811
    return course.build_course(tmp_path_factory.mktemp("course") / "site", "test", cache=course_cache).parent


def offline_page(browser):
    """A page that refuses every request that leaves the machine, and the list of those it refused."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    refused: list[str] = []

    def route(request_route):
        if request_route.request.url.startswith("file://"):
            return request_route.continue_()
        refused.append(request_route.request.url)
        return request_route.abort()

    page.route("**/*", route)
    return page, refused


@pytest.mark.slow
@pytest.mark.wordnet
@pytest.mark.model
def test_the_course_has_a_page_per_notebook_in_teaching_order_and_a_table_of_contents(built: Path):
    index = (built / "index.html").read_text()
    pages = re.findall(r'<li><a href="([^"]+)"', index)
    assert pages == [f"{path.stem}.html" for path in NOTEBOOKS]
    manifest = json.loads((built / course.MANIFEST).read_text())
    assert list(manifest["notebooks"]) == [path.name for path in NOTEBOOKS]
    for record in manifest["notebooks"].values():
        assert record["sizes"] == "test" and record["seconds"] > 0 and record["machine"]
    assert not re.search(r"(src|href)=\"(https?:)?//", "".join(p.read_text() for p in built.glob("*.html")))


@pytest.mark.slow
@pytest.mark.wordnet
@pytest.mark.model
def test_each_page_shows_its_outputs_and_live_charts_from_file_with_no_network(built: Path, browser):
    page, refused = offline_page(browser)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    charts = 0
    for path in NOTEBOOKS:
        page.goto((built / f"{path.stem}.html").as_uri())
        page.wait_for_load_state("load")
        assert page.locator(".jp-OutputArea-output").count() > 0, f"{path.stem}: no outputs shown"
        assert page.get_by_text("Executed ").count() > 0
        wanted = page.locator(".wb-course-chart").count()
        if wanted:
            page.wait_for_function(f"document.querySelectorAll('.wb-course-drawn').length === {wanted}", timeout=30_000)
            assert page.locator(".wb-course-chart svg, .wb-course-chart canvas").count() >= wanted
        charts += wanted
    assert charts >= 5, "the notebooks' altair charts are not on the pages"
    assert not refused, f"the course requested {refused}"
    assert not errors, errors


@pytest.mark.slow
@pytest.mark.wordnet
@pytest.mark.model
def test_each_page_says_how_to_run_it_and_links_the_docs_of_the_functions_it_calls(built: Path):
    api = (built / "api.html").read_text()
    for path in NOTEBOOKS:
        page = (built / f"{path.stem}.html").read_text()
        assert f"jupyter lab notebooks/{path.name}" in page or f"jupyter lab {path}" in page
        nb = nbformat.read(path, as_version=4)
        for name in course.test_parameters(nb):
            assert f"<code>{name}</code>" in page, f"{path.stem}: parameter {name} not listed"
        for anchor in re.findall(r'href="api\.html#([^"]+)"', page):
            assert f'id="{anchor}"' in api, f"{path.stem} links {anchor}, which api.html does not document"
    quickstart = (built / "01_quickstart.html").read_text()
    assert 'href="api.html#workbench.knowledge.load_graph"' in quickstart
    panels = (built / "07_panels_in_jupyterlab.html").read_text()
    assert "This panel is live in a kernel" in panels and "workbench serve explorer" in panels


def tiny_notebook(text: str, code: str) -> nbformat.NotebookNode:
    cells = [
        nbformat.v4.new_markdown_cell(f"# A tiny page\n\n{text}"),
        nbformat.v4.new_code_cell("N = 3  # bars", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(code),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["workbench"] = {"test_parameters": {"N": 2}}
    return nb


CHART = (
    'import altair as alt, polars as pl, ipywidgets as w\nalt.renderers.enable("jupyter", offline=True)\n'
    'display(w.VBox([w.HTML("<b>panel text</b>"), w.IntSlider(value=4, description="k")]))\n'
    'alt.Chart(pl.DataFrame({"x": list(range(N))})).mark_bar().encode(x="x:O")'
)


def test_a_rebuild_reexecutes_only_the_notebook_whose_code_changed(tmp_path: Path, browser):
    folder, cache = tmp_path / "notebooks", tmp_path / "cache"
    folder.mkdir()
    nbformat.write(tiny_notebook("first words", CHART), folder / "01_chart.ipynb")
    nbformat.write(tiny_notebook("plain", "print('hello', N)"), folder / "02_text.ipynb")
    paths = course.course_notebooks(folder)

    def build() -> dict:
        course.build_course(tmp_path / "site", "test", paths, cache)
        records = json.loads((tmp_path / "site" / course.MANIFEST).read_text())["notebooks"]
        return {name: record["from_cache"] for name, record in records.items()}

    assert build() == {"01_chart.ipynb": False, "02_text.ipynb": False}
    assert build() == {"01_chart.ipynb": True, "02_text.ipynb": True}
    nbformat.write(tiny_notebook("second words", CHART), folder / "01_chart.ipynb")  # prose only: not run again
    assert build() == {"01_chart.ipynb": True, "02_text.ipynb": True}
    assert "second words" in (tmp_path / "site" / "01_chart.html").read_text()
    nbformat.write(tiny_notebook("plain", "# says hello\nprint('hello',  N)\n"), folder / "02_text.ipynb")
    assert build() == {"01_chart.ipynb": True, "02_text.ipynb": True}, "a comment and spacing run nothing again"
    assert "# says hello" in (tmp_path / "site" / "02_text.html").read_text()
    nbformat.write(tiny_notebook("plain", "print('hello again', N)"), folder / "02_text.ipynb")
    assert build() == {"01_chart.ipynb": True, "02_text.ipynb": False}
    assert len(list(cache.glob("02_text.*.ipynb"))) == 1, "the older run of a changed notebook is not kept"

    page, refused = offline_page(browser)
    page.goto((tmp_path / "site" / "01_chart.html").as_uri())
    page.wait_for_selector(".wb-course-drawn svg, .wb-course-drawn canvas", timeout=30_000)
    panel = page.locator(".wb-course-panel")  # the widgets as they showed, under how to run them live
    assert panel.get_by_text("panel text").count() == 1 and panel.get_by_text("This panel is live").count() == 1
    assert "<code>N</code>" in page.content() and "<code>2</code>" in page.content()  # the parameters as run
    page.goto((tmp_path / "site" / "02_text.html").as_uri())
    assert page.locator(".jp-OutputArea-output").get_by_text("hello again 2").count() == 1
    assert not refused


def test_a_cells_identity_is_what_it_runs_not_its_comments_or_layout():
    same = ["x = f(1, 2)", "# why\nx = f(1,\n      2)  # two\n\n"]
    assert course.code_identity(same[0]) == course.code_identity(same[1])
    assert course.code_identity("x = f(1, 3)") != course.code_identity(same[0])
    assert course.code_identity('"""doc"""\nx = 1') != course.code_identity('"""other"""\nx = 1')  # text shown
    assert course.code_identity("%time x = 1\ny = 2") != course.code_identity("%time x = 2\ny = 2")  # magics
    assert course.code_identity("!ls -l") != course.code_identity("!ls")
    assert course.code_identity("for x in y:\n!ls") == "for x in y:\n!ls"  # not Python: the text as written


def test_a_course_kernel_charts_without_jsonschemas_iri_grammar(tmp_path: Path):
    """The kernel the course starts keeps rfc3987_syntax out (0.9 CPU-s of its start, ``workbench.startup``) and
    still draws a chart, kept as its Vega-Lite spec."""
    code = ("import sys, jsonschema\nchart = alt.Chart(alt.Data(values=[{'x': 1}])).mark_bar().encode(x='x:O')\n"
            "display(chart)\nprint(sys.modules.get('rfc3987_syntax'), 'lark' in sys.modules, "
            "'iri' in jsonschema.FormatChecker.checkers)")  # fmt: skip
    nbformat.write(tiny_notebook("words", code), tmp_path / "01_chart.ipynb")
    outputs = course.execute(tmp_path / "01_chart.ipynb", "test", tmp_path / "cache").notebook.cells[-1].outputs
    assert any(key.startswith("application/vnd.vegalite") for output in outputs for key in output.get("data", {}))
    assert outputs[-1]["text"].split() == ["None", "False", "False"]


def test_a_failing_cell_fails_the_build_and_a_foreign_folder_is_refused(tmp_path: Path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    nbformat.write(tiny_notebook("words", "raise ValueError('broken on purpose')"), folder / "01_broken.ipynb")
    with pytest.raises(WorkbenchError, match=r"01_broken.ipynb: cell 3 .* ValueError: broken on purpose"):
        course.build_course(tmp_path / "site", "test", course.course_notebooks(folder), tmp_path / "cache")
    assert not (tmp_path / "site").exists()
    nbformat.write(tiny_notebook("words", "import time\ntime.sleep(30)"), folder / "01_broken.ipynb")
    with pytest.raises(WorkbenchError, match=r"01_broken.ipynb: cell 3 \('import time'\) ran past the 2 s limit .*"
                       "--cell-timeout"):  # fmt: skip
        course.build_course(tmp_path / "site", "test", course.course_notebooks(folder), tmp_path / "cache",
                            cell_timeout=2)  # fmt: skip
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(WorkbenchError, match="holds no built course"):
        course.build_course(tmp_path / "mine", "test", course.course_notebooks(folder), tmp_path / "cache")
    nbformat.write(tiny_notebook("words", "1 + 1"), folder / "01_broken.ipynb")
    built = course.build_course(tmp_path / "site", "test", course.course_notebooks(folder), tmp_path / "cache").parent
    (built / "notes.txt").write_text("a user's notes in the course's folder")
    with pytest.raises(WorkbenchError, match=r"holds files the course did not write \(notes.txt\)"):
        course.build_course(built, "test", course.course_notebooks(folder), tmp_path / "cache")
    assert (built / "notes.txt").is_file()


@pytest.mark.wordnet
@pytest.mark.model
def test_results_published_beside_the_course_link_to_it_and_back(tmp_path: Path, minilm_path, cli):
    from app_workspace import make_app_workspace
    from typer.testing import CliRunner

    (tmp_path / "home").mkdir()
    home = make_app_workspace(tmp_path / "home", minilm_path)
    folder = tmp_path / "notebooks"
    folder.mkdir()
    nbformat.write(tiny_notebook("words", "print(N)"), folder / "01_tiny.ipynb")
    preds = home / "predictions" / "minilm-similarity.parquet"
    args = ["course", "build", "--out", str(tmp_path / "site"), "--sizes", "test", "--notebooks", str(folder)]
    result = CliRunner().invoke(cli, [*args, "--cache", str(tmp_path / "cache"), "--results", str(preds)])
    assert result.exit_code == 0, result.output
    site = tmp_path / "site"
    assert 'href="results/index.html"' in (site / "index.html").read_text()
    results = (site / course.RESULTS / "index.html").read_text()
    assert 'href="../index.html"' in results and "Accuracy by probe × hops and distractors" in results


@pytest.mark.parametrize("link", ["javascript:alert(document.cookie)", " JavaScript:alert(1)", "data:text/html,<b>x"])
def test_a_results_link_that_runs_code_is_refused_in_one_line_before_any_work(tmp_path: Path, cli, link: str):
    """Issue 60: ``--results-link 'javascript:...'`` was written into the course's first page and ran on a click
    (``publish --course-link`` refused the same): one check, ``markup.link``, for both."""
    from typer.testing import CliRunner

    folder = tmp_path / "notebooks"
    folder.mkdir()
    nbformat.write(tiny_notebook("words", "print(N)"), folder / "01_tiny.ipynb")
    args = ["course", "build", "--out", str(tmp_path / "site"), "--sizes", "test", "--notebooks", str(folder)]
    result = CliRunner().invoke(cli, [*args, "--cache", str(tmp_path / "cache"), "--results-link", link])
    assert isinstance(result.exception, WorkbenchError), result.output  # printed as one line `error: ...`, exit 2
    assert "--results-link" in str(result.exception) and "no link a page may follow" in str(result.exception)
    assert "\n" not in str(result.exception)
    assert not (tmp_path / "site").exists() and not (tmp_path / "cache").exists()  # nothing was executed


def test_the_cache_deletes_only_the_runs_its_marker_lists_and_a_users_folder_is_refused(tmp_path: Path, cli):
    """Issue 60: ``course build --cache DIR`` deleted a user's notebooks in DIR by their names (``--cache`` was
    declared as read). The cache is an output (``course-cache``): a folder holding anything it did not write is
    refused before any work; in its own folder it deletes only the earlier runs its marker lists."""
    from typer.testing import CliRunner

    from workbench.io import MARKER, folder_kind, marked_files

    folder = tmp_path / "notebooks"
    folder.mkdir()
    nbformat.write(tiny_notebook("words", "print(N)"), folder / "01_tiny.ipynb")
    mine = tmp_path / "mine"
    mine.mkdir()
    theirs = ["01_tiny.test.draft.ipynb", "analysis.ipynb"]  # the first has the shape of a kept run's name
    for name in theirs:
        nbformat.write(tiny_notebook("mine", "1"), mine / name)
    args = ["course", "build", "--out", str(tmp_path / "site"), "--sizes", "test", "--notebooks", str(folder)]
    result = CliRunner().invoke(cli, [*args, "--cache", str(mine)])
    assert isinstance(result.exception, WorkbenchError), result.output
    assert "not a course's executed notebooks" in str(result.exception) and "\n" not in str(result.exception)
    assert sorted(path.name for path in mine.iterdir()) == theirs and not (tmp_path / "site").exists()

    cache = tmp_path / "cache"
    first = course.execute(folder / "01_tiny.ipynb", "test", cache)
    kept = [path.name for path in cache.glob("01_tiny.test.*.ipynb")]
    assert folder_kind(cache) == "course-cache" and marked_files(cache, "course-cache") == kept and first.record
    (draft := cache / "01_tiny.test.draft.ipynb").write_text("a user's file of a run's name, put in the cache")
    nbformat.write(tiny_notebook("words", "print(N + 1)"), folder / "01_tiny.ipynb")  # the code changed
    course.execute(folder / "01_tiny.ipynb", "test", cache)
    runs = sorted(path.name for path in cache.glob("01_tiny.test.*.ipynb"))
    assert draft.read_text().startswith("a user's") and len(runs) == 2  # the old run went, the user's file stayed
    assert marked_files(cache, "course-cache") == [name for name in runs if name != draft.name]
    assert folder_kind(cache) == "other" and (cache / MARKER).is_file()  # so a build refuses the folder now
    with pytest.raises(WorkbenchError, match="not a course's executed notebooks"):
        course.build_course(tmp_path / "site", "test", [folder / "01_tiny.ipynb"], cache)
    with pytest.raises(WorkbenchError, match="overlap"):
        course.build_course(tmp_path / "site", "test", [folder / "01_tiny.ipynb"], tmp_path / "site" / "cache")


def test_a_notebook_named_as_markup_or_a_scheme_is_text_and_a_link_to_its_own_page(tmp_path: Path):
    """A notebook's file name and heading reach the course's pages as text, and its page's link stays a file:
    ``01_<img ...>.ipynb`` shows its name, ``javascript:x.ipynb`` links ``javascript%3Ax.html``."""
    from html.parser import HTMLParser

    folder = tmp_path / "notebooks"
    folder.mkdir()
    names = ["01_<img src=x onerror=alert(1)>.ipynb", "javascript:alert(1).ipynb"]
    for name in names:
        nbformat.write(tiny_notebook("words", "print(N)"), folder / name)
    built = course.build_course(tmp_path / "site", "test", course.course_notebooks(folder), tmp_path / "cache").parent

    class Tags(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.links = [], []

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            self.links += [value for key, value in attrs if key == "href" and tag == "a"]

    for page in ["index.html", "api.html", *(Path(name).with_suffix(".html").name for name in names)]:
        parsed = Tags()
        parsed.feed((built / page).read_text())
        assert "img" not in parsed.tags, page
        assert not any(link.lower().startswith(("javascript:", "data:")) for link in parsed.links), page
    index = Tags()
    index.feed((built / "index.html").read_text())
    pages = [link for link in index.links if link.endswith(".html") and link != "api.html"]
    assert pages == ["01_%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E.html", "javascript%3Aalert%281%29.html"]
    from urllib.parse import unquote

    assert all((built / unquote(link)).is_file() for link in pages)
    assert "01_&lt;img src=x onerror=alert(1)&gt;.ipynb" in (built / "index.html").read_text()


def test_a_cache_marker_made_a_link_to_a_device_or_a_fifo_is_no_marker_and_is_not_read(tmp_path: Path):
    """A hand-made ``.workbench.json`` that is a link to ``/dev/zero`` (or a FIFO) was read without end: the process
    grew until it failed with a MemoryError. A marker is a regular file of bounded size, else no marker."""
    import os

    from workbench.io import MARKER, folder_kind, marked_files

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / MARKER).symlink_to("/dev/zero")
    assert marked_files(cache, course.CACHE_KIND) is None and folder_kind(cache) is None
    assert course.check_cache(cache, tmp_path / "site") == cache
    (cache / MARKER).unlink()
    os.mkfifo(cache / MARKER)  # opening it to read would wait for a writer for ever
    assert marked_files(cache, course.CACHE_KIND) is None
