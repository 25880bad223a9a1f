"""Notebook 07 in a real JupyterLab: Playwright drives Debian's Chromium against `python -m jupyterlab`.

The test copies notebooks/07_panels_in_jupyterlab.ipynb (with its test parameters injected, as
tests/test_notebooks.py does) into a temporary folder, serves it with JupyterLab on a free port with a
temporary workspace, runs every cell (the Run menu's command) once the kernel is ready, waits for the
panels, then uses two of them as a reader would: types a word into the concept picker (the cluster browser
follows) and moves the hop slider (the counts follow). JupyterLab's settings, runtime files and kernel state go
to temporary folders too. Screenshots land in test-artifacts/browser/.
"""

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from app_workspace import make_app_workspace
from test_notebooks import with_test_parameters

pytestmark = [pytest.mark.browser, pytest.mark.wordnet, pytest.mark.model, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "07_panels_in_jupyterlab.ipynb"
SHOTS = ROOT / "test-artifacts" / "browser"
START_TIMEOUT_S = 120
RENDER_TIMEOUT_MS = 180_000
RUN_ALL_TIMEOUT_MS = 420_000  # every cell: WordNet from the cache, a probe build, MiniLM on a few clusters
STEP_TIMEOUT_MS = 60_000
LAB_SETTINGS = {
    # every cell attached to the page, so that waiting for a panel never depends on scrolling
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    # no news, update checks or toasts over the page (nothing outside this machine is reached anyway)
    "@jupyterlab/apputils-extension/notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
        "doNotDisturbMode": True,
    },
}


@pytest.fixture(scope="module")
def app_home(tmp_path_factory, minilm_path) -> Path:
    return make_app_workspace(tmp_path_factory.mktemp("lab-workspace"), minilm_path)


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        yield context.new_page()
    finally:
        context.close()


def kernel_pids(runtime: Path) -> list[int]:
    """Processes started with a connection file in ``runtime``: the kernels of our server."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(runtime).encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:  # gone meanwhile
                pass
    return pids


def jupyterlab(folder: Path, home: Path, state: Path):
    """Serve ``folder`` with JupyterLab on a free port; yield (base URL, token); always stop it and its kernels."""
    from workbench.cli.serve import free_port

    port, token = free_port(), secrets.token_hex(16)
    settings = state / "settings"
    for plugin, values in LAB_SETTINGS.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    runtime = state / "runtime"
    env = {
        **os.environ,
        "WORKBENCH_HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(state / "lab-workspaces"),
        "JUPYTER_CONFIG_DIR": str(state / "config"),
        "JUPYTER_DATA_DIR": str(state / "data"),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "IPYTHONDIR": str(state / "ipython"),
    }
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={folder}", "--LabApp.expose_app_in_browser=True",
    ]  # fmt: skip
    log_path = state / "jupyterlab.log"
    log = log_path.open("w")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + START_TIMEOUT_S
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.time() > deadline:
                raise AssertionError(f"JupyterLab did not start: {log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield base, token
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # the server shuts its kernels down on SIGTERM
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        log.close()
        for pid in kernel_pids(runtime):  # a kernel the server failed to stop (kernels run in their own session)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


KERNEL_READY = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const kernel = panel && panel.sessionContext && panel.sessionContext.session && panel.sessionContext.session.kernel;
    return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""


def run_all_cells(page) -> None:
    """Run every cell once, by the command the Run menu's *Run All Cells* item invokes, once the kernel is ready.

    The page exposes JupyterLab's application (``expose_app_in_browser``), so the test waits until the notebook's
    kernel is connected and idle (the toolbar's execution indicator says *idle* before any kernel is attached) and
    then runs the command once. Clicking the menu needed retries (JupyterLab's focus closes a menu opened just as the
    notebook opens), and a retry on a loaded machine may start a second Run All over the first (CI twice ended with
    four cells run and a *Select Kernel* dialog over the menu). The command's promise is not awaited: it settles
    only when every cell has run, which the caller waits for on the page.
    """
    page.wait_for_function(KERNEL_READY, timeout=RENDER_TIMEOUT_MS)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")


def outputs_text(page) -> str:
    return "\n".join(page.locator(".jp-OutputArea-output").all_inner_texts())


def wait_for_cluster(page, concept: str) -> int:
    """Wait until the cluster browser shows ``concept``'s cluster, summary and questions alike; its question count."""
    summary = page.wait_for_selector(
        f".wb-cluster-browser .wb-cluster-summary:has-text('{concept}')", timeout=STEP_TIMEOUT_MS
    )
    n_questions = int(summary.inner_text().split(": ", 1)[1].split()[0])
    page.wait_for_function(
        """([concept, n]) => {
            const shown = [...document.querySelectorAll('.wb-cluster-browser .wb-question')];
            const clusterId = q => q.querySelector('.wb-muted').innerText.split(' · ').pop().trim();
            return shown.length === Math.min(n, 40) && shown.every(q => clusterId(q).split(':').includes(concept));
        }""",
        arg=[concept, n_questions],
        timeout=STEP_TIMEOUT_MS,
    )  # the summary and the questions are two widgets: the questions may arrive a moment later
    return n_questions


def scroll_to_top_of(page, selector: str) -> None:
    """Scroll the notebook so that the panel ``selector`` starts at the top of the window (for screenshots)."""
    page.locator(selector).evaluate("panel => panel.scrollIntoView({block: 'start'})")


def diagnosis(page, log: Path) -> str:
    """What a failed run left: a screenshot, the cells' prompts, the outputs' end and the server log's end."""
    try:
        page.screenshot(path=SHOTS / "jupyterlab-panels-failed.png")
        prompts = " ".join(page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts())
        dialogs = " | ".join(page.locator(".jp-Dialog").all_inner_texts()) or "none"
        kernel = page.evaluate(
            "() => { const k = window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel;"
            " return k ? `${k.name} ${k.status} ${k.connectionStatus}` : 'none'; }"
        )
        outputs = outputs_text(page)[-3000:]
    except Exception as err:  # the page itself is gone
        prompts, dialogs, kernel, outputs = f"(page unreadable: {err})", "", "", ""
    return (
        f"cell prompts: {prompts}\ndialogs: {dialogs}\nkernel: {kernel}\noutputs (end):\n{outputs}\n"
        f"JupyterLab log (end):\n{log.read_text()[-4000:]}"
    )


def total_questions(page) -> int:
    return int(page.inner_text(".wb-probe-controls .wb-total").split()[0].replace(",", ""))


def test_notebook_07_runs_in_jupyterlab_and_its_panels_answer(app_home, page, tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    nbformat.write(with_test_parameters(nbformat.read(NOTEBOOK, as_version=4)), folder / NOTEBOOK.name)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "jupyterlab-panels-failed.png").unlink(missing_ok=True)
    state = tmp_path / "jupyter"
    for base, token in jupyterlab(folder, app_home, state):
        try:
            use_the_panels(page, base, token)
        except Exception as err:  # name what the page and the server showed, for a failure that is hard to rerun
            raise AssertionError(diagnosis(page, state / "jupyterlab.log")) from err


def use_the_panels(page, base: str, token: str) -> None:
    page.goto(f"{base}/lab/tree/{NOTEBOOK.name}?token={token}", timeout=RENDER_TIMEOUT_MS)
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-CodeCell", timeout=RENDER_TIMEOUT_MS)

    run_all_cells(page)
    page.wait_for_selector(
        ".jp-OutputArea-output:has-text('not started:'), .jp-OutputArea-output:has-text('Traceback')",
        timeout=RUN_ALL_TIMEOUT_MS,
    )  # the last cell's output, or the first error (Run All stops there)
    assert "Traceback" not in outputs_text(page), outputs_text(page)[-4000:]
    assert "not started: inputs are missing" in outputs_text(page)

    # every panel rendered, and each one followed `session.concept = CONCEPT`
    page.wait_for_selector(".wb-concept-picker .wb-concept-name:has-text('dog.n.01')", timeout=STEP_TIMEOUT_MS)
    wait_for_cluster(page, "dog.n.01")
    page.wait_for_selector(".wb-probe-controls .wb-total", timeout=STEP_TIMEOUT_MS)
    page.wait_for_selector(".wb-inoculation .wb-missing", timeout=STEP_TIMEOUT_MS)
    assert "source model" in page.inner_text(".wb-inoculation")
    assert page.locator(".wb-inoculation button:has-text('Start')").is_disabled()
    scroll_to_top_of(page, ".wb-cluster-browser")
    page.screenshot(path=SHOTS / "jupyterlab-panels-0-ran.png")

    # type a word into the concept picker: the picker's card and the cluster browser follow
    field = page.locator(".wb-concept-picker input[type=text]")
    field.scroll_into_view_if_needed()
    field.fill("car")
    page.wait_for_selector(".wb-concept-picker .wb-concept-name:has-text('car.n.01')", timeout=STEP_TIMEOUT_MS)
    assert "motor vehicle" in page.inner_text(".wb-concept-picker .wb-gloss")
    n_questions = wait_for_cluster(page, "car.n.01")
    assert n_questions > 0
    assert all("car" in text for text in page.locator(".wb-cluster-browser .wb-question b").all_inner_texts())
    verdicts = page.locator(".wb-cluster-browser :is(.wb-right, .wb-wrong)", has_text="all right")
    assert verdicts.count() == 1  # MiniLM's strict cluster verdict: car.n.01 is among the SCORED concepts
    scroll_to_top_of(page, ".wb-concept-picker")
    page.screenshot(path=SHOTS / "jupyterlab-panels-1-picker.png")
    scroll_to_top_of(page, ".wb-cluster-browser")
    page.screenshot(path=SHOTS / "jupyterlab-panels.png")

    # the notebook set the hops to 1 - 1 from code; widen them with the slider's upper handle
    slider = page.locator(".wb-probe-controls .widget-hslider").first
    assert "1 – 1" in slider.inner_text()
    before = total_questions(page)
    handle = slider.locator(".noUi-handle").last
    handle.scroll_into_view_if_needed()
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_function(
        "before => document.querySelector('.wb-probe-controls .wb-total').innerText.split(' ')[0] !== before",
        arg=f"{before:,}",
        timeout=STEP_TIMEOUT_MS,
    )
    assert total_questions(page) > before
    assert "1 – 2" in slider.inner_text()
    scroll_to_top_of(page, ".wb-probe-controls")
    page.screenshot(path=SHOTS / "jupyterlab-panels-2-hops.png")
