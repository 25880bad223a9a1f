"""Item diagnostics: the fit's suspected defects as rows of ``workbench probes check``, beside people's flags.

A question whose discrimination is near zero (``fit.SUSPECT_A``: its 95 % interval lies below it) is one the
strongest members of the population miss as often as the weakest: a wrong gold, a second right answer, a broken
text. Such questions are listed as kind ``undiscriminating``; where people flagged questions (kind ``also-right``)
``overlap`` says how the two lists meet.
"""

import polars as pl

from workbench.irt.responses import item_key
from workbench.probes.quality import PROBLEMS_SCHEMA

KIND = "undiscriminating"


def suspect_problems(fit, probes: pl.DataFrame) -> pl.DataFrame:
    """``probes``' questions the fit suspects, as ``PROBLEMS_SCHEMA`` rows (field ``question``, kind ``KIND``)."""
    suspects = fit.items.filter("suspect").select("item", "probe", "a", "a_se", "n")
    found = probes.with_columns(item=item_key(probes)).join(suspects, on=["item", "probe"], how="inner")
    return found.select(
        "id", field=pl.lit("question"), kind=pl.lit(KIND),
        detail=pl.format("discrimination {} ± {} over {} members", pl.col("a").round(2), pl.col("a_se").round(2),
                         "n"),
        text=pl.col("question"),
    ).select(list(PROBLEMS_SCHEMA))  # fmt: skip


def overlap(problems: pl.DataFrame) -> dict[str, int]:
    """How the questions people flagged (``also-right``) and those the fit suspects meet: counts of each and both."""
    people = set(problems.filter(pl.col("kind") == "also-right")["id"])
    fitted = set(problems.filter(pl.col("kind") == KIND)["id"])
    return {"people": len(people), "irt": len(fitted), "both": len(people & fitted)}
