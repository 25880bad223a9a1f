"""The one observable object the panels share: chosen concept, probe toggles, probes, predictions, run.

Panels read and write ``Session`` traits and observe the ones they show, so they compose without
knowing each other: a concept picked in one panel redraws the cluster browser, a hop slider moved in
the probe controls redraws the dashboard.

    >>> session = Session(probes=probes, predictions=preds)
    >>> session.observe(lambda change: print(change.new), "concept")
    >>> session.concept = "dog.n.01"
"""

import warnings

import polars as pl
import traitlets

from workbench.probes.select import ProbeFilter

# traitlets compares an old and a new value to decide whether to notify; a polars frame refuses the comparison
# (so every new frame notifies, as traitlets documents), and against None it also warns. Silence that warning only.
warnings.filterwarnings("ignore", message="Comparisons with None always result in null", module=r"traitlets\.")


def Frame(**kwargs) -> traitlets.Instance:  # noqa: N802 (named like the trait types it stands beside)
    """A polars frame trait (or None); setting a frame always notifies its observers."""
    return traitlets.Instance(pl.DataFrame, allow_none=True, **kwargs)


class Session(traitlets.HasTraits):
    """Shared state of a set of panels; every trait is observable (``session.observe(fn, name)``)."""

    graph = traitlets.Any(None, allow_none=True, help="the knowledge Graph concepts are picked from")
    probes = Frame(help="the probe frame (PROBE_SCHEMA)")
    predictions = Frame(help="prediction frame (PREDICTION_SCHEMA), one or more models")
    flags = Frame(help="the flags people raised on questions (workbench.annotation.flag_table), if any")
    fit = traitlets.Any(None, allow_none=True, help="an IRT fit (workbench.irt.IrtFit): each question's parameters")
    concept = traitlets.Unicode("", help="the chosen concept, e.g. dog.n.01")
    where = traitlets.Instance(ProbeFilter, kw={}, help="the probe toggles (workbench.probes.select.ProbeFilter)")
    run_dir = traitlets.Unicode("", help="the inoculation run folder being shown")
    languages = traitlets.Tuple(help="the OMW wordnets loaded (codes, e.g. ('fra', 'ita')): a concept's words in each")
