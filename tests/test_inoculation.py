"""Inoculation: MCQA reading, the training loop, resumable runs, selection, cost, add-some, curves.

Plumbing runs on a tiny random BertForMultipleChoice (tokenizer from the MiniLM vocabulary) and a
small learnable probe set: the gold choice is always an animal, the distractors tools.
"""

import json
import random
import shutil
from pathlib import Path

import polars as pl
import pytest
from local_ray import local_ray
from tiny_models import tiny_multiple_choice_bert

from workbench.errors import ProbeFormatError, SpecError, WorkbenchError
from workbench.inoculation import (
    TrainingError,
    TrainSpec,
    add_some_mix,
    best_trials,
    curve_summaries,
    fit,
    inoculate,
    learning_curve,
    load_run,
    read_mcqa,
    stage_predictions,
    summarize,
)
from workbench.inoculation import runs as runs_module
from workbench.inoculation import trial as trial_module
from workbench.inoculation.curves import ws_weight
from workbench.inoculation.train import load_for_training
from workbench.probes.formats import write_probes
from workbench.schema import PROBE_SCHEMA

ANIMALS = "dog cat horse cow sheep goat lion tiger bear wolf fox deer rabbit mouse eagle".split()
TOOLS = "hammer saw drill wrench chisel spade rake axe knife pliers file clamp lathe vice ruler".split()


def _row(i: int, split: str, rng: random.Random, probe: str = "hypernymy") -> dict:
    gold = rng.choice(ANIMALS)
    choices = rng.sample(TOOLS, 3)
    answer = rng.randrange(4)
    choices.insert(answer, gold)
    return {
        "id": f"{probe}-{split}-{i}", "probe": probe, "source": "wordnet", "split": split, "cluster_id": f"c{i}",
        "concept": "", "pos": "n", "word": "", "context": "", "template": "t", "question": "which one is an animal?",
        "choices": choices, "answer": answer, "gold_concept": "", "hops": 1, "chain": [], "distractor_family": "random",
        "distractor_depth": 0, "distractor_concepts": [], "n_random_fill": 0,
    }  # fmt: skip


def _frame(n: int, split: str, seed: int) -> pl.DataFrame:
    rng = random.Random(seed)
    return pl.DataFrame([_row(i, split, rng) for i in range(n)], schema=PROBE_SCHEMA)


def _arc_line(i: int, rng: random.Random) -> str:
    gold = rng.choice(TOOLS)
    texts = rng.sample(ANIMALS, 3)
    answer = rng.randrange(4)
    texts.insert(answer, gold)
    labels = "ABCD"
    choices = [{"text": t, "label": labels[j]} for j, t in enumerate(texts)]
    return json.dumps(
        {"id": f"q{i}", "question": {"stem": "which one is a tool?", "choices": choices}, "answerKey": labels[answer]}
    )


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, minilm_path) -> Path:
    return tiny_multiple_choice_bert(tmp_path_factory.mktemp("tiny-bert"), minilm_path)


@pytest.fixture(scope="module")
def probes_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("probes")
    write_probes(pl.concat([_frame(40, "train", 1), _frame(16, "dev", 2), _frame(12, "test", 3)]), folder)
    return folder


@pytest.fixture(scope="module")
def held_out_dir(tmp_path_factory) -> Path:
    """Science questions the source model never saw, for add-some (the paper reserves MCQL)."""
    folder = tmp_path_factory.mktemp("held-out")
    rng = random.Random(5)
    (folder / "train.jsonl").write_text("".join(_arc_line(1000 + i, rng) + "\n" for i in range(60)))
    return folder


@pytest.fixture(scope="module")
def orig_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("orig")
    rng = random.Random(3)
    for split, n in (("train", 120), ("dev", 16)):
        (folder / f"{split}.jsonl").write_text("".join(_arc_line(i, rng) + "\n" for i in range(n)))
    return folder


FAST = {"batch_size": 8, "max_length": 16, "progress": False}


# --- reading the original task -------------------------------------------------------------------


def test_read_mcqa_reads_every_science_set_with_variable_choice_counts(mcqa_dir):
    arc = read_mcqa(mcqa_dir / "arc_easy" / "dev.jsonl")
    assert arc.height == 570 and set(arc["split"]) == {"dev"} and set(arc["probe"]) == {"mcqa"}
    assert set(arc["choices"].list.len()) <= {3, 4, 5}
    assert (arc["answer"] < arc["choices"].list.len()).all()
    sciq = read_mcqa(mcqa_dir / "sciq" / "dev.jsonl")
    assert sciq.height == 1000 and (sciq["choices"].list.len() == 4).all()
    assert sciq["answer"].n_unique() == 4  # the gold is not always first


def test_read_mcqa_digit_labels_map_to_the_right_choice(tmp_path):
    line = {
        "id": "x",
        "question": {"stem": "q?", "choices": [{"text": t, "label": str(i + 1)} for i, t in enumerate("abc")]},
        "answerKey": "3",
    }
    (tmp_path / "dev.jsonl").write_text(json.dumps(line) + "\n")
    frame = read_mcqa(tmp_path / "dev.jsonl")
    assert frame["answer"].to_list() == [2] and frame["choices"].to_list() == [["a", "b", "c"]]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        (
            json.dumps(
                {
                    "id": "x",
                    "question": {"stem": "q", "choices": [{"text": "a", "label": "A"}, {"text": "b", "label": "B"}]},
                    "answerKey": "E",
                }
            ),
            "answerKey 'E'",
        ),
        (
            json.dumps(
                {
                    "id": "x",
                    "question": {"stem": "q", "choices": [{"text": t, "label": t} for t in "abc"]},
                    "answerKey": "a",
                }
            ),
            "3 choices where 4",
        ),
    ],
)
def test_read_mcqa_malformed_line_names_file_and_line(tmp_path, line, message):
    good = _arc_line(0, random.Random(0))
    path = tmp_path / "train.jsonl"
    path.write_text(good + "\n" + line + "\n")
    with pytest.raises(ProbeFormatError, match=rf"train\.jsonl, line 2: .*{message}"):
        read_mcqa(path, n_choices=4)


# --- the training loop ---------------------------------------------------------------------------


def test_training_reduces_loss_on_a_learnable_set(tiny_model):
    network, tokenizer = load_for_training(tiny_model)
    history = fit(
        network,
        tokenizer,
        _frame(48, "train", 5),
        TrainSpec(lr=1e-2, epochs=6, batch_size=8, max_length=16),
        progress=False,
    )
    first, last = history.head(6)["loss"].mean(), history.tail(6)["loss"].mean()
    assert last < first * 0.7, (first, last)


def test_training_is_seeded(tiny_model):
    losses = []
    for _ in range(2):
        network, tokenizer = load_for_training(tiny_model)
        losses.append(
            fit(
                network,
                tokenizer,
                _frame(16, "train", 5),
                TrainSpec(lr=1e-3, epochs=1, batch_size=8, max_length=16),
                progress=False,
            )["loss"].to_list()
        )
    assert losses[0] == losses[1]


def test_nan_loss_stops_training_with_a_clear_error(tiny_model, monkeypatch):
    from workbench.inoculation import train

    network, tokenizer = load_for_training(tiny_model)
    monkeypatch.setattr(train, "loss_of", lambda logits, labels: logits.sum() * float("nan"))
    with pytest.raises(TrainingError, match=r"diverged at step 0 .*lower the learning rate"):
        fit(network, tokenizer, _frame(8, "train", 5), TrainSpec(lr=1e-3, batch_size=4, max_length=16), progress=False)


# --- runs ----------------------------------------------------------------------------------------


def test_inoculate_writes_a_complete_run_and_summary(tiny_model, probes_dir, orig_dir, tmp_path):
    out = tmp_path / "run"
    summary = inoculate(
        tiny_model, probes_dir, orig_dir, ks=(8, 16), lrs=(1e-3, 3e-3), epochs=(1,), seeds=(0,), out=out, **FAST
    )
    trials = load_run(out)
    assert trials.height == 5 and set(trials["status"]) == {"baseline", "ok"}
    assert summary["k"].to_list() == [8, 16]
    for k in (8, 16):
        chosen = json.loads((out / "best" / f"k{k}" / "trial.json").read_text())
        assert chosen["trial"] == summary.filter(pl.col("k") == k)["trial"][0]
        assert (out / "best" / f"k{k}" / "config.json").is_file()
    assert (out / "trials" / "baseline" / "probe.parquet").is_file() and "skipped" in (out / "log.txt").read_text()
    assert json.loads((out / "config.json").read_text())["grid"]["ks"] == [8, 16]
    stages = stage_predictions(out)  # Figure 3 per stage: the source model, then M* of each k
    assert stages.group_by("k_examples").agg(pl.col("model").first()).height == 3
    for k in (0, 8, 16):
        accuracy = stages.filter(pl.col("k_examples") == k)["correct"].mean()
        assert accuracy == pytest.approx(
            trials.filter(pl.col("trial") == summary_trial(trials, summary, k))["S_new"][0]
        )


def summary_trial(trials: pl.DataFrame, summary: pl.DataFrame, k: int) -> str:
    return "baseline" if k == 0 else summary.filter(pl.col("k") == k)["trial"][0]


def test_killed_run_resumes_and_skips_finished_trials(tiny_model, probes_dir, orig_dir, tmp_path, monkeypatch):
    out = tmp_path / "run"
    real_fit, calls = trial_module.fit, []

    def crashing_fit(*args, **kwargs):
        calls.append(kwargs.get("desc"))
        if len(calls) == 3:
            raise KeyboardInterrupt  # the process is killed mid-run
        return real_fit(*args, **kwargs)

    monkeypatch.setattr(trial_module, "fit", crashing_fit)
    grid = {"ks": (8,), "lrs": (1e-3, 2e-3), "epochs": (1, 2), "seeds": (0,), "out": out, **FAST}
    with pytest.raises(KeyboardInterrupt):
        inoculate(tiny_model, probes_dir, orig_dir, **grid)
    assert load_run(out).height == 3  # baseline + two finished trials survived
    calls.clear()
    inoculate(tiny_model, probes_dir, orig_dir, **grid)
    assert len(calls) == 2  # only the two unfinished trials were trained
    assert load_run(out).height == 5 and "2 already finished (skipped)" in (out / "log.txt").read_text()


def test_a_plan_lists_the_grid_writes_nothing_and_runs_filtered_then_whole(tiny_model, probes_dir, orig_dir, tmp_path):
    from workbench.inoculation import InoculationSpec, plan_inoculation, run_inoculation

    out = tmp_path / "run"
    spec = InoculationSpec(ks=(4, 8), lrs=(1e-3,), epochs=(1,), batch_size=8, max_length=16)
    plan = plan_inoculation(tiny_model, probes_dir, orig_dir, spec, out=out)
    assert not out.exists()  # planning reads the inputs and checks everything, but writes nothing
    assert plan.trials.select("trial", "k", "done").rows() == [
        ("baseline", 0, False), ("k4-lr0.001-ep1-s0-none", 4, False), ("k8-lr0.001-ep1-s0-none", 8, False)
    ]  # fmt: skip
    small = plan.filter(pl.col("k") == 4)
    assert small.trials["k"].to_list() == [0, 4]  # the baseline always stays
    summary = run_inoculation(small, progress=False)
    assert summary["k"].to_list() == [4] and load_run(out)["trial"].to_list() == small.trials["trial"].to_list()
    again = plan_inoculation(tiny_model, probes_dir, orig_dir, spec, out=out)
    assert again.trials["done"].to_list() == [True, True, False]
    assert run_inoculation(again, progress=False)["k"].to_list() == [4, 8]
    assert load_run(out).height == 3


def test_resume_with_other_settings_is_refused(tiny_model, probes_dir, orig_dir, held_out_dir, tmp_path):
    out = tmp_path / "run"
    inoculate(tiny_model, probes_dir, orig_dir, ks=(8,), lrs=(1e-3,), epochs=(1,), out=out, **FAST)
    with pytest.raises(WorkbenchError, match="other settings"):
        inoculate(
            tiny_model,
            probes_dir,
            orig_dir,
            ks=(8,),
            lrs=(1e-3,),
            epochs=(1,),
            out=out,
            add_some="x1",
            add_some_dir=held_out_dir,
            **FAST,
        )


def test_diverged_trial_is_recorded_and_the_sweep_goes_on(tiny_model, probes_dir, orig_dir, tmp_path, monkeypatch):
    from workbench.inoculation import train

    real = train.loss_of
    monkeypatch.setattr(
        train,
        "loss_of",
        lambda logits, labels: real(logits, labels) * (float("nan") if logits.requires_grad and train_lr[0] > 1 else 1),
    )
    train_lr = [0.0]
    real_fit = trial_module.fit

    def fit_with_lr(network, tokenizer, frame, spec, **kw):
        train_lr[0] = spec.lr
        return real_fit(network, tokenizer, frame, spec, **kw)

    monkeypatch.setattr(trial_module, "fit", fit_with_lr)
    out = tmp_path / "run"
    summary = inoculate(tiny_model, probes_dir, orig_dir, ks=(8,), lrs=(1e-3, 5.0), epochs=(1,), out=out, **FAST)
    trials = load_run(out)
    assert trials.filter(pl.col("lr") == 5.0)["status"].to_list() == ["diverged"]
    assert summary["lr"].to_list() == [1e-3]


def test_k_larger_than_the_train_split_is_a_clear_error(tiny_model, probes_dir, orig_dir, tmp_path):
    with pytest.raises(WorkbenchError, match=r"k=100 is larger than the probe train split \(40 questions\)"):
        inoculate(tiny_model, probes_dir, orig_dir, ks=(8, 100), out=tmp_path / "run", **FAST)
    assert not (tmp_path / "run").exists()


def test_malformed_orig_file_is_reported_before_training(tiny_model, probes_dir, tmp_path):
    orig = tmp_path / "orig"
    orig.mkdir()
    (orig / "dev.jsonl").write_text(_arc_line(0, random.Random(0)) + "\n{broken\n")
    with pytest.raises(ProbeFormatError, match=r"dev\.jsonl, line 2: not valid JSON"):
        inoculate(tiny_model, probes_dir, orig, ks=(8,), out=tmp_path / "run", **FAST)


def test_model_without_a_multiple_choice_or_causal_lm_class_is_a_clear_error_before_anything_is_written(
    probes_dir, orig_dir, tmp_path
):
    from transformers import ViTConfig  # a causal LM (GPT-2, Llama) is inoculated with the causal loss instead

    model = tmp_path / "vit"
    ViTConfig(num_hidden_layers=1, hidden_size=8, num_attention_heads=2).save_pretrained(model)
    with pytest.raises(WorkbenchError, match=r"is a vit model .*neither a multiple-choice nor a causal-LM class"):
        inoculate(model, probes_dir, orig_dir, ks=(8,), out=tmp_path / "run", **FAST)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("failing", ["checkpoint", "results"])
def test_full_disk_is_a_clear_error_and_keeps_every_finished_trial(
    tiny_model, probes_dir, orig_dir, tmp_path, monkeypatch, failing
):
    import errno

    from workbench.inoculation import DiskFullError

    out = tmp_path / "run"
    grid = {"ks": (8,), "lrs": (1e-3, 2e-3), "epochs": (1,), "seeds": (0,), "out": out, **FAST}
    module, name = (trial_module, "save_model") if failing == "checkpoint" else (runs_module, "write_parquet")
    real, calls = getattr(module, name), []

    def full_on_the_second_write(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, full_on_the_second_write)
    with pytest.raises(
        DiskFullError, match=r"is full .*finished trial\(s\) are safe .*rerun the same command to resume"
    ):
        inoculate(tiny_model, probes_dir, orig_dir, **grid)
    kept = load_run(out)
    assert kept.height == (
        2 if failing == "checkpoint" else 1
    )  # baseline (+ the first trial): nothing finished was lost
    assert not list(out.rglob("*.tmp")) and not list(out.rglob(".model.staging-*"))  # io.staged_folder
    monkeypatch.setattr(module, name, real)
    inoculate(tiny_model, probes_dir, orig_dir, **grid)
    assert sorted(load_run(out)["trial"]) == sorted(["baseline", "k8-lr0.001-ep1-s0-none", "k8-lr0.002-ep1-s0-none"])


def test_on_trial_sees_every_row_and_stop_leaves_a_resumable_run(tiny_model, probes_dir, orig_dir, tmp_path):
    import threading

    out, stop, seen = tmp_path / "run", threading.Event(), []

    def watch(row: dict) -> None:
        seen.append(row)
        if len(seen) == 2:
            stop.set()  # e.g. a UI's Stop button, pressed after the first trained model

    grid = {"ks": (8, 16), "lrs": (1e-3,), "epochs": (1,), "seeds": (0, 1), "out": out, **FAST}
    summary = inoculate(tiny_model, probes_dir, orig_dir, on_trial=watch, stop=stop, **grid)
    assert [row["status"] for row in seen] == ["baseline", "ok"] and set(seen[0]) == set(runs_module.TRIALS_SCHEMA)
    assert load_run(out)["trial"].to_list() == [row["trial"] for row in seen]
    assert (
        summary["k"].to_list() == [8] and "stopped by the caller with 3 trial(s) left" in (out / "log.txt").read_text()
    )
    assert sorted(p.name for p in (out / "trials").glob("*/model")) == []  # checkpoints live only under best/
    inoculate(tiny_model, probes_dir, orig_dir, **grid)
    assert load_run(out).height == 5


def test_stop_interrupts_training_between_steps(tiny_model):
    import threading

    from workbench.inoculation.train import Cancelled

    network, tokenizer = load_for_training(tiny_model)
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled, match="at step 0"):
        fit(
            network,
            tokenizer,
            _frame(8, "train", 5),
            TrainSpec(lr=1e-3, batch_size=4, max_length=16),
            progress=False,
            stop=stop,
        )


def _comparable(trials: pl.DataFrame) -> pl.DataFrame:
    return (
        trials.drop("seconds").with_columns(pl.col("final_loss").fill_null(0.0)).sort("trial")
    )  # the baseline trains nothing


def test_a_pool_of_two_processes_gives_the_same_trials_as_one_process(tiny_model, probes_dir, orig_dir, tmp_path):
    grid = {"ks": (8, 16), "lrs": (1e-3,), "epochs": (1,), "seeds": (0,), "threads": 1, **FAST}
    inoculate(tiny_model, probes_dir, orig_dir, out=tmp_path / "one", **grid)
    rows = []
    inoculate(tiny_model, probes_dir, orig_dir, out=tmp_path / "pool", workers=2, on_trial=rows.append, **grid)
    one, pool = _comparable(load_run(tmp_path / "one")), _comparable(load_run(tmp_path / "pool"))
    assert pool.drop("final_loss").equals(one.drop("final_loss")) and len(rows) == 3
    assert pool["final_loss"].to_list() == pytest.approx(one["final_loss"].to_list(), rel=1e-5)
    assert (
        json.loads((tmp_path / "pool" / "best" / "k16" / "trial.json").read_text())["trial"]
        == "k16-lr0.001-ep1-s0-none"
    )


@pytest.mark.slow
def test_ray_tune_backend_gives_the_same_trials_as_the_local_one(tiny_model, probes_dir, orig_dir, tmp_path):
    pytest.importorskip("ray")
    grid = {"ks": (8,), "lrs": (1e-3,), "epochs": (1,), "seeds": (0,), "threads": 1, **FAST}
    inoculate(tiny_model, probes_dir, orig_dir, out=tmp_path / "local", **grid)
    with local_ray(cpus=2):  # started as under load: a raylet that is slow to register is waited for
        rows = []
        summary = inoculate(
            tiny_model,
            probes_dir,
            orig_dir,
            out=tmp_path / "ray",
            backend="ray",
            workers=2,
            on_trial=rows.append,
            **grid,
        )
    local, remote = _comparable(load_run(tmp_path / "local")), _comparable(load_run(tmp_path / "ray"))
    assert remote.drop("final_loss").equals(local.drop("final_loss")) and len(rows) == 2
    assert remote["final_loss"].to_list() == pytest.approx(local["final_loss"].to_list(), rel=1e-5)
    assert summary["trial"].to_list() == summarize(load_run(tmp_path / "local"))["trial"].to_list()
    assert (tmp_path / "ray" / "ray").is_dir() and (tmp_path / "ray" / "best" / "k8" / "config.json").is_file()
    assert "ray: each trial requests {'cpu': 1, 'gpu': 0}" in (tmp_path / "ray" / "log.txt").read_text()  # no GPU


# --- add-some, selection, cost, curves -----------------------------------------------------------


@pytest.mark.parametrize(("mode", "per_example"), [("x1", 1), ("x2", 2)])
def test_add_some_mixes_the_right_number_of_held_out_examples(
    tiny_model, probes_dir, orig_dir, held_out_dir, tmp_path, monkeypatch, mode, per_example
):
    """R&S 2020 §4.2: add-some balances probe examples with science questions held out from training and
    evaluation (MCQL), x1 or x2 per probe example, 5-way like every science set."""
    seen = []
    real_fit = trial_module.fit
    monkeypatch.setattr(
        trial_module,
        "fit",
        lambda net, tok, frame, spec, **kw: seen.append(frame) or real_fit(net, tok, frame, spec, **kw),
    )
    inoculate(
        tiny_model,
        probes_dir,
        orig_dir,
        ks=(8, 16),
        lrs=(1e-3,),
        epochs=(1,),
        add_some=mode,
        add_some_dir=held_out_dir,
        out=tmp_path / "run",
        **FAST,
    )
    held_out_ids = {f"q{1000 + i}" for i in range(60)}
    for frame, k in zip(seen, (8, 16)):
        assert frame.filter(pl.col("probe") == "hypernymy").height == k
        added = frame.filter(pl.col("probe") == "mcqa")
        assert added.height == per_example * k
        assert set(added["id"].to_list()) <= held_out_ids and (added["choices"].list.len() == 5).all()
    assert load_run(tmp_path / "run")["n_orig_added"].to_list() == [0, 8 * per_example, 16 * per_example]


def test_add_some_is_capped_at_three_thousand():
    probes = _frame(2000, "train", 0)
    orig = probes.with_columns(probe=pl.lit("mcqa"))
    orig = pl.concat([orig, orig])
    mixed = add_some_mix(probes, orig, min(2 * 2000, runs_module.MAX_ADDED))
    assert mixed.filter(pl.col("probe") == "mcqa").height == 3000


def _trials(rows: list[tuple]) -> pl.DataFrame:
    base = {"add_some": "none", "n_orig_added": 0, "final_loss": 0.1, "seconds": 1.0}
    frame = [
        {
            **base,
            "trial": t,
            "k": k,
            "lr": lr,
            "epochs": ep,
            "seed": s,
            "S_new": n,
            "S_orig": o,
            "avg": None if n is None else (n + o) / 2,
            "status": st,
        }
        for t, k, lr, ep, s, n, o, st in rows
    ]
    return pl.DataFrame(frame, schema=runs_module.TRIALS_SCHEMA)


TRIALS = _trials([
    ("baseline", 0, 0.0, 0, 0, 0.20, 0.60, "baseline"),
    ("a", 100, 1e-5, 1, 0, 0.50, 0.58, "ok"),  # avg .54
    ("b", 100, 3e-5, 1, 0, 0.90, 0.30, "ok"),  # avg .60: best S_new is not the pick by itself
    ("c", 100, 3e-5, 3, 0, 0.70, 0.56, "ok"),  # avg .63 <- M*
    ("d", 100, 1e-4, 1, 0, None, None, "diverged"),
    ("e", 100, 1e-5, 1, 1, 0.60, 0.50, "ok"),  # avg .55 (seed 1's best)
    ("f", 500, 1e-5, 1, 0, 0.80, 0.40, "ok"),  # avg .60
    ("g", 500, 3e-5, 1, 0, 0.75, 0.55, "ok"),  # avg .65 <- M*
    ("h", 500, 3e-5, 1, 1, 0.85, 0.45, "ok"),  # avg .65, seed 1
])  # fmt: skip


def test_selection_picks_the_argmax_of_the_average():
    chosen = best_trials(TRIALS)
    assert chosen["trial"].to_list() == ["c", "g"]  # g ties h; the smaller seed wins


def test_add_some_needs_a_held_out_set_that_is_not_an_evaluation_set(tiny_model, probes_dir, orig_dir, tmp_path):
    """R&S 2020 §4.2 reserve a science set (MCQL) for add-some: never the source model's training data."""
    with pytest.raises(SpecError, match="held out from training and evaluation"):
        inoculate(tiny_model, probes_dir, orig_dir, ks=(8,), add_some="x1", out=tmp_path / "a", **FAST)
    with pytest.raises(SpecError, match="is also an evaluation set"):
        inoculate(
            tiny_model, probes_dir, orig_dir, ks=(8,), add_some="x1", add_some_dir=orig_dir, out=tmp_path / "b", **FAST
        )
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_add_some_refuses_the_data_the_source_model_was_trained_on(
    tiny_model, probes_dir, orig_dir, held_out_dir, tmp_path
):
    """A train-source run records its training folders in config.json (``data``); add-some mixing them back in
    would not be held out, so it is refused before any work, as an evaluation folder is."""
    run = tmp_path / "source"
    shutil.copytree(tiny_model, run / "model")
    (run / "config.json").write_text(json.dumps({"model": str(tiny_model), "data": [str(held_out_dir)]}))
    with pytest.raises(SpecError, match="the source model was trained on"):
        inoculate(run, probes_dir, orig_dir, ks=(8,), add_some="x1", add_some_dir=held_out_dir, out=tmp_path / "c")
    assert not (tmp_path / "c").exists()


def test_orig_is_the_aggregate_of_several_science_dev_sets_made_five_way(
    tiny_model, probes_dir, orig_dir, held_out_dir, tmp_path
):
    """R&S 2020 §4.2: S_orig is measured on an aggregate science dev set, every set made 5-way with empty answers."""
    second = tmp_path / "second"
    second.mkdir()
    rng = random.Random(9)
    (second / "dev.jsonl").write_text("".join(_arc_line(2000 + i, rng) + "\n" for i in range(10)))
    out = tmp_path / "run"
    inoculate(tiny_model, probes_dir, [orig_dir, second], ks=(8,), lrs=(1e-3,), epochs=(1,), out=out, **FAST)
    scored = pl.read_parquet(out / "trials" / "baseline" / "orig.parquet")
    assert scored.height == 16 + 10 and set(scored["source"].unique()) == {orig_dir.name, "second"}
    assert (scored["choices"].list.len() == 5).all() and scored["choices"].list.get(4).to_list() == [""] * 26
    assert not scored.filter(pl.col("pred") == 4)["correct"].any()


def test_m_star_is_reported_on_dev_and_test(tiny_model, probes_dir, orig_dir, tmp_path):
    """R&S 2020 Table 7 reports M*'s probe score as Dev / Test: selection on dev, the test split scored too."""
    out = tmp_path / "run"
    summary = inoculate(tiny_model, probes_dir, orig_dir, ks=(8,), lrs=(1e-3, 3e-3), epochs=(1,), out=out, **FAST)
    row = summary.row(0, named=True)
    test_preds = pl.read_parquet(out / "trials" / row["trial"] / "probe_test.parquet")
    assert test_preds.height == 12 and row["S_new_test"] == pytest.approx(test_preds["correct"].mean())
    assert row["S_new_test_before"] is not None


def test_max_eval_samples_whole_clusters(tiny_model, probes_dir, orig_dir, tmp_path):
    """Strict cluster accuracy needs whole clusters: the evaluation sample never cuts one."""
    probes = tmp_path / "clustered"
    dev = _frame(30, "dev", 2).with_columns(cluster_id=pl.format("c{}", pl.int_range(pl.len()) // 3))
    frame = pl.concat([_frame(40, "train", 1), dev])
    write_probes(frame, probes)
    out = tmp_path / "run"
    inoculate(tiny_model, probes, orig_dir, ks=(8,), lrs=(1e-3,), epochs=(1,), out=out, max_eval=10, **FAST)
    scored = pl.read_parquet(out / "trials" / "baseline" / "probe.parquet")
    assert scored.height == 9 and (scored.group_by("cluster_id").len()["len"] == 3).all()


def test_inoculation_cost_has_the_papers_sign():
    """R&S 2020 Table 7 prints costs such as −5.10: S_orig(M*) − S_orig(before), negative when the model forgot."""
    summary = summarize(TRIALS)
    assert summary["inoculation_cost"].to_list() == pytest.approx([0.56 - 0.60, 0.55 - 0.60])
    assert summary["S_orig_before"].to_list() == [0.60, 0.60]


def test_learning_curve_averages_seeds_with_spread():
    curve = learning_curve(TRIALS)
    assert curve["k"].to_list() == [0, 100, 500]
    assert curve["S_new"].to_list() == pytest.approx([0.20, (0.70 + 0.60) / 2, (0.75 + 0.85) / 2])
    assert curve["S_new_std"].to_list() == pytest.approx([0.0, 0.05, 0.05])
    assert curve["n_seeds"].to_list() == [1, 2, 2]


def test_ws_and_max_use_the_olmpics_weights_of_the_nearest_n():
    assert [ws_weight(k) for k in (62, 100, 500, 1000, 3000, 10000)] == [0.23, 0.20, 0.14, 0.11, 0.07, 0.07]
    summary = curve_summaries(TRIALS).filter(pl.col("measure") == "S_new")
    w100, w500 = 0.20 / 0.34, 0.14 / 0.34
    seed0, seed1 = w100 * 0.70 + w500 * 0.75, w100 * 0.60 + w500 * 0.85
    assert summary["WS"][0] == pytest.approx((seed0 + seed1) / 2)
    assert summary["MAX"][0] == pytest.approx((0.75 + 0.85) / 2)  # the seed-mean curve's best point, k=500


def test_inoculation_max_is_read_off_the_seed_averaged_curve():
    """oLMpics §2 (as SPEC §6 uses it): MAX of the mean curve, not the mean of per-seed maxima."""
    rows = [
        {"status": "ok", "k": k, "seed": seed, "lr": 1e-5, "epochs": 1, "S_new": s_new, "S_orig": 0.5,
         "avg": (s_new + 0.5) / 2}
        for seed, k, s_new in [(0, 62, 0.9), (0, 125, 0.5), (1, 62, 0.45), (1, 125, 0.7)]
    ]  # fmt: skip
    summary = curve_summaries(pl.DataFrame(rows)).filter(pl.col("measure") == "S_new")
    assert summary["MAX"].item() == pytest.approx(0.675)


def test_learning_curve_chart_draws_probe_solid_original_dashed_and_a_seed_band():
    from workbench.charts import inoculation_curves
    from workbench.charts.curves import DASHES, ORIGINAL, PROBE

    spec = inoculation_curves(learning_curve(TRIALS), human=0.96).to_dict()
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["area", "line", "rule", "text"]  # seed band (two seeds), curves, human line and its label
    dash = spec["layer"][1]["encoding"]["strokeDash"]["scale"]
    assert dict(zip(dash["domain"], dash["range"])) == {PROBE: DASHES[PROBE], ORIGINAL: DASHES[ORIGINAL]}
    assert DASHES[PROBE] == [1, 0] and DASHES[ORIGINAL][1] > 0  # solid probe, dashed original


def test_learning_curve_chart_adds_the_control_and_drops_the_band_for_one_seed():
    from workbench.charts import inoculation_curves
    from workbench.views import curve_points

    one_seed = learning_curve(TRIALS.filter(pl.col("seed") == 0))
    control = one_seed.with_columns(S_new=pl.lit(0.25))
    chart = inoculation_curves(one_seed, control=control)
    assert [layer["mark"]["type"] for layer in chart.to_dict()["layer"]] == ["line"]
    points = curve_points(one_seed)
    assert points.height == 2 * one_seed.height and set(points["series"]) == {"model"}
    with pytest.raises(WorkbenchError, match="lacks the columns"):
        inoculation_curves(TRIALS)
    with pytest.raises(WorkbenchError, match=r"human=96.0 is out of range"):
        inoculation_curves(one_seed, human=96.0)


ZERO_SHOT = pl.DataFrame({
    "model": ["gpt2", "gpt2"], "scorer": ["causal", "causal"], "rule": ["sum", "mi"], "control": ["none", "none"],
    "fingerprint": ["f1", "f2"], "k": [0, 0], "S_new": [0.35, 0.45], "n": [200, 200],
})  # fmt: skip


def test_zero_shot_points_start_one_curve_per_rule_with_no_original_score():
    curve = learning_curve(TRIALS.filter(pl.col("status") != "baseline"), zero_shot=ZERO_SHOT)  # no baseline needed
    inoculated = learning_curve(TRIALS).filter(pl.col("k") > 0)
    assert curve["rule"].to_list() == ["sum"] * 3 + ["mi"] * 3
    for rule, accuracy in (("sum", 0.35), ("mi", 0.45)):
        part = curve.filter(pl.col("rule") == rule)
        assert part["k"].to_list() == [0, 100, 500]
        assert part["S_new"][0] == accuracy and part["S_orig"][0] is None and part["S_orig_std"][0] is None
        assert part.filter(pl.col("k") > 0).drop("rule").equals(inoculated)


def test_zero_shot_points_of_several_models_or_a_later_k_are_refused():
    with pytest.raises(WorkbenchError, match=r"several rows for the rule\(s\) \['mi', 'sum'\]"):
        learning_curve(
            TRIALS, zero_shot=pl.concat([ZERO_SHOT, ZERO_SHOT.with_columns(control=pl.lit("random-weights"))])
        )
    with pytest.raises(WorkbenchError, match="k != 0"):
        learning_curve(TRIALS, zero_shot=ZERO_SHOT.with_columns(k=pl.lit(5)))
    with pytest.raises(WorkbenchError, match=r"lacks the columns \['rule'\]"):
        learning_curve(TRIALS, zero_shot=ZERO_SHOT.drop("rule"))


def test_zero_shot_points_from_the_scorer_seed_the_learning_curve_chart(tmp_path):
    from workbench.charts import inoculation_curves
    from workbench.schema import PREDICTION_SCHEMA
    from workbench.scoring import zero_shot_accuracy
    from workbench.views import ORIGINAL, PROBE, curve_points

    preds = pl.DataFrame(
        {
            "id": ["q1", "q2", "q1", "q2"], "model": ["m"] * 4, "scorer": ["causal"] * 4,
            "rule": ["sum", "sum", "mi", "mi"], "control": ["none"] * 4, "fingerprint": ["a", "a", "b", "b"],
            "scores": [[0.1, 0.9], [0.8, 0.2], [0.9, 0.1], [0.7, 0.3]],
            "pred": [1, 0, 0, 0], "answer": [1, 1, 1, 1], "correct": [True, False, False, False],
        }
    )  # fmt: skip
    preds = preds.select(
        pl.col(name).cast(dtype) if name in preds.columns else pl.lit(None, dtype).alias(name)
        for name, dtype in PREDICTION_SCHEMA.items()
    )
    points = zero_shot_accuracy(preds)
    one_seed = learning_curve(TRIALS.filter(pl.col("seed") == 0))
    chart = inoculation_curves(one_seed, zero_shot=points).to_dict()
    drawn = curve_points(learning_curve(TRIALS.filter(pl.col("seed") == 0), zero_shot=points))
    assert set(drawn["series"]) == {"model · sum", "model · mi"}
    start = drawn.filter(pl.col("k") == 0)
    assert set(start["measure"]) == {PROBE}  # no S_orig at a zero-shot k=0: the dashed line starts at the first k
    assert dict(start.select("series", "accuracy").iter_rows()) == {"model · sum": 0.5, "model · mi": 0.0}
    assert drawn.filter((pl.col("k") == 100) & (pl.col("measure") == ORIGINAL)).height == 2
    assert chart["layer"][0]["encoding"]["color"]["title"] == "run · zero-shot rule"


# --- the command line ----------------------------------------------------------------------------


def _cli(*args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, timeout=300)


def test_cli_inoculate_prints_the_per_k_summary_as_json(tiny_model, probes_dir, orig_dir, held_out_dir, tmp_path):
    out = tmp_path / "run"
    args = [
        "inoculate",
        "--model",
        str(tiny_model),
        "--probes",
        str(probes_dir),
        "--orig",
        str(orig_dir),
        "--out",
        str(out),
    ]
    result = _cli(
        *args,
        "--k",
        "8,16",
        "--lr",
        "1e-3",
        "--epochs",
        "1",
        "--seeds",
        "0",
        "--max-length",
        "16",
        "--add-some",
        "x1",
        "--add-some-data",
        str(held_out_dir),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert [row["k"] for row in summary] == [8, 16]
    assert {"trial", "S_new", "S_new_test", "S_orig", "inoculation_cost", "lr", "epochs", "seed"} <= set(summary[0])
    too_big = _cli(*args, "--k", "41", "--lr", "1e-3", "--epochs", "1")
    assert too_big.returncode == 2 and "k=41 is larger than the probe train split" in too_big.stderr


@pytest.mark.model
def test_train_source_on_minilm_writes_a_usable_run(minilm_path, mcqa_dir, tmp_path):
    from workbench.inoculation import train_source

    out = tmp_path / "src"
    spec = TrainSpec(lr=1e-4, epochs=1, batch_size=8, max_length=64)
    metrics = train_source(minilm_path, mcqa_dir / "arc_easy", out, spec, max_train=24, max_eval=24, progress=False)
    assert set(metrics) == {"arc_easy", "aggregate"} and 0.0 <= metrics["arc_easy"] == metrics["aggregate"] <= 1.0
    assert (out / "model" / "config.json").is_file() and (out / "metrics.json").is_file()
    assert pl.read_parquet(out / "history.parquet").height == 3


def test_hub_rows_of_arc_openbookqa_and_sciq_read_back_as_the_same_questions(tmp_path):
    from workbench.inoculation.data import hub_record, read_mcqa_dir

    arc = {"id": "a1", "question": "Which is a mammal?", "answerKey": "C",
           "choices": {"text": ["trout", "frog", "whale", "crow"], "label": ["A", "B", "C", "D"]}}  # fmt: skip
    obqa = {"id": "o1", "question_stem": "The sun is a", "answerKey": "A",
            "choices": {"text": ["star", "planet", "moon", "comet"], "label": ["A", "B", "C", "D"]}}  # fmt: skip
    sciq = {"question": "What do plants make in photosynthesis?", "distractor1": "salt", "distractor2": "iron",
            "distractor3": "oil", "correct_answer": "glucose", "support": "long text"}  # fmt: skip
    folder = tmp_path / "mcqa" / "mixed"
    folder.mkdir(parents=True)
    (folder / "dev.jsonl").write_text("\n".join(json.dumps(hub_record(row)) for row in (arc, obqa, sciq)) + "\n")
    frame = read_mcqa_dir(folder)
    golds = [row["choices"][row["answer"]] for row in frame.iter_rows(named=True)]
    assert frame["question"].to_list() == [arc["question"], obqa["question_stem"], sciq["question"]]
    assert golds == ["whale", "star", "glucose"] and set(frame["split"]) == {"dev"}


def test_fetching_a_science_qa_set_without_internet_says_how_to_bring_it(tmp_path, monkeypatch):
    from workbench.inoculation.data import fetch_mcqa

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(WorkbenchError, match=r"cannot fetch arc_easy \(allenai/ai2_arc\).*copy its \{train,dev,test\}"):
        fetch_mcqa("arc_easy", tmp_path / "arc_easy")
    assert not (tmp_path / "arc_easy").exists()
    with pytest.raises(WorkbenchError, match="'squad' is not a science QA set we know; choose one of"):
        fetch_mcqa("squad", tmp_path / "squad")
