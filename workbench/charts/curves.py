"""Learning-curve charts of inoculation runs (SPEC §6, §7): take a curve frame, return a chart value.

The frame is what ``workbench.inoculation.learning_curve`` returns (k, S_new, S_new_std, S_orig,
S_orig_std, n_seeds; k=0 is the source model before inoculation). Probe accuracy is drawn solid,
original-task accuracy dashed, against k; where several seeds were averaged a band shows mean ± one
standard deviation. A control run (the same grid on a NO-LANG or PERTURBED-LANG probe) is drawn in
its own colour with the same dash convention, and a human-performance line can be added. A curve
with a ``rule`` column (``learning_curve(trials, zero_shot=...)``, or ``zero_shot=`` here) is one curve
per zero-shot rule, each series named "model · rule"; its k=0 has no S_orig, so the dashed line starts
at the first inoculated k.

    >>> inoculation_curves(learning_curve(load_run("runs/inoc")), human=HUMAN_ACCURACY["hypernymy"])  # doctest: +SKIP
"""

import altair as alt
import polars as pl

from workbench.errors import SpecError
from workbench.views import ORIGINAL, PROBE, learning_curve_points

DASHES = {PROBE: [1, 0], ORIGINAL: [6, 4]}
HUMAN_ACCURACY = {"definitions": 0.912, "synonymy": 0.874, "hypernymy": 0.96, "hyponymy": 0.955, "wordsense": 0.956}
"""Human performance on the probes, as fractions: R&S 2020 Table 7 (bottom rows, test sets; hypernymy, hyponymy
and word sense on the gold-standard annotated test sets, marked † there; definitions and synonymy estimated)."""


def inoculation_curves(
    curve: pl.DataFrame,
    control: pl.DataFrame | None = None,
    human: float | None = None,
    title: str | None = None,
    zero_shot: pl.DataFrame | None = None,
) -> alt.LayerChart:
    """Probe (solid) and original-task (dashed) accuracy against k, with a ± std band when seeds were averaged.

    Parameters
    ----------
    curve : polars.DataFrame
        ``workbench.inoculation.learning_curve`` of a run.
    control : polars.DataFrame, optional
        A second curve (e.g. the NO-LANG version of the probe), drawn as series "control".
    human : float, optional
        A human-performance accuracy in [0, 1] (see ``HUMAN_ACCURACY``), drawn as a dotted rule.
    title : str, optional
    zero_shot : polars.DataFrame, optional
        Zero-shot points (``workbench.scoring.zero_shot_accuracy``) as the k=0 of ``curve`` (and of
        ``control``), one curve per rule (``workbench.inoculation.curves.with_zero_shot``).

    Returns
    -------
    altair.LayerChart

    Examples
    --------
    >>> chart = inoculation_curves(curve, control=no_lang_curve, human=0.96)  # doctest: +SKIP
    >>> chart.to_dict()["layer"][0]["mark"]["type"]  # doctest: +SKIP
    'area'
    """
    if human is not None and not (isinstance(human, (int, float)) and 0.0 <= human <= 1.0):
        raise SpecError(f"human={human!r} is out of range; give an accuracy from 0 to 1 (0.912 for 91.2%)")
    points = learning_curve_points(curve, control, zero_shot)
    x = alt.X("k:Q", title="probe training examples k (0 = before inoculation or zero-shot)")
    y = alt.Y("accuracy:Q", title="dev accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    if zero_shot is not None or "rule" in curve.columns:  # one colour per (run, rule)
        color = alt.Color(
            "series:N", title="run · zero-shot rule", sort=points["series"].unique(maintain_order=True).to_list()
        )
    else:
        color = alt.Color(
            "series:N", title="run", scale=alt.Scale(domain=["model", "control"], range=["#1f77b4", "#7f7f7f"])
        )
    dash = alt.StrokeDash(
        "measure:N", title="measure", scale=alt.Scale(domain=list(DASHES), range=list(DASHES.values())),
        legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2, symbolSize=300),
    )  # fmt: skip
    layers = []
    spread = points.filter(pl.col("n_seeds").max().over("series") > 1)
    if not spread.is_empty():
        layers.append(
            alt.Chart(spread).mark_area(opacity=0.15)
            .encode(x=x, y=alt.Y("low:Q", scale=alt.Scale(domain=[0, 1])), y2="high:Q", color=color, detail="measure:N")
            .properties(name="seed_spread")
        )  # fmt: skip
    layers.append(
        alt.Chart(points).mark_line(point=True)
        .encode(
            x=x, y=y, color=color, strokeDash=dash,
            tooltip=["series:N", "measure:N", "k:Q", alt.Tooltip("accuracy:Q", format=".1%"),
                     alt.Tooltip("std:Q", format=".1%"), alt.Tooltip("n_seeds:Q", title="seeds")],
        )
        .properties(name="curves")
    )  # fmt: skip
    if human is not None:
        rule = pl.DataFrame({"human": [float(human)], "label": [f"human {human:.1%}"]})
        base = alt.Chart(rule).encode(y="human:Q")
        layers.append(base.mark_rule(color="black", strokeDash=[2, 2]).properties(name="human"))
        layers.append(base.mark_text(align="left", dx=4, dy=-6, color="black").encode(x=alt.value(0), text="label:N"))
    chart = alt.layer(*layers).properties(width=420, height=280)
    return chart.properties(title=title) if title else chart
