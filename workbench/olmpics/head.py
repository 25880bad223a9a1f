"""A masked LM split into a frozen encoder and its MLM head restricted to the candidate words.

MC-MLM (oLMpics §2) scores a candidate by the MLM softmax at the mask, restricted to the candidates.
With the encoder frozen, the head sees one fixed vector per statement (the last layer at the mask),
so ``CandidateHead`` copies the model's own head (the transform MLP and the decoder rows of the
candidate tokens) and can be trained alone: all of it (MLP) or only its last layer (LINEAR).
A checkpoint without an MLM head (the offline MiniLM) gets one initialised from ``seed``; its
``fresh_head`` is then True and zero-shot scores are not meaningful.
"""

import copy
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from workbench.errors import WorkbenchError
from workbench.representations import Encoder, as_encoder
from workbench.scoring.models import ScoringWarning, check_device, load_network


@dataclass(frozen=True)
class MaskedLM:
    """A loaded masked LM: the full network, its tokenizer, the frozen encoder inside it, and
    whether its MLM head was initialised here (``fresh_head``) rather than loaded."""

    name: str
    network: torch.nn.Module
    tokenizer: object
    encoder: Encoder
    fresh_head: bool
    control: str = "none"
    seed: int = 0
    device: str = "cpu"


def load_masked_lm(name: str | Path, control: str = "none", seed: int = 0, device: str | None = None) -> MaskedLM:
    """Load ``name`` with its MLM head; a missing head is initialised from ``seed`` and flagged.

    ``control='random-weights'``: the same architecture, every weight from ``seed`` (a lower bound).
    """
    from transformers import AutoModelForMaskedLM

    device = check_device(device)
    loaded = load_network(name, AutoModelForMaskedLM, control, seed, "masked-LM")
    network, tokenizer, missing = loaded.network, loaded.tokenizer, loaded.missing
    if tokenizer.mask_token_id is None:
        raise WorkbenchError(f"the tokenizer of {name} has no mask token, so MC-MLM cannot use it")
    fresh = bool(missing)
    if fresh:
        warnings.warn(
            f"{name} has no trained MLM head (the checkpoint lacks {', '.join(sorted(missing)[:4])}...); the head was "
            f"initialised from seed {seed}, so zero-shot MC-MLM is unavailable: "
            "only the learning curves are meaningful.",
            ScoringWarning,
            stacklevel=2,
        )
    network = network.eval().to(device)
    encoder = as_encoder(network.base_model, tokenizer, str(name), control, device)
    return MaskedLM(str(name), network, tokenizer, encoder, fresh, control, seed, device)


class _Rows(torch.nn.Module):
    """The decoder's rows (and biases) for the candidate tokens only."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(weight)
        self.bias = torch.nn.Parameter(bias)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.linear(hidden, self.weight, self.bias)


class CandidateHead(torch.nn.Module):
    """The model's MLM head, keeping only the decoder rows of ``token_ids``: maps the hidden state
    at the mask to one logit per candidate token. ``last_layer()`` are the LINEAR parameters."""

    def __init__(self, model: MaskedLM, token_ids: list[int]) -> None:
        super().__init__()
        parent, attribute = _head_of(model.network)
        decoder = getattr(parent, attribute)
        ids = torch.tensor(token_ids, dtype=torch.long, device=decoder.weight.device)
        weight = decoder.weight.detach()[ids].clone()
        bias = decoder.bias.detach()[ids].clone() if decoder.bias is not None else torch.zeros(len(token_ids))
        saved = getattr(parent, attribute)
        setattr(parent, attribute, torch.nn.Identity())  # do not copy the whole vocabulary
        try:
            self.head = copy.deepcopy(parent)
        finally:
            setattr(parent, attribute, saved)
        setattr(self.head, attribute, _Rows(weight, bias.to(weight.device)))
        self.attribute = attribute
        self.token_ids = list(token_ids)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.head(hidden)

    def last_layer(self) -> list[torch.nn.Parameter]:
        return list(getattr(self.head, self.attribute).parameters())


def _head_of(network: torch.nn.Module) -> tuple[torch.nn.Module, str]:
    """The module that holds the output embeddings (the decoder) and the decoder's attribute name."""
    decoder = network.get_output_embeddings()
    for module in network.modules():
        if module is network:
            continue
        for attribute, child in module.named_children():
            if child is decoder:
                return module, attribute
    raise WorkbenchError(
        f"{type(network).__name__} keeps its MLM decoder outside a head module, so its head cannot be trained alone; "
        "use a BERT- or RoBERTa-style masked LM"
    )


def check_head(model: MaskedLM, head: CandidateHead, statement: str) -> None:
    """Raise unless ``head`` on the encoder's last layer reproduces the full model's logits on ``statement``."""
    encoded = model.tokenizer(statement, return_tensors="pt").to(model.device)
    position = encoded["input_ids"][0].tolist().index(model.tokenizer.mask_token_id)
    with torch.inference_mode():
        full = model.network(**encoded).logits[0, position, head.token_ids]
        hidden = model.network.base_model(**encoded).last_hidden_state[0, position]
        mine = head(hidden)
    if not torch.allclose(full, mine, atol=1e-3, rtol=1e-3):
        raise WorkbenchError(
            f"the MLM head of {model.name} ({type(model.network).__name__}) does not read the last layer alone, so it "
            "cannot be trained on frozen representations; use a BERT- or RoBERTa-style masked LM"
        )
