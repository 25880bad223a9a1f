"""The README is executable: its `bash` blocks run as written, in order, in one shell, after the two commands.

The blocks run in a folder laid out like a checkout (its `.venv` and `../shared` linked to the real ones), so
the commands write into that folder's `workspace/`, never into this checkout or the user's workspace.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.wordnet, pytest.mark.model, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)


def readme_script() -> str:
    """The README's `bash` blocks, in order, as one script that stops at the first failing command."""
    blocks = BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    return "set -euo pipefail\n" + "\n".join(f"echo '### README block {n}'\n{block}" for n, block in enumerate(blocks))


def test_the_readme_has_runnable_blocks_and_marks_the_others():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(BLOCK.findall(text)) >= 7
    assert "source .venv/bin/activate" in BLOCK.findall(text)[0]
    assert not re.search(r"^```(sh|console)\n", text, re.M), "shell blocks are fenced as ```shell"


def test_every_bash_block_of_the_readme_runs_as_written(tmp_path):
    if not (SHARED / "data").is_dir():
        pytest.skip("../shared/data is not here")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".venv").symlink_to(ROOT / ".venv", target_is_directory=True)
    (tmp_path / "shared").symlink_to(SHARED, target_is_directory=True)
    tests_home = Path(os.environ["WORKBENCH_HOME"])  # provisioned sources, copied rather than built again
    for name in ("nltk_data", "graphs"):
        if (tests_home / name).is_dir():
            shutil.copytree(tests_home / name, checkout / "workspace" / name, symlinks=True)
    # SmolLM2's dequantised weights, made once for the whole run (conftest): linked, as the tests' workspace has them
    (checkout / "workspace" / "predictions").mkdir()
    (checkout / "workspace" / "predictions" / "gguf").symlink_to(
        os.environ["WORKBENCH_TESTS_GGUF"], target_is_directory=True
    )
    env = {key: value for key, value in os.environ.items() if key not in ("WORKBENCH_HOME", "VIRTUAL_ENV")}
    result = subprocess.run(
        ["bash", "-c", readme_script()], cwd=checkout, env=env, capture_output=True, text=True, timeout=1800
    )
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    workspace = checkout / "workspace"
    for made in ("probes/hypernymy/test.parquet", "predictions/minilm-hyponymy.parquet", "report.html",
                 "health.parquet", "runs/inoc/trials.parquet", "olmpics/minilm-age.parquet"):  # fmt: skip
        assert (workspace / made).is_file(), made
    assert sorted(path.name for path in checkout.iterdir()) == [".venv", "workspace"]  # nothing beside the workspace
