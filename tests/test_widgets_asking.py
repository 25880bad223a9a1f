"""Ways of asking in the panels: the explorer shows the exact text the model saw and its scores or free answer; the
dashboard puts one model's ways side by side (a heat map each, the paired difference), every label naming its way.

Prediction frames come from the real scorers on released hypernymy test questions (eight clusters) with a tiny
random GPT-2 whose tokenizer carries a ChatML chat template: zero-shot cloze, 2-shot letters with the template,
and free answers (``generate``).
"""

from html import escape

import polars as pl
import pytest
import torch
from test_scoring_lm import byte_bpe
from transformers import GPT2Config, GPT2LMHeadModel

from widgets import ClusterBrowser, Session
from widgets.render import PROMPT_TAIL
from workbench import markup, metrics
from workbench.analysis.comparison import compare
from workbench.analysis.ways import way_difference, ways_of_asking
from workbench.io import write_parquet
from workbench.probes.formats import read_probes
from workbench.probes.select import ProbeFilter
from workbench.scoring import PredictionCache, load_model, score

pytestmark = pytest.mark.wordnet

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
WAYS = {
    "cloze": ("causal", {}),
    "letters": ("causal", {"format": "letters", "shots": 2, "chat_template": "auto"}),
    "free": ("generate", {"max_new_tokens": 4}),
}


@pytest.fixture(scope="module")
def asked(tmp_path_factory, released_dir) -> dict[str, pl.DataFrame]:
    """The questions of eight released hypernymy test clusters, and the tiny model's predictions asked each way."""
    test = read_probes(released_dir / "hypernymy_test.jsonl").sort("id")
    clusters = test["cluster_id"].unique(maintain_order=True).head(8)
    test = test.filter(pl.col("cluster_id").is_in(clusters.implode()))
    train = read_probes(released_dir / "hypernymy_train.jsonl")
    folder = tmp_path_factory.mktemp("tiny-chat-gpt2")
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=400, n_positions=2048, n_embd=32, n_layer=2, n_head=2)
    config.bos_token_id = config.eos_token_id = 0
    GPT2LMHeadModel(config).save_pretrained(folder)
    tokenizer = byte_bpe()
    tokenizer.chat_template = CHATML
    tokenizer.save_pretrained(folder)
    cache = PredictionCache(folder / "cache.sqlite")
    frames = {}
    for way, (scorer, settings) in WAYS.items():
        model = load_model(folder, scorer, max_length=2048)
        frames[way] = score(test, model, scorer, shot_pool=train, cache=cache, progress=False, name="tiny", **settings)
    return {"probes": test, **frames}


def test_every_label_names_its_way_of_asking(asked):
    preds = pl.concat([asked[way] for way in WAYS])
    labels = metrics.model_labels(preds)["label"].to_list()
    assert sorted(labels) == [
        "tiny / causal / sum · cloze/0-shot/plain",
        "tiny / causal / sum · letters/2-shot/chat",
        "tiny / generate / match · cloze/0-shot/plain",
    ]
    assert metrics.model_labels(asked["cloze"])["label"].to_list() == ["tiny"]  # one way: the name alone


def test_the_explorer_shows_the_text_each_way_saw_and_its_scores_or_free_answer(asked):
    preds = pl.concat([asked[way] for way in WAYS])
    session = Session(probes=asked["probes"], predictions=preds, where=ProbeFilter(probe="hypernymy"))
    browser = ClusterBrowser(session)
    largest = asked["probes"]["concept"].value_counts(sort=True)["concept"][0]  # a cluster of several questions
    session.concept = largest
    cluster = asked["probes"].filter(pl.col("concept") == largest)
    assert sorted(value for _, value in browser.question.options) == sorted(cluster["id"])
    question = cluster.filter(pl.col("id") == browser.question.value).row(0, named=True)  # the first one, picked
    detail = browser.detail.value
    for way, frame in asked.items():
        if way == "probes":
            continue
        row = frame.filter(pl.col("id") == question["id"]).row(0, named=True)
        label = metrics.model_labels(preds).filter(pl.col("fingerprint") == row["fingerprint"])["label"].item()
        assert escape(label) in detail and escape(label) in browser.body.value
        last = row["prompt"].split("\n")[-PROMPT_TAIL:]
        assert escape("\n".join(last)) in detail  # the exact text, escaped
    letters = asked["letters"].filter(pl.col("id") == question["id"]).row(0, named=True)
    assert letters["prompt"].startswith("<|im_start|>user\n") and "<|im_start|>" not in detail
    assert "&lt;|im_start|&gt;assistant" in detail  # the template applied, shown as text
    assert "earlier lines" in detail and escape(letters["prompt"].split("\n")[0]) in detail  # the shots, folded
    assert all(f"{score:.3f}" in detail for score in letters["scores"])
    free = asked["free"].filter(pl.col("id") == question["id"]).row(0, named=True)
    assert f"free answer: <b>{markup.text(free['generated'])}</b>" in detail  # escaped and isolated
    assert f"· match <b>{free['match']}</b>" in detail
    other = browser.question.options[-1][1]
    browser.question.value = other
    prompt = asked["cloze"].filter(pl.col("id") == other)["prompt"][0]
    assert other != question["id"] and escape(prompt) in browser.detail.value


def test_way_difference_is_the_paired_comparison_of_the_two_ways(asked):
    preds = pl.concat([asked[way] for way in WAYS])
    ways = ways_of_asking(preds)
    assert ways.height == 3 and ways["n"].to_list() == [asked["probes"].height] * 3
    assert ways_of_asking(asked["cloze"]).is_empty()
    a, b = ways["label"][0], ways["label"][1]
    table = way_difference(preds, a, b, n_boot=200)
    assert table.drop("a", "b").equals(compare(asked["cloze"], asked["letters"], n_boot=200))
    assert set(table["a"]) == {a} and set(table["b"]) == {b}


def test_the_dashboard_puts_one_models_ways_side_by_side(asked, tmp_path):
    from widgets import apps

    preds = pl.concat([asked[way] for way in WAYS])
    write_parquet(preds, tmp_path / "predictions" / "tiny-ways.parquet")
    app = apps.dashboard(tmp_path)
    board, ways = app.panels["dashboard"], app.panels["ways"]
    labels = set(metrics.model_labels(preds)["label"])
    panels = {row["panel"] for rows in board.heat.spec["datasets"].values() for row in rows if "panel" in row}
    assert panels == labels  # the results heat map: one panel per way, each named by it
    assert ways.model.options == (("tiny", ("tiny", "none")),)
    assert set(ways.a.options) == labels and ways.a.value != ways.b.value
    ways.wait()
    heat = {row["panel"] for rows in ways.heat.spec["datasets"].values() for row in rows if "panel" in row}
    assert heat == labels and ways.heat.spec["facet"]["column"]["field"] == "panel"
    ways.a.value, ways.b.value = "tiny / causal / sum · cloze/0-shot/plain", "tiny / causal / sum · letters/2-shot/chat"
    ways.wait()
    expected = compare(asked["cloze"], asked["letters"], n_boot=ways.n_boot).filter(pl.col("scope") == "cell")
    drawn = [row for rows in ways.difference.spec["datasets"].values() for row in rows]
    assert [(row["row"], row["column"], row["diff"]) for row in drawn] == list(
        expected.select("row", "column", "diff").iter_rows()
    )
    assert "letters/2-shot/chat minus" in str(ways.difference.spec["title"])
    overall = compare(asked["cloze"], asked["letters"], n_boot=ways.n_boot).row(0, named=True)
    assert f"<td>{overall['diff']:.3f}</td>" in ways.overall.value
    ways.b.value = ways.a.value
    ways.wait()
    assert "pick two different ways" in ways.overall.value
