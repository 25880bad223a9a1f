"""Files the workbench keeps for itself recover on their own, and never feed it damaged values: the prediction
cache (a digest per entry), the model files' digests; a full disk is one line that keeps what was there (issue 28)."""

import json
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from workbench.errors import DataSourceError, WorkbenchError
from workbench.scoring.cache import PredictionCache


def test_a_cache_with_random_bytes_in_the_middle_never_gives_a_changed_value(tmp_path):
    rng = np.random.default_rng(0)
    values = {f"item-{i}": rng.standard_normal(96).astype(np.float32) for i in range(3000)}
    for seed in range(3):  # damage at three places: values, pages of the tree
        path = tmp_path / f"cache-{seed}.sqlite"
        PredictionCache(path).put("fp", values)
        size = path.stat().st_size
        with open(path, "r+b") as handle:
            handle.seek(int(size * (0.3 + 0.2 * seed)))
            handle.write(np.random.default_rng(seed).bytes(4096))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            found = PredictionCache(path).get("fp", list(values))
        assert all(np.array_equal(found[key], values[key]) for key in found)  # what is used is what was stored
        assert len(found) < len(values) and any("damaged" in str(w.message) for w in caught)  # and the rest reported
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # damaged entries were deleted (or the file set aside): no second warning
            assert set(PredictionCache(path).get("fp", list(values))) == set(found)


def test_a_full_cache_disk_keeps_the_cache(tmp_path, monkeypatch):
    import sqlite3

    cache = PredictionCache(tmp_path / "c.sqlite")
    cache.put("fp", {"k": np.ones(3)})
    real = PredictionCache._transaction

    def full(self, work):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(PredictionCache, "_transaction", full)
    with pytest.raises(DataSourceError, match="is full .* free some space and rerun \\(the cache is kept\\)"):
        cache.put("fp", {"j": np.ones(3)})
    monkeypatch.setattr(PredictionCache, "_transaction", real)
    assert len(cache) == 1 and not (tmp_path / "c.sqlite.damaged").exists()


def test_a_truncated_digest_store_recovers_by_itself(tmp_path, minilm_path):
    from workbench.scoring.fingerprints import file_digests, model_files

    files = [path for path in model_files(minilm_path) if path.suffix == ".json"]
    store = tmp_path / "file_digests.json"
    expected = file_digests(files, store)
    for damage in (store.read_bytes()[: store.stat().st_size // 2], b"[1, 2]", b"\xff\xfe", b""):
        store.write_bytes(damage)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            assert file_digests(files, store) == expected
        assert isinstance(json.loads(store.read_text()), dict)  # rewritten whole


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (as root), removed afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if shutil.which("mount") is None or subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True
    ).returncode:
        pytest.skip("mounting a tmpfs needs root")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_a_full_disk_on_the_output_is_one_line_and_keeps_the_old_file(tiny_disk):
    import polars as pl

    from workbench.io import write_parquet

    (tiny_disk / "p.parquet").write_bytes(b"old")
    frame = pl.DataFrame({"x": np.random.default_rng(0).random(200_000)})
    with pytest.raises(WorkbenchError, match=r"cannot write .*p.parquet: .*No space left on device.* free some"):
        write_parquet(frame, tiny_disk / "p.parquet")
    assert (tiny_disk / "p.parquet").read_bytes() == b"old" and [p.name for p in tiny_disk.iterdir()] == ["p.parquet"]
