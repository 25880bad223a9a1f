"""The cross-lingual panels on real WordNet and WOLF (French) sets scored by the offline MiniLM: the dashboard and the
static site show English against French question by question when the predictions pair them (and nothing of it when
they do not); the explorer's concept card shows a concept's words in every loaded language, as the tab files list
them."""

import json
import os
import re

import polars as pl
import pytest
from conftest import SHARED

from widgets import ConceptPicker, ResultsDashboard, Session
from workbench.analysis.crosslingual import concept_table, language_report
from workbench.probes.languages import build_language_probes, language_spec, pair_with, shared_concepts
from workbench.scoring import score

pytestmark = [pytest.mark.wordnet, pytest.mark.model]
OMW = SHARED / "data" / "omw"


@pytest.fixture(scope="module", autouse=True)
def omw_dir():
    if not OMW.is_dir():
        pytest.skip("../shared/data/omw is not here")
    before = os.environ.get("OMW_DIR")
    os.environ["OMW_DIR"] = str(OMW)
    yield
    if before is None:
        del os.environ["OMW_DIR"]
    else:
        os.environ["OMW_DIR"] = before


@pytest.fixture(scope="module")
def preds(wordnet_graph, minilm_path) -> pl.DataFrame:
    """MiniLM on 12 concepts' English hypernymy questions and the same questions in French."""
    concepts = shared_concepts(("fra",), 12, seed=4, graph=wordnet_graph)
    spec = language_spec("hypernymy", "eng", max_hops=2, concepts=concepts, seed=1)
    english = build_language_probes("eng", spec, graph=wordnet_graph, shared=("fra",), progress=False).probes
    french = pair_with(english, "fra", graph=wordnet_graph).probes
    return pl.concat(
        [score(probes, minilm_path, "similarity", cache=False, progress=False) for probes in (english, french)]
    )


def test_the_language_report_pairs_each_models_english_with_its_french(preds):
    summary, concepts = language_report(preds, n_boot=100)
    model = preds["model"][0]
    assert summary["pair"].to_list() == [f"{model} eng-fra"]
    eng, fra = (preds.filter(pl.col("source") == source) for source in ("wordnet", "omw-fra"))
    row = summary.row(0, named=True)
    assert row["questions"] == fra.height and row["accuracy_b"] == pytest.approx(fra["correct"].mean(), abs=1e-4)
    assert concepts.drop("pair").equals(concept_table(eng, fra))
    alone, _ = language_report(eng, n_boot=100)
    assert alone.is_empty()


def test_the_dashboard_shows_english_against_french_only_when_the_predictions_pair_them(preds):
    session = Session(predictions=preds.filter(pl.col("source") == "wordnet"))
    board = ResultsDashboard(session, n_boot=100, settle=0)
    board.wait(120)
    assert board.languages.layout.display == "none" and board.languages_note.value == ""
    session.predictions = preds
    board.wait(120)
    assert board.languages.layout.display is None
    summary, _ = language_report(preds, n_boot=100)
    pair = summary["pair"][0]
    assert pair in board.languages_note.value
    spec = json.dumps(board.languages.spec)
    assert pair in spec and "strict cluster accuracy" in spec and "known in" in spec


def test_the_static_site_has_the_cross_lingual_section(preds, tmp_path):
    from workbench.site import publish

    site = publish(preds, tmp_path / "site", n_boot=100).parent
    text = (site / "index.html").read_text()
    assert '<section id="languages">' in text and 'id="wb-languages"' in text
    summary, _ = language_report(preds, n_boot=100)
    table = re.search(r'<section id="languages">.*?</section>', text, re.S)[0]
    assert summary["pair"][0] in table and f">{summary['questions'][0]}<" in table
    english_only = publish(preds.filter(pl.col("source") == "wordnet"), tmp_path / "english", n_boot=100).parent
    assert '<section id="languages">' not in (english_only / "index.html").read_text()


def test_the_concept_card_lists_a_concepts_words_in_every_loaded_language(wordnet_graph):
    session = Session(graph=wordnet_graph, languages=("fra", "ita"))
    picker = ConceptPicker(session)
    session.concept = "dog.n.01"
    card = picker.card.value
    rows = dict(re.findall(r"<tr><th>(\w+)</th><td>(.*?)</td></tr>", card))
    assert set(rows) == {"fra", "ita"}
    for language, shown in rows.items():
        tab = (OMW / language / f"wn-data-{language}.tab").read_text(encoding="utf-8").splitlines()
        words = {line.split("\t")[-1].strip() for line in tab if line.startswith("02084071-n\t") and ":lemma" in line}
        assert words and set(shown.split(", ")) == words
    session.languages = ()
    assert "in other languages" not in picker.card.value


def test_sets_built_apart_say_why_they_are_not_compared(preds, wordnet_graph, minilm_path, tmp_path):
    from workbench.site import publish

    asked = set(preds["concept"].unique())
    concepts = tuple(c for c in shared_concepts(("fra",), 20, seed=9, graph=wordnet_graph) if c not in asked)[:12]
    spec = language_spec("hypernymy", "fra", max_hops=2, concepts=concepts, seed=2)
    apart = build_language_probes("fra", spec, graph=wordnet_graph, progress=False).probes
    both = pl.concat(
        [
            preds.filter(pl.col("source") == "wordnet"),
            score(apart, minilm_path, "similarity", cache=False, progress=False),
        ]
    )
    session = Session(predictions=both)
    board = ResultsDashboard(session, n_boot=100, settle=0)
    board.wait(120)
    assert board.languages.layout.display == "none"
    assert "no cross-lingual view: A and B share no question" in board.languages_note.value
    text = (publish(both, tmp_path / "site", n_boot=100).parent / "index.html").read_text()
    section = re.search(r'<section id="languages">.*?</section>', text, re.S)[0]
    assert "share no question" in section and "--paired-with" in section
