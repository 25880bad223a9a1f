"""oLMpics scoring: zero-shot MC-MLM and learning curves with a frozen encoder (SPEC §4, §6; oLMpics §3).

- ``zero_shot``: the model's own MLM head restricted to the candidates, through
  ``workbench.scoring.score(scorer="mlm", rule="mc-mlm")``. Without an MLM head it says so and
  returns nothing to score.
- ``run_curves``: for each N in ``CurveSpec.ns`` and each seed, N training statements (a seeded
  sample), the encoder frozen, the head trained (``mlp``: all of it; ``linear``: only its last
  layer), accuracy on the dev split. The hidden state at the mask comes from
  ``workbench.representations`` (one encoder pass per statement, cached on disk).
- ``summarize`` (WS and MAX, the weights of ``workbench.inoculation.curves``), ``language_sensitivity``
  (WS of max(0, acc - acc of the control)) and ``results_table`` (the layout of oLMpics Tables 2-9).

>>> curves = run_curves(with_controls(frame), "bert-base-uncased", CurveSpec(seeds=(0, 1)))  # doctest: +SKIP
>>> results_table(curves)  # doctest: +SKIP
"""

import random
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import torch

from workbench.errors import SpecError, WorkbenchError
from workbench.inoculation.curves import OLMPICS_N, seed_averaged_summary, ws_weight
from workbench.olmpics.head import CandidateHead, MaskedLM, check_head, load_masked_lm
from workbench.olmpics.probes import MASK, OLMPICS_SCHEMA
from workbench.progress import ProgressBar
from workbench.representations import RepresentationCache, token_states
from workbench.schema import PROBE_SCHEMA, conform
from workbench.scoring.models import Model, ScoringWarning, fingerprint, torch_threads

SETTINGS = ("mlp", "linear")
CURVE_SCHEMA: dict[str, pl.DataType] = {
    "model": pl.String(),  # model name or path as given
    "fingerprint": pl.String(),  # checksum of the frozen encoder's weights
    "probe": pl.String(),
    "control": pl.String(),  # none, no-lang, perturbed-lang
    "setting": pl.String(),  # zero-shot (n = 0), mlp, linear
    "n": pl.Int64(),  # training statements
    "seed": pl.Int64(),
    "accuracy": pl.Float64(),  # on the dev split
    "n_dev": pl.Int64(),
    "fresh_head": pl.Boolean(),  # the MLM head was initialised, not loaded: no zero-shot
}


@dataclass(frozen=True)
class CurveSpec:
    """Learning-curve settings: training sizes, seeds, which parameters train, and the optimiser.

    Each (N, seed) trains for ``epochs`` passes, at least ``min_steps`` steps, AdamW at ``lr``.

    >>> CurveSpec(ns=(62, 125), seeds=(0, 1), settings=("linear",))  # doctest: +ELLIPSIS
    CurveSpec(ns=(62, 125), ...)
    """

    ns: tuple[int, ...] = OLMPICS_N
    seeds: tuple[int, ...] = (0, 1, 2)
    settings: tuple[str, ...] = SETTINGS
    lr: float = 1e-3
    epochs: int = 20
    min_steps: int = 100
    batch_size: int = 32
    weight_decay: float = 0.0

    def __post_init__(self) -> None:
        for name in ("ns", "seeds", "settings"):
            if not isinstance(getattr(self, name), tuple) or not getattr(self, name):
                raise SpecError(f"{name}={getattr(self, name)!r} must be a non-empty tuple")
        if any(not isinstance(n, int) or n < 1 for n in self.ns):
            raise SpecError(f"ns={self.ns!r} must be whole numbers >= 1 (oLMpics uses {OLMPICS_N})")
        if any(not isinstance(s, int) or s < 0 for s in self.seeds):
            raise SpecError(f"seeds={self.seeds!r} must be whole numbers >= 0")
        if any(setting not in SETTINGS for setting in self.settings):
            raise SpecError(f"settings={self.settings!r} is not allowed; choose from {list(SETTINGS)}")
        if not (isinstance(self.lr, float | int) and 0 < self.lr <= 10):
            raise SpecError(f"lr={self.lr!r} is out of range; use a number in (0, 10]")
        for name, low in (("epochs", 1), ("min_steps", 0), ("batch_size", 1)):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < low:
                raise SpecError(f"{name}={getattr(self, name)!r} is out of range; use a whole number >= {low}")
        if not 0 <= self.weight_decay <= 1:
            raise SpecError(f"weight_decay={self.weight_decay!r} is out of range; use a number from 0 to 1")


def to_probe_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """An ``OLMPICS_SCHEMA`` frame as a ``PROBE_SCHEMA`` frame (statement as question) for ``workbench.scoring``."""
    frame = conform(frame, OLMPICS_SCHEMA, "oLMpics frame")
    data = frame.select(
        "id", "probe", "split", "choices", "answer",
        pl.col("statement").alias("question"), pl.lit("olmpics").alias("source"), pl.col("control").alias("template"),
    )  # fmt: skip
    missing = [pl.lit(None, dtype).alias(name) for name, dtype in PROBE_SCHEMA.items() if name not in data.columns]
    return conform(data.with_columns(missing), PROBE_SCHEMA, "oLMpics probe frame")


def zero_shot(frame: pl.DataFrame, model: str | Path | MaskedLM, **score_options) -> pl.DataFrame | None:
    """Zero-shot MC-MLM predictions of every row (``PREDICTION_SCHEMA``; ``template`` holds the control),
    or None, with a warning, when the model has no trained MLM head (zero-shot is then unavailable)."""
    from workbench.scoring import score

    loaded = model if isinstance(model, MaskedLM) else load_masked_lm(model, seed=score_options.get("seed", 0))
    if loaded.fresh_head:
        warnings.warn(
            f"zero-shot MC-MLM is unavailable for {loaded.name}: it has no trained MLM head",
            ScoringWarning,
            stacklevel=2,
        )
        return None
    wrapped = Model(
        name=loaded.name, scorer="mlm", control=loaded.control, network=loaded.network, tokenizer=loaded.tokenizer,
        max_length=loaded.encoder.max_length, fingerprint=fingerprint(loaded.network, loaded.tokenizer, loaded.control),
        seed=loaded.seed, device=loaded.device,
    )  # fmt: skip
    options = {key: value for key, value in score_options.items() if key != "seed"}
    return score(
        to_probe_frame(frame), wrapped, scorer="mlm", rule="mc-mlm", control=loaded.control, seed=loaded.seed, **options
    )


def candidate_tokens(tokenizer, statement: str, choices: list[str]) -> list[int]:
    """The token id of each choice written into the statement at the mask; each must be one token."""
    prefix, suffix = statement.split(MASK)
    ids = []
    for choice in choices:
        encoded = tokenizer(prefix + choice + suffix, return_offsets_mapping=True, return_special_tokens_mask=True)
        start, end = len(prefix), len(prefix) + len(choice)
        inside = [
            token
            for token, (left, right), special in zip(
                encoded["input_ids"], encoded["offset_mapping"], encoded["special_tokens_mask"]
            )
            if not special and right > left and left >= start and right <= end
        ]  # fmt: skip
        if len(inside) != 1:
            raise WorkbenchError(
                f"MC-MLM needs every candidate to be one token; {choice!r} is {len(inside)} tokens for this tokenizer "
                f"(in {statement!r}). Regenerate the probe with this model's vocabulary (--vocab-model) "
                "or drop the row."
            )
        ids.append(int(inside[0]))
    return ids


def run_curves(
    frame: pl.DataFrame,
    model: str | Path | MaskedLM,
    spec: CurveSpec = CurveSpec(),
    *,
    cache: bool | str | Path | RepresentationCache = True,
    threads: int | None = None,
    progress: bool = True,
) -> pl.DataFrame:
    """Learning curves of every (probe, control) in ``frame``: ``CURVE_SCHEMA``, one row per
    (setting, N, seed), plus the zero-shot row (N = 0) when the model has an MLM head."""
    frame = conform(frame, OLMPICS_SCHEMA, "oLMpics frame")
    loaded = model if isinstance(model, MaskedLM) else load_masked_lm(model)
    store = (
        cache
        if isinstance(cache, RepresentationCache)
        else (RepresentationCache(None if cache is True else cache) if cache else None)
    )
    statements = [text.replace(MASK, loaded.tokenizer.mask_token) for text in frame["statement"]]
    rows = []
    with torch_threads(threads):
        vectors = _mask_vectors(loaded, statements, store, progress)
        token_ids = [candidate_tokens(loaded.tokenizer, s, c) for s, c in zip(statements, frame["choices"].to_list())]
        vocabulary = sorted({token for ids in token_ids for token in ids})
        column = {token: index for index, token in enumerate(vocabulary)}
        candidates = np.array([[column[t] for t in ids] for ids in _pad_lists(token_ids)])
        answers = frame["answer"].to_numpy()
        base = CandidateHead(loaded, vocabulary)
        check_head(loaded, base, statements[0])
        groups = frame.with_row_index("row").group_by("probe", "control", maintain_order=True).agg("row", "split")
        jobs = [
            (p, c, n, s, setting)
            for p, c, _, _ in groups.iter_rows()
            for n in spec.ns
            for s in spec.seeds
            for setting in spec.settings
        ]
        bar = ProgressBar(total=len(jobs), unit="fit", desc="oLMpics curves", disable=not progress)
        for probe, control, row_ids, splits in groups.iter_rows():
            row_ids, splits = np.array(row_ids), np.array(splits)
            train, dev = row_ids[splits == "train"], row_ids[splits == "dev"]
            if len(dev) == 0:
                raise WorkbenchError(
                    f"probe {probe!r} ({control}) has no dev rows to evaluate on; generate or mark some as split 'dev'"
                )
            evaluate = lambda head: _accuracy(head, vectors[dev], candidates[dev], answers[dev])  # noqa: E731
            common = {"probe": probe, "control": control, "n_dev": len(dev), "fresh_head": loaded.fresh_head}
            if not loaded.fresh_head:
                rows.append({**common, "setting": "zero-shot", "n": 0, "seed": 0, "accuracy": evaluate(base)})
            for n in spec.ns:
                if n > len(train):
                    bar.update(len(spec.seeds) * len(spec.settings))
                    continue
                for seed in spec.seeds:
                    sample = np.array(sorted(random.Random(seed).sample(range(len(train)), n)))
                    chosen = train[sample]
                    for setting in spec.settings:
                        head = fit_head(base, vectors[chosen], candidates[chosen], answers[chosen], setting, spec, seed)
                        rows.append({**common, "setting": setting, "n": n, "seed": seed, "accuracy": evaluate(head)})
                        bar.update()
        bar.close()
    skipped = [
        n
        for n in spec.ns
        if n > frame.filter(pl.col("split") == "train").group_by("probe", "control").len()["len"].min()
    ]
    if skipped:
        warnings.warn(
            f"training sizes {skipped} exceed the training rows of some probes and were skipped there",
            ScoringWarning,
            stacklevel=2,
        )
    result = pl.DataFrame(rows, schema_overrides=CURVE_SCHEMA).with_columns(
        model=pl.lit(loaded.name), fingerprint=pl.lit(loaded.encoder.fingerprint[:16])
    )
    return conform(result, CURVE_SCHEMA, "learning curves") if rows else pl.DataFrame(schema=CURVE_SCHEMA)


def _pad_lists(lists: list[list[int]]) -> list[list[int]]:
    """Rows with fewer candidates repeat their last one (a duplicate never wins: ties go to the first)."""
    width = max(len(ids) for ids in lists)
    return [ids + [ids[-1]] * (width - len(ids)) for ids in lists]


def _mask_vectors(model: MaskedLM, statements: list[str], store, progress: bool) -> torch.Tensor:
    layer = model.encoder.n_layers
    states = token_states(model.encoder, statements, [layer], store, progress=progress)
    encoded = model.tokenizer(statements, truncation=True, max_length=model.encoder.max_length)["input_ids"]
    rows = []
    for text, ids in zip(statements, encoded):
        if model.tokenizer.mask_token_id not in ids:
            raise WorkbenchError(f"the statement {text!r} lost its mask to truncation; shorten it")
        rows.append(states[(text, layer)][ids.index(model.tokenizer.mask_token_id)])
    return torch.tensor(np.stack(rows), device=model.device)


def _accuracy(head: CandidateHead, vectors: torch.Tensor, candidates: np.ndarray, answers: np.ndarray) -> float:
    with torch.inference_mode():
        logits = head(vectors).gather(1, torch.as_tensor(candidates, device=vectors.device))
    return float((logits.argmax(dim=1).cpu().numpy() == answers).mean())


def fit_head(
    base: CandidateHead,
    vectors: torch.Tensor,
    candidates: np.ndarray,
    answers: np.ndarray,
    setting: str,
    spec: CurveSpec,
    seed: int,
) -> CandidateHead:
    """A trained copy of ``base``: cross-entropy over each row's candidates; ``linear`` trains the last layer only."""
    import copy

    with torch_threads(1):  # small batches through a small head: extra threads only wait on each other
        return _fit(copy.deepcopy(base).train(), vectors, candidates, answers, setting, spec, seed)


def _fit(head, vectors, candidates, answers, setting, spec, seed) -> CandidateHead:
    trainable = head.last_layer() if setting == "linear" else list(head.parameters())
    for parameter in head.parameters():
        parameter.requires_grad_(False)
    for parameter in trainable:
        parameter.requires_grad_(True)
    optimizer = torch.optim.AdamW(trainable, lr=spec.lr, weight_decay=spec.weight_decay)
    generator = torch.Generator().manual_seed(seed)
    columns = torch.as_tensor(candidates, device=vectors.device)
    targets = torch.as_tensor(answers, device=vectors.device)
    per_epoch = -(-len(vectors) // spec.batch_size)
    steps = max(spec.epochs * per_epoch, spec.min_steps)
    order = torch.empty(0, dtype=torch.long)
    for _ in range(steps):
        if len(order) == 0:
            order = torch.randperm(len(vectors), generator=generator)
        batch, order = order[: spec.batch_size], order[spec.batch_size :]
        logits = head(vectors[batch]).gather(1, columns[batch])
        loss = torch.nn.functional.cross_entropy(logits, targets[batch])
        if not torch.isfinite(loss):
            raise WorkbenchError(f"training the head diverged (loss {loss.item()}); lower lr (now {spec.lr})")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return head.eval()


def _weights(ns: list[int]) -> dict[int, float]:
    raw = {n: ws_weight(n) for n in ns}
    total = sum(raw.values())
    return {n: weight / total for n, weight in raw.items()}


def summarize(curves: pl.DataFrame) -> pl.DataFrame:
    """WS and MAX of every (model, probe, control, setting) curve, over its seed-averaged curve (oLMpics §2).

    MAX is the best point of the mean curve (not the mean of per-seed maxima); WS the weighted mean of the
    mean curve. ``MAX_std`` is the seeds' spread at that best point, ``WS_std`` the spread of per-seed WS.
    """
    trained = conform(curves, CURVE_SCHEMA, "learning curves").filter(pl.col("n") > 0)
    if trained.is_empty():
        raise WorkbenchError("the curves have no trained points (n > 0); nothing to summarise")
    return seed_averaged_summary(trained, ["model", "probe", "control", "setting"], "n", "accuracy")


def language_sensitivity(curves: pl.DataFrame) -> pl.DataFrame:
    """oLMpics LANGSENSE: the WS of max(0, accuracy - accuracy of the control) over N (seed means first)."""
    trained = conform(curves, CURVE_SCHEMA, "learning curves").filter(pl.col("n") > 0)
    means = trained.group_by("model", "probe", "control", "setting", "n").agg(pl.col("accuracy").mean())
    full = means.filter(pl.col("control") == "none").drop("control")
    other = means.filter(pl.col("control") != "none").rename({"accuracy": "control_accuracy"})
    joined = full.join(other, on=["model", "probe", "setting", "n"])
    if joined.is_empty():
        return pl.DataFrame(
            schema={
                "model": pl.String,
                "probe": pl.String,
                "setting": pl.String,
                "control": pl.String,
                "LANGSENSE": pl.Float64,
            }
        )
    weights = _weights(sorted(joined["n"].unique().to_list()))
    return (
        joined.with_columns(
            gap=(pl.col("accuracy") - pl.col("control_accuracy")).clip(lower_bound=0.0),
            w=pl.col("n").replace_strict(weights, return_dtype=pl.Float64),
        )
        .group_by("model", "probe", "setting", "control")
        .agg(LANGSENSE=(pl.col("gap") * pl.col("w")).sum() / pl.col("w").sum())
        .sort("model", "probe", "setting", "control")
    )


def results_table(curves: pl.DataFrame) -> pl.DataFrame:
    """One row per (model, probe), in percent as in oLMpics Tables 2-9: zero-shot (null when the model
    has no MLM head), MLP and LINEAR WS/MAX, and LANGSENSE (of the MLP curves) for pert and nolang."""
    curves = conform(curves, CURVE_SCHEMA, "learning curves")
    base = curves.filter(pl.col("control") == "none")
    table = base.select("model", "probe").unique(maintain_order=True)
    zero = (
        base.filter(pl.col("setting") == "zero-shot")
        .group_by("model", "probe")
        .agg(zero_shot=pl.col("accuracy").mean())
    )
    table = table.join(zero, on=["model", "probe"], how="left")
    summary = summarize(base)
    for setting in SETTINGS:
        part = summary.filter(pl.col("setting") == setting).select(
            "model", "probe", pl.col("WS").alias(f"{setting}_WS"), pl.col("MAX").alias(f"{setting}_MAX")
        )
        table = table.join(part, on=["model", "probe"], how="left")
    sense = language_sensitivity(curves).filter(pl.col("setting") == "mlp")
    for control, name in (("perturbed-lang", "pert"), ("no-lang", "nolang")):
        part = sense.filter(pl.col("control") == control).select("model", "probe", pl.col("LANGSENSE").alias(name))
        table = table.join(part, on=["model", "probe"], how="left")
    numbers = [name for name in table.columns if name not in ("model", "probe")]
    return table.with_columns((pl.col(name) * 100).round(1) for name in numbers)
