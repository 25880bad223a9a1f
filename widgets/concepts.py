"""Concept picker: search concepts by word, see a concept's gloss, examples, lemmas (in every loaded language) and
hypernym tree."""

from html import escape

import ipywidgets as w
import polars as pl

from widgets.render import STYLE, readable_labels
from widgets.state import Session
from workbench.knowledge.lookup import POS_NAMES, concept_card, hypernym_paths, search_concepts, tree_lines
from workbench.knowledge.omw import lemmas_across, words_across


class ConceptPicker:
    """Type a word (prefix search), filter by part of speech, pick a concept: it becomes ``session.concept``.

    >>> picker = ConceptPicker(session); picker.search.value = "dog"; picker.hits.value = "dog.n.01"
    """

    def __init__(self, session: Session, limit: int = 20) -> None:
        self.session, self.limit = session, limit
        self._across: dict[tuple[str, ...], pl.DataFrame] = {}  # lemmas_across, read once per set of languages
        self.search = w.Text(placeholder="type a word, e.g. dog", description="word", continuous_update=True)
        self.pos = w.Dropdown(
            options=[("any", "")] + [(f"{name} ({code})", code) for code, name in POS_NAMES.items()],
            value="",
            description="part of speech",
        )
        self.hits = w.Select(options=[], rows=8, description="concepts", layout=w.Layout(width="95%"))
        self.card = w.HTML("<i>Pick a concept to see its gloss, examples, lemmas and hypernym paths.</i>")
        self.widget = w.VBox(
            [w.HTML("<h3>Concept</h3>"), w.HBox([self.search, self.pos]), self.hits, self.card],
            layout=w.Layout(width="100%"),
        )
        self.widget.add_class("wb-concept-picker")
        readable_labels(self.widget)
        self.search.observe(self._search, "value")
        self.pos.observe(self._search, "value")
        self.hits.observe(self._pick, "value")
        session.observe(self._show, ["concept", "languages"])
        self._show()

    def _search(self, _=None) -> None:
        hits = search_concepts(self.session.graph, self.search.value, pos=self.pos.value or None, limit=self.limit)
        self.hits.options = [
            (f"{row['lemma']} ({row['name']}): {row['gloss'][:70]}", row["name"]) for row in hits.iter_rows(named=True)
        ]
        if len(hits) and self.hits.value is None:
            self.hits.value = hits["name"][0]

    def _pick(self, change) -> None:
        if change.new:
            self.session.concept = change.new

    def _show(self, _=None) -> None:
        name = self.session.concept
        if not name or self.session.graph is None:
            return
        try:
            card = concept_card(self.session.graph, name)
        except KeyError:
            self.card.value = f"<i>{escape(name)} is not in {escape(self.session.graph.source)}.</i>"
            return
        tree_html = "<br>".join(
            "&nbsp;&nbsp;" * depth + ("└ " if depth else "") + escape(node)
            for depth, node in tree_lines(hypernym_paths(self.session.graph, name))
        )
        examples_html = (
            "".join(f"<li>{escape(text)}</li>" for text in card.examples) or "<li class='wb-muted'>none</li>"
        )
        self.card.value = (
            f"{STYLE}<div class='wb-card'><b class='wb-concept-name'>{escape(card.name)}</b> "
            f"<span class='wb-muted'>({escape(POS_NAMES.get(card.pos, card.pos))})</span>"
            f"<p class='wb-gloss'>{escape(card.gloss)}</p>"
            f"<p><b>lemmas</b>: {escape(', '.join(card.lemmas))}</p>{self._languages_html(name)}"
            f"<b>examples</b><ul>{examples_html}</ul>"
            f"<b>hypernym paths</b><div class='wb-tree'>{tree_html}</div></div>"
        )

    def _languages_html(self, name: str) -> str:
        """The concept's words in each loaded language (``session.languages``), a row each; '' when none is loaded."""
        languages = tuple(self.session.languages)
        if not languages or self.session.graph.source != "wordnet":
            return ""
        if languages not in self._across:
            self._across[languages] = lemmas_across(languages, self.session.graph)
        words = words_across(name, languages, self.session.graph, self._across[languages]).slice(1)
        rows_html = "".join(
            f"<tr><th>{escape(row['language'])}</th>"
            f"<td>{escape(', '.join(row['lemmas'])) if row['lemmas'] else '<span class=wb-muted>no word</span>'}"
            "</td></tr>"
            for row in words.iter_rows(named=True)
        )
        return f"<table class='wb-languages'><caption>in other languages</caption>{rows_html}</table>"
