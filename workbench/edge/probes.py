"""Span-classification probes on frozen representations (edge probing; SPEC §4, §5).

``span_features``: for each row, the mean of its span's token states (the mean of the two spans'
means for two-span tasks) at each requested layer, read through ``workbench.representations``,
so one encoder pass serves every probe, control and MDL block. ``SpanProbe`` (fit / predict) is a
linear layer or a one-hidden-layer MLP (ReLU, dropout), on one layer or on a learned scalar mix of
all layers (softmax weights and a scale, as ELMo and Tenney et al. 2019).

Controls: ``control_labels`` gives every word type one fixed random label (Hewitt & Liang 2019),
``selectivity`` = task accuracy - control-task accuracy; ``online_codelength`` is Voita & Titov's
MDL online code over the block schedule of SPEC §5, in bits.

>>> encoder = load_encoder(minilm)  # doctest: +SKIP
>>> result = probe_task(encoder, frame, EdgeSpec(probe="mlp", layer=6))  # doctest: +SKIP
"""

import math
from dataclasses import dataclass

import numpy as np
import polars as pl
import torch

from workbench.edge.data import EDGE_SCHEMA
from workbench.errors import SpecError, WorkbenchError
from workbench.representations import Encoder, RepresentationCache, token_states, word_index
from workbench.schema import conform
from workbench.scoring.models import torch_threads

PROBES = ("linear", "mlp")
SUMMARY_COLUMNS = (  # what a results table shows of a probe_task summary, left to right
    "encoder",
    "control",
    "task",
    "probe",
    "layer",
    "accuracy",
    "control_accuracy",
    "selectivity",
    "codelength_bits",
    "compression",
)
MDL_SCHEDULE = (0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.25, 12.5, 25.0, 50.0, 100.0)  # percent of the training set


@dataclass(frozen=True)
class EdgeSpec:
    """A span probe: ``probe`` (linear or mlp), ``layer`` (a layer number, -1 for the last, or
    ``"mix"`` for a learned scalar mix of all layers), and its training: ``epochs`` passes but at
    least ``min_steps`` steps (the small first blocks of the MDL code need them), AdamW at ``lr``.

    >>> EdgeSpec(probe="mlp", layer="mix", epochs=5)  # doctest: +ELLIPSIS
    EdgeSpec(probe='mlp', layer='mix', ...)
    """

    probe: str = "linear"
    layer: int | str = -1
    hidden: int = 256
    dropout: float = 0.1
    lr: float = 1e-3
    epochs: int = 10
    min_steps: int = 200
    batch_size: int = 32
    weight_decay: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.probe not in PROBES:
            raise SpecError(f"probe={self.probe!r} is not allowed; choose one of {list(PROBES)}")
        if not (self.layer == "mix" or (isinstance(self.layer, int) and self.layer >= -1)):
            raise SpecError(
                f"layer={self.layer!r} is not allowed; use a layer number (0 = embeddings, -1 = last) or 'mix'"
            )
        for name, low in (("hidden", 1), ("epochs", 1), ("min_steps", 0), ("batch_size", 1), ("seed", 0)):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < low:
                raise SpecError(f"{name}={getattr(self, name)!r} is out of range; use a whole number >= {low}")
        if not 0 <= self.dropout < 1:
            raise SpecError(f"dropout={self.dropout!r} is out of range; use a number in [0, 1)")
        if not 0 < self.lr <= 10:
            raise SpecError(f"lr={self.lr!r} is out of range; use a number in (0, 10]")

    def layers(self, encoder: Encoder) -> list[int]:
        """The encoder layers this probe reads."""
        if self.layer == "mix":
            return list(range(encoder.n_layers + 1))
        layer = encoder.n_layers if self.layer == -1 else self.layer
        if layer > encoder.n_layers:
            raise SpecError(f"layer={self.layer} does not exist; {encoder.name} has layers 0 to {encoder.n_layers}")
        return [layer]


def span_features(
    encoder: Encoder,
    frame: pl.DataFrame,
    layers: list[int],
    cache: RepresentationCache | None = None,
    progress: bool = True,
) -> np.ndarray:
    """``[rows, len(layers), hidden]``: each row's mean-pooled span state at each layer."""
    frame = conform(frame, EDGE_SCHEMA, "edge frame")
    texts = frame["text"].to_list()
    states = token_states(encoder, texts, layers, cache, progress=progress)
    alignment = {text: np.array(word_index(encoder, text)) for text in dict.fromkeys(texts)}
    out = np.zeros((frame.height, len(layers), encoder.hidden_size), dtype=np.float32)
    spans = frame.select("span1_start", "span1_end", "span2_start", "span2_end").rows()
    for row, (text, span) in enumerate(zip(texts, spans)):
        words = alignment[text]
        pooled = []
        for start, end in ((span[0], span[1]), (span[2], span[3])):
            if start is None:
                continue
            tokens = np.nonzero((words >= start) & (words < end))[0]
            if len(tokens) == 0:
                raise WorkbenchError(
                    f"the span [{start}, {end}) of {text!r} has no tokens (truncated?); shorten the text"
                )
            pooled.append(np.stack([states[(text, layer)][tokens].mean(axis=0) for layer in layers]))
        out[row] = np.mean(pooled, axis=0)
    return out


class _Network(torch.nn.Module):
    def __init__(self, n_layers: int, hidden_size: int, n_labels: int, spec: EdgeSpec) -> None:
        super().__init__()
        self.mix = torch.nn.Parameter(torch.zeros(n_layers)) if n_layers > 1 else None
        self.gamma = torch.nn.Parameter(torch.ones(1)) if n_layers > 1 else None
        if spec.probe == "linear":
            self.classifier = torch.nn.Sequential(
                torch.nn.Dropout(spec.dropout), torch.nn.Linear(hidden_size, n_labels)
            )
        else:
            self.classifier = torch.nn.Sequential(
                torch.nn.Linear(hidden_size, spec.hidden),
                torch.nn.ReLU(),
                torch.nn.Dropout(spec.dropout),
                torch.nn.Linear(spec.hidden, n_labels),
            )

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        if self.mix is None:
            return self.classifier(features[:, 0])
        weights = torch.softmax(self.mix, dim=0)
        return self.classifier(self.gamma * (features * weights[None, :, None]).sum(dim=1))


class SpanProbe:
    """A linear or MLP classifier over span features (``span_features``), trained with AdamW.

    Learned state: ``labels_`` (the label of each output), ``network_``, ``mix_weights_`` (None
    unless several layers are mixed).

    >>> probe = SpanProbe(EdgeSpec("mlp")).fit(features, labels)  # doctest: +SKIP
    """

    def __init__(self, spec: EdgeSpec = EdgeSpec(), labels: list[str] | None = None) -> None:
        self.spec = spec
        self.fixed_labels = labels

    def fit(self, features: np.ndarray, labels: list[str]) -> "SpanProbe":
        spec = self.spec
        self.labels_ = list(self.fixed_labels) if self.fixed_labels is not None else sorted(set(labels))
        index = {label: i for i, label in enumerate(self.labels_)}
        unknown = sorted(set(labels) - index.keys())
        if unknown:
            raise WorkbenchError(f"training labels {unknown[:5]} are not in the probe's label set")
        with torch.random.fork_rng(), torch_threads(1):
            torch.manual_seed(spec.seed)
            network = _Network(features.shape[1], features.shape[2], len(self.labels_), spec)
            optimizer = torch.optim.AdamW(network.parameters(), lr=spec.lr, weight_decay=spec.weight_decay)
            x = torch.as_tensor(features)
            y = torch.as_tensor([index[label] for label in labels])
            generator = torch.Generator().manual_seed(spec.seed)
            network.train()
            steps = max(spec.epochs * -(-len(x) // spec.batch_size), spec.min_steps)
            order = torch.empty(0, dtype=torch.long)
            for _ in range(steps):
                if len(order) == 0:
                    order = torch.randperm(len(x), generator=generator)
                batch, order = order[: spec.batch_size], order[spec.batch_size :]
                loss = torch.nn.functional.cross_entropy(network(x[batch]), y[batch])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        self.network_ = network.eval()
        self.mix_weights_ = torch.softmax(network.mix, 0).detach().numpy() if network.mix is not None else None
        return self

    def log_proba(self, features: np.ndarray) -> np.ndarray:
        """Natural-log probabilities, ``[rows, labels]``."""
        with torch.inference_mode(), torch_threads(1):
            return torch.log_softmax(self.network_(torch.as_tensor(features)), dim=1).numpy()

    def predict(self, features: np.ndarray) -> list[str]:
        return [self.labels_[i] for i in self.log_proba(features).argmax(axis=1)]


def control_labels(frame: pl.DataFrame, seed: int = 0) -> pl.DataFrame:
    """``frame`` with each word type's label replaced by one fixed random label (Hewitt & Liang's
    control task): labels drawn from the task's training label distribution, one per type."""
    frame = conform(frame, EDGE_SCHEMA, "edge frame")
    train = frame.filter(pl.col("split") == "train")
    pool = (train if not train.is_empty() else frame)["label"].to_numpy()
    types = sorted(frame["word"].unique().to_list())
    rng = np.random.default_rng(seed)
    mapping = dict(zip(types, rng.choice(pool, size=len(types)).tolist()))
    return frame.with_columns(label=pl.col("word").replace_strict(mapping, return_dtype=pl.String))


def _split(frame: pl.DataFrame, features: np.ndarray, split: str) -> tuple[np.ndarray, list[str]]:
    mask = (frame["split"] == split).to_numpy()
    return features[mask], frame.filter(pl.col("split") == split)["label"].to_list()


def evaluate(
    frame: pl.DataFrame, features: np.ndarray, spec: EdgeSpec, test_split: str = "test"
) -> tuple[SpanProbe, pl.DataFrame]:
    """Train on the train rows, predict the ``test_split`` rows: the probe and those rows with ``pred``
    and ``correct``."""
    train_x, train_y = _split(frame, features, "train")
    test_x, _ = _split(frame, features, test_split)
    if len(train_y) == 0 or len(test_x) == 0:
        raise WorkbenchError(
            f"the edge frame needs train and {test_split} rows; it has splits {sorted(set(frame['split']))}"
        )
    probe = SpanProbe(spec, labels=sorted(set(frame["label"]))).fit(train_x, train_y)
    rows = frame.filter(pl.col("split") == test_split).with_columns(
        pred=pl.Series(probe.predict(test_x), dtype=pl.String)
    )
    return probe, rows.with_columns(correct=pl.col("pred") == pl.col("label"))


def probe_task(
    encoder: Encoder,
    frame: pl.DataFrame,
    spec: EdgeSpec = EdgeSpec(),
    *,
    control_seed: int | None = 0,
    mdl: bool = False,
    cache: RepresentationCache | None = None,
    progress: bool = True,
) -> dict[str, pl.DataFrame]:
    """One encoder on one task: ``predictions`` (test rows with pred/correct), ``summary`` (accuracy,
    control-task accuracy and selectivity, and with ``mdl`` the online codelength and compression).
    Every probe reads the same cached features, computed once."""
    features = span_features(encoder, frame, spec.layers(encoder), cache, progress)
    probe, predictions = evaluate(frame, features, spec)
    summary = {
        "encoder": encoder.name, "control": encoder.control, "task": frame["task"][0], "probe": spec.probe,
        "layer": str(spec.layer), "accuracy": predictions["correct"].mean(),
        "n_train": int((frame["split"] == "train").sum()), "n_test": predictions.height,
    }  # fmt: skip
    if control_seed is not None:
        _, control = evaluate(control_labels(frame, control_seed), features, spec)
        summary["control_accuracy"] = control["correct"].mean()
        summary["selectivity"] = summary["accuracy"] - summary["control_accuracy"]
    if mdl:
        train_x, train_y = _split(frame, features, "train")
        code = online_codelength(train_x, train_y, spec, label_set=sorted(set(frame["label"])))
        summary.update(
            codelength_bits=code["codelength_bits"], uniform_bits=code["uniform_bits"], compression=code["compression"]
        )
    predictions = predictions.with_columns(
        encoder=pl.lit(encoder.name),
        encoder_control=pl.lit(encoder.control),
        probe=pl.lit(spec.probe),
        layer=pl.lit(str(spec.layer)),
    )
    mix = {"mix_weights": [probe.mix_weights_.tolist()]} if probe.mix_weights_ is not None else {}
    return {
        "predictions": predictions,
        "summary": pl.DataFrame([summary]).with_columns(**{k: pl.lit(pl.Series(v)) for k, v in mix.items()}),
    }


def mdl_blocks(n: int) -> list[int]:
    """End of each block of the online code for ``n`` training rows: the SPEC §5 percentages, at least 1 row each."""
    ends = sorted({max(1, math.ceil(n * share / 100)) for share in MDL_SCHEDULE})
    return [end for end in ends if end <= n]


def online_codelength(
    features: np.ndarray, targets: list[str], spec: EdgeSpec, label_set: list[str] | None = None, order_seed: int = 0
) -> dict:
    """Voita & Titov's online code of ``targets`` given ``features``, in bits (SPEC §5).

    The rows are shuffled (``order_seed``) and cut at ``mdl_blocks``; the first block costs
    log2 K bits a row (uniform code), each later block the cross-entropy (bits) of a probe trained
    from scratch on all rows before it. Returns the blocks, the codelength, the uniform codelength
    N log2 K and the compression (uniform / online).
    """
    label_set = sorted(set(targets)) if label_set is None else list(label_set)
    n, k = len(targets), len(label_set)
    if n < 2 or k < 2:
        raise WorkbenchError(f"the online code needs at least 2 rows and 2 labels (got {n} rows, {k} labels)")
    order = np.random.default_rng(order_seed).permutation(n)
    x, y = features[order], [targets[i] for i in order]
    index = {label: i for i, label in enumerate(label_set)}
    ends = mdl_blocks(n)
    block_bits = [ends[0] * math.log2(k)]
    for start, end in zip(ends[:-1], ends[1:]):
        probe = SpanProbe(spec, labels=label_set).fit(x[:start], y[:start])
        log_p = probe.log_proba(x[start:end])
        block_bits.append(float(-sum(log_p[row, index[label]] for row, label in enumerate(y[start:end])) / math.log(2)))
    codelength = float(sum(block_bits))
    uniform = n * math.log2(k)
    return {
        "blocks": ends,
        "block_bits": block_bits,
        "codelength_bits": codelength,
        "uniform_bits": uniform,
        "compression": uniform / codelength,
    }
