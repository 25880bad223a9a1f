"""Training at scale, checked on the CPU: device selection, mixed precision, gradient accumulation, gradient
checkpointing, what a run folder records and how a resume honours it, checkpoint retention, Ray trial resources,
and the small mode of the inoculation benchmark.

Every run uses the tiny random BERT of ``test_inoculation`` (its fixtures are reused here).
"""

import json
import random
from pathlib import Path

import polars as pl
import pytest
import torch
from test_inoculation import FAST, _arc_line, _frame
from tiny_models import tiny_multiple_choice_bert

from workbench.errors import SpecError, WorkbenchError
from workbench.inoculation import TRIALS_SCHEMA, TrainSpec, fit, inoculate, load_run, plan_inoculation, train_source
from workbench.inoculation import trial as trial_module
from workbench.inoculation.backends import trial_resources
from workbench.inoculation.runs import InoculationSpec, _retain_checkpoint
from workbench.inoculation.train import backward, collate, encode, load_for_training


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, minilm_path) -> Path:
    return tiny_multiple_choice_bert(tmp_path_factory.mktemp("tiny-bert"), minilm_path)


@pytest.fixture(scope="module")
def probes_dir(tmp_path_factory) -> Path:
    from workbench.probes.formats import write_probes

    folder = tmp_path_factory.mktemp("probes")
    write_probes(pl.concat([_frame(24, "train", 1), _frame(8, "dev", 2)]), folder)
    return folder


@pytest.fixture(scope="module")
def orig_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("orig")
    rng = random.Random(3)
    for split, n in (("train", 16), ("dev", 8)):
        (folder / f"{split}.jsonl").write_text("".join(_arc_line(i, rng) + "\n" for i in range(n)))
    return folder


NO_GPU = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the errors of a machine without a GPU")


def _without_dropout(network: torch.nn.Module) -> torch.nn.Module:
    for module in network.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    return network


def _fit(model: Path, frame: pl.DataFrame, dropout: bool = True, **settings) -> tuple[torch.nn.Module, pl.DataFrame]:
    network, tokenizer = load_for_training(model)
    if not dropout:
        _without_dropout(network)
    spec = TrainSpec(**{"lr": 1e-3, "batch_size": 8, "max_length": 16, "threads": 1, **settings})
    return network, fit(network, tokenizer, frame, spec, progress=False)


# --- devices and precision -----------------------------------------------------------------------


@NO_GPU
def test_auto_trains_on_the_cpu_here_and_a_gpu_that_is_not_there_is_refused_before_anything_is_written(
    tiny_model, orig_dir, probes_dir, tmp_path
):
    network, _ = _fit(tiny_model, _frame(8, "train", 5), device="auto")
    assert next(network.parameters()).device.type == "cpu"
    with pytest.raises(SpecError, match=r"device='cuda' asks for a GPU, but torch sees none"):
        _fit(tiny_model, _frame(8, "train", 5), device="cuda")
    with pytest.raises(SpecError, match=r"device='cuda' asks for a GPU"):
        train_source(tiny_model, orig_dir, tmp_path / "src", device="cuda", progress=False)
    with pytest.raises(SpecError, match=r"precision='float16' needs a GPU; on the CPU use 'bfloat16'"):
        train_source(tiny_model, orig_dir, tmp_path / "src", precision="float16", progress=False)
    with pytest.raises(SpecError, match=r"precision='float16' needs a GPU"):
        inoculate(tiny_model, probes_dir, orig_dir, ks=(8,), out=tmp_path / "run", precision="float16", **FAST)
    assert not (tmp_path / "src").exists() and not (tmp_path / "run").exists()
    with pytest.raises(SpecError, match=r"device='gpu' is not a torch device; use 'auto', 'cpu', 'cuda'"):
        TrainSpec(device="gpu")
    with pytest.raises(SpecError, match=r"precision='half' is not allowed; choose one of \['float32', 'bfloat16'"):
        TrainSpec(precision="half")


def test_bfloat16_autocast_learns_on_the_cpu_and_tracks_float32(tiny_model):
    frame = _frame(16, "train", 5)
    _, full = _fit(tiny_model, frame, lr=1e-2, epochs=5)
    _, half = _fit(tiny_model, frame, lr=1e-2, epochs=5, precision="bfloat16")
    assert half["loss"][0] != full["loss"][0]  # autocast really ran the matrix products in bfloat16 ...
    assert half["loss"][0] == pytest.approx(full["loss"][0], abs=0.05)  # ... from the same start
    assert half.tail(2)["loss"].mean() < 0.9 * half.head(2)["loss"].mean()  # it learns ...
    assert half.tail(2)["loss"].mean() == pytest.approx(full.tail(2)["loss"].mean(), abs=0.1)  # ... as float32 does


# --- gradient accumulation and checkpointing -----------------------------------------------------


def test_accumulated_micro_batches_give_the_gradient_of_one_batch_of_all_their_questions(tiny_model):
    network, tokenizer = load_for_training(tiny_model)
    _without_dropout(network).train()
    items = encode(tokenizer, _frame(8, "train", 5), 16)
    pad = tokenizer.pad_token_id

    def gradient(micro: list[list[dict]]) -> tuple[float, list[torch.Tensor]]:
        network.zero_grad(set_to_none=True)
        loss = backward(network, [collate(batch, pad) for batch in micro])
        return loss.item(), [p.grad.clone() for p in network.parameters()]

    whole_loss, whole = gradient([items])
    for split in (4, 5):  # 5 + 3: each micro-batch weighs by its share of the questions, not 1 / accumulate
        loss, parts = gradient([items[:split], items[split:]])
        assert loss == pytest.approx(whole_loss, rel=1e-6)
        assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(parts, whole))


def test_accumulate_two_batches_of_four_trains_like_batches_of_eight(tiny_model):
    frame = _frame(16, "train", 5)
    big_net, big = _fit(tiny_model, frame, dropout=False, batch_size=8, clip=0.0)
    small_net, small = _fit(tiny_model, frame, dropout=False, batch_size=4, accumulate=2, clip=0.0)
    assert small.height == big.height == 2  # optimizer steps of 8 questions either way
    assert small["loss"].to_list() == pytest.approx(big["loss"].to_list(), rel=1e-5)
    for (name, a), b in zip(small_net.named_parameters(), big_net.parameters()):
        if name != "classifier.bias":  # its gradient is 0 up to rounding (a shift of every logit), which Adam scales up
            assert torch.allclose(a, b, atol=1e-5), name


def test_gradient_checkpointing_gives_the_losses_of_plain_training(tiny_model):
    frame = _frame(16, "train", 5)
    _, plain = _fit(tiny_model, frame)
    network, checkpointed = _fit(tiny_model, frame, gradient_checkpointing=True)
    assert checkpointed["loss"].to_list() == pytest.approx(plain["loss"].to_list(), rel=1e-5)  # dropout replayed
    assert not any(getattr(m, "gradient_checkpointing", False) for m in network.modules())  # off again
    _, tokenizer = load_for_training(tiny_model)
    with pytest.raises(WorkbenchError, match="Linear does not support gradient checkpointing; train without it"):
        fit(torch.nn.Linear(2, 2), tokenizer, frame, TrainSpec(gradient_checkpointing=True), progress=False)


# --- the run folder and resume -------------------------------------------------------------------


def test_the_run_folder_records_the_settings_and_a_resume_trains_with_the_recorded_precision(
    tiny_model, probes_dir, orig_dir, tmp_path, monkeypatch
):
    from typer.testing import CliRunner

    from workbench.cli import make_app

    out = tmp_path / "run"
    args = ["inoculate", "--model", str(tiny_model), "--probes", str(probes_dir), "--orig", str(orig_dir),
            "--out", str(out), "--lr", "1e-3", "--epochs", "1", "--batch-size", "4", "--max-length", "16",
            "--threads", "1"]  # fmt: skip
    result = CliRunner().invoke(
        make_app(), [*args, "--k", "8", "--precision", "bfloat16", "--accumulate", "2", "--keep-checkpoints", "none"]
    )
    assert result.exit_code == 0, result.output
    config = json.loads((out / "config.json").read_text())
    assert (config["precision"], config["accumulate"]) == ("bfloat16", 2)
    assert config["machine"] == {"device": "auto", "gradient_checkpointing": False, "keep_checkpoints": "none"}

    specs, real_fit = [], trial_module.fit
    monkeypatch.setattr(trial_module, "fit", lambda *a, **kw: specs.append(a[3]) or real_fit(*a, **kw))
    grown = {"ks": (8, 16), "lrs": (1e-3,), "epochs": (1,), "out": out, "batch_size": 4, "max_length": 16, "threads": 1}
    inoculate(tiny_model, probes_dir, orig_dir, progress=False, **grown)  # a resume: only the new k=16 trains
    assert [(s.precision, s.accumulate, s.batch_size) for s in specs] == [("bfloat16", 2, 4)]
    assert load_run(out)["k"].to_list() == [0, 8, 16]
    assert not list(out.rglob("model.safetensors")) and not (out / "best").exists()  # keep_checkpoints honoured

    with pytest.raises(WorkbenchError, match=r"other settings \(precision: 'bfloat16' -> 'float32'\)"):
        plan_inoculation(tiny_model, probes_dir, orig_dir, precision="float32", **grown)
    plan = plan_inoculation(tiny_model, probes_dir, orig_dir, keep_checkpoints="best", **grown)
    assert plan.data.keep_checkpoints == "best" and plan.data.precision == "bfloat16"  # how may change, what not

    old = {key: value for key, value in config.items() if key not in ("precision", "accumulate", "machine")}
    (out / "config.json").write_text(json.dumps(old))  # a folder from before these settings were recorded
    plan = plan_inoculation(tiny_model, probes_dir, orig_dir, **grown)
    assert (plan.spec.precision, plan.spec.accumulate, plan.spec.keep_checkpoints) == ("float32", 1, "best")


# --- checkpoint retention ------------------------------------------------------------------------


def _finished(out: Path, trials: pl.DataFrame, name: str, avg: float, keep: str) -> pl.DataFrame:
    """What the driver does when trial ``name`` reports: its checkpoint on disk, retention, then its row."""
    checkpoint = out / "trials" / name / "model"
    checkpoint.mkdir(parents=True)
    (checkpoint / "model.safetensors").write_text(name)
    row = {"trial": name, "k": 8, "lr": 1e-3, "epochs": 1, "seed": 0, "add_some": "none", "n_orig_added": 0,
           "S_new": avg, "S_new_test": None, "S_orig": avg, "avg": avg, "final_loss": 1.0, "seconds": 1.0,
           "status": "ok"}  # fmt: skip
    _retain_checkpoint(out, row, trials, keep)
    return pl.concat([trials, pl.DataFrame([row], schema=TRIALS_SCHEMA)])


@pytest.mark.parametrize(
    ("keep", "kept"), [("best", []), ("all", ["a", "c"]), ("none", [])], ids=["best", "all", "none"]
)
def test_checkpoint_retention_keeps_m_star_under_best_and_the_rest_only_when_asked(tmp_path, keep, kept):
    trials = pl.DataFrame(schema=TRIALS_SCHEMA)
    for name, avg in (("a", 0.5), ("b", 0.7), ("c", 0.6)):  # b displaces a, c does not beat b
        trials = _finished(tmp_path, trials, name, avg, keep)
    assert sorted(p.parent.name for p in (tmp_path / "trials").glob("*/model")) == kept
    best = tmp_path / "best" / "k8"
    if keep == "none":
        assert not best.exists()
    else:
        assert json.loads((best / "trial.json").read_text())["trial"] == "b"
        assert (best / "model.safetensors").read_text() == "b"
    for name in kept:
        assert (tmp_path / "trials" / name / "model" / "model.safetensors").read_text() == name


# --- Ray trial resources -------------------------------------------------------------------------


def test_ray_trials_request_one_gpu_each_on_a_gpu_cluster_and_cpus_otherwise():
    gpu_cluster, cpu_cluster = {"CPU": 64.0, "GPU": 8.0}, {"CPU": 16.0}
    assert trial_resources(None, None, None, gpu_cluster) == {"cpu": 1, "gpu": 1}
    assert trial_resources(None, None, 4, cpu_cluster) == {"cpu": 4, "gpu": 0}
    assert trial_resources(0.5, 8, 4, gpu_cluster) == {"cpu": 8, "gpu": 0.5}  # two trials share a GPU
    assert trial_resources(0, None, None, gpu_cluster) == {"cpu": 1, "gpu": 0}
    with pytest.raises(WorkbenchError, match=r"requests 1 GPU\(s\), but the cluster has 0; ask for fewer"):
        trial_resources(1, None, None, cpu_cluster)
    with pytest.raises(WorkbenchError, match=r"requests 32 CPU\(s\), but the cluster has 16"):
        trial_resources(None, 32, None, cpu_cluster)
    with pytest.raises(SpecError, match="trial_gpus=1 is only for backend='ray'"):
        InoculationSpec(trial_gpus=1)
    with pytest.raises(SpecError, match="trial_gpus=-1 is out of range"):
        InoculationSpec(backend="ray", trial_gpus=-1)


# --- the benchmark's small mode ------------------------------------------------------------------


def test_the_inoculation_benchmark_runs_its_small_mode(minilm_path, tmp_path):
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, str(root / "bench" / "run.py"), "inoculation-scale-small", "--records",
                          str(tmp_path)], env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True,
                         timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    (record,) = [json.loads(line) for line in (tmp_path / "inoculation-scale-small.jsonl").read_text().splitlines()]
    rows = {row["measure"]: row for row in record["rows"]}
    for name in ("bert-base", "roberta-large"):
        throughput = rows[f"{name}: fit / bare loop"]
        assert throughput["fit_examples_per_s"] > 0 and throughput["bare_examples_per_s"] > 0
        assert throughput["precision"] == "bfloat16" and throughput["device"] == "cpu"
    grid = rows["inoculate grid"]
    assert grid["trials"] == 2 and grid["checkpoints_kept"] == ["k8"]  # the baseline and k=8
