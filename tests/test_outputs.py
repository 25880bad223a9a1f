"""Nothing lost: an output never replaces an input, a file of another kind, a device, or a concurrent run's result
(issue 28; docs/RELIABILITY.md). The commands run in-process through ``workbench.cli.main``."""

import os
from pathlib import Path

import polars as pl
import pytest
from fake_scores import predictions_of
from inprocess import refused, workbench

from workbench.io import exclusive


@pytest.fixture(scope="module")
def files(tmp_path_factory, released_dir) -> Path:
    """A small probe file (the first 60 released DictionaryQA test questions) and two prediction files of it."""
    from workbench.probes.formats import read_probes

    folder = tmp_path_factory.mktemp("outputs")
    lines = (released_dir / "dictionary_qa_test.jsonl").read_text(encoding="utf-8").splitlines()[:60]
    (folder / "dictionary_qa_test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    probes = read_probes(folder / "dictionary_qa_test.jsonl")
    predictions_of(probes, "a").write_parquet(folder / "a.parquet")
    predictions_of(probes, "b", seed=1).write_parquet(folder / "b.parquet")
    return folder


def _bytes(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()}


def test_an_output_that_is_an_input_is_refused_before_any_work(files, minilm_path):
    before = _bytes(files)
    probes = files / "dictionary_qa_test.jsonl"
    score = ("score", "--model", minilm_path, "--scorer", "similarity", "--probes", probes)
    refused(workbench(*score, "--out", probes), "is also an input")
    refused(workbench(*score, "--out", probes, "--force"), "is also an input")
    refused(workbench("report", files / "a.parquet", "--html", files / "a.parquet", "--force"), "is also an input")
    assert _bytes(files) == before


def test_a_file_of_another_kind_is_replaced_only_with_force(files, tmp_path, minilm_path):
    other = tmp_path / "other.parquet"
    other.write_bytes((files / "b.parquet").read_bytes())
    refused(workbench("report", files / "a.parquet", "--html", other), "already holds predictions")
    assert other.read_bytes() == (files / "b.parquet").read_bytes()
    notebook = tmp_path / "notes.html"
    notebook.write_text("<html>my notes</html>")
    refused(workbench("report", files / "a.parquet", "--html", notebook), "--force")
    assert notebook.read_text() == "<html>my notes</html>"
    report = tmp_path / "report.html"
    for _ in range(2):  # a report replaces the report it wrote, without --force
        code, _, err = workbench("report", files / "a.parquet", "--html", report, "--n-boot", "10")
        assert code == 0, err
    code, _, err = workbench("report", files / "a.parquet", "--html", notebook, "--n-boot", "10", "--force")
    assert code == 0 and "my notes" not in notebook.read_text(), err
    probe_copy = tmp_path / "probes.parquet"
    from workbench.probes.formats import read_probes

    read_probes(files / "dictionary_qa_test.jsonl").write_parquet(probe_copy)
    score = ("score", "--model", minilm_path, "--scorer", "similarity", "--probes", files / "dictionary_qa_test.jsonl")
    refused(workbench(*score, "--out", probe_copy), "already holds probes")


def test_an_output_suffix_says_what_is_written(files, tmp_path, minilm_path):
    score = ("score", "--model", minilm_path, "--scorer", "similarity", "--probes", files / "dictionary_qa_test.jsonl")
    refused(workbench(*score, "--out", tmp_path / "p.csv"), "should end in .parquet")
    refused(workbench("report", files / "a.parquet", "--html", tmp_path / "r.parquet"), "should end in .html")
    refused(workbench("population", "--predictions", files / "a.parquet", "--out", tmp_path / "p.txt"),
            "should end in .parquet or .csv")  # fmt: skip
    assert not any(tmp_path.iterdir())


def test_devices_fifos_and_sockets_are_no_outputs(files, tmp_path):
    import socket
    import stat

    from workbench.errors import WorkbenchError
    from workbench.io import write_text

    device, fifo, sock = tmp_path / "null.html", tmp_path / "fifo.html", tmp_path / "sock.html"
    try:  # a null device of the test's own: a failing check must never replace the machine's /dev/null
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    os.mkfifo(fifo)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    for target in (device, fifo, sock):
        refused(workbench("report", files / "a.parquet", "--html", target), "is a device, socket or pipe")
        with pytest.raises(WorkbenchError, match="device, socket or pipe"):
            write_text("x", target)  # the atomic rename itself never replaces one
    server.close()
    assert device.is_char_device() and fifo.is_fifo() and sock.is_socket()


def test_a_second_score_to_one_output_is_refused_while_the_first_runs(files, tmp_path, minilm_path):
    out = tmp_path / "p.parquet"
    score = ("score", "--model", minilm_path, "--scorer", "similarity", "--probes", files / "dictionary_qa_test.jsonl")
    with exclusive(out):  # the first run holds its output (a kernel lock: the same in another process)
        refused(workbench(*score, "--out", out), "is being written by")
    assert not out.exists()


def test_probes_build_refuses_a_folder_of_other_files_before_building(tmp_path, monkeypatch):
    from workbench import probes

    (tmp_path / "mine.txt").write_text("keep me")
    monkeypatch.setattr(probes, "build_probes", lambda *_, **__: pytest.fail("built before checking"))
    refused(workbench("probes", "build", "--probe", "hypernymy", "--out", tmp_path), "the workbench did not write")
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_serve_names_a_host_that_is_not_this_machines_and_a_negative_preheat(tmp_path):
    refused(workbench("serve", "--host", "8.8.8.8", "--port", "0"), "--host 8.8.8.8 is not an address of this machine")
    refused(workbench("serve", "--host", "8.8.8.8"), "--host 8.8.8.8 is not an address of this machine")
    refused(workbench("serve", "--preheat", "-3"), "--preheat -3 is not a number of kernels")


def test_the_machines_own_addresses_are_on_the_host_allowlist():
    psutil = pytest.importorskip("psutil")  # an independent reading of the interfaces
    import ipaddress
    import socket

    from workbench.cli.serve import allowed_hosts

    own = {ipaddress.ip_address(address.address.split("%")[0]) for addresses in psutil.net_if_addrs().values()
           for address in addresses if address.family in (socket.AF_INET, socket.AF_INET6)}  # fmt: skip
    expected = {f"[{a}]" if a.version == 6 else str(a) for a in own if not (a.is_loopback or a.is_link_local)}
    assert expected <= set(allowed_hosts("0.0.0.0", []))
    assert "8.8.8.8" not in allowed_hosts("0.0.0.0", [])


def _commands() -> list[tuple[str, object]]:
    """Every command of the ``workbench`` app as (its words, its click command)."""
    import typer

    from workbench.cli import make_app

    found, todo = [], [("", typer.main.get_command(make_app()))]
    while todo:
        words, command = todo.pop()
        if hasattr(command, "commands"):
            todo += [(f"{words} {name}".strip(), sub) for name, sub in command.commands.items()]
        else:
            found.append((words, command))
    return sorted(found, key=lambda pair: pair[0])


def _names_a_path(parameter) -> bool:
    """A parameter typed as a path (``Path``, ``list[Path]``), or text whose help says it names a file or folder."""
    import typing

    descriptor = getattr(parameter, "type_descriptor", None)
    annotation = descriptor.annotation if descriptor is not None else None
    if Path in (annotation, *typing.get_args(annotation), *(a for t in typing.get_args(annotation)
                                                           for a in typing.get_args(t))):  # fmt: skip
        return True
    text = (getattr(parameter, "help", None) or "").lower()
    return any(word in text for word in ("folder", "=path", "a file", "file or", "file(s)", "file to", " file ("))


def test_every_command_declares_every_path_option_for_the_guard():
    """The next command cannot forget its outputs: a path option that no ``declares`` names fails here."""
    from workbench.cli.guard import Writes

    commands = _commands()
    assert len(commands) >= 25, [words for words, _ in commands]
    undeclared, unknown, outputs = [], [], 0
    for words, command in commands:
        declared = getattr(command.callback, "declared", {})
        names = {parameter.name for parameter in command.params}
        undeclared += [f"{words} --{p.name}" for p in command.params if _names_a_path(p) and p.name not in declared]
        unknown += [f"{words}: {name}" for name in declared if name not in names]
        outputs += sum(isinstance(what, Writes) for what in declared.values())
    assert not undeclared, f"path options no declaration names (add @declares(...) to the command): {undeclared}"
    assert not unknown, f"declarations of options the command does not have: {unknown}"
    assert outputs >= 18


def _samples(probes, path: Path, *, logged=None) -> Path:
    """``probes`` as lm-eval ``--log_samples`` writes them for an exported task: doc, filtered_resps (the gold
    most likely), one line per question; ``logged``: the records to write instead."""
    import json

    records = logged if logged is not None else [
        {"doc_id": i, "doc": row, "filtered_resps": [[-1.0 if j == row["answer"] else -3.0, False]
                                                     for j in range(len(row["choices"]))]}
        for i, row in enumerate(probes.iter_rows(named=True))
    ]  # fmt: skip
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_data_lost_reproductions_of_issue_42_are_refused_and_change_nothing(files, tmp_path):
    """Each way issue 42 found to lose a file: refused in one line before any work, every file as it was."""
    import json

    from workbench.probes.formats import read_probes, write_probes

    probes = read_probes(files / "dictionary_qa_test.jsonl")
    samples = _samples(probes, tmp_path / "s.jsonl")
    probe_parquet = tmp_path / "probes.parquet"
    probes.write_parquet(probe_parquet)
    report = tmp_path / "report.html"
    assert workbench("report", files / "a.parquet", "--html", report, "--n-boot", "10")[0] == 0
    table = tmp_path / "table.csv"
    table.write_text("a,b\n1,2\n")
    predictions = tmp_path / "a.parquet"
    predictions.write_bytes((files / "a.parquet").read_bytes())
    folder = tmp_path / "P"
    write_probes(probes.with_columns(split=pl.lit("test")), folder)
    arc = tmp_path / "mcqa" / "arc_easy"
    arc.mkdir(parents=True)
    arc_record = {"id": "q1", "question": {"stem": "Which is a mammal?", "choices": [
        {"label": "A", "text": "dog"}, {"label": "B", "text": "trout"}]}, "answerKey": "A"}  # fmt: skip
    (arc / "dev.jsonl").write_text(json.dumps(arc_record) + "\n")
    sweep = tmp_path / "S"
    (sweep / "units").mkdir(parents=True)
    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}

    refused(workbench("import", "lm-eval", samples, "--out", samples), "is also an input")
    refused(workbench("import", "lm-eval", samples, "--out", tmp_path / "." / "s.jsonl"), "is also an input")
    refused(workbench("import", "lm-eval", samples, "--out", probe_parquet), "already holds probes")
    refused(workbench("import", "lm-eval", samples, "--out", report), "already holds report")
    refused(workbench("import", "lm-eval", samples, "--out", tmp_path / "new.csv"), "should end in .parquet")
    for target, held in ((predictions, "predictions"), (probe_parquet, "probes"), (table, "a file the workbench")):
        refused(workbench("population", "--sweep", sweep, "--out", target), f"already holds {held}")
    refused(workbench("probes", "check", samples, "--out", samples), "is also an input")
    refused(workbench("probes", "control", "--kind", "no-lang", "--probes", folder, "--out", folder),
            "is also an input")  # fmt: skip
    refused(workbench("probes", "control", "--kind", "no-lang", "--probes", folder / "test.parquet", "--out", folder),
            "holds the input")  # fmt: skip
    refused(workbench("edge", "build", "--task", "supersense", "--n", "30", "--out", arc),
            "already holds a science QA set")  # fmt: skip
    link = tmp_path / "link"
    link.symlink_to(folder)
    refused(workbench("probes", "control", "--kind", "no-lang", "--probes", link / ".." / "P", "--out", link),
            "is also an input")  # fmt: skip
    hard = tmp_path / "hard.parquet"
    os.link(probe_parquet, hard)
    refused(workbench("probes", "check", hard, "--out", probe_parquet, "--examples", "0"), "is also an input")
    after = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file() and path != hard}
    assert after == before


def test_an_exported_task_name_from_the_data_never_leaves_the_output_folder(files, tmp_path):
    import json

    record = json.loads((files / "dictionary_qa_test.jsonl").read_text().splitlines()[0])
    record["notes"]["probe"] = "/../../../victim"
    evil = tmp_path / "deep" / "er" / "evil.jsonl"
    evil.parent.mkdir(parents=True)
    evil.write_text(json.dumps(record) + "\n")
    code, out, err = workbench("export", "lm-eval", evil, "--out", tmp_path / "deep" / "er" / "tasks")
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "deep" / "er" / "tasks").iterdir()) == [
        "workbench_victim.jsonl", "workbench_victim.yaml"]  # fmt: skip
    assert not list(tmp_path.rglob("victim*"))


def test_a_lock_follows_the_folder_not_its_spelling(tmp_path):
    """Two spellings of one output (a symlink, ``..``) take one lock: the second writer is refused."""
    from workbench.io import LockedError

    (tmp_path / "runs" / "r1").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(tmp_path / "runs")
    (tmp_path / "r1-link").symlink_to(tmp_path / "runs" / "r1")  # a link to the folder itself took its own lock
    (tmp_path / "runs" / "x").mkdir()
    spellings = [tmp_path / "r1-link", tmp_path / "alias" / "r1", tmp_path / "runs" / "x" / ".." / "r1"]
    with exclusive(tmp_path / "runs" / "r1"):
        for spelling in spellings:
            with pytest.raises(LockedError, match="is being written by"):
                with exclusive(spelling):
                    pass


def test_a_users_hidden_files_make_a_folder_theirs(tmp_path):
    from workbench.errors import WorkbenchError
    from workbench.io import folder_kind
    from workbench.probes.formats import check_probe_folder

    probes = tmp_path / "probes"
    probes.mkdir()
    (probes / "test.parquet").write_bytes(b"PAR1")
    (probes / ".README").write_text("my notes")  # issue 53: `probes control --out` deleted it, and a .git beside it
    with pytest.raises(WorkbenchError, match=r"holds \['.README'\], which are not probe files"):
        check_probe_folder(probes)
    assert folder_kind(probes) == "other"
    (probes / ".README").unlink()
    (probes / ".test.parquet.host-1.x.tmp").write_text("")  # a killed writer's leftover is ours
    check_probe_folder(probes)
    assert folder_kind(probes) == "probes"


def test_a_folder_is_ours_only_by_the_marker_we_wrote(tmp_path):
    from workbench.io import MARKER, folder_kind, mark_folder, marked_files

    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "course.json").write_text('{"generator": "workbench course"}')  # our file's name and content, by hand
    mark_folder(folder, "course", ["course.json"])
    assert folder_kind(folder) == "course" and marked_files(folder, "course") == ["course.json"]
    assert marked_files(folder, "site") is None  # the marker names one kind
    (folder / "notes.txt").write_text("mine")  # a file the marker does not list makes the folder the user's
    assert folder_kind(folder) == "other"
    (folder / MARKER).write_text('{"kind": "course", "files": ["course.json", "notes.txt"]}')  # not written by us
    assert folder_kind(folder) == "other" and marked_files(folder, "course") is None


@pytest.mark.parametrize("label", ["Mini\u202eLM", "<img src=x onerror=alert(1)>" + "x" * 100, "a\nb", ""])
def test_a_prediction_file_from_outside_passes_the_names_check(files, tmp_path, label):
    from workbench.errors import WorkbenchError
    from workbench.io import read_predictions

    path = tmp_path / "theirs.parquet"
    pl.read_parquet(files / "a.parquet").with_columns(model=pl.lit(label)).write_parquet(path)
    with pytest.raises(WorkbenchError, match="the model label") as err:
        read_predictions(path)
    assert "\n" not in str(err.value)
