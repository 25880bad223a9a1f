"""One concept, many languages: OMW wordnets read and joined to WordNet 3.0, taxonomy probes in five languages checked
by the English sets' independent checks (through NLTK and the tab files themselves), paired sets, the cross-lingual
paired comparison on a tiny random model with a multilingual tokenizer, and WordNet's release told by its content."""

import os
import random
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
import torch
from conftest import SHARED
from test_probes_wordnet import class_up, shortest_distance
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast
from typer.testing import CliRunner

from workbench.analysis.crosslingual import compare_languages, concept_table, paired_questions
from workbench.errors import DataSourceError, SpecError, WorkbenchError
from workbench.knowledge import cache, wordnet
from workbench.knowledge.omw import language_graph, read_omw, wordnet_keys, words_across
from workbench.knowledge.wordnet import open_wordnet, wordnet_version
from workbench.probes.formats import probe_metadata, read_probes
from workbench.probes.languages import (
    LANGUAGE_PROBES,
    NO_CONCEPT,
    NO_DISTRACTOR,
    NO_GOLD,
    build_language_probes,
    language_spec,
    pair_with,
)
from workbench.scoring import score

pytestmark = pytest.mark.wordnet
OMW = SHARED / "data" / "omw"
LANGUAGES = ("fra", "ita", "por", "nld", "arb")


@pytest.fixture(autouse=True, scope="module")
def omw_dir():
    if not OMW.is_dir():
        pytest.skip("../shared/data/omw is not here")
    before = os.environ.get("OMW_DIR")
    os.environ["OMW_DIR"] = str(OMW)
    yield OMW
    if before is None:
        del os.environ["OMW_DIR"]
    else:
        os.environ["OMW_DIR"] = before


@pytest.fixture(scope="module")
def wn():
    return open_wordnet()


def tab_lemmas(language: str) -> dict[str, set[str]]:
    """Each key's lemmas read straight from the tab file (no workbench code): ``00001740-n`` -> {'entité'}."""
    found: dict[str, set[str]] = defaultdict(set)
    for line in (OMW / language / f"wn-data-{language}.tab").read_text(encoding="utf-8").splitlines()[1:]:
        key, kind, *rest = line.split("\t")
        if kind.split(":")[-1] == "lemma" and kind.count(":") <= 1:
            found[key].add(rest[-1].strip().casefold())
    return found


def noun_key(synset) -> str:
    return f"{synset.offset():08d}-n"


@pytest.fixture(scope="module")
def concepts(wordnet_graph) -> tuple[str, ...]:
    """60 nouns with a hypernym that all five wordnets have words for (the questions' nouns join by plain offset)."""
    shared = None
    for language in LANGUAGES:
        ids = set(language_graph(language, wordnet_graph).lemmas["id"].to_list())
        shared = ids if shared is None else shared & ids
    children = set(wordnet_graph.isa.filter(~pl.col("instance"))["child"].to_list())
    nouns = wordnet_graph.concepts.filter(pl.col("pos") == "n")["id"].to_list()
    pool = sorted(set(nouns) & shared & children)
    return tuple(wordnet_graph.names[c] for c in random.Random(3).sample(pool, 60))


@pytest.fixture(scope="module")
def english(wordnet_graph, concepts):
    spec = language_spec("hypernymy", "eng", max_hops=3, concepts=concepts, seed=1)
    return build_language_probes("eng", spec, graph=wordnet_graph, shared=LANGUAGES, progress=False)


@pytest.fixture(scope="module")
def french(wordnet_graph, concepts):
    spec = language_spec("hypernymy", "fra", max_hops=3, concepts=concepts, seed=1)
    return build_language_probes("fra", spec, graph=wordnet_graph, progress=False)


@pytest.fixture(scope="module")
def paired(english, wordnet_graph):
    return {language: pair_with(english.probes, language, graph=wordnet_graph) for language in LANGUAGES}


# --- knowledge -------------------------------------------------------------------------------------------------------


def test_omw_lemmas_join_their_wordnet_3_0_synset(wordnet_graph, wn):
    french = language_graph("fra", wordnet_graph)
    words = french.lemmas.group_by("id").agg("lemma")
    by_name = dict(zip([wordnet_graph.names[i] for i in words["id"]], words["lemma"].to_list(), strict=True))
    assert "chien" in by_name["dog.n.01"] and "canin" in by_name["canine.n.02"]
    across = dict(words_across("dog.n.01", ("fra", "ita"), wordnet_graph).iter_rows())
    assert across["eng"][0] == "dog" and across["fra"] == by_name["dog.n.01"] and "cane" in across["ita"]
    lines = [(key, lemmas) for key, lemmas in tab_lemmas("fra").items() if key.endswith("-n")]
    for key, lemmas in random.Random(0).sample(lines, 300):
        synset = wn.synset_from_pos_and_offset("n", int(key[:8]))
        assert lemmas == {lemma.casefold() for lemma in by_name[synset.name()]}, key
    # Debian's rebuilt data.verb puts later verbs 18 bytes on: WOLF's 00613018-v, "laisser, oublier", is the synset
    # whose definition says so, at 00613036 in the installed files
    forget = next(name for name, lemmas in by_name.items() if "oublier" in lemmas and "laisser" in lemmas)
    assert wn.synset(forget).definition() == "leave behind unintentionally"


def test_omw_keys_read_from_the_lemma_index_are_nltks_own_offsets(wordnet_graph, wn):
    """Every concept gets a key, and a sample of each part of speech (satellites keyed as ``a``) is the offset NLTK
    reads for that synset from the data files."""
    keys = wordnet_keys(wordnet_graph)
    assert keys["id"].n_unique() == keys.height == wordnet_graph.concepts.height
    key_of = dict(keys.iter_rows())
    for pos in ("n", "v", "a", "s", "r"):
        names = wordnet_graph.concepts.filter(pl.col("pos") == pos).sample(200, seed=0).select("id", "name")
        for index, name in names.iter_rows():
            synset = wn.synset(name)
            assert key_of[index] == f"{synset.offset():08d}-{'a' if pos == 's' else pos}", name


def test_every_language_reads_whole_and_italian_keeps_its_definitions(wordnet_graph):
    for language in LANGUAGES:
        wordnet = read_omw(language)
        graph = language_graph(language, wordnet_graph)
        lemma_lines = wordnet.facts.filter(pl.col("kind") == "lemma").height
        assert graph.lemmas.height > 0.9 * lemma_lines  # duplicates within a synset are folded, nothing else
        assert graph.source == f"omw-{language}" and graph.version == "3.0"
        assert graph.isa.equals(wordnet_graph.isa)
    italian = language_graph("ita", wordnet_graph)
    assert (italian.concepts["gloss"] != "").sum() > 2000


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda line: line.replace("-n\t", "-n-\t", 1), "does not start with an OFFSET-POS key"),
        (lambda line: "0001740-n" + line[10:], "does not start with an OFFSET-POS key"),
        (lambda line: line[:9] + "x" + line[10:], "unknown part of speech 'x'"),
        (lambda line: line + "\tchose", "has 4 tab-separated columns where a lemma line has 3"),  # a tab in a lemma
        (lambda line: line.replace("\tfra:", "\teng:", 1), "'eng:lemma' is a line of another language"),
        (lambda line: line.replace("\tfra:lemma\t", "\tfra:lemma\t\udcff", 1), "not valid UTF-8 \\(byte 0xff\\)"),
        (lambda line: line.rsplit("\t", 1)[0] + "\t\u200b", r"the lemma '\\u200b' shows as nothing"),
        (lambda line: line + "\u202egpt", "holds a bidi control"),
        (lambda line: line + "\u0085x\tz", "has 4 tab-separated columns"),  # U+0085 breaks no line of the file
    ],
)
def test_a_bad_tab_line_is_named(tmp_path, wordnet_graph, change, says):
    lines = (OMW / "fra" / "wn-data-fra.tab").read_text(encoding="utf-8").splitlines()[:400]
    noun = next(i for i, line in enumerate(lines) if "-n\t" in line and i > 100)
    lines[noun] = change(lines[noun])
    path = tmp_path / "wn-data-fra.tab"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8", errors="surrogateescape"))  # \udcff: the byte 0xff
    with pytest.raises(DataSourceError, match=f"line {noun + 1}: .*{says}"):
        language_graph(str(path), wordnet_graph)


def test_a_byte_order_mark_is_read_past_and_repeated_lines_are_counted_once(tmp_path, wordnet_graph):
    lines = (OMW / "fra" / "wn-data-fra.tab").read_text(encoding="utf-8").splitlines()[:400]
    plain, marked = tmp_path / "plain" / "wn-data-fra.tab", tmp_path / "marked" / "wn-data-fra.tab"
    for path, body in ((plain, lines), (marked, [*lines, *lines[200:399]])):
        path.parent.mkdir()
        path.write_text(("\ufeff" if path is marked else "") + "\n".join(body) + "\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="199 lines repeat an earlier line"):
        doubled = read_omw(str(marked))
    assert doubled.facts.equals(read_omw(str(plain)).facts)


def test_a_tab_file_keyed_by_another_wordnet_is_refused(tmp_path, wordnet_graph):
    lines = (OMW / "fra" / "wn-data-fra.tab").read_text(encoding="utf-8").splitlines()[:2000]
    moved = [lines[0]] + [f"{int(line[:8]) * 7919 % 10**8:08d}{line[8:]}" for line in lines[1:]]  # scrambled offsets
    path = tmp_path / "wn-data-fra.tab"
    path.write_text("\n".join(moved) + "\n", encoding="utf-8")
    with pytest.raises(DataSourceError, match=r"line 2: .* is no WordNet 3.0 synset.*keyed by another wordnet"):
        language_graph(str(path), wordnet_graph)


def wordnet_copy(folder: Path, source: Path, header: str | None = None, dog: str | None = None) -> Path:
    """The WordNet files of ``source`` in ``folder`` (links), with data.noun's header line or dog's offset changed."""
    folder.mkdir()
    for name in wordnet.REQUIRED_FILES:
        (folder / name).symlink_to(source / name)
    if header:
        (folder / "data.noun").unlink()
        text = (source / "data.noun").read_text(encoding="utf-8")
        (folder / "data.noun").write_text(text.replace("WordNet 3.0 Copyright 2006", header, 1), encoding="utf-8")
    if dog:
        (folder / "index.noun").unlink()
        text = (source / "index.noun").read_text(encoding="utf-8")
        start = text.index("\ndog n ")
        line = text[start : text.index("\n", start + 1)]
        (folder / "index.noun").write_text(text.replace(line, line.replace("02084071", dog)), encoding="utf-8")
    return folder


def test_wordnet_release_is_read_from_its_content_and_named_in_the_cache_key(tmp_path, monkeypatch, wordnet_graph):
    installed = wordnet.find_wordnet()
    assert wordnet_version(installed) == "3.0"
    # 3.1's files: its header and its offsets (dog's first synset is 02086723 there); the folder name says 3.0
    v31 = wordnet_copy(tmp_path / "WordNet-3.0", installed, "WordNet 3.1 Copyright 2011", "02086723")
    assert wordnet_version(v31) == "3.1"
    assert (
        wordnet_version(wordnet_copy(tmp_path / "liar", installed, "WordNet 3.0 Copyright 2006", "02086723")) == "3.1"
    )
    oewn = wordnet_copy(tmp_path / "oewn", installed, "English WordNet 2024 Copyright 2024")
    assert wordnet_version(oewn) == "oewn2024"
    with pytest.raises(DataSourceError, match="no release the workbench knows.*'dog' is 01234567"):
        wordnet_version(wordnet_copy(tmp_path / "other", installed, dog="01234567"))
    monkeypatch.setattr(wordnet, "find_wordnet", lambda provision=True: v31)
    try:
        assert cache.graph_dir("wordnet", refresh=True).name.startswith("wordnet-3.1-")
        assert cache.source_label("wordnet").startswith("wordnet 3.1 (")
        with pytest.raises(DataSourceError, match="keyed by WordNet 3.0's offsets, but the English WordNet .* 3.1"):
            language_graph("fra", replace(wordnet_graph, version="3.1"))
    finally:
        monkeypatch.undo()
        assert cache.graph_dir("wordnet", refresh=True).name.startswith("wordnet-3.0-")


# --- probes in a language ---------------------------------------------------------------------------------------------


def parts(text: str) -> set[str]:
    """A choice's words as a set (a lemma may hold ', ' itself: 'oog om oog, tand om tand')."""
    return {part.strip().casefold() for part in text.split(", ")}


def check_language_set(frame: pl.DataFrame, language: str, wn) -> None:
    """The English sets' independent checks, and in the language: the gold shows the gold synset's words as the tab
    file lists them, and no distractor's word is a word of any synset above the concept."""
    words = tab_lemmas(language)
    assert frame.height > 0
    assert (
        frame["choices"].list.eval(pl.element().str.strip_chars().str.to_lowercase().n_unique()).list.first() == 5
    ).all()
    for row in frame.to_dicts():
        concept, gold = wn.synset(row["concept"]), wn.synset(row["gold_concept"])
        assert shortest_distance(concept, gold, class_up) == row["hops"], row["id"]
        above = set(concept.closure(lambda s: s.hypernyms() + s.instance_hypernyms()))
        assert not {wn.synset(name) for name in row["distractor_concepts"]} & above, row["id"]
        assert parts(row["choices"][row["answer"]]) == parts(", ".join(words[noun_key(gold)])), row["id"]
        right_words = set().union(*(words.get(noun_key(s), set()) for s in above))
        for name, text in zip(
            row["distractor_concepts"], [c for i, c in enumerate(row["choices"]) if i != row["answer"]]
        ):
            assert parts(text) == parts(", ".join(words[noun_key(wn.synset(name))])), (row["id"], name)
            assert not words[noun_key(wn.synset(name))] & right_words, (row["id"], name)


def test_french_hypernymy_passes_the_english_checks_in_french(french, wn):
    assert french.language == "fra" and "WOLF" in french.knowledge and "wordnet 3.0" in french.knowledge
    assert set(french.probes["source"].unique()) == {"omw-fra"}
    assert french.probes["question"].str.contains("« ").all()
    check_language_set(french.probes, "fra", wn)


def test_a_french_set_is_answered_by_french_speakers_and_its_gold_test_keeps_the_french(french, tmp_path):
    from workbench.annotation import (
        Vote,
        add_annotator,
        annotator,
        create_batch,
        gold_test,
        read_votes,
        record_vote,
        todo,
        write_gold_jsonl,
    )

    batch = create_batch(french.probes, tmp_path / "fra", 10, per_question=2, annotators=2, seed=0)
    for name in ("amelie", "benoit"):
        add_annotator(batch, name)
        for row in todo(annotator(batch, name)).iter_rows(named=True):
            gold = batch.questions.filter(pl.col("id") == row["id"])["answer"][0]
            record_vote(batch, Vote(name, row["id"], gold, row["order"].index(gold) + 1, row["order"]))
    kept = gold_test(batch.questions, read_votes(batch), least=2)
    back = read_probes(write_gold_jsonl(kept, tmp_path / "gold-fra.jsonl"))
    assert back.height == 10 and back["question"].str.contains("« ").all() and set(back["source"]) == {"omw-fra"}
    assert back.sort("id")["choices"].equals(batch.questions.sort("id")["choices"])


def test_a_language_is_a_code_or_a_wordnet_file_and_templates_given_are_used(tmp_path):
    with pytest.raises(SpecError, match="neither a three-letter code .* nor a .tab or .xml wordnet file"):
        language_spec("hypernymy", "/etc/passwd")
    with pytest.raises(SpecError, match="pass its question templates with --templates"):
        language_spec("hypernymy", str(tmp_path / "mine.tab"))
    own = tmp_path / "mine.json"
    assert language_spec("hypernymy", str(tmp_path / "mine.tab"), templates=own).templates == own
    assert language_spec("hypernymy", "fra", templates=own).templates == own  # --templates is never ignored
    assert language_spec("hypernymy", str(OMW / "ita" / "wn-data-ita.tab")).templates.name == "ita.json"


def test_italian_hyponymy_asks_below_the_concept_and_no_distractor_lies_below(wordnet_graph, wn):
    asked = ("dog.n.01", "tree.n.01", "vehicle.n.01")
    frame = build_language_probes("ita", language_spec("hyponymy", "ita", max_hops=2, concepts=asked),
                                  graph=wordnet_graph, progress=False).probes  # fmt: skip
    assert frame["question"].str.contains("«").all() and set(frame["concept"]) <= set(asked)
    for row in frame.to_dicts():
        concept = wn.synset(row["concept"])
        frontier = {concept}
        for _ in range(row["hops"]):
            frontier = {child for node in frontier for child in node.hyponyms()}
        assert wn.synset(row["gold_concept"]) in frontier, row["id"]
        for name in row["distractor_concepts"]:
            assert concept not in set(wn.synset(name).closure(lambda s: s.hypernyms() + s.instance_hypernyms()))


def test_paired_sets_ask_the_english_questions_in_each_language(english, paired, wn):
    columns = ["concept", "gold_concept", "hops", "distractor_concepts", "answer", "split", "template", "cluster_id"]
    as_rows = lambda frame: {(*row[:3], tuple(row[3]), *row[4:]) for row in frame.select(columns).rows()}  # noqa: E731
    asked = as_rows(english.probes)
    for language, built in paired.items():
        assert as_rows(built.probes) <= asked, language
        assert built.dropped["questions"].sum() == english.probes.height - built.probes.height
        # the English set was built within every language's words: nothing is dropped for a missing word
        counts = dict(built.dropped.iter_rows())
        assert counts[NO_CONCEPT] == counts[NO_GOLD] == counts[NO_DISTRACTOR] == 0, language
        assert built.probes.height > 0.8 * english.probes.height, (language, counts)
        check_language_set(built.probes, language, wn)


def test_the_english_partner_shows_lemmas_only(english, wn):
    for row in english.probes.head(50).to_dicts():
        gold = wn.synset(row["gold_concept"])
        shown = [part.strip() for part in row["choices"][row["answer"]].split(", ")]
        assert {s.casefold() for s in shown} <= {name.replace("_", " ").casefold() for name in gold.lemma_names()}
        assert "defined as" not in row["choices"][row["answer"]]


def test_pairing_reports_what_the_language_lacks(wordnet_graph, concepts):
    spec = language_spec("hypernymy", "eng", max_hops=3, concepts=concepts, seed=1)
    unrestricted = build_language_probes("eng", spec, graph=wordnet_graph, progress=False)
    french = pair_with(unrestricted.probes, "fra", graph=wordnet_graph)
    counts = dict(french.dropped.iter_rows())
    assert counts[NO_DISTRACTOR] > 0 and counts[NO_CONCEPT] == 0  # the concepts have words, not every distractor
    assert sum(counts.values()) + french.probes.height == unrestricted.probes.height
    # Arabic WordNet has words for 9,916 of 117,659 synsets: almost every question names one it lacks
    with pytest.raises(WorkbenchError, match=r"hypernymy in arb keeps \d+ question.*a distractor has no word: \d"):
        pair_with(unrestricted.probes, "arb", graph=wordnet_graph)


def test_a_language_with_too_few_words_is_told_the_counts_and_the_fix(tmp_path, wordnet_graph):
    lines = (OMW / "arb" / "wn-data-arb.tab").read_text(encoding="utf-8").splitlines()[:120]
    path = tmp_path / "wn-data-arb.tab"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    told = r"hypernymy in \S+wn-data-arb.tab keeps 0 question\(s\), fewer than 20 .*--max-hops"
    with pytest.raises(WorkbenchError, match=told):
        build_language_probes(str(path), language_spec("hypernymy", "arb"), graph=wordnet_graph, progress=False)


def test_a_probe_the_wordnets_cannot_carry_is_refused():
    assert LANGUAGE_PROBES == ("hypernymy", "hyponymy")
    with pytest.raises(SpecError, match="synonymy cannot be asked in fra.*definition"):
        language_spec("synonymy", "fra")
    with pytest.raises(SpecError, match="no question templates for language 'deu'"):
        language_spec("hypernymy", "deu")


def test_cli_builds_english_then_french_paired_and_files_name_their_wordnets(cli, tmp_path, concepts):
    runner = CliRunner()
    english, french = tmp_path / "eng", tmp_path / "fra"
    common = ["probes", "build", "--probe", "hypernymy", "--max-hops", "2", "--concepts", ",".join(concepts[:10])]
    result = runner.invoke(cli, [*common, "--language", "eng", "--within", "fra", "--out", str(english)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["probes", "build", "--probe", "hypernymy", "--language", "fra", "--paired-with",
                                 str(english), "--out", str(french)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "a distractor's word also names a right answer" in result.output
    assert probe_metadata(english)["knowledge"].startswith("wordnet 3.0 (")
    assert probe_metadata(french)["knowledge"].startswith("WOLF (Wordnet Libre du Français) [fra, ")
    result = runner.invoke(cli, ["probes", "stats", str(french)])
    assert "built from WOLF" in result.output
    assert set(read_probes(french)["source"].unique()) == {"omw-fra"}
    result = runner.invoke(cli, ["probes", "build", "--probe", "hypernymy", "--paired-with", str(english),
                                 "--out", str(tmp_path / "x")])  # fmt: skip
    assert result.exit_code != 0 and "go with --language" in str(result.exception)


# --- the paired comparison on a tiny multilingual model ------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_multilingual(tmp_path_factory, english, paired) -> Path:
    """A tiny random GPT-2 with a byte-level BPE trained here on the questions of three languages."""
    texts = [text for built in (english, paired["fra"], paired["arb"]) for text in built.probes["question"].to_list()]
    texts += [c for built in (english, paired["fra"], paired["arb"]) for cs in built.probes["choices"] for c in cs]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(texts, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    assert len(tokenizer("«كلب» هو نوع من")["input_ids"]) < len("«كلب» هو نوع من".encode())  # merges Arabic too
    folder = tmp_path_factory.mktemp("tiny-multilingual")
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=256, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=0, eos_token_id=0)  # fmt: skip
    GPT2LMHeadModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_crosslingual_comparison_pairs_concepts_across_languages(tiny_multilingual, english, paired):
    eng = score(english.probes, tiny_multilingual, "causal", cache=False, progress=False, threads=1)
    for language in ("fra", "arb"):
        other = score(paired[language].probes, tiny_multilingual, "causal", cache=False, progress=False, threads=1)
        assert (other["correct"] == (other["pred"] == other["answer"])).all()
        both = paired_questions(eng, other)
        assert both.height == other.height  # every question in the language has its English original
        table = concept_table(eng, other)
        direct = both.group_by("concept").agg(a=pl.col("correct_a").all(), b=pl.col("correct_b").all())
        merged = table.join(direct, on="concept")
        assert merged.height == table.height == both["concept"].n_unique()
        assert (merged["known_a"] == merged["a"]).all() and (merged["known_b"] == merged["b"]).all()
        assert set(table["known"].unique()) <= {"both", "neither", "eng only", f"{language} only"}
        overall = compare_languages(eng, other, n_boot=200).row(0, named=True)
        assert overall["n"] == both.height and overall["n_clusters"] == both["concept"].n_unique()
        assert overall["a_only"] == int((both["correct_a"] & ~both["correct_b"]).sum())
        assert overall["b_only"] == int((both["correct_b"] & ~both["correct_a"]).sum())
        assert overall["accuracy_b"] == pytest.approx(both["correct_b"].mean())


def test_a_hand_edited_omw_folder_with_a_pipe_or_a_reordering_name_is_one_line(tmp_path):
    """Issue 60: a FIFO named like a wordnet is no wordnet file (never read); the header's name, shown beside every
    probe set built from the file, passes the names' check."""
    from workbench.errors import WorkbenchError

    fifo = tmp_path / "fifo" / "wn-data-fra.tab"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    with pytest.raises(WorkbenchError, match="no OMW wordnet file at"):
        read_omw(str(fifo))
    lines = (OMW / "fra" / "wn-data-fra.tab").read_text(encoding="utf-8").splitlines()[:50]
    named = tmp_path / "wn-data-fra.tab"
    named.write_text("\n".join([lines[0].replace("WOLF", "WOLF\u202eFLOW", 1), *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(WorkbenchError, match="line 1: the wordnet's name .* invisible or format character"):
        read_omw(str(named))
