"""The annotation app in a real browser: three people at once on a 30-question batch of the released hypernymy
test, by click and by key, a reload that resumes, and the server killed (kill -9) mid-session losing no vote."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "test-artifacts" / "browser"
RELEASED = ROOT.parent / "shared" / "data" / "semantic_fragments" / "hypernymy_test.jsonl"
TIMEOUT_MS = 180_000


LAB_TOKEN = "lab-token-for-the-test-0123"


def start(home: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "WORKBENCH_HOME": str(home), "WORKBENCH_SERVE_TOKEN": LAB_TOKEN}
    log = (home / "voila-annotate.log").open("a")
    command = [sys.executable, "-m", "workbench", "serve", "annotate", "--port", str(port), "--preheat", "0"]
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            return process
        except OSError:
            if process.poll() is not None or time.time() > deadline:
                raise AssertionError((home / "voila-annotate.log").read_text()[-2000:]) from None
            time.sleep(0.3)


def kernels_of(server: subprocess.Popen) -> list[int]:
    """The kernels Voilà runs under ``server`` (``workbench serve`` -> Voilà -> kernels)."""
    from workbench.cli.serve import children

    return [kernel for voila in children(server.pid) for kernel in children(voila)]


def kill_hard(process: subprocess.Popen) -> None:
    """kill -9 of the server and every kernel it started (each kernel runs in a session of its own)."""
    from workbench.cli.serve import children

    for pid in [*children(process.pid), process.pid]:
        for child in children(pid):
            os.kill(child, signal.SIGKILL)
        os.kill(pid, signal.SIGKILL)
    process.wait(timeout=20)


@pytest.fixture
def batch(tmp_path):
    from workbench.annotation import create_batch
    from workbench.probes.formats import read_probes

    if not RELEASED.is_file():
        pytest.skip(f"{RELEASED} is not here (../shared beside the repository)")
    home = tmp_path / "workspace"
    made = create_batch(read_probes(RELEASED), home / "annotation" / "hyp", 30, per_question=2, annotators=3, seed=3)
    return home, made


def counter(page) -> int:
    return int(page.locator("text=/\\d+ of 20 answered/").inner_text().split()[0])


ON_SCREEN = """() => [document.querySelector('.wb-annotate-stem')?.innerText || '',
    [...document.querySelectorAll('button.wb-choice')].map(b => b.innerText).join('\\n')]"""


def answer(page, by_key: bool, flag: bool = False) -> tuple[str, str]:
    """Answer the question on screen with its second choice, wait for the next; returns (stem, the choice's text)."""
    before = counter(page)
    stem, choices = page.evaluate(ON_SCREEN)
    choice = choices.split("\n")[1].split(". ", 1)[1]
    if flag:
        page.get_by_text("another choice is also right").click()
    if by_key:
        if not flag:  # after ticking a flag the focus stays on its checkbox, and the keys still answer
            page.locator(".wb-annotate-stem").click()  # focus on the page, not in the comment box
        page.keyboard.press("2")
    else:
        page.locator("button.wb-key-2").click()
    page.wait_for_function(
        f"""() => document.body.innerText.includes('{before + 1} of 20 answered') &&
                  ({ON_SCREEN})()[1] !== {choices!r} && ({ON_SCREEN})()[1].split('\\n').length === 5
                  || document.body.innerText.includes('Thank you')""",
        timeout=TIMEOUT_MS,
    )
    return stem, choice


def test_three_people_answer_at_once_resume_after_reload_and_lose_nothing_to_a_kill(batch, browser):
    from workbench.annotation import read_votes
    from workbench.cli.serve import free_port

    home, made = batch
    names = ("alice", "bob", "carol")
    port = free_port()
    links = {}
    for name in names:  # the links `workbench annotate link` prints: the lab's token and the person's
        printed = subprocess.run(
            [sys.executable, "-m", "workbench", "annotate", "link", str(made.folder), name, "--url",
             f"http://127.0.0.1:{port}/"],
            env={**os.environ, "WORKBENCH_SERVE_TOKEN": LAB_TOKEN, "WORKBENCH_HOME": str(home)},
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        links[name] = printed.split(": ", 1)[1]
        assert links[name].startswith(f"http://127.0.0.1:{port}/?token={LAB_TOKEN}&annotator=")
    server = start(home, port)
    contexts = {name: browser.new_context(viewport={"width": 1200, "height": 900}) for name in names}
    pages = {name: context.new_page() for name, context in contexts.items()}
    shown: dict[str, list[tuple[str, str]]] = {name: [] for name in names}
    try:
        for name, page in pages.items():  # three kernels start at once
            page.goto(links[name], timeout=TIMEOUT_MS)
        for name, page in pages.items():
            page.wait_for_selector(".wb-annotate-stem", timeout=TIMEOUT_MS)
            assert name in page.inner_text("body") and counter(page) == 0
        for round_ in range(4):  # interleaved: each person answers in turn, by click and by key
            for name, page in pages.items():
                shown[name].append(answer(page, by_key=round_ % 2 == 1, flag=round_ == 1 and name == "bob"))
        SHOTS.mkdir(parents=True, exist_ok=True)
        pages["alice"].screenshot(path=SHOTS / "annotate-0-question.png", full_page=True)
        pages["alice"].reload(timeout=TIMEOUT_MS)  # a person who leaves and comes back goes on where they stopped
        pages["alice"].wait_for_selector(".wb-annotate-stem", timeout=TIMEOUT_MS)
        assert counter(pages["alice"]) == 4
        assert pages["alice"].locator(".wb-annotate-stem").inner_text() not in [s for s, _ in shown["alice"]]
        shown["bob"].append(answer(pages["bob"], by_key=False))
        kill_hard(server)  # kill -9 mid-session: every answer the page showed as done is in the database
        votes = read_votes(made)
        assert votes.group_by("annotator").len().sort("annotator")["len"].to_list() == [4, 5, 4]
        old, port = port, free_port()  # the killed server's port may linger in TIME_WAIT: restarted elsewhere
        server = start(home, port)
        pages["bob"].goto(links["bob"].replace(f":{old}/", f":{port}/"), timeout=TIMEOUT_MS)
        pages["bob"].wait_for_selector(".wb-annotate-stem", timeout=TIMEOUT_MS)
        assert counter(pages["bob"]) == 5
        pages["carol"].goto(links["carol"].replace(f":{old}/", f":{port}/"), timeout=TIMEOUT_MS)
        pages["carol"].wait_for_selector(".wb-annotate-stem", timeout=TIMEOUT_MS)
        for _ in range(16):
            shown["carol"].append(answer(pages["carol"], by_key=True))
        pages["carol"].wait_for_selector("text=Thank you", timeout=TIMEOUT_MS)
        pages["carol"].screenshot(path=SHOTS / "annotate-1-review.png", full_page=True)
        assert "You picked the gold on" in pages["carol"].inner_text("body")
        pages["carol"].goto(f"http://127.0.0.1:{port}/?token={LAB_TOKEN}&annotator=not-a-link", timeout=TIMEOUT_MS)
        pages["carol"].wait_for_selector("text=This page needs your personal link", timeout=TIMEOUT_MS)
        assert not pages["carol"].locator("button.wb-choice").count()  # a stranger sees no question
        kernels = kernels_of(server)
        pages["bob"].goto("about:blank")  # a page left gives its kernel back at once (the beacon sends its _xsrf)
        deadline = time.time() + 30
        while len(kernels_of(server)) >= len(kernels) and time.time() < deadline:
            time.sleep(0.5)
        assert len(kernels_of(server)) == len(kernels) - 1
    finally:
        for context in contexts.values():
            context.close()
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    votes = read_votes(made)
    assert votes.group_by("annotator").len().sort("annotator")["len"].to_list() == [4, 5, 20]
    assert not votes.select("annotator", "id").is_duplicated().any()
    assert (votes["source"] == "app").all() and (votes["shown"] == 2).all()
    questions = made.questions.select("id", "question", "choices")
    seen = votes.join(questions, on="id").sort("at")
    for name in names:  # the recorded choice is the text the person clicked, under the stem they saw
        mine = seen.filter(pl.col("annotator") == name)
        recorded = [(q, c[i]) for q, c, i in zip(mine["question"], mine["choices"], mine["choice"], strict=True)]
        assert recorded == shown[name]
    assert votes.filter(pl.col("annotator") == "bob").sort("at")["flags"].to_list()[:2] == [[], ["also-right"]]
    assert (votes["order"].list.get(1) == votes["choice"]).all()


HOSTILE = "<img src=x onerror=window.pwned=1>"


def test_a_batch_named_as_markup_runs_no_script_in_the_annotators_page(tmp_path, browser):
    """Issue 60: a batch folder (and so its batch.json) named ``<img src=x onerror=...>``, questions and choices
    holding markup: every annotator's page shows them as text and runs nothing."""
    from workbench.annotation import add_annotator, create_batch
    from workbench.cli.serve import free_port
    from workbench.probes.formats import read_probes

    if not RELEASED.is_file():
        pytest.skip(f"{RELEASED} is not here (../shared beside the repository)")
    home = tmp_path / "workspace"
    probes = read_probes(RELEASED).with_columns(
        question=pl.lit("<img src=x onerror=window.pwned=2> ") + pl.col("question"),
        choices=pl.col("choices").list.eval(pl.lit("<img src=x onerror=window.pwned=3> ") + pl.element()),
    )
    made = create_batch(probes, home / "annotation" / HOSTILE, 4, per_question=1, annotators=1, seed=3)
    assert made.name == HOSTILE
    token = add_annotator(made, "ana")
    port = free_port()
    server = start(home, port)
    context = browser.new_context()
    page = context.new_page()
    dialogs = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message) or dialog.dismiss())
    try:
        page.goto(f"http://127.0.0.1:{port}/?token={LAB_TOKEN}&annotator={token}", timeout=TIMEOUT_MS)
        page.wait_for_selector(".wb-annotate-stem", timeout=TIMEOUT_MS)
        page.locator("button.wb-key-1").click()
        page.wait_for_selector("text=1 of 4 answered", timeout=TIMEOUT_MS)
        assert page.evaluate("() => window.pwned") is None and not dialogs  # no script ran
        assert not page.locator("img[src=x]").count()  # no element was made of the batch's text
        assert f"ana · batch {HOSTILE}" in page.inner_text("body")  # shown as the text it is
        assert "<img src=x onerror=window.pwned=2>" in page.locator(".wb-annotate-stem").inner_text()
        assert "<img src=x onerror=window.pwned=3>" in page.locator("button.wb-key-1").inner_text()
    finally:
        context.close()
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
