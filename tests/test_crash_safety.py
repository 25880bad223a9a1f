"""Killed at any moment, readers see the old complete state or the new one, never a mix; resumed runs equal
uninterrupted ones; two writers of one output never interleave (docs/RELIABILITY.md)."""

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import polars as pl
import pytest
from tiny_models import tiny_multiple_choice_bert

from workbench.errors import WorkbenchError
from workbench.io import LockedError, exclusive
from workbench.probes.formats import read_probes, write_probes

pytestmark = pytest.mark.slow
ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def _start(*args: str, stderr: Path) -> subprocess.Popen:
    """The CLI with ``args`` started in the background, its stderr kept in ``stderr`` (a run that fails is seen)."""
    with stderr.open("w") as err:
        return subprocess.Popen([sys.executable, "-m", "workbench", *args], stdout=subprocess.DEVNULL, stderr=err,
                                env=ENV)  # fmt: skip


def _timed(*args: str, env: dict | None = None) -> float:
    """Run the CLI to the end; its wall time, the scale of the random kill points."""
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "workbench", *args], env=env or ENV, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return time.monotonic() - started


def _kill_when(args: list[str], ready, stderr: Path, timeout: float = 300, env: dict | None = None) -> bool:
    """Start the CLI with ``args``; SIGKILL it as soon as ``ready()`` (observed progress, not a guessed time). True if
    it was killed; a run that ended first must have succeeded (its stderr is in the failure message)."""
    with stderr.open("w") as err:
        process = subprocess.Popen([sys.executable, "-m", "workbench", *args], stdout=subprocess.DEVNULL, stderr=err,
                                   env=env or ENV)  # fmt: skip
    deadline = time.monotonic() + timeout
    while process.poll() is None and not ready():
        assert time.monotonic() < deadline, "no progress in time: " + stderr.read_text()[-2000:]
        time.sleep(0.02)
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
        process.wait()
        return True
    assert process.returncode == 0, stderr.read_text()[-2000:]
    return False


def _kill_at_random(process: subprocess.Popen, rng: random.Random, longest: float, stderr: Path, early: bool) -> bool:
    """SIGKILL ``process`` at a random point of its expected run (``longest`` seconds; in its first tenth when
    ``early``, for a run faster than the reference); True if it was still running. A run that ended first must
    have succeeded (its stderr is in the failure message)."""
    deadline = time.monotonic() + rng.uniform(0.2, 0.8) * longest * (0.1 if early else 1)
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    alive = process.poll() is None
    if alive:
        process.send_signal(signal.SIGKILL)
    process.wait()
    if not alive:
        assert process.returncode == 0, stderr.read_text()[-2000:]
    return alive


@pytest.mark.wordnet
def test_a_killed_probe_build_leaves_the_old_set_or_the_new_one(tmp_path, wordnet_graph):
    """A kill between two moves once left a new dev/test beside an old train, read back with 131 concepts in both."""
    out = tmp_path / "set"
    build = ["probes", "build", "--probe", "hypernymy", "--concepts", "dog.n.01,car.n.01",
             "--train-size", "10", "--out", str(out)]  # fmt: skip
    _timed(*build, "--seed", "1")
    old = read_probes(out)
    new_ref = tmp_path / "reference"
    took = _timed(*build[:-1], str(new_ref), "--seed", "2")
    new = read_probes(new_ref)
    assert not old.equals(new)
    rng, killed, attempt = random.Random(0), 0, 0
    while attempt < 4 or (not killed and attempt < 8):  # a run faster than the reference: kill earlier
        stderr = tmp_path / f"stderr-{attempt}.txt"
        killed += _kill_at_random(_start(*build, "--seed", "2", stderr=stderr), rng, took, stderr, early=attempt >= 4)
        attempt += 1
        seen = read_probes(out)
        assert seen.equals(old) or seen.equals(new), "a mix of two builds"
        if seen.equals(new):  # published: start again from the old set
            write_probes(old, out)
    assert killed >= 1
    _timed(*build, "--seed", "2")  # a killed writer's staging folder is removed by the next writer (io.staged_folder)
    assert read_probes(out).equals(new)
    assert (
        sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".set.") and not p.name.endswith(".lock")) == []
    )


def test_a_killed_scoring_run_resumes_to_the_same_predictions(tmp_path, released_dir, minilm_path):
    """Killed after its first committed batch and again mid-run (observed in the prediction cache), a scoring run
    resumes to the predictions of an uninterrupted one; a prediction file is never half written."""
    probes = tmp_path / "dictionary_qa_test.jsonl"
    probes.write_text("".join((released_dir / "dictionary_qa_test.jsonl").read_text().splitlines(keepends=True)[:120]))
    args = ["score", "--model", str(minilm_path), "--scorer", "similarity", "--probes", str(probes)]
    home = tmp_path / "home"
    _timed(*args, "--out", str(tmp_path / "full.parquet"), env={**ENV, "WORKBENCH_HOME": str(tmp_path / "clean")})

    cache = f"file:{home / 'predictions' / 'predictions.sqlite'}?mode=ro"

    def stored() -> int:  # embeddings committed to the resumed runs' cache
        try:
            with closing(sqlite3.connect(cache, uri=True)) as db:
                return db.execute("SELECT COUNT(*) FROM checked").fetchone()[0]
        except sqlite3.Error:  # not created yet
            return 0

    resumed = [*args, "--out", str(tmp_path / "resumed.parquet")]
    killed = 0
    for stage in (1, 300):  # after the first batch, then about half of the 120 questions' texts
        killed += _kill_when(resumed, lambda stage=stage: stored() >= stage, tmp_path / f"stderr-{stage}.txt",
                             env={**ENV, "WORKBENCH_HOME": str(home)})  # fmt: skip
        if (tmp_path / "resumed.parquet").exists():  # never half a file: a complete prediction set or nothing
            assert pl.read_parquet(tmp_path / "resumed.parquet").height == 120
    assert killed == 2 and 0 < stored() < 720  # both kills came mid-run (at most 6 texts a question)
    _timed(*resumed, env={**ENV, "WORKBENCH_HOME": str(home)})
    columns = ["id", "scores", "pred", "correct"]
    assert (
        pl.read_parquet(tmp_path / "resumed.parquet")
        .select(columns)
        .equals(pl.read_parquet(tmp_path / "full.parquet").select(columns))
    )


def test_a_killed_inoculation_run_resumes_to_the_uninterrupted_trials(tmp_path, minilm_path):
    import json

    from test_inoculation import _arc_line, _frame

    from workbench.inoculation import inoculate, load_run

    model = tiny_multiple_choice_bert(tmp_path / "tiny", minilm_path)
    probes, orig = tmp_path / "probes", tmp_path / "orig"
    write_probes(pl.concat([_frame(40, "train", 1), _frame(16, "dev", 2)]), probes)
    orig.mkdir()
    rng = random.Random(3)
    (orig / "dev.jsonl").write_text("".join(_arc_line(i, rng) + "\n" for i in range(16)))
    grid = {"ks": (8, 16), "lrs": (1e-3, 3e-3), "epochs": (1,), "batch_size": 8, "max_length": 16, "progress": False}
    inoculate(model, probes, orig, out=tmp_path / "straight", **grid)
    args = ["inoculate", "--model", str(model), "--probes", str(probes), "--orig", str(orig),
            "--out", str(tmp_path / "killed"), "--k", "8,16", "--lr", "1e-3,3e-3", "--epochs", "1",
            "--batch-size", "8", "--max-length", "16"]  # fmt: skip

    def finished() -> int:  # trials recorded so far (the table is always complete and readable)
        table = tmp_path / "killed" / "trials.parquet"
        return load_run(tmp_path / "killed").height if table.exists() else 0

    killed = 0
    for stage in (1, 3):  # kill once the first trial is recorded, then (resumed) once the third is
        killed += _kill_when(args, lambda stage=stage: finished() >= stage, tmp_path / f"stderr-{stage}.txt")
    assert killed >= 1  # the first kill comes after trial 1 of 4: mid-run
    inoculate(model, probes, orig, out=tmp_path / "killed", **grid)
    columns = ["trial", "S_new", "S_orig", "status"]
    straight, resumed = load_run(tmp_path / "straight").sort("trial"), load_run(tmp_path / "killed").sort("trial")
    assert resumed.select(columns).equals(straight.select(columns))
    assert json.loads((tmp_path / "killed" / "config.json").read_text())["grid"]["ks"] == [8, 16]


def test_a_second_writer_of_one_output_is_refused_naming_the_holder(tmp_path):
    """Two inoculate runs into one --out once lost the first run's rows of trials.parquet."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "from workbench.io import exclusive\nimport time\n"
         f"with exclusive({str(tmp_path / 'run')!r}):\n    print('held', flush=True)\n    time.sleep(30)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockedError, match=rf'"pid": {holder.pid}'):
            with exclusive(tmp_path / "run"):
                pass
    finally:
        holder.kill()
        holder.wait()
    with exclusive(tmp_path / "run"):  # a killed holder leaves no stale lock
        pass


def test_a_waiting_writer_of_a_cache_waits_for_the_holder_and_finds_its_folder(tmp_path):
    """Two sweep workers dequantising one GGUF file: the second waits for the first, then uses its folder."""
    cache = tmp_path / "gguf" / "digest"
    holder = subprocess.Popen(
        [sys.executable, "-c", "from workbench.io import exclusive\nimport time, pathlib\n"
         f"with exclusive({str(cache)!r}):\n    print('held', flush=True)\n    time.sleep(2)\n"
         f"    pathlib.Path({str(cache)!r}).mkdir()"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with exclusive(cache, wait=True):
            assert cache.is_dir()  # made at the end of the holder's block: the lock came only once it let go
    finally:
        holder.kill()
        holder.wait()


WRITER = """import os, signal, sys
from workbench.io import atomic_path, staged_folder
with atomic_path(sys.argv[1] + '.txt') as tmp, staged_folder(sys.argv[1]) as staging:
    tmp.write_text('half')
    (staging / 'train.parquet').write_text('half')
    print(tmp, staging, flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)
"""


def test_a_killed_writers_temporary_files_are_removed_by_the_next_writer_and_a_live_ones_kept(tmp_path):
    """A sweep killed mid-write left its ``.NAME.*.tmp`` in the predictions folder for good; a live writer's
    temporary files (another process, stopped mid-write) must survive the next writer's clean-up."""
    from workbench.io import staged_folder, write_text

    target = tmp_path / "out"
    killed, live = (subprocess.Popen([sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, text=True)
                    for _ in range(2))  # fmt: skip
    try:
        killed_files, live_files = ([Path(p) for p in w.stdout.readline().split()] for w in (killed, live))
        killed.kill()
        killed.wait()
        assert all(path.exists() for path in killed_files + live_files)
        write_text("whole", tmp_path / "out.txt")
        with staged_folder(target) as staging:
            (staging / "train.parquet").write_text("whole")
        assert (tmp_path / "out.txt").read_text() == "whole" and (target / "train.parquet").read_text() == "whole"
        assert not any(path.exists() for path in killed_files)
        assert all(path.exists() for path in live_files)
    finally:
        for writer in (killed, live):
            writer.kill()
            writer.wait()


def test_writing_a_probe_set_over_other_files_is_refused(tmp_path):
    from test_inoculation import _frame

    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(WorkbenchError, match=r"holds \['notes.txt'\], which are not probe files"):
        write_probes(_frame(4, "train", 0), tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_jsonl_rebuild_replaces_an_older_parquet_set(tmp_path):
    """A JSONL rebuild used to leave the old Parquet files, which `probes load` then returned."""
    from test_inoculation import _frame

    old, new = _frame(6, "train", 0), _frame(6, "train", 1).with_columns(question=pl.lit("new question"))
    write_probes(old, tmp_path / "set")
    write_probes(new, tmp_path / "set", fmt="jsonl")
    assert sorted(p.name for p in (tmp_path / "set").iterdir()) == ["train.jsonl"]
    assert read_probes(tmp_path / "set")["question"].unique().to_list() == ["new question"]


def test_a_parquet_file_replaced_while_it_is_read_is_read_whole(tmp_path):
    """``workbench.io.read_parquet`` sees one version of a file another process keeps replacing (polars, given the
    path, opens it more than once and read half of one version and half of the next in about one read in six)."""
    from workbench.io import read_parquet

    table = tmp_path / "trials.parquet"
    writer = (
        "import itertools, polars as pl, sys\nfrom workbench.io import write_parquet\n"
        "for n in itertools.cycle(range(50, 2001, 50)):\n"
        "    write_parquet(pl.DataFrame({'a': range(n), 'b': [str(i) * 20 for i in range(n)]}), sys.argv[1])\n"
    )
    process = subprocess.Popen([sys.executable, "-c", writer, str(table)], env=ENV)
    try:
        while not table.exists():
            time.sleep(0.01)
        for _ in range(400):
            frame = read_parquet(table)
            assert frame["a"].to_list() == list(range(frame.height)) and frame.height % 50 == 0
    finally:
        process.kill()
        process.wait()
