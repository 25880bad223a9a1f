"""Annotation panel: one question at a time for one person of a batch, the gold hidden, their own choice order;
a click or a key (1-5) answers, flags and a comment ride along; after the last answer, their answers beside the
gold and the models' (``workbench.annotation`` records and reads every vote). Every text of the batch (its name, a
person's, a question, a model's label) reaches the page through ``workbench.markup`` (issue 60).

>>> AnnotationPanel(annotator(open_batch("annotation/hyp"), "alice")).widget  # doctest: +SKIP
"""

import time

import ipywidgets as w
import polars as pl

from widgets.render import STYLE, table
from workbench import markup
from workbench.annotation import FLAGS, Vote, record_vote, review, todo
from workbench.annotation.votes import Annotator
from workbench.errors import WorkbenchError

CHOICE_STYLE = (
    "<style>.wb-choice{justify-content:flex-start;text-align:left;white-space:normal;line-height:1.3;"
    "padding:6px 10px}</style>"
)


class AnnotationPanel:
    """Asks ``member`` their batch's questions in their order, resuming where they stopped; ``predictions`` (a
    prediction frame) adds the models' picks to the review shown after the last answer."""

    def __init__(self, member: Annotator, predictions: pl.DataFrame | None = None) -> None:
        self.member, self.predictions = member, predictions
        self.questions = {row["id"]: row for row in member.batch.questions.iter_rows(named=True)}
        self.total = member.batch.assignments.filter(pl.col("place") == member.place).height
        self.progress = w.IntProgress(min=0, max=max(self.total, 1), description="done")
        self.who = w.HTML(
            f"<p class='wb-muted'>{markup.text(member.name)} · batch {markup.text(member.batch.name)}</p>"
        )
        self.counter = w.HTML()
        self.stem = w.HTML()
        self.choices = w.VBox()
        self.flags = [w.Checkbox(description=text, indent=False, value=False) for text in FLAGS.values()]
        self.comment = w.Textarea(placeholder="A comment (optional)", layout=w.Layout(width="95%", height="3.5em"))
        self.status = w.HTML()
        self.question = w.VBox([self.stem, self.choices, w.HBox(self.flags), self.comment])
        self.widget = w.VBox([w.HTML(STYLE + CHOICE_STYLE), self.who, w.HBox([self.progress, self.counter]),
                              self.question, self.status])  # fmt: skip
        self.current: dict | None = None
        self.shown_at = 0.0
        self.layout = w.Layout(width="95%", height="auto")  # one layout for every choice button
        self._next()

    def _next(self) -> None:
        remaining = todo(self.member)
        done = self.total - remaining.height
        self.progress.value = done
        self.counter.value = f"<span class='wb-muted'>{done:d} of {self.total:d} answered</span>"
        if remaining.is_empty():
            self.current = None
            self._finish()
            return
        self.current = remaining.row(0, named=True)
        row = self.questions[self.current["id"]]
        self.stem.value = f"<p class='wb-annotate-stem' dir='auto'><b>{markup.text(row['question'])}</b></p>"
        buttons = []
        for shown, index in enumerate(self.current["order"], start=1):
            button = w.Button(
                description=f"{shown}. {row['choices'][index]}", tooltip=f"key {shown}", layout=self.layout,
                _dom_classes=("wb-choice", f"wb-key-{shown}"),
            )  # fmt: skip
            button.on_click(lambda _, shown=shown, question=self.current["id"]: self.answer(shown, question))
            buttons.append(button)
        old, self.choices.children = self.choices.children, buttons
        for button in old:  # a question's buttons are new (a late click on an old one is told apart), the old closed
            button.close()
        for flag in self.flags:
            flag.value = False
        self.comment.value = ""
        self.shown_at = time.monotonic()

    def answer(self, shown: int, question: str | None = None) -> None:
        """Record the choice shown at ``shown`` (1-based) for the current question and show the next; a click
        meant for another ``question`` (a double click landing after the page moved on) is ignored."""
        if self.current is None or question not in (None, self.current["id"]):
            return
        order = self.current["order"]
        flags = [key for key, box in zip(FLAGS, self.flags, strict=True) if box.value]
        vote = Vote(
            annotator=self.member.name, question=self.current["id"], choice=order[shown - 1], shown=shown,
            order=order, flags=flags, comment=self.comment.value.strip(),
            seconds=round(time.monotonic() - self.shown_at, 3), source="app",
        )  # fmt: skip
        try:
            record_vote(self.member.batch, vote)
        except WorkbenchError as err:  # a locked or damaged database: say so, keep the question on screen
            self.status.value = f"<span class='wb-wrong'>not saved: {markup.text(err)} (try again)</span>"
            return
        self.status.value = ""
        self._next()

    def _finish(self) -> None:
        answers = review(self.member, self.predictions)
        right = answers["right"].mean() if answers.height else 0.0
        models = [name for name in answers.columns if name not in ("id", "question", "yours", "gold", "right")]
        agree_html = "".join(
            f"<li>{markup.text(name)}: {(answers[name] == answers['gold']).mean():.0%} right on these questions</li>"
            for name in models
        )
        self.question.children = [
            w.HTML(
                f"<h3>Thank you: all {self.total:d} answered</h3><p>You picked the gold on {right:.0%} of them."
                + ("</p><ul>" + agree_html + "</ul>" if agree_html else "</p>")
            ),
            w.HTML(table(answers.drop("id"))),
        ]
