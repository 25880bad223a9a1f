"""Accuracy of a prediction frame: per question, per semantic cluster, per heat-map cell.

The paper's evaluation views (Richardson & Sabharwal 2020, §4.3, Figure 3, Table 8) as pure
polars. Every table groups by model identity (``MODEL_KEYS``, plus an inoculation-stage column
from ``STAGE_KEYS`` when the frame has one), so several models stacked in one prediction frame
are scored side by side.

Confidence intervals are percentile bootstraps, seeded and vectorised with numpy, that resample whole
semantic clusters for instance and cluster accuracy alike: the questions about one concept are not
independent, and resampling them one by one would make the intervals too narrow (cluster resampling
also gives an interval for the cluster-minus-instance gap).

    >>> acc = instance_accuracy(preds, by=("probe",))   # accuracy, n, lo, hi per model x probe
    >>> summary(preds)["cluster_accuracy"]
    0.54
"""

import zlib
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.schema import DISTRACTOR_FAMILIES, PROBES, model_label

MODEL_KEYS = ("model", "scorer", "rule", "control", "fingerprint")
"""Columns that identify one scored model; every metric groups by them."""
STAGE_KEYS = ("stage", "k_examples")
"""Optional inoculation-stage columns; when present they also split the groups."""
CELL_KEYS = ("probe", "hops", "distractor_family", "distractor_depth")
"""One heat-map cell: probe x hop count k x distractor family x depth k'."""

MAX_BOOT = 100_000
"""Most bootstrap resamples asked for: intervals settle long before (1,000 is plenty); more only exhausts memory."""
_BOOT_CHUNK = 4_000_000  # resampled units held in memory at once
MIN_CLUSTERS = 2
"""Fewest clusters (units resampled) a group needs for a bootstrap interval: a single cluster is every resample (one
question or one cluster gave ``100.0 [100.0, 100.0]``, an interval claiming certainty); with fewer, ``lo``/``hi``
are null and reports say ``TOO_FEW``."""
TOO_FEW = "too few clusters for an interval"


def identity_keys(preds: pl.DataFrame) -> list[str]:
    """The columns that tell models (and inoculation stages) apart in ``preds``."""
    return [*MODEL_KEYS, *(key for key in STAGE_KEYS if key in preds.columns)]


QUESTION_CONTENT = ("probe", "id", "context", "question", "choices", "answer")
"""What a question is: two rows with these equal are one question, whatever file or model they came from."""


def with_question_key(preds: pl.DataFrame) -> pl.DataFrame:
    """``preds`` with a ``question_key`` column unique per question of each model, by construction.

    The key is the JSON of the question's content (``QUESTION_CONTENT``: probe, id, context, stem, choices and
    answer, those the frame has) followed by ``#N``, the row's occurrence among rows of the same model identity
    with that content. Ids alone do not tell questions apart: the released training files reuse one id for
    different questions (``hypernymy_train.jsonl``: 935 rows share an id). Equal content and equal occurrence is
    the same question in two prediction files of one probe set, however their rows are ordered.

    >>> with_question_key(preds)["question_key"].n_unique() == preds.height  # one model
    True
    """
    if missing := [name for name in ("probe", "id") if name not in preds.columns]:
        raise WorkbenchError(f"the frame lacks the columns {missing}; conform it to workbench.schema first")
    content = pl.struct(*(name for name in QUESTION_CONTENT if name in preds.columns)).struct.json_encode()
    keys = [key for key in identity_keys(preds) if key in preds.columns]
    occurrence = pl.int_range(pl.len()).over(content, *keys)
    return preds.with_columns(question_key=content + "#" + occurrence.cast(pl.String))


def n_questions(preds: pl.DataFrame) -> int:
    """How many distinct questions ``preds`` holds (``with_question_key``), over all its models."""
    return with_question_key(preds)["question_key"].n_unique()


def model_labels(preds: pl.DataFrame) -> pl.DataFrame:
    """One short, unique display label per model identity in ``preds``.

    The label is the model name (``model_label`` of a path: files scored before labels were short hold
    paths), followed by whichever of scorer, rule, control and stage vary among identities that share that
    name, then by the way of asking (``asking``, after a `` · ``, its shot and instruction digests only where
    needed) where that varies, and by a fingerprint prefix only if still needed. Line breaks and other control
    characters become spaces: a label is one line (Vega-Lite copies a facet's labels into expressions, where
    U+2028 is illegal).

    >>> model_labels(preds)["label"].to_list()
    ['bert-base / mcqa', 'bert-base / mlm', 'roberta-base',
     'SmolLM2 · cloze/0-shot/plain', 'SmolLM2 · letters/5-shot/chat']
    """
    keys = identity_keys(preds)
    asked = pl.col("asking").first().fill_null("") if "asking" in preds.columns else pl.lit("")
    ids = preds.group_by(keys).agg(asking=asked).sort(keys, nulls_last=True)
    ids = ids.with_columns(short=pl.col("asking").str.replace(r"/(shots|system)=.*$", ""))
    ambiguous = pl.col("asking").n_unique().over("model", "short") > 1  # two shot draws, two instructions
    ids = ids.with_columns(way=pl.when(ambiguous).then(pl.col("asking")).otherwise(pl.col("short")))
    per_model = ids.group_by("model").agg(pl.col(*keys[1:], "way").n_unique())
    varying = per_model.select(pl.all().exclude("model").max().fill_null(0))
    parts = ["model"] + [key for key in keys[1:] if key != "fingerprint" and varying[key].item() > 1]
    way = varying["way"].item() > 1
    if ids.select(*parts, *(["way"] if way else [])).is_duplicated().any():
        parts.append("fingerprint")

    def part(key: str, short: bool) -> pl.Expr:
        text = _one_line(pl.col(key).cast(pl.String).fill_null(""))
        if key == "model" and short:
            return text.map_elements(model_label, return_dtype=pl.String)
        if key in STAGE_KEYS:
            return pl.format("{}={}", pl.lit(key), text)
        return text.str.slice(0, 8) if key == "fingerprint" else text

    def label(short: bool) -> pl.Expr:
        name = pl.concat_str([part(key, short) for key in parts if key != "fingerprint"], separator=" / ")
        if way:
            name = pl.when(pl.col("way") != "").then(name + " · " + _one_line(pl.col("way"))).otherwise(name)
        return name + (" / " + part("fingerprint", short) if "fingerprint" in parts else "")

    labelled = ids.with_columns(label=label(True))
    if labelled["label"].is_duplicated().any():  # two paths ending alike: keep them whole
        labelled = ids.with_columns(label=label(False))
    return labelled.drop("asking", "short", "way")


def _one_line(text: pl.Expr) -> pl.Expr:
    return text.str.replace_all(r"[\p{Cc}\u2028\u2029]", " ")


def cell_labels() -> list[pl.Expr]:
    """Heat-map coordinates of a row as two string expressions, ``row`` and ``column``.

    ``row`` is probe x hop count ("hypernymy k=2"); ``column`` is distractor family x depth
    ("random", "sister 1", "isa_down 2"; families without a depth show the family alone).
    """
    family, depth = pl.col("distractor_family"), pl.col("distractor_depth")
    return [
        pl.format("{} k={}", pl.col("probe"), pl.col("hops")).alias("row"),
        pl.when(depth > 0).then(pl.format("{} {}", family, depth)).otherwise(family).alias("column"),
    ]


def cell_order(frame: pl.DataFrame) -> tuple[list[str], list[str]]:
    """The heat-map row and column labels present in ``frame``, in the paper's order.

    Rows follow ``PROBES`` then hop count; columns follow ``DISTRACTOR_FAMILIES`` then depth.
    """
    probe_rank = pl.col("probe").replace_strict(PROBES, range(len(PROBES)), default=len(PROBES))
    family_rank = pl.col("distractor_family").replace_strict(
        DISTRACTOR_FAMILIES, range(len(DISTRACTOR_FAMILIES)), default=len(DISTRACTOR_FAMILIES)
    )
    cells = frame.select(*CELL_KEYS).unique().with_columns(*cell_labels())
    rows = cells.sort(probe_rank, "probe", "hops")["row"].unique(maintain_order=True).to_list()
    columns = cells.sort(family_rank, "distractor_family", "distractor_depth")["column"]
    return rows, columns.unique(maintain_order=True).to_list()


def instance_accuracy(
    preds: pl.DataFrame,
    by: Sequence[str] = ("probe",),
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> pl.DataFrame:
    """Share of questions answered correctly, per model identity and ``by``, with a bootstrap CI.

    Parameters
    ----------
    preds : polars.DataFrame
        Predictions (``PREDICTION_SCHEMA``), one model or several.
    by : sequence of str
        Columns to group by besides the model identity.
    n_boot, seed, ci
        Bootstrap resamples (0: no interval), their seed, and the interval's coverage.

    Returns
    -------
    polars.DataFrame
        The identity keys, ``by``, ``n`` (questions), ``n_correct``, ``accuracy`` and the
        percentile interval ``lo``, ``hi`` from ``n_boot`` resamples of whole clusters (seeded; a frame without
        ``cluster_id`` resamples questions).

    Examples
    --------

    >>> instance_accuracy(preds, by=("probe", "hops")).select("probe", "hops", "accuracy", "lo", "hi")
    """
    keys = _group_keys(preds, by, n_boot, ci)
    cluster = pl.col("cluster_id") if "cluster_id" in preds.columns else pl.int_range(pl.len()).cast(pl.String)
    units = (
        preds.group_by(*keys, cluster.alias("_cluster"))
        .agg(correct=pl.col("correct").sum().cast(pl.Float64), size=pl.len().cast(pl.Float64))
        .sort(*keys, "_cluster", nulls_last=True)
        .drop("_cluster")
    )
    groups, (hits, size) = _groups_and_bootstrap(units, keys, ["correct", "size"], n_boot, seed)
    lo, hi = _percentiles(hits / size, ci)
    return groups.select(
        *keys,
        n=pl.col("size").cast(pl.Int64),
        n_correct=pl.col("correct").cast(pl.Int64),
        accuracy=pl.col("correct") / pl.col("size"),
        lo=_interval(lo),
        hi=_interval(hi),
    )


def cluster_accuracy(
    preds: pl.DataFrame,
    by: Sequence[str] = ("probe",),
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> pl.DataFrame:
    """Strict cluster accuracy and its gap to instance accuracy (the paper's Table 8).

    Parameters
    ----------
    preds : polars.DataFrame
        Predictions (``PREDICTION_SCHEMA``), one model or several.
    by : sequence of str
        Columns to group by besides the model identity.
    n_boot, seed, ci
        Bootstrap resamples of whole clusters (0: no interval), their seed, and the interval's coverage.

    Returns
    -------
    polars.DataFrame
        The identity keys, ``by``, ``n_clusters``, ``n`` (questions), ``cluster_accuracy``, ``cluster_lo``,
        ``cluster_hi``, ``instance_accuracy``, ``gap``, ``gap_lo``, ``gap_hi``.

    Notes
    -----
    A semantic cluster (``cluster_id``) counts as right only if every question in it is right.
    ``gap`` is cluster minus instance accuracy (negative, as the paper's Δ). Intervals resample
    whole clusters, so ``gap_lo``/``gap_hi`` account for questions sharing a concept. A ``by``
    column that varies inside a cluster (e.g. ``hops``) splits it: each part is judged alone.

    Examples
    --------
    >>> cluster_accuracy(preds).select("probe", "cluster_accuracy", "gap")
    """
    keys = _group_keys(preds, by, n_boot, ci)
    units = (
        preds.group_by(*keys, "cluster_id")
        .agg(
            strict=pl.col("correct").all().cast(pl.Float64),
            n_correct=pl.col("correct").sum().cast(pl.Float64),
            size=pl.len().cast(pl.Float64),
        )
        .sort(*keys, "cluster_id", nulls_last=True)
        .drop("cluster_id")
    )
    groups, (strict, n_correct, size) = _groups_and_bootstrap(
        units, keys, ["strict", "n_correct", "size"], n_boot, seed
    )
    cluster_boot = strict / groups["n"].to_numpy()
    cluster_lo, cluster_hi = _percentiles(cluster_boot, ci)
    gap_lo, gap_hi = _percentiles(cluster_boot - n_correct / size, ci)
    return (
        groups.select(
            *keys,
            n_clusters="n",
            n=pl.col("size").cast(pl.Int64),
            cluster_accuracy=pl.col("strict") / pl.col("n"),
            cluster_lo=_interval(cluster_lo),
            cluster_hi=_interval(cluster_hi),
            instance_accuracy=pl.col("n_correct") / pl.col("size"),
            gap_lo=_interval(gap_lo),
            gap_hi=_interval(gap_hi),
        )
        .with_columns(gap=pl.col("cluster_accuracy") - pl.col("instance_accuracy"))
        .select(pl.exclude("gap_lo", "gap_hi"), "gap_lo", "gap_hi")
    )


def breakdown(preds: pl.DataFrame) -> pl.DataFrame:
    """Accuracy per model x probe x hops x distractor family x depth: the heat map's cells.

    Parameters
    ----------
    preds : polars.DataFrame
        Predictions (``PREDICTION_SCHEMA``), one model or several.

    Returns
    -------
    polars.DataFrame
        The identity keys, ``CELL_KEYS``, ``row`` and ``column`` (the heat-map labels, see
        ``cell_labels``), ``n``, ``n_correct``, ``accuracy``; sorted in the paper's order.

    Examples
    --------
    >>> breakdown(preds).filter(pl.col("column") == "random").select("row", "accuracy", "n")
    """
    keys = [*identity_keys(preds), *CELL_KEYS]
    _check(preds, keys)
    rows, columns = cell_order(preds)
    return (
        preds.group_by(keys)
        .agg(n=pl.len().cast(pl.Int64), n_correct=pl.col("correct").sum().cast(pl.Int64))
        .with_columns(*cell_labels(), accuracy=pl.col("n_correct") / pl.col("n"))
        .sort(
            *identity_keys(preds),
            pl.col("row").replace_strict(rows, range(len(rows))),
            pl.col("column").replace_strict(columns, range(len(columns))),
            nulls_last=True,
        )
        .select(*keys, "row", "column", "n", "n_correct", "accuracy")
    )


def summary(preds: pl.DataFrame, n_boot: int = 1000, seed: int = 0, ci: float = 0.95) -> dict:
    """Headline numbers of a prediction frame, as plain Python values (JSON-ready).

    Keys: ``instance_accuracy``, ``instance_ci`` ([lo, hi]), ``cluster_accuracy``,
    ``cluster_ci``, ``gap``, ``gap_ci``, ``n_questions``, ``n_clusters``; plus ``models``
    (label -> identity) and the bootstrap settings. With one model each headline value is a
    number; with several it is a dict from model label (see ``model_labels``) to that number.

    >>> summary(preds)["instance_accuracy"]
    0.6812
    """
    if preds.is_empty():
        raise WorkbenchError("the prediction frame is empty: there is nothing to summarise.")
    labels = model_labels(preds)
    keys = identity_keys(preds)
    inst = instance_accuracy(preds, by=(), n_boot=n_boot, seed=seed, ci=ci)
    clus = cluster_accuracy(preds, by=(), n_boot=n_boot, seed=seed, ci=ci)
    table = labels.join(inst, on=keys, nulls_equal=True).join(clus, on=keys, nulls_equal=True)
    values = {
        "instance_accuracy": table["accuracy"],
        "instance_ci": table.select(pl.concat_list("lo", "hi"))[:, 0],
        "cluster_accuracy": table["cluster_accuracy"],
        "cluster_ci": table.select(pl.concat_list("cluster_lo", "cluster_hi"))[:, 0],
        "gap": table["gap"],
        "gap_ci": table.select(pl.concat_list("gap_lo", "gap_hi"))[:, 0],
        "n_questions": table["n"],
        "n_clusters": table["n_clusters"],
    }
    names = table["label"].to_list()
    out: dict = {
        key: (column.to_list()[0] if len(names) == 1 else dict(zip(names, column.to_list(), strict=True)))
        for key, column in values.items()
    }
    out["models"] = {row.pop("label"): row for row in table.select("label", *keys).to_dicts()}
    out.update(n_boot=n_boot, seed=seed, ci=ci)
    return out


def drilldown(
    preds: pl.DataFrame,
    concept: str | None = None,
    cell: Sequence | Mapping | None = None,
) -> pl.DataFrame:
    """Question-level view: what each model picked, for one concept or one heat-map cell.

    Parameters
    ----------
    preds : polars.DataFrame
        Predictions (``PREDICTION_SCHEMA``), one model or several.
    concept : str, optional
        Keep one concept's questions (``dog.n.01``).
    cell : tuple or mapping, optional
        ``(probe, hops, distractor_family, distractor_depth)`` or a mapping with those keys (a subset
        filters on fewer).

    Returns
    -------
    polars.DataFrame
        The identity keys, ``label``, ``id``, ``probe``, ``concept``, ``cluster_id``, the cell keys, ``row``,
        ``column``, ``question``, ``choices``, ``scores``, ``answer``, ``pred``, ``gold`` and ``pick`` (choice
        texts), ``correct``. The questions that most models got wrong come first, each with its models' rows
        together.

    Examples
    --------
    >>> drilldown(preds, cell=("hypernymy", 2, "sister", 1)).select("question", "gold", "pick")
    """
    keys = identity_keys(preds)
    _check(preds, keys)
    if isinstance(cell, Mapping):
        unknown = sorted(set(cell) - set(CELL_KEYS))
        if unknown:
            raise SpecError(f"cell has unknown keys {unknown}; allowed: {list(CELL_KEYS)}.")
        where = dict(cell)
    elif cell is not None:
        if len(cell) != len(CELL_KEYS):
            raise SpecError(f"cell={tuple(cell)!r} must have {len(CELL_KEYS)} parts: {CELL_KEYS}.")
        where = dict(zip(CELL_KEYS, cell, strict=True))
    else:
        where = {}
    if concept is not None:
        where["concept"] = concept
    frame = preds.filter(**where) if where else preds
    return (
        frame.join(model_labels(preds), on=keys, nulls_equal=True)
        .with_columns(
            *cell_labels(),
            gold=pl.col("choices").list.get(pl.col("answer"), null_on_oob=True),
            pick=pl.col("choices").list.get(pl.col("pred"), null_on_oob=True),
        )
        .sort(
            pl.col("correct").not_().sum().over("id"),
            "probe",
            "cluster_id",
            "id",
            *keys,
            descending=[True] + [False] * (3 + len(keys)),
            nulls_last=True,
        )
        .select(
            *keys,
            "label",
            "id",
            "probe",
            "concept",
            "cluster_id",
            *CELL_KEYS[1:],
            "row",
            "column",
            "question",
            "choices",
            "scores",
            "answer",
            "pred",
            "gold",
            "pick",
            "correct",
        )
    )


def _check(preds: pl.DataFrame, columns: Sequence[str]) -> None:
    """Fail early, naming the problem, on missing columns or unscored rows."""
    missing = [name for name in (*columns, "correct") if name not in preds.columns]
    if missing:
        raise WorkbenchError(
            f"the prediction frame lacks the columns {missing}; conform it to workbench.schema.PREDICTION_SCHEMA first."
        )
    unscored = preds["correct"].null_count()
    if unscored:
        raise WorkbenchError(f"{unscored} predictions have no `correct` value; score them or drop them.")


def check_n_boot(n_boot: int, least: int = 0) -> None:
    """A ``SpecError`` naming ``n_boot`` unless it lies in ``least``..``MAX_BOOT``."""
    if not least <= n_boot <= MAX_BOOT:
        raise SpecError(
            f"n_boot={n_boot!r} must lie between {least} and {MAX_BOOT:,} bootstrap resamples (1,000 is plenty)"
        )


def _group_keys(preds: pl.DataFrame, by: Sequence[str], n_boot: int, ci: float) -> list[str]:
    """Identity keys plus ``by``, after checking the frame and the bootstrap settings."""
    if isinstance(by, str):
        by = (by,)
    check_n_boot(n_boot, least=1)
    if not 0 < ci < 1:
        raise SpecError(f"ci={ci!r} must lie strictly between 0 and 1 (e.g. 0.95).")
    keys = [*identity_keys(preds), *(key for key in by if key not in identity_keys(preds))]
    _check(preds, [*keys, "cluster_id"])
    return keys


def _groups_and_bootstrap(
    units: pl.DataFrame, keys: list[str], values: list[str], n_boot: int, seed: int
) -> tuple[pl.DataFrame, list[np.ndarray]]:
    """Per-group sums of ``values`` and their bootstrap replicates.

    ``units`` (questions or clusters) must be sorted by ``keys`` and, within a group, in an order
    that does not depend on the input's row order (so the same data gives the same intervals).
    Returns the groups (keys, ``n`` units and the summed values, in ``units`` order) and, per value,
    an ``(n_boot, groups)`` array of sums over resamples of each group's units drawn with
    replacement. Each group draws from its own generator, seeded by ``seed`` and the group's model
    identity, so a model's intervals do not change when other models are stacked into the same
    frame, and a group equal to the whole model (one probe only) gets the same interval as the model
    overall.
    """
    n_identity = len(identity_keys(units))
    groups = units.group_by(keys, maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("n"), *(pl.col(value).sum() for value in values)
    )
    sums = [np.empty((n_boot, len(groups))) for _ in values]
    parts = units.partition_by(keys, maintain_order=True, include_key=False) if len(units) else []
    for index, (key, part) in enumerate(zip(groups.select(keys).rows(), parts, strict=True)):
        rng = np.random.default_rng([seed, zlib.crc32(repr(key[:n_identity]).encode())])
        columns = [part[value].to_numpy() for value in values]
        chunk = max(1, _BOOT_CHUNK // len(part))
        for first in range(0, n_boot, chunk):
            picks = rng.integers(0, len(part), size=(min(chunk, n_boot - first), len(part)))
            for total, column in zip(sums, columns, strict=True):
                total[first : first + len(picks), index] = column[picks].sum(axis=1)
    return groups, sums


def _interval(bound: np.ndarray) -> pl.Expr:
    """A bound of each group's interval (``n``: its clusters), null below ``MIN_CLUSTERS`` clusters."""
    return pl.when(pl.col("n") >= MIN_CLUSTERS).then(pl.Series(bound, dtype=pl.Float64)).otherwise(None)


def _percentiles(replicates: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """The percentile interval of ``replicates`` (one column per group) at level ``ci``."""
    tail = (1 - ci) / 2
    lo, hi = np.quantile(replicates, [tail, 1 - tail], axis=0)
    return lo, hi


def partial_clusters(preds: pl.DataFrame, probes: pl.DataFrame) -> pl.DataFrame:
    """Clusters of ``preds`` holding fewer questions than the same cluster in the probe set ``probes``.

    Strict cluster accuracy on a cluster cut short is meaningless (R&S 2020 §4.3): one wrong question among those
    left out would have failed it. Columns: ``cluster_id``, ``scored``, ``in_probes``; empty when all are whole.
    """
    _check(preds, ["cluster_id", "id"])
    if missing := [name for name in ("cluster_id", *QUESTION_CONTENT) if name not in probes.columns]:
        raise WorkbenchError(
            f"the probe frame lacks the columns {missing}; pass what workbench.probes.formats.read_probes returns"
        )
    scored = with_question_key(preds).group_by("cluster_id").agg(scored=pl.col("question_key").n_unique())
    full = with_question_key(probes).group_by("cluster_id").agg(in_probes=pl.col("question_key").n_unique())
    return scored.join(full, on="cluster_id").filter(pl.col("scored") < pl.col("in_probes")).sort("cluster_id")


def probe_set_check(preds: pl.DataFrame, probes: pl.DataFrame | None, name: object = "the probe set") -> str | None:
    """Whether ``probes`` (called ``name``) is the probe set ``preds`` came from: a ``WorkbenchError`` when it holds
    none of their questions (``with_question_key``), a warning line when it lacks some, else None."""
    if probes is None:
        return None
    known = with_question_key(probes)["question_key"].implode()
    found = with_question_key(preds).select(pl.col("question_key").is_in(known))["question_key"]
    if not found.any():
        raise WorkbenchError(
            f"{name} holds none of the {found.len()} questions predicted: the predictions were scored on another "
            "probe set; give the one they came from (or leave --probes out)"
        )
    if not found.all():
        return (
            f"WARNING: {(~found).sum()} of {found.len()} questions predicted are not in {name}: it is not quite the "
            "probe set they came from, so its statistics and partial-cluster check are not theirs"
        )
    return None


def partial_cluster_warning(preds: pl.DataFrame, probes: pl.DataFrame | None) -> str | None:
    """A loud one-line warning when ``preds`` cut clusters of ``probes`` short, else None."""
    if probes is None:
        return None
    partial = partial_clusters(preds, probes)
    if partial.is_empty():
        return None
    return (
        f"WARNING: {partial.height} of {preds['cluster_id'].n_unique()} clusters were scored only in part "
        f"(e.g. {partial['cluster_id'][0]}: {partial['scored'][0]} of {partial['in_probes'][0]} questions); strict "
        "cluster accuracy on partial clusters is meaningless. "
        "Score whole clusters (workbench.probes.select.sample_clusters)."
    )
