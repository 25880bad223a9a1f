"""``fit_irt``: item parameters, member abilities and the fit's quality from the population's answers.

>>> answers = responses(predictions=["preds/"], sweeps=["sweeps/s1"])      # doctest: +SKIP
>>> fit = fit_irt(answers, model="2pl")                                     # doctest: +SKIP
>>> fit.items.sort("a").head(5)  # the least discriminating questions      # doctest: +SKIP
>>> fit.save("fits/hypernymy")                                              # doctest: +SKIP
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.irt import model as irt_model
from workbench.irt.explain import FACTORS, design_matrix, with_graph_factors
from workbench.irt.model import Z95
from workbench.irt.responses import FAMILY, item_key
from workbench.specs import resolve_spec

MODELS = ("1pl", "2pl", "3pl")
"""Rasch/1PL (one discrimination), 2PL, 3PL with the guessing floor fixed at 1 / choices."""
SUSPECT_A = 0.2
"""A question whose discrimination's interval lies below this (near zero or negative) is a suspected defect."""
FIT_FILES = ("fit.json", "items.parquet", "members.parquet", "effects.parquet")


@dataclass(frozen=True)
class IrtSpec:
    """How to fit: ``model`` (``MODELS``); ``explain``: design factors the difficulties are regressed on inside
    the model (the explanatory model, ``explain.FACTORS``); ``held_out``: the share of answers kept out of a first
    fit to score its held-out log-likelihood (0: none); ``seed`` of that draw."""

    model: str = "2pl"
    explain: tuple[str, ...] = ()
    held_out: float = 0.1
    seed: int = 0

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise SpecError(f"model={self.model!r}: choose one of {list(MODELS)}")
        if unknown := sorted(set(self.explain) - set(FACTORS)):
            raise SpecError(f"explain={unknown}: not design factors; choose from {list(FACTORS)}")
        if not 0 <= self.held_out < 0.5:
            raise SpecError(f"held_out={self.held_out}: give a share in [0, 0.5)")
        object.__setattr__(self, "explain", tuple(self.explain))


@dataclass(frozen=True)
class IrtFit:
    """A fitted population: ``items`` (one row per question: ``a``, ``b``, their standard errors, the guessing
    ``floor``, item fit), ``members`` (ability ``theta`` with its 95 % interval; ``family``: ``responses.FAMILY``),
    ``effects`` (the explanatory model's factor effects on difficulty with intervals; empty otherwise) and
    ``quality``."""

    spec: IrtSpec
    items: pl.DataFrame
    members: pl.DataFrame
    effects: pl.DataFrame
    quality: dict = field(default_factory=dict)

    def save(self, path: str | Path) -> Path:
        """Write the fit as a folder (``FIT_FILES``), whole or not at all."""
        from workbench.io import check_output, staged_folder

        path = check_output(path, kind="irt")
        with staged_folder(path) as staging:
            meta = {"generator": "workbench irt", "spec": {**self.spec.__dict__, "explain": list(self.spec.explain)},
                    "quality": self.quality}  # fmt: skip
            (staging / "fit.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
            self.items.write_parquet(staging / "items.parquet")
            self.members.write_parquet(staging / "members.parquet")
            self.effects.write_parquet(staging / "effects.parquet")
        return path

    @classmethod
    def load(cls, path: str | Path) -> "IrtFit":
        """Read a fit folder ``save`` wrote."""
        path = Path(path)
        try:
            meta = json.loads((path / "fit.json").read_text(encoding="utf-8"))
            frames = [pl.read_parquet(path / name) for name in FIT_FILES[1:]]
        except (OSError, ValueError, pl.exceptions.PolarsError) as err:
            raise WorkbenchError(f"{path} is not a fit `workbench irt fit` wrote ({err}); fit one first") from err
        if meta.get("generator") != "workbench irt":
            raise WorkbenchError(f"{path} is not a fit `workbench irt fit` wrote; fit one first")
        spec = IrtSpec(**{**meta["spec"], "explain": tuple(meta["spec"]["explain"])})
        return cls(spec, *frames, quality=meta["quality"])


def fit_irt(responses: pl.DataFrame, spec: IrtSpec | str | None = None, *, graph=None, **overrides) -> IrtFit:
    """Fit ``spec.model`` to the population's answers (``responses.responses``), questions matched by content.

    Members answering different subsets are fine (a sparse matrix). Refused: fewer than two members, a member
    that answered nothing. Quality: the held-out log-likelihood per answer against a baseline that knows each
    member's accuracy only, and each question's outfit (mean squared standardised residual; near 1 fits).

    Parameters
    ----------
    responses : polars.DataFrame
        ``RESPONSE_SCHEMA`` rows (``workbench.irt.responses``): one per member and question.
    spec : IrtSpec or str, optional
        The settings, or the model name; ``overrides`` change single settings (``explain=("hops",)``).
    graph : Graph, optional
        Where the explanatory model reads ``concept_depth`` and ``polysemy`` (``explain.GRAPH_FACTORS``; default:
        WordNet); each question's values are kept in ``items``.

    Returns
    -------
    IrtFit
        ``items``, ``members``, ``effects`` (explanatory model) and ``quality``; ``save`` writes them.

    Examples
    --------
    >>> fit = wb.fit_irt(responses(predictions=["preds/"]), model="2pl", explain=("hops",))  # doctest: +SKIP
    >>> fit.members.sort("theta").select("label", "theta", "theta_lo", "theta_hi")  # doctest: +SKIP
    """
    spec = resolve_spec(IrtSpec, spec, overrides)
    members = (
        responses.group_by("member", maintain_order=True)
        .agg(pl.col("label").first(), pl.col("source").first(), n=pl.len(), accuracy=pl.col("right").mean())
        .with_columns(family=pl.col("label").str.extract(FAMILY))
    )
    if members.height < 2:
        raise WorkbenchError(f"the population holds {members.height} member(s); an IRT fit needs several models "
                             "(give more prediction files, sweep members or inoculation trials)")  # fmt: skip
    items = responses.group_by("item", maintain_order=True).agg(
        pl.exclude("member", "label", "source", "right", "scores").first(),
        n=pl.len(), p_right=pl.col("right").mean(),
    )  # fmt: skip
    right, seen = _matrix(responses, members["member"], items["item"])
    floor = (1 / items["choices"].to_numpy()) if spec.model == "3pl" else np.zeros(items.height)
    design, effect_terms = (None, [])
    if spec.explain:
        items = with_graph_factors(items, spec.explain, graph)
        design, effect_terms = design_matrix(items, spec.explain)
    quality = {"members": members.height, "questions": items.height, "answers": int(seen.sum()), "model": spec.model}
    if spec.held_out:
        quality |= _held_out(right, seen, floor, spec, design)
    if spec.held_out and design is not None:
        quality |= _held_out_questions(right, seen, floor, spec, design)
    est = irt_model.estimate(right, seen, floor, shared_a=spec.model == "1pl", design=design)
    theta, theta_sd = irt_model.abilities(right, seen, est.a, est.b, floor)
    outfit = _outfit(right, seen, theta, est, floor)
    items = items.with_columns(
        a=est.a, a_se=est.a_se, b=est.b, b_se=est.b_se, floor=floor, outfit=outfit,
        a_hi=est.a + Z95 * est.a_se,
    ).with_columns(suspect=pl.col("a_hi") < SUSPECT_A).drop("a_hi")  # fmt: skip
    members = members.with_columns(
        theta=theta, theta_se=theta_sd, theta_lo=theta - Z95 * theta_sd, theta_hi=theta + Z95 * theta_sd
    )
    effects = pl.DataFrame(schema={"term": pl.String, "effect": pl.Float64, "se": pl.Float64, "lo": pl.Float64,
                                   "hi": pl.Float64})  # fmt: skip
    if est.beta is not None:
        effects = pl.DataFrame({"term": effect_terms, "effect": est.beta, "se": est.beta_se}).with_columns(
            lo=pl.col("effect") - Z95 * pl.col("se"), hi=pl.col("effect") + Z95 * pl.col("se")
        )
    return IrtFit(spec, items, members, effects, quality)


def _matrix(responses: pl.DataFrame, members: pl.Series, items: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    rows = responses["member"].replace_strict(members, range(len(members)), return_dtype=pl.Int64).to_numpy()
    cols = responses["item"].replace_strict(items, range(len(items)), return_dtype=pl.Int64).to_numpy()
    right = np.zeros((len(members), len(items)))
    seen = np.zeros_like(right, dtype=bool)
    right[rows, cols] = responses["right"].cast(pl.Float64).to_numpy()
    seen[rows, cols] = True
    return right, seen


def _held_out(right, seen, floor, spec: IrtSpec, design) -> dict:
    """Mean log-likelihood per held-out answer under a fit without them, and under each member's accuracy."""
    rng = np.random.default_rng(spec.seed)
    kept = seen & (rng.random(seen.shape) >= spec.held_out)
    out = seen & ~kept
    est = irt_model.estimate(right, kept, floor, shared_a=spec.model == "1pl", design=design)
    theta, _ = irt_model.abilities(right, kept, est.a, est.b, floor)
    p = irt_model.probability(theta, est.a, est.b, floor)
    rate = np.clip((right * kept).sum(1) / np.maximum(kept.sum(1), 1), 0.01, 0.99)[:, None] * np.ones_like(p)
    y = right[out]
    return {
        "held_out_answers": int(out.sum()),
        "held_out_loglik": float(np.mean(y * np.log(p[out]) + (1 - y) * np.log1p(-p[out]))),
        "held_out_baseline": float(np.mean(y * np.log(rate[out]) + (1 - y) * np.log1p(-rate[out]))),
    }


def _held_out_questions(right, seen, floor, spec: IrtSpec, design) -> dict:
    """The explanatory model fitted without a share of the questions predicts their difficulties: its correlation
    and mean absolute difference with the free model's difficulties of them (fitted on every answer)."""
    held = np.random.default_rng(spec.seed).random(right.shape[1]) < max(spec.held_out, 2 / right.shape[1])
    if held.all() or held.sum() < 2:
        return {}
    shared = spec.model == "1pl"
    free = irt_model.estimate(right, seen, floor, shared_a=shared)
    kept = irt_model.estimate(right[:, ~held], seen[:, ~held], floor[~held], shared_a=shared, design=design[~held])
    predicted, fitted = design[held] @ kept.beta, free.b[held]
    return {
        "held_out_questions": int(held.sum()),
        "predicted_difficulty_r": float(np.corrcoef(predicted, fitted)[0, 1]) if fitted.std() > 0 else None,
        "predicted_difficulty_mae": float(np.abs(predicted - fitted).mean()),
    }


def _outfit(right, seen, theta, est, floor) -> np.ndarray:
    p = irt_model.probability(theta, est.a, est.b, floor)
    z2 = np.where(seen, (right - p) ** 2 / (p * (1 - p)), 0.0)
    return z2.sum(0) / np.maximum(seen.sum(0), 1)


def ability(fit: IrtFit, preds: pl.DataFrame) -> pl.DataFrame:
    """A new model's ability on the fit's scale from its answers to some of the fit's questions (``preds``,
    ``PREDICTION_SCHEMA``, one model), and its estimated accuracy on each probe's questions in the fit.

    Refused as ``in_fit`` refuses, and predictions of several models.
    """
    if preds["fingerprint"].n_unique() > 1:
        raise WorkbenchError("the predictions hold several models; give one model's predictions at a time")
    known = in_fit(fit, preds)
    theta, sd = irt_model.abilities(known["correct"].cast(pl.Float64).to_numpy()[None, :],
                                    np.ones((1, known.height), dtype=bool), known["a"].to_numpy(),
                                    known["b"].to_numpy(), known["floor"].to_numpy())  # fmt: skip
    return accuracy_estimate(fit, float(theta[0]), float(sd[0])).with_columns(
        model=pl.lit(known["model"][0]), asked=pl.lit(known.height), unknown=pl.lit(preds.height - known.height)
    )


def in_fit(fit: IrtFit, questions: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``questions`` (probe or prediction rows) whose question the fit holds, matched by content, with
    its ``item`` key and parameters ``a``, ``b``, ``floor``.

    Refused: none of them in the fit (another probe set), a question whose id the fit holds with other content
    (changed since the fit: refit).
    """
    keyed = questions.with_columns(item=item_key(questions)).join(
        fit.items.select("item", "probe", "a", "b", "floor"), on=["item", "probe"], how="left"
    )
    unknown = keyed.filter(pl.col("a").is_null())
    if (changed := unknown.filter(pl.col("id").is_in(fit.items["id"].implode()))).height:
        raise WorkbenchError(f"{changed.height} question(s) changed since the fit (id {changed['id'][0]} holds other "
                             "text or choices now); refit on the questions as they are")  # fmt: skip
    if unknown.height == keyed.height:
        raise WorkbenchError(f"none of the {keyed.height} questions is in the fit (another probe set?); fit the "
                             "population on this probe set first")  # fmt: skip
    return keyed.filter(pl.col("a").is_not_null())


def accuracy_estimate(fit: IrtFit, theta: float, sd: float) -> pl.DataFrame:
    """Expected accuracy on each probe's questions in the fit at ability ``theta``, with a 95 % interval from the
    ability's (``theta +/- 1.96 sd``; monotone, so its ends map to the accuracy's)."""
    a, b, floor = (fit.items[name].to_numpy() for name in ("a", "b", "floor"))
    probs = irt_model.probability(np.array([theta, theta - Z95 * sd, theta + Z95 * sd]), a, b, floor)
    return (
        fit.items.select("probe")
        .with_columns(accuracy=probs[0], lo=probs[1], hi=probs[2])
        .group_by("probe", maintain_order=True)
        .agg(pl.col("accuracy", "lo", "hi").mean(), questions=pl.len())
        .with_columns(theta=pl.lit(theta), theta_se=pl.lit(sd))
    )


def characteristic_curves(items: pl.DataFrame, points: int = 61) -> pl.DataFrame:
    """Each question's item characteristic curve, long: ``id``, ``question``, ``theta`` (-4 to 4) and ``p`` (the
    probability of a right answer there), for ``items`` rows of a fit (a few: it is ``points`` rows each)."""
    grid = np.linspace(-4.0, 4.0, points)
    p = irt_model.probability(grid, items["a"].to_numpy(), items["b"].to_numpy(), items["floor"].to_numpy())
    return items.select("id", "question", "a", "b").join(
        pl.DataFrame({"theta": grid}), how="cross"
    ).with_columns(p=p.T.ravel())  # fmt: skip
