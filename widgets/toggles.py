"""Probe controls: toggles for probe, split, hops, distractor family and depth, with a live preview."""

from html import escape

import ipywidgets as w

from widgets.files import safe_child
from widgets.render import STYLE, readable_labels, table
from widgets.state import Session
from workbench.paths import workspace
from workbench.probes.formats import write_probes
from workbench.probes.select import ProbeFilter, counts, options, select
from workbench.schema import population_line


class ProbeControls:
    """Toggles that set ``session.where``; shows the counts they select and example questions.

    The write button saves the selected questions as a probe set under ``<workspace>/selections/<name>``.

    >>> controls = ProbeControls(session); controls.hops.value = (1, 2)
    """

    def __init__(self, session: Session, n_examples: int = 4) -> None:
        self.session, self.n_examples = session, n_examples
        self.probe = w.Dropdown(description="probe")
        self.split = w.Dropdown(options=[("all", "")], value="", description="split")
        self.hops = w.IntRangeSlider(description="hops k", min=0, max=0, value=(0, 0), continuous_update=False)
        self.families = w.SelectMultiple(description="distractors", rows=5)
        self.depths = w.IntRangeSlider(description="depth k'", min=0, max=0, value=(0, 0), continuous_update=False)
        self.total = w.HTML()
        self.table = w.HTML()
        self.examples = w.HTML()
        self.name = w.Text(placeholder="name of the probe set", description="save as")
        self.write = w.Button(description="Write probe set", icon="save")
        self.status = w.HTML()
        self.widget = w.VBox(
            [
                w.HTML("<h3>Probe controls</h3>"),
                w.HBox([self.probe, self.split]),
                self.hops, self.families, self.depths,
                self.total, self.table, self.examples,
                w.HBox([self.name, self.write]), self.status,
            ],
            layout=w.Layout(width="100%"),
        )  # fmt: skip
        self.widget.add_class("wb-probe-controls")
        readable_labels(self.widget)
        self._syncing = False
        self.probe.observe(self._probe_changed, "value")
        for toggle in (self.split, self.hops, self.families, self.depths):
            toggle.observe(self._toggled, "value")
        self.write.on_click(self._write)
        session.observe(self._probes_changed, "probes")
        session.observe(self.refresh, "where")
        self._probes_changed()

    def _probes_changed(self, _=None) -> None:
        probes = self.session.probes
        self._syncing = True
        offered = options(probes)["probes"] if probes is not None else []
        scored = set(self.session.predictions["probe"].unique()) if self.session.predictions is not None else set()
        self.probe.options = offered
        self.probe.value = next(
            (p for p in offered if p in scored), offered[0] if offered else None
        )  # a scored probe first
        self._syncing = False
        self._probe_changed()

    def _probe_changed(self, _=None) -> None:
        """Reset the other toggles to everything the chosen probe offers."""
        if self._syncing or self.session.probes is None:
            return
        found = options(select(self.session.probes, ProbeFilter(probe=self.probe.value)))
        self._syncing = True
        self.split.options = [("all", "")] + [(s, s) for s in found["splits"]]
        self.split.value = ""
        for slider, (low, high) in ((self.hops, found["hops"]), (self.depths, found["depths"])):
            slider.max, slider.min = max(high, slider.max), min(low, slider.min)
            slider.value = (low, high)
            slider.min, slider.max = low, high
        self.families.options = found["families"]
        self.families.value = tuple(found["families"])
        self._syncing = False
        self._toggled()

    def _toggled(self, _=None) -> None:
        if self._syncing:
            return
        self.session.where = ProbeFilter(
            probe=self.probe.value, split=self.split.value or None, hops=tuple(self.hops.value),
            families=tuple(self.families.value), depths=tuple(self.depths.value),
        )  # fmt: skip

    def selected(self):
        """The probe rows the toggles keep."""
        return select(self.session.probes, self.session.where)

    def refresh(self, _=None) -> None:
        """Redraw the counts and the example questions for ``session.where``."""
        if self.session.probes is None:
            self.total.value = "<i>No probes loaded: run <code>workbench probes build --probe all</code>.</i>"
            return
        chosen = self.selected()
        self.total.value = (
            f"<b class='wb-total'>{chosen.height:,} questions in "
            f"{chosen['cluster_id'].n_unique():,} clusters</b> selected"
            + (f" · <span class='wb-population'>{escape(population_line(chosen))}</span>" if chosen.height else "")
        )
        self.table.value = table(
            counts(chosen).rename({"distractor_family": "family", "distractor_depth": "depth", "n": "questions"})
        )
        sample = chosen.unique("cluster_id", maintain_order=True).head(self.n_examples)
        self.examples.value = (
            STYLE
            + "<b>examples</b><ol class='wb-examples'>"
            + "".join(
                f"<li>{escape(row['question'])} <span class='wb-muted'>→ {escape(row['choices'][row['answer']])} "
                f"(hops {row['hops']:d}, {escape(row['distractor_family'])} {escape(str(row['distractor_depth']))})"
                "</span></li>"
                for row in sample.iter_rows(named=True)
            )
            + "</ol>"
        )

    def _write(self, _=None) -> None:
        try:
            folder = safe_child(workspace() / "selections", self.name.value or f"{self.probe.value}-selection")
            paths = write_probes(self.selected(), folder)
        except Exception as err:  # shown to the visitor, never raised into the page
            self.status.value = f"<span class='wb-wrong'>not written: {escape(str(err))}</span>"
            return
        self.status.value = f"wrote {len(paths):,} files to <code>{escape(str(folder))}</code>"
