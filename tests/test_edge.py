"""Edge probing: jiant JSONL, the WordNet and GCIDE tasks, span features through the representation
cache, probes, control tasks, the MDL online code and the memorisation audit."""

import math

import numpy as np
import polars as pl
import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertModel

from workbench.edge import (
    EDGE_SCHEMA,
    EdgeSpec,
    SpanProbe,
    audit_table,
    control_labels,
    gcide_pos_task,
    mdl_blocks,
    memorisation_flags,
    memorisation_shares,
    online_codelength,
    probe_task,
    read_jiant,
    span_features,
    supersense_task,
    write_jiant,
)
from workbench.errors import ProbeFormatError, SpecError
from workbench.representations import RepresentationCache, as_encoder, load_encoder, token_states, word_index
from workbench.schema import conform


def _frame(rows) -> pl.DataFrame:
    """Edge rows from (split, text, start, end, label)."""
    data = [
        {"id": str(i), "task": "t", "split": split, "text": text, "span1_start": s, "span1_end": e, "span2_start": None,
         "span2_end": None, "label": label, "word": " ".join(text.split(" ")[s:e]).lower()}
        for i, (split, text, s, e, label) in enumerate(rows)
    ]  # fmt: skip
    return conform(pl.DataFrame(data, schema_overrides=EDGE_SCHEMA), EDGE_SCHEMA)


@pytest.mark.wordnet
def test_supersense_rows_point_at_the_target_word_and_carry_its_lexname(wordnet_graph, tmp_path):
    frame = supersense_task(wordnet_graph, n=300, seed=0)
    assert set(frame["split"]) == {"train", "dev", "test"} and frame.height == 300
    lexnames = set(wordnet_graph.concepts["lexname"])
    for text, start, end, label, word in frame.select("text", "span1_start", "span1_end", "label", "word").iter_rows():
        assert " ".join(text.split(" ")[start:end]).lower() == word
        assert label in lexnames
    joined = frame.join(
        wordnet_graph.examples.join(wordnet_graph.concepts, on="id").select("surface", "lexname").unique(),
        left_on="word", right_on=pl.col("surface").str.to_lowercase(), how="left",
    )  # fmt: skip
    assert (joined["label"] == joined["lexname"]).any()
    write_jiant(frame, tmp_path / "supersense")
    assert read_jiant(tmp_path / "supersense", task="supersense").sort("id").equals(frame.sort("id"))


def test_gcide_pos_task_labels_are_parts_of_speech(gcide_graph):
    frame = gcide_pos_task(gcide_graph, n=200, seed=1)
    assert set(frame["label"]) <= {"n", "v", "a", "r"} and frame.height == 200


def test_jiant_reader_names_the_line_of_a_span_outside_the_text(tmp_path):
    (tmp_path / "train.jsonl").write_text(
        '{"text": "a b", "targets": [{"span1": [0, 1], "label": "x"}]}\n'
        '{"text": "a b", "targets": [{"span1": [1, 5], "label": "x"}]}\n'
    )  # fmt: skip
    with pytest.raises(ProbeFormatError, match="line 2.*outside"):
        read_jiant(tmp_path)


def test_jiant_two_span_targets_round_trip(tmp_path):
    line = '{"text": "Obama said he left", "targets": [{"span1": [0, 1], "span2": [2, 3], "label": "true"}]}\n'
    (tmp_path / "test.jsonl").write_text(line)
    frame = read_jiant(tmp_path / "test.jsonl", task="coref")
    assert frame.select("span2_start", "span2_end", "word").row(0) == (2, 3, "obama | he")
    write_jiant(frame, tmp_path / "out")
    assert read_jiant(tmp_path / "out", task="coref").equals(frame)


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory, minilm_path):
    tokenizer = AutoTokenizer.from_pretrained(minilm_path)
    torch.manual_seed(0)
    network = BertModel(
        BertConfig(
            vocab_size=tokenizer.vocab_size,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
        )
    )
    return as_encoder(network, tokenizer, "tiny")


def test_span_features_are_the_mean_of_the_span_tokens_at_each_layer(tiny_encoder):
    frame = _frame([("train", "the xylophonists dog barked", 1, 3, "x")])
    features = span_features(tiny_encoder, frame, [0, 2], progress=False)
    encoded = tiny_encoder.tokenizer("the xylophonists dog barked", return_tensors="pt")
    words = word_index(tiny_encoder, "the xylophonists dog barked")
    tokens = [i for i, w in enumerate(words) if w in (1, 2)]
    assert len(tokens) > 2  # "xylophonists" is several word pieces
    with torch.inference_mode():
        hidden = tiny_encoder.network(**encoded, output_hidden_states=True).hidden_states
    for slot, layer in enumerate((0, 2)):
        assert np.allclose(features[0, slot], hidden[layer][0, tokens].mean(0).numpy(), atol=1e-5)


def test_the_cache_runs_the_encoder_once_per_text(tiny_encoder, tmp_path):
    calls = []
    handle = tiny_encoder.network.register_forward_hook(lambda *args: calls.append(1))
    try:
        cache = RepresentationCache(tmp_path / "r.sqlite")
        first = token_states(tiny_encoder, ["a b c", "d e"], [1, 2], cache, progress=False)
        again = token_states(tiny_encoder, ["d e", "a b c"], [2, 1], cache, progress=False)
    finally:
        handle.remove()
    assert len(calls) == 1
    assert all(np.array_equal(first[key], again[key]) for key in first)


@pytest.mark.model
def test_a_random_weights_encoder_has_its_own_fingerprint(minilm_path):
    pretrained, random = load_encoder(minilm_path), load_encoder(minilm_path, control="random-weights", seed=0)
    assert pretrained.fingerprint != random.fingerprint
    assert random.fingerprint == load_encoder(minilm_path, control="random-weights", seed=0).fingerprint


def test_control_task_gives_each_word_type_one_fixed_label():
    rows = [("train", f"w{i % 7} x", 0, 1, f"L{i % 3}") for i in range(60)]
    frame = _frame(rows)
    control = control_labels(frame, seed=0)
    assert control.group_by("word").agg(pl.col("label").n_unique())["label"].max() == 1
    assert control.equals(control_labels(frame, seed=0))
    assert set(control["label"]) <= set(frame["label"])


def test_mdl_blocks_follow_the_spec_schedule():
    assert mdl_blocks(10_000) == [10, 20, 40, 80, 160, 320, 625, 1250, 2500, 5000, 10000]
    assert mdl_blocks(100)[0] == 1 and mdl_blocks(100)[-1] == 100


def test_online_code_compresses_learnable_labels_and_not_random_ones():
    rng = np.random.default_rng(0)
    labels = [f"c{i}" for i in rng.integers(0, 4, 800)]
    centres = rng.normal(size=(4, 8)) * 3
    features = np.stack([centres[int(label[1])] + rng.normal(size=8) for label in labels]).astype(np.float32)[
        :, None, :
    ]
    spec = EdgeSpec(epochs=5)
    learnable = online_codelength(features, labels, spec)
    shuffled = online_codelength(features, list(rng.permutation(labels)), spec)
    assert learnable["uniform_bits"] == pytest.approx(800 * math.log2(4))
    assert learnable["compression"] > 2 and shuffled["compression"] < 1.1
    assert learnable["codelength_bits"] == pytest.approx(sum(learnable["block_bits"]))


def test_memorisation_heuristics_on_a_hand_made_split():
    """Edge-probing artifacts paper §3: Mem-Exact flags a test row that "is in the training data and has only one
    label" (cat: animal only), not a span seen with two labels (bank) nor only with another label (oak: plant in
    train, food in test); Mem-Pair, asked for by name, flags any (span, label) pair seen in train (bank g, bank h);
    Mem-Freq: the span's most frequent train label is right; Mem-Uniform: a uniform draw from its train labels."""
    train = _frame([("train", "cat a", 0, 1, "animal"), ("train", "bank b", 0, 1, "place"),
                    ("train", "bank c", 0, 1, "group"), ("train", "bank d", 0, 1, "group"),
                    ("train", "oak e", 0, 1, "plant")])  # fmt: skip
    test = _frame([("test", "cat f", 0, 1, "animal"), ("test", "bank g", 0, 1, "group"),
                   ("test", "bank h", 0, 1, "place"), ("test", "fir i", 0, 1, "plant"),
                   ("test", "oak j", 0, 1, "food")])  # fmt: skip
    flags = memorisation_flags(train, test)
    assert flags["Mem-Exact"].to_list() == [True, False, False, False, False]
    assert flags["Mem-Pair"].to_list() == [True, True, True, False, False]
    assert flags["Mem-Freq"].to_list() == [True, True, False, False, False]
    assert flags["Mem-Uniform"][0] and not flags["Mem-Uniform"][3] and not flags["Mem-Uniform"][4]
    shares = memorisation_shares(train, test)
    assert shares["Mem-Exact"].item() == pytest.approx(20.0) and shares["seen_in_train"].item() == pytest.approx(80.0)
    assert memorisation_shares(train, test, heuristics=("Mem-Pair",))["Mem-Pair"].item() == pytest.approx(60.0)
    predictions = test.with_columns(
        correct=pl.Series([True, True, False, False, False]), encoder_control=pl.lit("none"), probe=pl.lit("linear")
    )
    table = audit_table(train, predictions).filter(pl.col("heuristic") == "Mem-Exact")
    assert table["accuracy"].item() == pytest.approx(40.0)
    assert table["filtered_accuracy"].item() == pytest.approx(25.0)  # bank g right; bank h, fir, oak wrong
    assert table["drop"].item() == pytest.approx(37.5)
    pair = audit_table(train, predictions, heuristics=("Mem-Pair",))
    assert pair["filtered_accuracy"].item() == pytest.approx(0.0) and pair["drop"].item() == pytest.approx(100.0)
    freq = audit_table(train, predictions).filter(pl.col("heuristic") == "Mem-Freq")
    assert freq["filtered_accuracy"].item() == pytest.approx(0.0) and freq["n_filtered"].item() == 3


def test_edge_spec_names_the_bad_parameter():
    with pytest.raises(SpecError, match="probe='deep'"):
        EdgeSpec(probe="deep")
    with pytest.raises(SpecError, match="layer='top'"):
        EdgeSpec(layer="top")


def test_a_probe_learns_separable_spans_and_mix_weights_sum_to_one():
    rng = np.random.default_rng(1)
    labels = [["a", "b"][i % 2] for i in range(200)]
    features = rng.normal(size=(200, 3, 8)).astype(np.float32)
    features[:, 1, 0] += np.array([4.0 if label == "a" else -4.0 for label in labels])
    probe = SpanProbe(EdgeSpec(probe="mlp", layer="mix", epochs=20)).fit(features[:150], labels[:150])
    assert np.mean(np.array(probe.predict(features[150:])) == np.array(labels[150:])) > 0.9
    assert probe.mix_weights_.sum() == pytest.approx(1.0) and probe.mix_weights_.argmax() == 1


@pytest.mark.model
@pytest.mark.wordnet
@pytest.mark.slow
def test_minilm_and_its_random_control_probe_supersenses_end_to_end(wordnet_graph, minilm_path, tmp_path):
    frame = supersense_task(wordnet_graph, n=200, seed=0)
    cache = RepresentationCache(tmp_path / "r.sqlite")
    results = [
        probe_task(
            load_encoder(minilm_path, control=control),
            frame,
            EdgeSpec(layer="mix", epochs=3),
            mdl=True,
            cache=cache,
            progress=False,
        )
        for control in ("none", "random-weights")
    ]
    summary = pl.concat([result["summary"] for result in results], how="diagonal_relaxed")
    assert summary["control"].to_list() == ["none", "random-weights"]
    assert summary["selectivity"].is_not_null().all() and (summary["compression"] > 0).all()
    table = audit_table(
        frame.filter(pl.col("split") == "train"), pl.concat([result["predictions"] for result in results])
    )
    assert set(table["encoder"]) == {"pre-trained", "random"} and table.height == 6


def test_cli_probes_a_jiant_folder_and_writes_summary_predictions_and_audit(cli, tiny_encoder, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    folder = tmp_path / "data"
    tiny_encoder.network.save_pretrained(tmp_path / "model")
    tiny_encoder.tokenizer.save_pretrained(tmp_path / "model")
    rows = [
        (split, f"the {w} ran .", 1, 2, label)
        for split, n in (("train", 40), ("test", 10))
        for w, label in [("dog", "animal"), ("car", "thing")] * (n // 2)
    ]
    write_jiant(_frame(rows), folder)
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    ran = CliRunner().invoke(cli, ["edge", "probe", "--model", str(tmp_path / "model"), "--data", str(folder),
                                   "--out", str(tmp_path / "out"), "--probes", "linear", "--epochs", "2"])  # fmt: skip
    assert ran.exit_code == 0, ran.output
    summary = pl.read_parquet(tmp_path / "out" / "summary.parquet")
    assert summary["control"].to_list() == ["none", "random-weights"]
    assert pl.read_parquet(tmp_path / "out" / "audit.parquet")["share"].max() == pytest.approx(100.0)


def test_memorisation_chart_draws_the_drop_per_heuristic_and_encoder():
    import vl_convert

    from workbench import charts

    audit = pl.DataFrame({"encoder": ["pre-trained", "random"], "probe": ["linear"] * 2, "heuristic": ["Mem-Exact"] * 2,
                          "share": [10.0, 10.0], "accuracy": [80.0, 60.0], "filtered_accuracy": [78.0, 40.0],
                          "n_filtered": [9, 9], "drop": [2.5, 33.3]})  # fmt: skip
    chart = charts.memorisation_bars(audit)
    assert chart.to_dict()["encoding"]["y"]["field"] == "drop"
    assert "<svg" in vl_convert.vegalite_to_svg(chart.to_json())


def test_jiant_task_name_comes_from_the_info_written_with_it(tmp_path):
    write_jiant(
        _frame([("train", "a dog", 1, 2, "x"), ("test", "a cat", 1, 2, "y")]).with_columns(task=pl.lit("mine")),
        tmp_path / "folder",
    )
    assert set(read_jiant(tmp_path / "folder")["task"]) == {"mine"}
