"""PLS path modelling (SPEC §8; Han 2021 ch. 2-3): Wold/Lohmöller's algorithm with mode A or mode B outer
weights, non-metric (ordinal, nominal) indicators by optimal scaling, a centroid, factorial or path inner
scheme, and a seeded, parallel bootstrap.

What it computes follows the R package ``plspm`` (Sanchez 2013), which the thesis used:

- data standardised per column (population s.d.); outer weights start at 1 and are rescaled so
  every latent score has unit variance; iteration stops when ``sum((|w_old| - |w_new|)^2) < tol``;
- mode A (reflective, ``=~``): a weight is the covariance of its indicator with the block's inner estimate;
  mode B (formative, ``<~``): the block's weights are the multiple regression of the inner estimate on its
  indicators (plspm's ``modes``);
- non-metric PLS (Russolillo 2012, plspm's ``scaling``): in every iteration an ordinal or nominal indicator is
  replaced by its optimal quantification, standardised: for ``nom`` the mean of the block's inner estimate within
  each category, for ``ord`` the monotone (isotonic, non-decreasing in the category order) regression of those
  category means, weighted by category size (Kruskal's secondary approach to ties); loadings and weights then
  refer to the quantified indicators, and a nominal indicator's sign carries no meaning;
- each latent is then oriented so that most of its indicators correlate positively with it;
- loadings are correlations of indicators with their latent; path coefficients and R² come from
  OLS of each endogenous latent on its predecessors (``p_ols``: the t test of that regression);
- GoF = sqrt(mean communality over indicators of blocks with more than one indicator x mean R²);
- Cronbach's α (standardised), Dillon-Goldstein ρ from the block's first principal component
  (as R ``plspm`` reports it), ``rho_c`` (the same formula with the PLS loadings, thesis eq. 2.19),
  AVE, and the first two eigenvalues of each block's correlation matrix;
- bootstrap: resample rows with replacement, refit; resample i draws from ``default_rng([seed, i])``,
  so results do not depend on the number of workers; standard error, 95 % percentile interval and
  a two-sided p-value from t = estimate / SE with B−1 degrees of freedom; a path is marked
  significant when that p-value is at most ``alpha`` (without a bootstrap, ``p_ols`` is used).

>>> result = fit_pls(
...     table, parse_model("T =~ hypernymy + hyponymy\\nS =~ orig\\nS ~ T"), PLSSpec(bootstrap=500)
... )  # doctest: +SKIP
>>> result.paths.select("source", "target", "coef", "p_value", "significant")  # doctest: +SKIP
"""

import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context

import numpy as np
import polars as pl
from scipy import stats
from scipy.optimize import isotonic_regression

from workbench.analysis.model import PathModel, check_data, parse_model
from workbench.errors import SpecError, WorkbenchError
from workbench.metrics import MAX_BOOT
from workbench.progress import ProgressBar
from workbench.specs import resolve_spec

SCHEMES = ("centroid", "factorial", "path")


@dataclass(frozen=True)
class PLSSpec:
    """How to fit: inner ``scheme``, ``bootstrap`` resamples (0: none), its ``seed`` and ``workers``
    (processes; None: up to 4, fewer on small machines), significance level ``alpha``, and the
    convergence tolerance ``tol`` and ``max_iter`` of the outer-weight iteration.

    >>> PLSSpec(scheme="centroid", bootstrap=600).scheme
    'centroid'
    """

    scheme: str = "path"
    bootstrap: int = 500
    seed: int = 0
    alpha: float = 0.05
    tol: float = 1e-6
    max_iter: int = 100
    workers: int | None = None

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise SpecError(f"scheme={self.scheme!r} is not allowed; choose one of {list(SCHEMES)}")
        if (
            isinstance(self.bootstrap, bool)
            or not isinstance(self.bootstrap, int)
            or not (self.bootstrap == 0 or 10 <= self.bootstrap <= MAX_BOOT)
        ):
            raise SpecError(
                f"bootstrap={self.bootstrap!r} must be 0 (no bootstrap) or a whole number of resamples from 10 to "
                f"{MAX_BOOT:,} (500 or more for p-values)"
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise SpecError(f"seed={self.seed!r} must be a non-negative whole number")
        if not 0 < self.alpha < 1:
            raise SpecError(f"alpha={self.alpha!r} must lie strictly between 0 and 1 (e.g. 0.05)")
        if not 0 < self.tol < 1:
            raise SpecError(f"tol={self.tol!r} must lie strictly between 0 and 1 (e.g. 1e-6)")
        if not isinstance(self.max_iter, int) or self.max_iter < 1:
            raise SpecError(f"max_iter={self.max_iter!r} must be a whole number >= 1")
        if self.workers is not None and (not isinstance(self.workers, int) or self.workers < 1):
            raise SpecError(f"workers={self.workers!r} must be None (automatic) or a whole number >= 1")


@dataclass(frozen=True)
class PLSResult:
    """A fitted PLS path model: tidy frames plus the goodness of fit.

    ``paths``: source, target, coef, p_ols, and with a bootstrap boot_mean, se, ci_low, ci_high,
    p_value; ``significant`` (p <= alpha). ``loadings`` / ``weights``: latent, indicator, value (+ the
    same bootstrap columns). ``r2``: latent, r2 (+ bootstrap). ``reliability``: one row per block.
    ``scores``: one standardised column per latent. ``draws``: the bootstrap replicates, long
    (resample, kind, term, value), kind in paths, loadings, weights, r2, gof.
    """

    model: PathModel
    spec: PLSSpec
    n_rows: int
    iterations: int
    gof: float
    paths: pl.DataFrame
    loadings: pl.DataFrame
    weights: pl.DataFrame
    r2: pl.DataFrame
    reliability: pl.DataFrame
    scores: pl.DataFrame
    draws: pl.DataFrame | None
    resamples_ok: int

    def to_dict(self) -> dict:
        """A JSON-ready summary (NaN becomes None)."""

        def rows(frame: pl.DataFrame) -> list[dict]:
            return [{k: _clean(v) for k, v in row.items()} for row in frame.iter_rows(named=True)]

        return {
            "model": self.model.to_text(),
            "scheme": self.spec.scheme,
            "n_rows": self.n_rows,
            "iterations": self.iterations,
            "gof": _clean(self.gof),
            "paths": rows(self.paths),
            "r2": rows(self.r2),
            "loadings": rows(self.loadings),
            "weights": rows(self.weights),
            "reliability": rows(self.reliability),
            "bootstrap": {
                "resamples": self.spec.bootstrap,
                "ok": self.resamples_ok,
                "seed": self.spec.seed,
                "alpha": self.spec.alpha,
            },
        }


def fit_pls(
    frame: pl.DataFrame,
    model: PathModel | str,
    spec: PLSSpec | None = None,
    progress: bool = True,
    **overrides,
) -> PLSResult:
    """Fit a PLS path model (SPEC §8) to the rows of ``frame``, one row per model of the population.

    Parameters
    ----------
    frame : polars.DataFrame
        One row per scored model or checkpoint (``workbench.analysis.populations``), one column per indicator.
    model : PathModel or str
        The path model, or its text form (``parse_model``): ``LATENT =~ col1 + col2`` lines and paths.
    spec : PLSSpec, optional
        Inner scheme, bootstrap resamples, seed, ...; ``overrides`` replace single fields (``bootstrap=0``).
    progress : bool
        Show the bootstrap's progress.

    Returns
    -------
    PLSResult
        Path coefficients with bootstrap intervals and p-values, loadings, weights, R², GoF, reliability.

    Examples
    --------

    >>> fit_pls(bats, parse_model(BATS_VECEVAL), PLSSpec(scheme="centroid", bootstrap=0)).gof  # doctest: +SKIP
    0.6484...
    """
    spec = resolve_spec(PLSSpec, spec, overrides)
    model = parse_model(model) if isinstance(model, str) else model
    data = check_data(frame, model).to_numpy()
    design = _design(model)
    fit = _estimate(_standardise(data), design, spec.scheme, spec.tol, spec.max_iter)
    if fit is None:
        raise WorkbenchError(
            f"the outer weights did not converge in {spec.max_iter} iterations (or a latent score came out constant); "
            "raise max_iter, or check for blocks whose columns are (nearly) collinear or constant"
        )
    est, iterations = fit
    n = data.shape[0]
    draws = _bootstrap(data, design, spec, progress) if spec.bootstrap else None
    names = _term_names(model)
    paths = pl.DataFrame(
        {
            "source": [s for s, _ in names["paths"]],
            "target": [t for _, t in names["paths"]],
            "coef": est["paths"],
            "p_ols": _ols_p(est, design, n),
        }  # fmt: skip
    )
    loadings = pl.DataFrame(
        {
            "latent": [latent for latent, _ in names["outer"]],
            "indicator": [c for _, c in names["outer"]],
            "loading": est["loadings"],
        }
    )
    loadings = loadings.with_columns(communality=pl.col("loading") ** 2)
    weights = pl.DataFrame(
        {
            "latent": [latent for latent, _ in names["outer"]],
            "indicator": [c for _, c in names["outer"]],
            "weight": est["weights"],
        }
    )
    r2 = pl.DataFrame(
        {
            "latent": list(model.endogenous),
            "r2": est["r2"],
            "predictors": [len(model.predecessors(t)) for t in model.endogenous],
        }
    )
    ok = 0
    if draws is not None:
        ok = int(np.isfinite(draws[:, 0]).sum())
        if ok < 10:
            raise WorkbenchError(
                f"only {ok} of {spec.bootstrap} bootstrap resamples could be fitted "
                "(constant columns in resamples?); add rows to the population"
            )
        good = draws[np.isfinite(draws[:, 0])]
        parts = _split(good, design)
        paths = paths.hstack(_summary(est["paths"], parts["paths"]))
        loadings = loadings.hstack(_summary(est["loadings"], parts["loadings"]))
        weights = weights.hstack(_summary(est["weights"], parts["weights"]))
        r2 = r2.hstack(_summary(est["r2"], parts["r2"]).drop("p_value"))
        paths = paths.with_columns(significant=pl.col("p_value") <= spec.alpha)
    else:
        paths = paths.with_columns(significant=pl.col("p_ols") <= spec.alpha)
    return PLSResult(
        model=model, spec=spec, n_rows=n, iterations=iterations, gof=float(est["gof"]),
        paths=paths, loadings=loadings, weights=weights, r2=r2,
        reliability=_reliability(data, est["loadings"], design, model),
        scores=pl.DataFrame(est["scores"], schema=list(model.latents), orient="row"),
        draws=_draws_frame(draws, names) if draws is not None else None, resamples_ok=ok,
    )  # fmt: skip


# ---------------------------------------------------------------- the numerical core (NumPy only)


@dataclass(frozen=True)
class _Design:
    block: np.ndarray  # latent index of each indicator column
    path: np.ndarray  # path[t, s] = 1 when s -> t
    endogenous: tuple[int, ...]
    edges: tuple[tuple[int, int], ...]  # (source, target), grouped by target in endogenous order
    mode_b: tuple[int, ...] = ()  # latents with mode B outer weights
    scaling: tuple[str, ...] = ()  # per indicator column: num, ord or nom


def _design(model: PathModel) -> _Design:
    index = {name: i for i, name in enumerate(model.latents)}
    block = np.array([index[latent] for latent in model.latents for _ in model.blocks[latent]])
    path = np.zeros((len(index), len(index)))
    edges = []
    for target in model.endogenous:
        for source in model.predecessors(target):
            path[index[target], index[source]] = 1
            edges.append((index[source], index[target]))
    return _Design(
        block=block, path=path, endogenous=tuple(index[t] for t in model.endogenous), edges=tuple(edges),
        mode_b=tuple(index[latent] for latent in model.latents if model.modes[latent] == "B"),
        scaling=tuple(model.scaling[column] for column in model.indicators),
    )  # fmt: skip


def _term_names(model: PathModel) -> dict:
    return {
        "paths": [(s, t) for t in model.endogenous for s in model.predecessors(t)],
        "outer": [(latent, column) for latent in model.latents for column in model.blocks[latent]],
    }


def _standardise(x: np.ndarray) -> np.ndarray | None:
    sd = x.std(axis=0)
    if np.any(sd == 0):
        return None
    return (x - x.mean(axis=0)) / sd


def _inner_weights(y: np.ndarray, path: np.ndarray, scheme: str) -> np.ndarray:
    adjacent = path + path.T
    if scheme == "centroid":
        return np.sign(np.corrcoef(y, rowvar=False)) * adjacent
    if scheme == "factorial":
        return np.corrcoef(y, rowvar=False) * adjacent
    e = np.zeros_like(path)
    corr = np.corrcoef(y, rowvar=False)
    for k in range(path.shape[0]):
        preds = path[k] == 1  # latents explaining k: their weight is k's regression on them
        if preds.any():
            e[preds, k] = np.linalg.lstsq(y[:, preds], y[:, k], rcond=None)[0]
        succ = path[:, k] == 1  # latents k explains: their weight is the correlation
        e[succ, k] = corr[succ, k]
    return e


def _estimate(x: np.ndarray | None, design: _Design, scheme: str, tol: float, max_iter: int) -> tuple[dict, int] | None:
    """Fit on standardised ``x``; None when ``x`` is None (a constant column), the weights do not
    converge, or the data are degenerate (a latent score without variance, e.g. in a bootstrap resample)."""
    if x is None:
        return None
    try:
        with np.errstate(all="ignore"):
            fit = _iterate(x, design, scheme, tol, max_iter)
    except np.linalg.LinAlgError:
        return None
    if fit is None or not all(
        np.all(np.isfinite(v)) for k, v in fit[0].items() if k != "gof"
    ):  # GoF is NaN without multi-indicator blocks
        return None
    return fit


def quantify(categories: np.ndarray, target: np.ndarray, ordinal: bool) -> np.ndarray | None:
    """Optimal scaling of one non-metric indicator (Russolillo 2012): the standardised category means of
    ``target`` (nominal), made non-decreasing in the category order by weighted isotonic regression (ordinal).

    ``categories``: each row's category index, in the categories' order. None when all quantifications tie.

    >>> quantify(np.array([0, 0, 1, 2]), np.array([1.0, 3.0, 0.0, 5.0]), ordinal=True)  # means 2, 0, 5 -> 1, 1, 5
    array([-0.57735027, -0.57735027, -0.57735027,  1.73205081])
    """
    counts = np.bincount(categories)
    means = np.bincount(categories, weights=target) / np.maximum(counts, 1)
    if ordinal:
        means = isotonic_regression(means, weights=np.maximum(counts, 1e-12), increasing=True).x
    values = means[categories]
    sd = values.std()
    return None if sd == 0 else (values - values.mean()) / sd


def _iterate(x: np.ndarray, design: _Design, scheme: str, tol: float, max_iter: int) -> tuple[dict, int] | None:
    n, n_latent = x.shape[0], design.path.shape[0]
    odm = np.zeros((x.shape[1], n_latent))
    odm[np.arange(x.shape[1]), design.block] = 1
    nonmetric = [j for j, scale in enumerate(design.scaling) if scale != "num"]
    if nonmetric:
        x = x.copy()
        categories = {j: np.unique(x[:, j], return_inverse=True)[1] for j in nonmetric}
    w = odm / (x @ odm).std(axis=0)
    w_old = w.sum(axis=1)
    for iteration in range(1, max_iter + 1):
        y = x @ w
        if not np.all(np.isfinite(y)) or np.any(y.std(axis=0) == 0):
            return None
        y = (y - y.mean(axis=0)) / y.std(axis=0)
        z = y @ _inner_weights(y, design.path, scheme)
        for j in nonmetric:
            quantified = quantify(categories[j], z[:, design.block[j]], design.scaling[j] == "ord")
            if quantified is not None:
                x[:, j] = quantified
        w = odm * (x.T @ z) / n  # mode A: covariance of each indicator with its inner estimate
        for latent in design.mode_b:  # mode B: the inner estimate regressed on the block's indicators
            columns = design.block == latent
            w[columns, latent] = np.linalg.lstsq(x[:, columns], z[:, latent], rcond=None)[0]
        w_new = w.sum(axis=1)
        if np.sum((np.abs(w_old) - np.abs(w_new)) ** 2) < tol:
            break
        w_old = w_new
    else:
        return None
    w = w / (x @ w).std(axis=0)
    y = x @ w
    corr = (x.T @ y) / n  # indicators x latents (all standardised)
    sign = np.sign((np.sign(corr) * odm).sum(axis=0))
    sign[sign == 0] = 1
    w, y, corr = w * sign, y * sign, corr * sign
    loadings = corr[np.arange(x.shape[1]), design.block]
    coefs, r2 = [], []
    for t in design.endogenous:
        preds = design.path[t] == 1
        beta = np.linalg.lstsq(y[:, preds], y[:, t], rcond=None)[0]
        resid = y[:, t] - y[:, preds] @ beta
        coefs.extend(beta)
        r2.append(1 - resid @ resid / (y[:, t] @ y[:, t]))
    multi = np.bincount(design.block)[design.block] > 1
    gof = math.sqrt(np.mean(loadings[multi] ** 2) * np.mean(r2)) if multi.any() else float("nan")
    return {
        "paths": np.array(coefs), "loadings": loadings, "weights": w.sum(axis=1), "r2": np.array(r2), "gof": gof,
        "scores": y,
    }, iteration  # fmt: skip


def _ols_p(est: dict, design: _Design, n: int) -> list[float]:
    """Two-sided p-values of the structural OLS coefficients (regression with intercept, as R's lm)."""
    y, out = est["scores"], []
    for t in design.endogenous:
        preds = design.path[t] == 1
        xs = y[:, preds]
        beta = np.linalg.lstsq(xs, y[:, t], rcond=None)[0]
        resid = y[:, t] - xs @ beta
        df = n - preds.sum() - 1
        sigma2 = resid @ resid / df
        se = np.sqrt(sigma2 * np.diag(np.linalg.pinv(xs.T @ xs)))
        out.extend(2 * stats.t.sf(np.abs(beta / se), df))
    return [float(p) for p in out]


def _flat(est: dict) -> np.ndarray:
    return np.concatenate([est["paths"], est["loadings"], est["weights"], est["r2"], [est["gof"]]])


def _split(flat: np.ndarray, design: _Design) -> dict[str, np.ndarray]:
    sizes = {
        "paths": len(design.edges),
        "loadings": len(design.block),
        "weights": len(design.block),
        "r2": len(design.endogenous),
        "gof": 1,
    }
    out, start = {}, 0
    for kind, size in sizes.items():
        out[kind] = flat[:, start : start + size]
        start += size
    return out


def _resamples(
    data: np.ndarray, design: _Design, scheme: str, tol: float, max_iter: int, seed: int, indices: list[int]
) -> np.ndarray:
    """Bootstrap replicates ``indices`` (a row of NaN where a resample cannot be fitted)."""
    n = data.shape[0]
    width = len(design.edges) + 2 * len(design.block) + len(design.endogenous) + 1
    out = np.full((len(indices), width), np.nan)
    for row, i in enumerate(indices):
        rows = np.random.default_rng([seed, i]).integers(0, n, size=n)
        fit = _estimate(_standardise(data[rows]), design, scheme, tol, max_iter)
        if fit is not None:
            out[row] = _flat(fit[0])
    return out


def _bootstrap(data: np.ndarray, design: _Design, spec: PLSSpec, progress: bool) -> np.ndarray:
    workers = spec.workers or max(1, min(4, (os.cpu_count() or 1) - 1))
    chunk = max(10, math.ceil(spec.bootstrap / (workers * 4)))
    batches = [list(range(s, min(s + chunk, spec.bootstrap))) for s in range(0, spec.bootstrap, chunk)]
    args = (data, design, spec.scheme, spec.tol, spec.max_iter, spec.seed)
    bar = ProgressBar(total=spec.bootstrap, desc="bootstrap", unit="resample", disable=not progress)
    results = []
    if workers == 1:
        for batch in batches:
            results.append(_resamples(*args, batch))
            bar.update(len(batch))
    else:
        # spawn, not fork: polars' thread pool must not be forked mid-flight
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            for batch, result in zip(batches, pool.map(_resamples, *zip(*[(*args, b) for b in batches]))):
                results.append(result)
                bar.update(len(batch))
    bar.close()
    return np.vstack(results)


def _summary(original: np.ndarray, draws: np.ndarray) -> pl.DataFrame:
    se = draws.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, np.abs(original) / se, np.inf)
    return pl.DataFrame({
        "boot_mean": draws.mean(axis=0),
        "se": se,
        "ci_low": np.percentile(draws, 2.5, axis=0),
        "ci_high": np.percentile(draws, 97.5, axis=0),
        "p_value": 2 * stats.t.sf(t, draws.shape[0] - 1),
    })  # fmt: skip


def _draws_frame(draws: np.ndarray, names: dict) -> pl.DataFrame:
    labels = (
        [("paths", f"{s} -> {t}") for s, t in names["paths"]]
        + [("loadings", f"{latent}: {c}") for latent, c in names["outer"]]
        + [("weights", f"{latent}: {c}") for latent, c in names["outer"]]
        + [("r2", t) for t in dict.fromkeys(t for _, t in names["paths"])]
        + [("gof", "GoF")]
    )
    ok = np.isfinite(draws[:, 0])
    resample = np.nonzero(ok)[0]
    return pl.concat(
        pl.DataFrame(
            {"resample": resample, "kind": kind, "term": term, "value": draws[ok, j]},
            schema_overrides={"resample": pl.Int64},
        )
        for j, (kind, term) in enumerate(labels)
    )


def _reliability(data: np.ndarray, loadings: np.ndarray, design: _Design, model: PathModel) -> pl.DataFrame:
    rows = []
    for j, latent in enumerate(model.latents):
        cols = design.block == j
        block, lam, p = data[:, cols], loadings[cols], int(cols.sum())
        corr = np.atleast_2d(np.corrcoef(block, rowvar=False))
        eig = np.sort(np.linalg.eigvalsh(corr))[::-1]
        row = {"latent": latent, "indicators": p, "cronbach_alpha": None, "dg_rho": None, "rho_c": None,
               "ave": float(np.mean(lam**2)), "eig_1st": float(eig[0]),
               "eig_2nd": float(eig[1]) if p > 1 else None}  # fmt: skip
        if p > 1:
            off = corr[np.triu_indices(p, 1)].sum() * 2
            row["cronbach_alpha"] = max(0.0, off / (p + off) * p / (p - 1))
            z = (block - block.mean(axis=0)) / block.std(axis=0)
            pc1 = z @ np.linalg.eigh(corr)[1][:, -1]
            pc_corr = np.array([np.corrcoef(z[:, i], pc1)[0, 1] for i in range(p)])
            row["dg_rho"] = _dg_rho(pc_corr)
            row["rho_c"] = _dg_rho(lam)
        rows.append(row)
    return pl.DataFrame(rows, schema={"latent": pl.String, "indicators": pl.Int64, "cronbach_alpha": pl.Float64,
                                      "dg_rho": pl.Float64, "rho_c": pl.Float64, "ave": pl.Float64,
                                      "eig_1st": pl.Float64, "eig_2nd": pl.Float64})  # fmt: skip


def _dg_rho(lam: np.ndarray) -> float:
    numerator = lam.sum() ** 2
    return float(numerator / (numerator + np.sum(1 - lam**2)))


def _clean(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
