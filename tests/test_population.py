"""The population frame: one row per scored model and per inoculation checkpoint, built from real
workbench outputs (a tiny random BertForMultipleChoice scored and inoculated on a small probe set)."""

import json
import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from tiny_models import tiny_multiple_choice_bert

from workbench.analysis import PLSSpec, fit_pls, parse_model
from workbench.analysis.populations import KEY_COLUMNS, population
from workbench.errors import WorkbenchError
from workbench.inoculation import inoculate, load_run
from workbench.io import write_parquet
from workbench.probes.formats import write_probes
from workbench.schema import PROBE_SCHEMA

pytestmark = pytest.mark.model  # the tokenizer comes from the offline MiniLM

ANIMALS = "dog cat horse cow sheep goat lion tiger bear wolf fox deer rabbit mouse eagle".split()
TOOLS = "hammer saw drill wrench chisel spade rake axe knife pliers file clamp lathe vice ruler".split()


def _question(i: int, split: str, probe: str, hops: int, rng: random.Random) -> dict:
    choices = rng.sample(TOOLS, 3)
    answer = rng.randrange(4)
    choices.insert(answer, rng.choice(ANIMALS))
    return {
        "id": f"{probe}-{split}-{i}", "probe": probe, "source": "wordnet", "split": split, "cluster_id": f"{probe}:{i}",
        "concept": "", "pos": "n", "word": "", "context": "", "template": "t", "question": "which one is an animal?",
        "choices": choices, "answer": answer, "gold_concept": "", "hops": hops, "chain": [],
        "distractor_family": "random", "distractor_depth": 0, "distractor_concepts": [], "n_random_fill": 0,
    }  # fmt: skip


def _probes(n: int, split: str, seed: int) -> pl.DataFrame:
    rng = random.Random(seed)
    rows = [_question(i, split, "hypernymy", 1 + i % 2, rng) for i in range(n)] + [
        _question(n + i, split, "definitions", 0, rng) for i in range(n)
    ]
    return pl.DataFrame(rows, schema=PROBE_SCHEMA)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, minilm_path) -> Path:
    return tiny_multiple_choice_bert(tmp_path_factory.mktemp("tiny-bert"), minilm_path)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory, tiny_model) -> dict:
    """A real inoculation run (baseline + 4 trials) and a real prediction file with science QA rows."""
    from workbench.scoring import score

    root = tmp_path_factory.mktemp("population")
    write_probes(pl.concat([_probes(24, "train", 1), _probes(8, "dev", 2)]), root / "probes")
    rng = random.Random(3)
    labels = "ABCD"
    lines = []
    for i in range(40):
        texts = rng.sample(ANIMALS, 3)
        answer = rng.randrange(4)
        texts.insert(answer, rng.choice(TOOLS))
        lines.append(
            json.dumps(
                {
                    "id": f"q{i}",
                    "question": {
                        "stem": "which one is a tool?",
                        "choices": [{"text": t, "label": labels[j]} for j, t in enumerate(texts)],
                    },
                    "answerKey": labels[answer],
                }
            )
        )
    (root / "orig").mkdir()
    (root / "orig" / "dev.jsonl").write_text("\n".join(lines[:16]) + "\n")
    (root / "orig" / "train.jsonl").write_text("\n".join(lines[16:]) + "\n")
    run = root / "run"
    inoculate(
        tiny_model,
        root / "probes",
        root / "orig",
        ks=(8, 16),
        lrs=(1e-3, 3e-3),
        epochs=(1,),
        out=run,
        batch_size=8,
        max_length=16,
        progress=False,
    )
    from workbench.inoculation import read_mcqa_dir

    questions = pl.concat([_probes(8, "dev", 2), read_mcqa_dir(root / "orig", ("dev",))])
    preds = score(questions, str(tiny_model), scorer="mcqa", max_length=16, cache=False, progress=False)
    write_parquet(preds, root / "preds" / "tiny.parquet")
    return {"run": run, "preds": root / "preds" / "tiny.parquet"}


def test_every_checkpoint_and_scored_model_is_one_row_with_its_accuracies(outputs):
    frame = population(predictions=[outputs["preds"]], runs=[outputs["run"]])
    trials = load_run(outputs["run"])
    assert frame.height == trials.height + 1
    assert list(frame.columns) == [*KEY_COLUMNS, "definitions", "hypernymy", "orig"]
    inoculated = frame.filter(pl.col("origin") == "inoculation").sort("trial")
    assert inoculated["orig"].to_list() == trials.sort("trial")["S_orig"].to_list()
    assert inoculated["k"].to_list() == trials.sort("trial")["k"].to_list()
    # S_new is the accuracy over all probe dev questions; both probes have 8, so it is their mean
    means = inoculated.select(((pl.col("definitions") + pl.col("hypernymy")) / 2).alias("mean"))["mean"]
    assert means.to_list() == pytest.approx(trials.sort("trial")["S_new"].to_list())
    scored = frame.filter(pl.col("origin") == "scored").row(0, named=True)
    preds = pl.read_parquet(outputs["preds"])
    assert scored["orig"] == pytest.approx(preds.filter(pl.col("probe") == "mcqa")["correct"].mean())
    assert scored["hypernymy"] == pytest.approx(preds.filter(pl.col("probe") == "hypernymy")["correct"].mean())


def test_by_hops_splits_each_probe_by_hop_count(outputs):
    frame = population(runs=[outputs["run"]], by_hops=True)
    assert [c for c in frame.columns if c not in KEY_COLUMNS] == [
        "definitions_h0",
        "hypernymy_h1",
        "hypernymy_h2",
        "orig",
    ]
    whole = population(runs=[outputs["run"]])
    # four questions at each hop count: the probe accuracy is the mean of the two hop columns
    assert ((frame["hypernymy_h1"] + frame["hypernymy_h2"]) / 2).to_list() == pytest.approx(
        whole["hypernymy"].to_list()
    )


def test_a_population_fits_a_path_model(outputs):
    frame = population(runs=[outputs["run"]])
    model = parse_model(
        "TAXONOMY =~ hypernymy\nDEFINITIONS =~ definitions\nSCIENCE =~ orig\nSCIENCE ~ TAXONOMY + DEFINITIONS"
    )
    result = fit_pls(frame, model, PLSSpec(bootstrap=0))
    # one indicator per latent: the path coefficients are the OLS betas of the standardised columns
    z = frame.select(
        (pl.col(c) - pl.col(c).mean()) / pl.col(c).std() for c in ("hypernymy", "definitions", "orig")
    ).to_numpy()
    betas = np.linalg.lstsq(z[:, :2], z[:, 2], rcond=None)[0]
    assert result.n_rows == frame.height == 5
    assert result.paths["coef"].to_list() == pytest.approx(betas.tolist())


def test_missing_inputs_are_clear_errors(tmp_path):
    with pytest.raises(WorkbenchError, match="give prediction files"):
        population()
    with pytest.raises(WorkbenchError, match="not an inoculation run"):
        population(runs=[tmp_path])
    with pytest.raises(WorkbenchError, match="no prediction file"):
        population(predictions=[tmp_path / "nothing.parquet"])
