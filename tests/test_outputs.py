"""Nothing lost: an output never replaces an input, a file of another kind, a device, or a concurrent run's result
(issue 28; docs/RELIABILITY.md). The commands run in-process through ``workbench.cli.main``."""

import os
from pathlib import Path

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
    refused(workbench("probes", "build", "--probe", "hypernymy", "--out", tmp_path), "not probe files")
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
