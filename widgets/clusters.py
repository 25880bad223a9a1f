"""Cluster browser: every question of the chosen concept's semantic cluster, with a model's picks when loaded."""

from html import escape

import altair as alt
import ipywidgets as w
import polars as pl

from widgets.dashboard import EMBED
from widgets.render import STYLE, offer, prompt_block, readable_labels
from widgets.state import Session
from workbench import markup, metrics
from workbench.annotation import FLAGS
from workbench.charts.irt import characteristic_chart
from workbench.charts.offline import offline_charts
from workbench.irt.fit import characteristic_curves
from workbench.irt.responses import item_key
from workbench.probes.select import ProbeFilter, cluster_of, cluster_verdicts, select

_EMPTY = alt.Chart(alt.Data(values=[])).mark_point()


class ClusterBrowser:
    """Shows ``cluster_of(probes, session.concept)`` for the chosen probe: choices, gold, hops, distractors.

    With ``session.predictions`` set, each question also shows each model's pick, per-choice scores,
    correctness, and the cluster verdict (all right or not); each model (each way of asking one) is named by its
    ``metrics.model_labels`` label. The question picked in ``question`` is shown below as each model saw it: the
    exact prompt (instruction, shots, chat template applied) beside its per-choice scores, or for the ``generate``
    scorer its free answer, the lemma it matched and the kind of match. With ``session.fit`` (an IRT fit) set, the
    picked question's difficulty, discrimination and item characteristic curve are shown too (docs/IRT.md).

    >>> ClusterBrowser(session).widget
    """

    def __init__(self, session: Session, max_questions: int = 40) -> None:
        self.session, self.max_questions = session, max_questions
        self.summary = w.HTML()
        self.body = w.HTML()
        self.question = w.Dropdown(description="question", options=[], layout=w.Layout(width="95%"))
        self.detail = w.HTML()
        self.detail.add_class("wb-question-detail")
        self.irt = w.HTML()
        self.irt.add_class("wb-question-irt")
        offline_charts()  # Vega from the kernel: the explorer loads nothing from a CDN (tests/test_browser.py)
        self.curve = alt.JupyterChart(_EMPTY, embed_options=EMBED)
        self.curve.layout.display = "none"  # until a question of the fit is picked
        self.curve.add_class("wb-question-curve")
        self._labels: pl.DataFrame | None = None
        self._frame: pl.DataFrame | None = None  # the predictions' rows of the shown cluster (None: no predictions)
        self._busy = [False]
        self.widget = w.VBox(
            [
                w.HTML("<h3>Semantic cluster</h3>"),
                self.summary,
                self.question,
                self.irt,
                self.curve,
                self.detail,
                self.body,
            ],
            layout=w.Layout(width="100%"),
        )
        self.widget.add_class("wb-cluster-browser")
        readable_labels(self.widget)
        session.observe(self._new_predictions, "predictions")
        session.observe(self.refresh, ["concept", "probes", "where", "fit"])
        self.question.observe(self._show_question, "value")
        self.refresh()

    def _new_predictions(self, _=None) -> None:
        self._labels = None
        self.refresh()

    def _label_of(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` with each row's model ``label`` (a way of asking one model is told from another)."""
        if self._labels is None:
            labels = metrics.model_labels(self.session.predictions)
            self._labels = labels.unique(["model", "fingerprint"], keep="first", maintain_order=True)
        return frame.join(
            self._labels.select("model", "fingerprint", "label"), on=["model", "fingerprint"], how="left",
            nulls_equal=True, maintain_order="left",
        )  # fmt: skip

    def refresh(self, _=None) -> None:
        """Redraw for the current concept, probe and predictions."""
        concept, probes = self.session.concept, self.session.probes
        self._frame = None
        if not concept or probes is None:
            self.summary.value, self.body.value = "<i>Pick a concept.</i>", ""
            self._questions([])
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
            self._questions([])
            return
        n_clusters = frame["cluster_id"].n_unique()
        questions = frame.unique("id", maintain_order=True)
        verdicts_html = ""
        if preds is not None:
            frame = self._label_of(frame)
            self._frame = frame
            rows = self._label_of(cluster_verdicts(frame)).iter_rows(named=True)
            verdicts_html = " ".join(
                f"<span class='{'wb-right' if row['all_right'] else 'wb-wrong'}'>{markup.text(row['label'])}: "
                f"{row['n_correct']:d}/{row['n']:d} {'all right' if row['all_right'] else 'not all right'}</span>"
                for row in rows
            )
        self.summary.value = (
            f"{STYLE}<span class='wb-cluster-summary'><b>{markup.text(concept)}</b>: {questions.height:,} questions in "
            f"{n_clusters:,} cluster(s)</span> {verdicts_html}"
        )
        shown = questions.head(self.max_questions)
        self.body.value = STYLE + "".join(
            self._question_html(row, frame if preds is not None else None) for row in shown.iter_rows(named=True)
        )
        self._questions([(_short(row["question"]), row["id"]) for row in shown.iter_rows(named=True)])

    def _questions(self, options: list[tuple[str, str]]) -> None:
        """Offer ``options`` in the question picker, keeping the picked question where it is still offered."""
        kept = self.question.value if self.question.value in [value for _, value in options] else None
        offer(self.question, options, kept if kept is not None else (options[0][1] if options else None), self._busy)
        self.question.layout.display = None if options else "none"
        self._show_question()

    def _show_question(self, _=None) -> None:
        """The picked question as each model saw it: its prompt and its scores or free answer."""
        if self._busy[0]:
            return
        self._show_irt()
        if self._frame is None or self.question.value is None:
            self.detail.value = ""
            return
        rows = self._frame.filter(pl.col("id") == self.question.value)
        self.detail.value = STYLE + "".join(_as_seen_html(row) for row in rows.iter_rows(named=True))

    def _show_irt(self) -> None:
        """The picked question's difficulty, discrimination and characteristic curve, where the session's fit holds
        it (matched by content, as ``irt.fit.in_fit`` does)."""
        fit, probes, picked = self.session.fit, self.session.probes, self.question.value
        item = None
        if fit is not None and probes is not None and picked is not None:
            rows = probes.filter(pl.col("id") == picked)
            keys = rows.select(item_key(rows).alias("item"), "probe")
            item = fit.items.join(keys, on=["item", "probe"], how="semi").head(1)
        if item is None or item.is_empty():
            self.irt.value = "" if item is None else "<span class='wb-muted'>not in the IRT fit</span>"
            self.curve.layout.display = "none"
            return
        r = item.row(0, named=True)
        floor_html = f", guessing floor {r['floor']:.2f}" if r["floor"] else ""
        self.irt.value = (
            f"<span class='wb-irt'>IRT fit: difficulty {r['b']:+.2f}, discrimination {r['a']:.2f}{floor_html}</span>"
        )
        self.curve.chart = characteristic_chart(characteristic_curves(item))
        self.curve.layout.display = None

    def _question_html(self, row: dict, preds: pl.DataFrame | None) -> str:
        picks = list(preds.filter(pl.col("id") == row["id"]).iter_rows(named=True)) if preds is not None else []
        head_html = "".join(f"<th>{markup.text(p['label'])}</th>" for p in picks)
        lines_html = []
        for index, choice in enumerate(row["choices"]):
            gold = index == row["answer"]
            cells_html = "".join(
                f"<td class='"
                f"{'wb-right' if p['pred'] == index and p['correct'] else 'wb-wrong' if p['pred'] == index else ''}'>"
                f"{_score_html(p, index)}{' ◀' if p['pred'] == index else ''}</td>"
                for p in picks
            )
            lines_html.append(f"<tr><td>{'✔' if gold else ''}</td><td>{escape(choice)}</td>{cells_html}</tr>")
        family = row["distractor_family"] + (f" {row['distractor_depth']}" if row["distractor_depth"] else "")
        marks_html = " ".join(
            "<span class='wb-right'>right</span>" if p["correct"] else "<span class='wb-wrong'>wrong</span>"
            for p in picks
        )
        return (
            f"<div class='wb-question'><p dir='auto'><b dir='auto'>{escape(row['question'])}</b><br>"
            f"<span class='wb-muted'>hops {row['hops']:d} · "
            f"distractors {escape(family)} · {escape(row['split'])} · {escape(row['cluster_id'])}</span> {marks_html}"
            f"{self._flags_html(row['id'])}</p>"
            f"<table class='wb-table'><thead><tr><th>gold</th><th>choice</th>{head_html}</tr></thead>"
            f"<tbody>{''.join(lines_html)}</tbody></table></div>"
        )

    def _flags_html(self, question: str) -> str:
        """What people flagged on ``question`` in the workspace's annotation batches (docs/ANNOTATION.md)."""
        flags = self.session.flags
        if flags is None:
            return ""
        rows = flags.filter(pl.col("id") == question).iter_rows(named=True)
        return "".join(
            f"<br><span class='wb-wrong wb-flag'>people: {escape(FLAGS[row['flag']])} ({row['raised']:d} of "
            f"{row['votes']:d} votes; picked {markup.text(' | '.join(row['picked']))}; "
            f"batch {markup.text(row['batch'])})"
            "</span>"
            for row in rows
        )


def _short(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _score_html(pick: dict, index: int) -> str:
    """A choice's cell: its score, or for a free answer (``generate``: 1 for the choice it names) nothing."""
    return "" if pick["scorer"] == "generate" else f"{pick['scores'][index]:.3f}"


def _as_seen_html(pick: dict) -> str:
    """One model's view of the picked question: the prompt it saw, its per-choice scores or its free answer."""
    verdict_html = "<span class='wb-right'>right</span>" if pick["correct"] else "<span class='wb-wrong'>wrong</span>"
    if pick["scorer"] == "generate":
        matched_html = markup.text(pick["matched"]) if pick.get("matched") else "<i>nothing</i>"
        answer_html = (
            f"<p class='wb-free-answer'>free answer: <b>{markup.text(pick.get('generated') or '')}</b> · matched "
            f"{matched_html} "
            f"· match <b>{escape(pick.get('match') or '')}</b></p>"
        )
    else:
        rows_html = "".join(
            f"<tr><td>{escape(choice)}</td><td>{pick['scores'][index]:.3f}{' ◀' if pick['pred'] == index else ''}"
            f"</td></tr>"
            for index, choice in enumerate(pick["choices"])
        )
        answer_html = "<table class='wb-table wb-choice-scores'><thead><tr><th>choice</th><th>score</th></tr></thead>"
        answer_html += f"<tbody>{rows_html}</tbody></table>"
    seen_html = (
        prompt_block(pick["prompt"])
        if pick.get("prompt") is not None
        else "<p class='wb-muted'>no prompt: this scorer reads the question without one</p>"
    )
    return (
        f"<div class='wb-as-seen'><p><b>{markup.text(pick['label'])}</b> {verdict_html} "
        f"<span class='wb-muted'>{markup.text(pick['scorer'])} · {markup.text(pick['rule'])}</span></p>"
        f"{seen_html}{answer_html}</div>"
    )
