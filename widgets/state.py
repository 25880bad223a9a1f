"""The one observable object the panels share: chosen concept, probe toggles, probes, predictions, run.

Panels read and write ``Session`` traits and observe the ones they show, so they compose without
knowing each other: a concept picked in one panel redraws the cluster browser, a hop slider moved in
the probe controls redraws the dashboard.

    >>> session = Session(probes=probes, predictions=preds)
    >>> session.observe(lambda change: print(change.new), "concept")
    >>> session.concept = "dog.n.01"
"""

import polars as pl
import traitlets

from workbench.probes.select import ProbeFilter


class Frame(traitlets.Instance):
    """A polars frame trait that notifies whenever a different frame object is set (frames have no truth value)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(pl.DataFrame, allow_none=True, **kwargs)

    def set(self, obj: traitlets.HasTraits, value) -> None:
        new = self._validate(obj, value)
        old = obj._trait_values.get(self.name, self.default_value)
        obj._trait_values[self.name] = new
        if old is not new:
            obj._notify_trait(self.name, old, new)


class Session(traitlets.HasTraits):
    """Shared state of a set of panels; every trait is observable (``session.observe(fn, name)``)."""

    graph = traitlets.Any(None, allow_none=True, help="the knowledge Graph concepts are picked from")
    probes = Frame(help="the probe frame (PROBE_SCHEMA)")
    predictions = Frame(help="prediction frame (PREDICTION_SCHEMA), one or more models")
    concept = traitlets.Unicode("", help="the chosen concept, e.g. dog.n.01")
    where = traitlets.Instance(ProbeFilter, kw={}, help="the probe toggles (workbench.probes.select.ProbeFilter)")
    run_dir = traitlets.Unicode("", help="the inoculation run folder being shown")
