"""Cluster browser: every question of the chosen concept's semantic cluster, with a model's picks when loaded."""

from html import escape

import ipywidgets as w
import polars as pl

from widgets.render import STYLE, readable_labels
from widgets.state import Session
from workbench.probes.select import ProbeFilter, cluster_of, cluster_verdicts, select
from workbench.schema import model_label


class ClusterBrowser:
    """Shows ``cluster_of(probes, session.concept)`` for the chosen probe: choices, gold, hops, distractors.

    With ``session.predictions`` set, each question also shows each model's pick, per-choice scores,
    correctness, and the cluster verdict (all right or not).

    >>> ClusterBrowser(session).widget
    """

    def __init__(self, session: Session, max_questions: int = 40) -> None:
        self.session, self.max_questions = session, max_questions
        self.summary = w.HTML()
        self.body = w.HTML()
        self.widget = w.VBox(
            [w.HTML("<h3>Semantic cluster</h3>"), self.summary, self.body], layout=w.Layout(width="100%")
        )
        self.widget.add_class("wb-cluster-browser")
        readable_labels(self.widget)
        session.observe(self.refresh, ["concept", "probes", "predictions", "where"])
        self.refresh()

    def refresh(self, _=None) -> None:
        """Redraw for the current concept, probe and predictions."""
        concept, probes = self.session.concept, self.session.probes
        if not concept or probes is None:
            self.summary.value, self.body.value = "<i>Pick a concept.</i>", ""
            return
        probe_only = ProbeFilter(probe=self.session.where.probe)
        preds = self.session.predictions
        frame = cluster_of(select(preds if preds is not None else probes, probe_only), concept)
        if preds is not None and frame.is_empty():
            frame = cluster_of(select(probes, probe_only), concept)
            preds = None
        if frame.is_empty():
            where = f"the {self.session.where.probe} probe" if self.session.where.probe else "the loaded probes"
            self.summary.value = (
                f"<span class='wb-cluster-empty'>No question about <b>{escape(concept)}</b> in {escape(where)}.</span>"
            )
            self.body.value = ""
            return
        n_clusters = frame["cluster_id"].n_unique()
        questions = frame.unique("id", maintain_order=True)
        verdicts = ""
        if preds is not None:
            rows = cluster_verdicts(frame).iter_rows(named=True)
            verdicts = " ".join(
                f"<span class='{'wb-right' if row['all_right'] else 'wb-wrong'}'>{escape(model_label(row['model']))}: "
                f"{row['n_correct']}/{row['n']} {'all right' if row['all_right'] else 'not all right'}</span>"
                for row in rows
            )
        self.summary.value = (
            f"{STYLE}<span class='wb-cluster-summary'><b>{escape(concept)}</b>: {questions.height} questions in "
            f"{n_clusters} cluster(s)</span> {verdicts}"
        )
        shown = questions.head(self.max_questions)
        self.body.value = STYLE + "".join(
            self._question(row, frame if preds is not None else None) for row in shown.iter_rows(named=True)
        )

    def _question(self, row: dict, preds: pl.DataFrame | None) -> str:
        picks = preds.filter(pl.col("id") == row["id"]).iter_rows(named=True) if preds is not None else []
        picks = list(picks)
        head = "".join(f"<th>{escape(model_label(p['model']))}</th>" for p in picks)
        lines = []
        for index, choice in enumerate(row["choices"]):
            gold = index == row["answer"]
            cells = "".join(
                f"<td class='"
                f"{'wb-right' if p['pred'] == index and p['correct'] else 'wb-wrong' if p['pred'] == index else ''}'>"
                f"{p['scores'][index]:.3f}{' ◀' if p['pred'] == index else ''}</td>"
                for p in picks
            )
            lines.append(f"<tr><td>{'✔' if gold else ''}</td><td>{escape(choice)}</td>{cells}</tr>")
        family = row["distractor_family"] + (f" {row['distractor_depth']}" if row["distractor_depth"] else "")
        marks = " ".join(
            "<span class='wb-right'>right</span>" if p["correct"] else "<span class='wb-wrong'>wrong</span>"
            for p in picks
        )
        return (
            f"<div class='wb-question'><p><b>{escape(row['question'])}</b><br>"
            f"<span class='wb-muted'>hops {row['hops']} · "
            f"distractors {escape(family)} · {escape(row['split'])} · {escape(row['cluster_id'])}</span> {marks}</p>"
            f"<table class='wb-table'><thead><tr><th>gold</th><th>choice</th>{head}</tr></thead>"
            f"<tbody>{''.join(lines)}</tbody></table></div>"
        )
