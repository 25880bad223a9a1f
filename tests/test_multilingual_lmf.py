"""OMW wordnets in WN-LMF XML, read with the field's library ``wn``: the real French and Italian tab data written as
WN-LMF by ``wn``'s own exporter (the test's conversion, no workbench code) read back into the same graph as the tab
file gives, found by its language code, with nothing written to ``wn``'s data directory; bad files named in one line."""

from pathlib import Path

import polars as pl
import pytest
import wn
from conftest import SHARED
from wn import lmf

from workbench.errors import DataSourceError
from workbench.knowledge.omw import language_graph, read_omw

pytestmark = pytest.mark.wordnet
OMW = SHARED / "data" / "omw"
TWO_LETTERS = {"fra": "fr", "ita": "it"}


@pytest.fixture(autouse=True)
def omw_here():
    if not OMW.is_dir():
        pytest.skip("../shared/data/omw is not here")


def tab_subset(language: str, folder: Path, lines: int = 3000) -> Path:
    """The first ``lines`` lines of a real OMW tab file, as a tab file in ``folder``."""
    text = (OMW / language / f"wn-data-{language}.tab").read_text(encoding="utf-8").splitlines()[:lines]
    path = folder / f"wn-data-{language}.tab"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def as_lmf(tab: Path, destination: Path, synset_id=lambda lexicon, key: f"{lexicon}-{key}") -> Path:
    """A tab file written as WN-LMF 1.1 with ``wn.lmf.dump``: one entry per lemma and part of speech, one sense per
    lemma line, each synset's members in the tab file's order, its definitions and examples."""
    header, *lines = tab.read_text(encoding="utf-8").splitlines()
    name, code, url, licence = header.lstrip("# ").split("\t")
    lexicon_id = f"omw-{TWO_LETTERS[code]}"
    entries: dict[tuple[str, str], list] = {}
    synsets: dict[str, dict] = {}
    for number, line in enumerate(lines):
        key, kind, *rest = line.split("\t")
        text = rest[-1].strip()
        synset = synsets.setdefault(
            key, {"id": synset_id(lexicon_id, key), "ili": "", "partOfSpeech": key[9:], "members": []}
        )
        if kind.split(":")[-1] == "lemma" and kind.count(":") <= 1:
            senses = entries.setdefault((text, key[9:]), [])
            sense = f"{lexicon_id}-s{number}"
            senses.append({"id": sense, "synset": synset["id"]})
            synset["members"].append(sense)
        elif kind.endswith(":def"):
            synset.setdefault("definitions", []).append({"text": text})
        elif kind.endswith(":exe"):
            synset.setdefault("examples", []).append({"text": text})
    lexicon = {
        "id": lexicon_id,
        "label": name,
        "language": TWO_LETTERS[code],
        "email": "omw@example.org",
        "license": licence,
        "version": "1.4",
        "url": url,
        "entries": [
            {"id": f"{lexicon_id}-e{i}", "lemma": {"writtenForm": lemma, "partOfSpeech": pos}, "senses": senses}
            for i, ((lemma, pos), senses) in enumerate(entries.items())
        ],
        "synsets": list(synsets.values()),
    }
    lmf.dump({"lmf_version": "1.1", "lexicons": [lexicon]}, destination)
    return destination


@pytest.mark.parametrize("language", ["fra", "ita"])
def test_an_lmf_wordnet_reads_as_its_tab_file_does(tmp_path, monkeypatch, wordnet_graph, language):
    tab = tab_subset(language, tmp_path)
    folder = tmp_path / "omw" / language
    folder.mkdir(parents=True)
    xml = as_lmf(tab, folder / f"omw-{TWO_LETTERS[language]}.xml")
    wn_data = wn.config.database_path.parent  # (the data_directory property makes it)
    existed = wn_data.exists()
    monkeypatch.setenv("OMW_DIR", str(tmp_path / "omw"))
    from_tab = language_graph(str(tab), wordnet_graph)
    from_lmf = language_graph(language, wordnet_graph)  # found by its code in $OMW_DIR/<lang>/*.xml
    assert wn_data.exists() == existed  # wn's database and downloads folder untouched
    assert from_lmf.source == from_tab.source == f"omw-{language}" and from_lmf.version == "3.0"
    assert from_lmf.checksum != from_tab.checksum  # another file: another cache identity
    assert from_lmf.lemmas.height > 1000
    for part in ("concepts", "lemmas", "examples"):
        assert getattr(from_lmf, part).equals(getattr(from_tab, part)), part
    if language == "ita":
        assert (from_lmf.concepts["gloss"] != "").sum() > 5 and from_lmf.examples.height > 5
    wordnet = read_omw(language)
    lexicon = "omw-fr" if language == "fra" else "omw-it"
    assert wordnet.path == xml and wordnet.label.startswith(f"{wordnet.name} [{language}, ")
    assert f"({lexicon}:1.4)" in wordnet.name
    assert read_omw(str(xml)).language == TWO_LETTERS[language]  # a path alone: the lexicon's own language tag


def test_lmf_members_order_the_lemmas(tmp_path, wordnet_graph):
    xml = as_lmf(tab_subset("fra", tmp_path), tmp_path / "omw-fr.xml")
    resource = lmf.load(xml, progress_handler=None)
    synset = max(resource["lexicons"][0]["synsets"], key=lambda synset: len(synset["members"]))
    synset["members"].reverse()
    lmf.dump(resource, xml)
    key = synset["id"].removeprefix("omw-fr-")
    concept = read_omw(str(xml)).facts.filter(pl.col("key") == key)
    forward = read_omw(str(tmp_path / "wn-data-fra.tab")).facts.filter(pl.col("key") == key)
    assert concept["text"].to_list() == forward["text"].to_list()[::-1]


def test_a_bad_lmf_file_is_named_in_one_line(tmp_path, wordnet_graph):
    tab = tab_subset("fra", tmp_path)
    good = as_lmf(tab, tmp_path / "good.xml")
    cut = tmp_path / "cut.xml"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(DataSourceError, match=r"cut.xml is no WN-LMF file wn can read \(invalid or ill-formed XML\)"):
        language_graph(str(cut), wordnet_graph)
    plain = tmp_path / "plain.xml"
    plain.write_text("<LexicalResource/>\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match="plain.xml is no WN-LMF file wn can read"):
        language_graph(str(plain), wordnet_graph)
    ids = as_lmf(tab, tmp_path / "ids.xml", lambda lexicon, key: f"{lexicon}-{key[:8]}")
    with pytest.raises(DataSourceError, match=r"synset 'omw-fr-\d{8}' does not end with a WordNet 3.0 OFFSET-POS"):
        language_graph(str(ids), wordnet_graph)
    pos = as_lmf(
        tab, tmp_path / "pos.xml", lambda lexicon, key: f"{lexicon}-{key[:9]}{'u' if key[9] == 'r' else key[9]}"
    )
    with pytest.raises(DataSourceError, match=r"synset 'omw-fr-\d{8}-u' has the unknown part of speech 'u'"):
        language_graph(str(pos), wordnet_graph)
    scrambled = as_lmf(
        tab, tmp_path / "other.xml", lambda lexicon, key: f"{lexicon}-{int(key[:8]) * 7919 % 10**8:08d}{key[8:]}"
    )
    with pytest.raises(
        DataSourceError, match=r"other.xml synset 'omw-fr-\d{8}-.': .* is no WordNet 3.0 synset.*another"
    ):
        language_graph(str(scrambled), wordnet_graph)
    resource = lmf.load(good, progress_handler=None)
    twice = {**resource, "lexicons": [resource["lexicons"][0], {**resource["lexicons"][0], "id": "omw-fr2"}]}
    lmf.dump(twice, tmp_path / "two.xml")
    with pytest.raises(DataSourceError, match=r"two.xml holds 2 lexicons \(omw-fr, omw-fr2\); write one language's"):
        language_graph(str(tmp_path / "two.xml"), wordnet_graph)
    extension = {**resource["lexicons"][0], "extends": {"id": "oewn", "version": "2024"}, "synsets": [], "entries": []}
    lmf.dump({**resource, "lexicons": [extension]}, tmp_path / "extension.xml")
    with pytest.raises(DataSourceError, match="extension.xml is an extension of the lexicon oewn:2024"):
        language_graph(str(tmp_path / "extension.xml"), wordnet_graph)
    with pytest.raises(DataSourceError, match="no OMW wordnet file at .*missing.xml"):
        language_graph(str(tmp_path / "missing.xml"), wordnet_graph)
