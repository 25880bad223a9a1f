"""A fixed small set of anchor questions for reporting, chosen from a fit as tinyBenchmarks does (Polo et al. 2024).

Within each probe, the fit's questions of the probe set are clustered by their item parameters (discrimination and
difficulty, standardised) with k-means into as many clusters as anchors that probe gets (its share of ``n``, at
least one); each cluster's anchor is its question nearest the centre, weighted by the cluster's share of the
probe's questions (clusters of questions with equal parameters, fewer than asked, are topped up with each
cluster's next nearest, sharing its weight). A model's estimated accuracy on the whole set is the weighted
accuracy of its anchors (``anchor_estimate``); ``fit.ability`` on the anchors' predictions gives the IRT estimate
beside it.

>>> tiny = anchors(fit, probes, n=100)            # doctest: +SKIP
>>> anchor_estimate(tiny, wb.score(tiny, model))  # doctest: +SKIP
"""

import warnings

import numpy as np
import polars as pl
from sklearn.exceptions import ConvergenceWarning

from workbench.errors import WorkbenchError
from workbench.irt.fit import in_fit
from workbench.irt.responses import item_key


def anchors(fit, probes: pl.DataFrame, n: int, seed: int = 0) -> pl.DataFrame:
    """``n`` anchor questions of ``probes`` (probe rows plus ``weight``: the share of its probe's questions each
    stands for), chosen from ``fit``'s item parameters."""
    from sklearn.cluster import KMeans

    known = in_fit(fit, probes)
    if not 1 <= n <= known.height:
        raise WorkbenchError(f"--n {n}: give 1 to {known.height}, the questions of the set the fit holds")
    parts = []
    sizes = known.group_by("probe", maintain_order=True).len().sort("probe")
    for probe, size in sizes.iter_rows():
        group = known.filter(pl.col("probe") == probe)
        k = max(1, min(size, round(n * size / known.height)))
        points = group.select("a", "b").to_numpy()
        points = (points - points.mean(0)) / np.where(points.std(0) > 0, points.std(0), 1)
        with warnings.catch_warnings():  # questions of equal parameters: fewer distinct clusters, topped up below
            warnings.simplefilter("ignore", ConvergenceWarning)
            labels = KMeans(n_clusters=k, n_init=4, random_state=seed).fit(points)
        distance = np.linalg.norm(points - labels.cluster_centers_[labels.labels_], axis=1)
        ranked = pl.DataFrame({"row": range(size), "cluster": labels.labels_, "distance": distance}).sort("distance")
        ranked = ranked.with_columns(rank=pl.int_range(pl.len()).over("cluster"), members=pl.len().over("cluster"))
        chosen = ranked.sort("rank", pl.col("members"), descending=[False, True]).head(k)  # one a cluster first
        chosen = chosen.with_columns(weight=pl.col("members") / size / pl.len().over("cluster"))
        parts.append(group[chosen["row"].to_list()].with_columns(weight=chosen["weight"]))
    return pl.concat(parts).drop("item", "a", "b", "floor")


def anchor_estimate(tiny: pl.DataFrame, preds: pl.DataFrame) -> pl.DataFrame:
    """Estimated accuracy per probe of one model from its predictions on the anchors: their weighted accuracy."""
    keyed = tiny.select(item=item_key(tiny), probe="probe", weight="weight")
    answers = preds.select(item=item_key(preds), probe="probe", right="correct").join(keyed, on=["item", "probe"])
    if answers.height < keyed.height:
        raise WorkbenchError(f"the predictions hold {answers.height} of the {keyed.height} anchor questions; score "
                             "the anchor file whole")  # fmt: skip
    return answers.group_by("probe", maintain_order=True).agg(
        accuracy=(pl.col("right").cast(pl.Float64) * pl.col("weight")).sum() / pl.col("weight").sum(),
        anchors=pl.len(),
    )
