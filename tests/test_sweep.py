"""Sweeps: a grid planned as a frame of units, run locally and on a local Ray, resumed after a kill, and read back
as a population that PLS fits (tiny random BERTs with the offline MiniLM's tokenizer, toy probe and science sets)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from local_ray import local_ray as start_local_ray
from test_population import ANIMALS, TOOLS, _probes
from tiny_models import tiny_multiple_choice_bert
from typer.testing import CliRunner

from workbench.analysis import PLSSpec, fit_pls, parse_model
from workbench.analysis.populations import population
from workbench.errors import SpecError, WorkbenchError
from workbench.probes.formats import write_probes
from workbench.sweep import plan_sweep, read_grid, run_sweep

pytestmark = pytest.mark.model  # the tokenizer comes from the offline MiniLM
ROOT = Path(__file__).resolve().parents[1]


def _science(folder: Path, n: int = 12, seed: int = 3) -> Path:
    import random

    rng, lines = random.Random(seed), []
    for i in range(n):
        texts, answer = rng.sample(ANIMALS, 3), rng.randrange(4)
        texts.insert(answer, rng.choice(TOOLS))
        choices = [{"text": text, "label": "ABCD"[j]} for j, text in enumerate(texts)]
        lines.append(json.dumps({"id": f"q{i}", "question": {"stem": "which one is a tool?", "choices": choices},
                                 "answerKey": "ABCD"[answer]}))  # fmt: skip
    folder.mkdir(parents=True)
    (folder / "dev.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, minilm_path) -> dict:
    root = tmp_path_factory.mktemp("sweep")
    write_probes(pl.concat([_probes(8, "dev", 2), _probes(8, "test", 4)]), root / "probes")
    return {
        "root": root,
        "tiny1": str(tiny_multiple_choice_bert(root / "tiny1", minilm_path, layers=1)),
        "tiny2": str(tiny_multiple_choice_bert(root / "tiny2", minilm_path, layers=2)),
        "probes": str(root / "probes"),
        "orig": str(_science(root / "orig")),
    }


def _grid(inputs: dict) -> dict:
    return {
        "models": {"tiny1": inputs["tiny1"], "tiny2": {"path": inputs["tiny2"], "scorers": ["mcqa"]}},
        "probes": {"toy": inputs["probes"]},
        "orig": {"science": inputs["orig"]},
        "controls": ["none", "random-weights"],
        "seeds": [0, 1],
    }


@pytest.fixture(scope="module")
def swept(inputs) -> Path:
    """The whole grid swept once, uninterrupted, in this process."""
    out = inputs["root"] / "whole"
    run_sweep(plan_sweep(_grid(inputs), out=out, cache=False), cache=False, progress=False)
    return out


def test_a_plan_is_a_frame_of_units_with_one_model_load_per_model_control_and_seed(inputs, swept, monkeypatch):
    plan = plan_sweep(_grid(inputs), out=inputs["root"] / "fresh", split="dev", cache=False)
    # tiny1: none (first seed only) + random-weights x 2 seeds; tiny2: none, random-weights x 2; each x 2 sets
    assert plan.height == 12 and not plan["done"].any()
    assert plan.filter(pl.col("control") == "none")["seed"].unique().to_list() == [0]
    assert plan["unit"][0] == "tiny1__toy__similarity-auto__none-s0"
    import workbench.scoring

    loads = []
    original = workbench.scoring.load_model
    monkeypatch.setattr(workbench.scoring, "load_model", lambda *a, **k: loads.append(a[:3]) or original(*a, **k))
    summary = run_sweep(plan.filter(pl.col("model") == "tiny1"), cache=False, progress=False)  # split: the plan's
    assert summary["status"].to_list() == ["scored"] * 6
    assert len(loads) == 3  # one load per (model, control, seed), serving both probe sets
    assert summary.filter(pl.col("probe_set") == "toy")["questions"].unique().to_list() == [16]  # dev only
    again = run_sweep(plan, cache=False, progress=False)
    assert again["status"].to_list() == ["skipped"] * 6 + ["scored"] * 6
    assert plan_sweep(_grid(inputs), out=inputs["root"] / "fresh", split="dev", cache=False)["done"].all()
    # another split of the probe sets is other predictions; the science sets keep their orig_split
    other = plan_sweep(_grid(inputs), out=inputs["root"] / "fresh", split="test", cache=False)
    assert other.filter(pl.col("done"))["orig"].all() and other["done"].sum() == 6


def test_grid_mistakes_are_errors_that_name_the_fix(inputs, tmp_path):
    with pytest.raises(SpecError, match="unknown keys"):
        read_grid({"modles": {}})
    with pytest.raises(SpecError, match="needs a path"):
        read_grid({"models": {"m": {"scorers": ["mcqa"]}}, "probes": {"p": "x"}})
    with pytest.raises(SpecError, match="no probe sets"):
        read_grid({"models": {"m": "x"}})
    with pytest.raises(SpecError, match="give the model its own"):
        plan_sweep({**_grid(inputs), "controls": ["static-embeddings"], "models": {"t": inputs["tiny2"]},
                    "scorers": ["mcqa"]}, out=tmp_path)  # fmt: skip
    grid = tmp_path / "grid.toml"
    grid.write_text(f'seeds = [0]\n[models]\nt = "{inputs["tiny1"]}"\n[probes]\np = "{inputs["probes"]}"\n')
    assert plan_sweep(grid, out=tmp_path / "s").height == 1


def test_a_model_s_own_seeds_replace_the_grid_s_for_that_model_only(inputs, tmp_path):
    grid = _grid(inputs)
    grid["models"] = {**grid["models"], "tiny1": {"path": inputs["tiny1"], "seeds": [1]}}
    plan = plan_sweep(grid, out=tmp_path, cache=False)
    seeds = dict(plan.group_by("model").agg(pl.col("seed").unique().sort()).iter_rows())
    assert seeds == {"tiny1": [1], "tiny2": [0, 1]}  # control "none" takes the model's first seed
    assert plan.filter(pl.col("model") == "tiny1")["unit"].unique().sort().to_list() == [
        f"tiny1__{name}__similarity-auto__{control}-s1" for name in ("science", "toy")
        for control in ("none", "random-weights")]  # fmt: skip
    for bad in (-1, "x"):
        grid["models"]["tiny1"]["seeds"] = [0, bad]
        with pytest.raises(SpecError, match=f"model 'tiny1': seed {bad!r} is out of range"):
            read_grid(grid)


def _stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (state T in /proc/PID/stat)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"


def test_a_sweep_killed_after_its_first_unit_resumes_to_identical_files(inputs, swept, cli):
    out = inputs["root"] / "killed"
    script = (
        "import os, signal, sys\n"
        "from workbench.sweep import plan_sweep, run_sweep\n"
        f"plan = plan_sweep({_grid(inputs)!r}, out={str(out)!r}, cache=False)\n"
        "run_sweep(plan, cache=False, progress=False, on_unit=lambda row: os.kill(os.getpid(), signal.SIGSTOP))\n"
    )  # the sweep stops itself once its first unit is recorded, so the kill below lands mid-sweep, every time
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", script], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        # on_unit runs once a group (one model load) has written all its units: wait until the sweep has stopped
        # itself, not for its first record, or the kill lands while the group writes its next file (seen in a run)
        while not _stopped(process.pid) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
    finally:
        process.kill()
    assert process.wait() == -signal.SIGKILL
    recorded = list((out / "units").glob("*.json"))
    assert 0 < len(recorded) < 12
    result = CliRunner().invoke(cli, ["sweep", "--out", str(out), "--model", f"tiny1={inputs['tiny1']}", "--probes",
                         f"toy={inputs['probes']}", "--orig", f"science={inputs['orig']}", "--controls",
                         "none,random-weights", "--seeds", "0,1", "--no-cache",
                         "--model", f"tiny2={inputs['tiny2']}", "--where", "model = 'tiny1'"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "skipped" in result.output and "scored" in result.output
    run_sweep(plan_sweep(_grid(inputs), out=out, cache=False), cache=False, progress=False)  # tiny2 as mcqa
    files = sorted(path.name for path in (swept / "predictions").iterdir())
    assert files == sorted(path.name for path in (out / "predictions").iterdir())
    for name in files:
        assert (swept / "predictions" / name).read_bytes() == (out / "predictions" / name).read_bytes()


def test_the_population_of_a_sweep_and_an_inoculation_run_fits_a_path_model(inputs, swept, cli, tmp_path):
    from workbench.inoculation import inoculate

    run = inputs["root"] / "inoc"
    write_probes(pl.concat([_probes(16, "train", 1), _probes(8, "dev", 2)]), inputs["root"] / "train-probes")
    (inputs["root"] / "orig-train").mkdir()
    for split in ("dev", "train"):
        (inputs["root"] / "orig-train" / f"{split}.jsonl").write_text((Path(inputs["orig"]) / "dev.jsonl").read_text())
    inoculate(inputs["tiny2"], inputs["root"] / "train-probes", inputs["root"] / "orig-train", ks=(8,),
              lrs=(1e-3, 3e-3), epochs=(1,), out=run, batch_size=8, max_length=16, progress=False,
              keep_checkpoints="all")  # fmt: skip
    from inprocess import refused, workbench

    refused(workbench("train-source", "--model", inputs["tiny1"], "--data", inputs["orig"], "--out", run),
            "already holds an inoculation run")  # its config.json would have been overwritten  # fmt: skip
    checkpoints = inputs["root"] / "checkpoints"
    plan = plan_sweep({"runs": [str(run)], "probes": {"toy": inputs["probes"]}, "orig": {"science": inputs["orig"]}},
                      out=checkpoints, cache=False)  # fmt: skip
    assert plan["origin"].unique().to_list() == ["checkpoint"] and plan.height == 4  # 2 trials x 2 sets, mcqa
    run_sweep(plan, cache=False, progress=False)

    frame = population(sweeps=[swept, checkpoints])
    assert frame.height == 6 + 2  # tiny1: none, rw s0, rw s1; tiny2: none, rw s0, rw s1; 2 checkpoints
    assert frame.filter(pl.col("control") == "random-weights")["seed"].sort().to_list() == [0, 0, 1, 1]
    inoculated = frame.filter(pl.col("origin") == "inoculation").sort("trial")
    assert inoculated["k"].to_list() == [8, 8] and inoculated["lr"].to_list() == [1e-3, 3e-3]
    preds = pl.read_parquet(swept / "predictions" / "tiny1__science__similarity-auto__random-weights-s1.parquet")
    member = frame.filter((pl.col("model") == "tiny1") & (pl.col("seed") == 1)).row(0, named=True)
    assert member["orig"] == pytest.approx(preds["correct"].mean())

    table = tmp_path / "population.csv"
    result = CliRunner().invoke(cli, ["population", "--sweep", str(swept), "--sweep", str(checkpoints), "--out",
                                      str(table)])  # fmt: skip
    assert result.exit_code == 0, result.output
    text = "TAXONOMY =~ hypernymy\nDEFINITIONS =~ definitions\nSCIENCE =~ orig\nSCIENCE ~ TAXONOMY + DEFINITIONS"
    fitted = fit_pls(pl.read_csv(table), parse_model(text), PLSSpec(bootstrap=0))
    assert fitted.n_rows == 8 and fitted.paths.height == 2
    (tmp_path / "model.txt").write_text(text)
    model = tmp_path / "model.txt"
    result = CliRunner().invoke(cli, ["pls", "--data", str(table), "--model", str(model), "--bootstrap", "20"])
    assert result.exit_code == 0 and "GoF" in result.output, result.output
    with pytest.raises(WorkbenchError, match="no finished sweep units"):
        population(sweeps=[tmp_path])


def test_a_causal_lm_member_is_scored_by_the_causal_scorer_as_score_scores_it(inputs, tmp_path):
    """A grid model with ``scorers: ["causal"]`` (as notebook 10 adds SmolLM2; a tiny random GPT-2 here) is swept
    with the causal scorer, and its predictions are those ``workbench.scoring.score`` gives on the same questions."""
    import torch
    from test_scoring_lm import byte_bpe
    from transformers import GPT2Config, GPT2LMHeadModel

    from workbench.probes.formats import read_probes
    from workbench.scoring import score

    lm = tmp_path / "tiny-gpt2"
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=400, n_positions=128, n_embd=32, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0)
    GPT2LMHeadModel(config).save_pretrained(lm)
    byte_bpe().save_pretrained(lm)
    grid = {"models": {"gpt2": {"path": str(lm), "scorers": ["causal"], "controls": ["none"]}},
            "probes": {"toy": inputs["probes"]}, "orig": {"science": inputs["orig"]}}  # fmt: skip
    plan = plan_sweep(grid, out=tmp_path / "sweep", split="dev", cache=False)
    assert sorted(plan["unit"]) == ["gpt2__science__causal-auto__none-s0", "gpt2__toy__causal-auto__none-s0"]
    assert run_sweep(plan, cache=False, progress=False)["status"].to_list() == ["scored", "scored"]
    swept = pl.read_parquet(tmp_path / "sweep" / "predictions" / "gpt2__toy__causal-auto__none-s0.parquet")
    direct = score(read_probes(inputs["probes"]).filter(pl.col("split") == "dev"), str(lm), scorer="causal",
                   cache=False, progress=False)  # fmt: skip
    assert swept.height == 16 and swept.select("id", "scores", "pred").equals(direct.select("id", "scores", "pred"))
    assert population(sweeps=[tmp_path / "sweep"])["model"].to_list() == ["gpt2"]


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray (2 CPUs) for this module's Ray tests, shut down after them (started as under load)."""
    with start_local_ray(cpus=2) as ray:
        yield ray


def test_a_sweep_on_a_local_ray_writes_the_files_a_local_sweep_writes(inputs, swept, local_ray):
    out = inputs["root"] / "ray"
    plan = plan_sweep(_grid(inputs), out=out, cache=False).filter(
        (pl.col("model") == "tiny1") & (pl.col("control") == "random-weights") & (pl.col("seed") == 1)
    )  # two units, one model load: one Ray trial
    summary = run_sweep(plan, backend="ray", workers=2, cache=False, progress=False)
    assert summary["status"].to_list() == ["scored", "scored"]
    for name in plan["unit"]:
        assert (out / "predictions" / f"{name}.parquet").read_bytes() == (
            swept / "predictions" / f"{name}.parquet"
        ).read_bytes()
    assert (out / "ray").is_dir()
    assert run_sweep(plan, backend="ray", cache=False, progress=False)["status"].to_list() == ["skipped"] * 2


def test_decodability_relates_each_concept_s_decoded_class_to_its_cluster_s_strict_accuracy(inputs):
    from types import SimpleNamespace

    from workbench.analysis.decodability import association, decodability
    from workbench.schema import PREDICTION_SCHEMA

    words = ANIMALS + TOOLS
    rows = [{**{name: None for name in PREDICTION_SCHEMA}, "id": f"{word}{i}", "probe": "hypernymy",
             "cluster_id": f"hypernymy:{word}", "concept": f"{word}.n.01", "word": word,
             "context": f"the {word} was there .", "choices": ["a", "b"], "answer": 0, "chain": [f"{word}.n.01", "x"],
             "model": "tiny1", "scorer": "similarity", "control": "none", "correct": word in ANIMALS or i == 0}
            for word in words for i in range(2)]  # fmt: skip
    preds = pl.DataFrame(rows, schema=PREDICTION_SCHEMA)
    graph = SimpleNamespace(concepts=pl.DataFrame({"name": [f"{w}.n.01" for w in words],
                                                   "lexname": ["noun.animal" if w in ANIMALS else "noun.artifact"
                                                               for w in words]}))  # fmt: skip
    result = decodability(preds, inputs["tiny1"], graph, folds=3, n_boot=50, epochs=2, progress=False)
    concepts = result["concepts"]
    assert concepts.height == len(words) and set(concepts.columns) >= {"label", "decoded", "bits", "strict"}
    assert concepts.filter(pl.col("label") == "noun.animal")["strict"].to_list() == [1.0] * len(ANIMALS)
    summary = result["summary"].row(0, named=True)
    assert summary["concepts"] == len(words) and summary["majority"] == 0.5 and summary["compression"] > 0
    row = result["association"].row(0, named=True)
    assert row["n_concepts"] == len(words) and row["gap_lo"] <= row["gap"] <= row["gap_hi"]
    # decoded concepts all strict, undecoded none: a gap of 1 in every resample
    made = pl.DataFrame({"probe": ["p"] * 6, "strict": [1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
                         "decoded": [True] * 3 + [False] * 3, "bits": [0.1, 0.2, 0.3, 2.0, 3.0, 4.0]})  # fmt: skip
    exact = association(made, n_boot=100).row(0, named=True)
    assert exact["gap"] == 1.0 and exact["gap_hi"] == 1.0 and exact["correlation"] > 0.8
    with pytest.raises(WorkbenchError, match="one model"):
        decodability(pl.concat([preds, preds.with_columns(model=pl.lit("other"))]), inputs["tiny1"], graph)


def test_ways_of_asking_are_units_of_their_own_with_shots_from_the_probe_folders_train_split(tmp_path, released_dir):
    """``ways`` in a grid: one unit per way of asking a causal LM, named by it, scored as ``score`` scores it with
    the probe folder's train split as the shots' pool."""
    import torch
    from test_scoring_lm import byte_bpe
    from transformers import GPT2Config, GPT2LMHeadModel

    from workbench.probes.formats import read_probes
    from workbench.scoring import score

    lm = tmp_path / "tiny-gpt2"
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=400, n_positions=1024, n_embd=32, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0
    )
    GPT2LMHeadModel(config).save_pretrained(lm)
    byte_bpe().save_pretrained(lm)
    train = read_probes(released_dir / "hypernymy_train.jsonl").head(200)
    write_probes(pl.concat([train, read_probes(released_dir / "hypernymy_test.jsonl").head(6)]), tmp_path / "probes")
    ways = ["cloze/0-shot/plain", "letters/2-shot/plain"]
    model = {"path": str(lm), "scorers": ["causal"], "ways": ways}
    grid = {"models": {"gpt2": model}, "probes": {"hyp": str(tmp_path / "probes")}}
    plan = plan_sweep(grid, out=tmp_path / "sweep", split="test", cache=False)
    lettered_unit = "gpt2__hyp__causal-auto__none-s0__letters+2-shot+plain"
    assert sorted(plan["unit"]) == ["gpt2__hyp__causal-auto__none-s0", lettered_unit]
    assert run_sweep(plan, cache=False, progress=False)["status"].to_list() == ["scored", "scored"]
    lettered = pl.read_parquet(tmp_path / "sweep" / "predictions" / f"{lettered_unit}.parquet")
    assert lettered["asking"][0].startswith("letters/2-shot/plain/shots=")
    probes = read_probes(tmp_path / "probes")
    direct = score(
        probes.filter(pl.col("split") == "test"), str(lm), scorer="causal", format="letters", shots=2,
        shot_pool=probes.filter(pl.col("split") == "train"), cache=False, progress=False,
    )  # fmt: skip
    assert lettered.select("id", "scores", "asking", "prompt").equals(direct.select("id", "scores", "asking", "prompt"))
    bad = {**grid, "models": {"gpt2": {**model, "ways": ["letters/five/chat"]}}}
    with pytest.raises(SpecError, match="does not name a way of asking"):
        plan_sweep(bad, out=tmp_path / "bad", cache=False)


def test_sweep_mistakes_of_issue_42_are_one_line_before_any_unit_is_scored(inputs, tmp_path):
    """Grids of the wrong shape, a model path to nothing, a name given twice, rule all, an output inside a probe
    set, a bad --where, a 250-character name: each one line naming the fix, nothing written."""
    from inprocess import refused, workbench

    out = tmp_path / "out"
    base = ("sweep", "--out", out, "--probes", f"toy={inputs['probes']}", "--no-cache")
    grids = {"list.json": "[1, 2]", "models.toml": 'models = "x"', "bad.json": '{"models": {', "bad.yaml": "a: [1",
             "twice.json": '{"models": {"m": "a", "m": "b"}}', "twice.yaml": "models:\n  m: a\n  m: b\n",
             "runs.toml": f'runs = "nothere"\n[probes]\ntoy = "{inputs["probes"]}"'}  # fmt: skip
    expected = {"list.json": "is not a table of settings", "models.toml": "models must be a table",
                "bad.json": "is not valid JSON", "bad.yaml": "is not valid YAML", "twice.json": "given twice",
                "twice.yaml": "given twice", "runs.toml": "nothere is not an inoculation run"}  # fmt: skip
    for name, text in grids.items():
        (tmp_path / name).write_text(text)
        refused(workbench("sweep", "--out", out, "--grid", tmp_path / name), expected[name])
    refused(workbench(*base, "--model", "m=/no/such/model"), "no model at /no/such/model")
    refused(workbench(*base, "--model", f"m={inputs['tiny1']}", "--model", f"m={inputs['tiny2']}"),
            "--model names 'm' twice")  # fmt: skip
    refused(workbench(*base, "--model", f"m={inputs['tiny1']}", "--scorers", "mcqa", "--rules", "all"),
            "rule 'all' would give one accuracy over several rules")  # fmt: skip
    refused(workbench("sweep", "--out", Path(inputs["probes"]) / "sweep", "--probes", f"toy={inputs['probes']}",
                      "--model", f"m={inputs['tiny1']}"), "lies inside the input folder")  # fmt: skip
    for where in ("nosuchcolumn = 1", "model = = 'x'"):
        refused(workbench(*base, "--model", f"m={inputs['tiny1']}", "--where", where), "is not a condition")
    refused(workbench(*base, "--model", f"{'m' * 250}={inputs['tiny1']}"), "is 250 characters long")
    refused(workbench(*base, "--model", f"a/b={inputs['tiny1']}"), "cannot be part of a file name")
    other = tmp_path / "not-probes"
    other.mkdir()
    (other / "notes.txt").write_text("a folder of other things is refused, not hashed")
    refused(workbench("sweep", "--out", out, "--probes", f"p={other}", "--model", f"m={inputs['tiny1']}"),
            "holds no probe files")  # fmt: skip
    assert not out.exists() and not (Path(inputs["probes"]) / "sweep").exists()


def test_a_damaged_unit_record_or_a_swapped_prediction_file_is_scored_again(inputs, swept, tmp_path):
    """A truncated record (the sweep and population used to stop on it) is set aside and its unit scored again;
    another unit's prediction file copied over a unit's is scored again, not skipped on the record's word."""
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(swept, out)
    grid = {**_grid(inputs), "controls": ["none"], "models": {"tiny1": inputs["tiny1"]}}
    units = {
        name: out / "predictions" / f"tiny1__{name}__similarity-auto__none-s0.parquet" for name in ("toy", "science")
    }
    record = out / "units" / f"{units['toy'].stem}.json"
    record.write_bytes(record.read_bytes()[:40])
    shutil.copyfile(units["toy"], units["science"])
    with pytest.warns(UserWarning, match="is damaged"):
        plan = plan_sweep(grid, out=out, cache=False)
    assert not plan["done"].any() and (record.parent / f"{record.name}.damaged").is_file()
    assert run_sweep(plan, cache=False, progress=False)["status"].to_list() == ["scored", "scored"]
    for path in units.values():
        assert path.read_bytes() == (swept / "predictions" / path.name).read_bytes()
    assert plan_sweep(grid, out=out, cache=False)["done"].all()
    assert population(sweeps=[out]).height == 6


def test_population_warns_of_units_scored_on_files_that_changed_since(inputs, tmp_path):
    """A probe set rewritten after the sweep: population names the units whose scores are of the old files and the
    command that scores them again; once rerun, or for records kept before records held their inputs, it is quiet."""
    import warnings

    probes = tmp_path / "probes"
    write_probes(_probes(8, "dev", 2), probes)
    grid = {"models": {"tiny1": inputs["tiny1"]}, "probes": {"toy": str(probes)}}
    out = tmp_path / "sweep"
    run_sweep(plan_sweep(grid, out=out, split="dev", cache=False), cache=False, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        before = population(sweeps=[out])
    write_probes(_probes(8, "dev", 5), probes)  # other questions under the same names
    with pytest.warns(UserWarning, match=r"1 unit\(s\) were scored on model or probe files that have changed since "
                      r"\(tiny1__toy__similarity-auto__none-s0\).*rerun `workbench sweep` on"):  # fmt: skip
        assert population(sweeps=[out]).equals(before)
    assert run_sweep(plan_sweep(grid, out=out, split="dev", cache=False), cache=False,
                     progress=False)["status"].to_list() == ["scored"]  # fmt: skip
    record = out / "units" / "tiny1__toy__similarity-auto__none-s0.json"
    kept = json.loads(record.read_text())
    assert kept["inputs"]["probes"] == str(probes) and "endpoint" in kept["inputs"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        population(sweeps=[out])
        write_probes(_probes(8, "dev", 7), probes)
        record.write_text(json.dumps({key: value for key, value in kept.items() if key != "inputs"}))
        population(sweeps=[out])  # an older record: nothing to compare with


def test_population_members_are_identities_not_labels(inputs, tmp_path):
    """Two sweeps naming different models ``m`` are two members whatever the order of the arguments; two probe
    sets of one probe in one grid are two columns, never pooled; one member's probe held twice is refused."""
    from inprocess import refused, workbench

    for name, model in (("a", inputs["tiny1"]), ("b", inputs["tiny2"])):
        grid = {"models": {"m": model}, "probes": {"toy": inputs["probes"]}}
        run_sweep(plan_sweep(grid, out=tmp_path / name, split="dev", cache=False), cache=False, progress=False)
    forward = population(sweeps=[tmp_path / "a", tmp_path / "b"])
    backward = population(sweeps=[tmp_path / "b", tmp_path / "a"])
    assert forward.height == 2 and forward["unit"].n_unique() == 2 and forward["unit"].str.contains(" #").all()
    assert forward.sort("fingerprint").equals(backward.sort("fingerprint").with_columns(source=forward.sort(
        "fingerprint")["source"]))  # fmt: skip
    for name in ("a", "b"):
        file = next((tmp_path / name / "predictions").glob("*.parquet"))
        assert population(sweeps=[tmp_path / name])["hypernymy"][0] == pytest.approx(
            pl.read_parquet(file).filter(pl.col("probe") == "hypernymy")["correct"].mean())  # fmt: skip

    other = tmp_path / "other-probes"
    write_probes(pl.concat([_probes(6, "dev", 7)]), other)
    grid = {"models": {"m": inputs["tiny1"]}, "probes": {"toy": inputs["probes"], "other": str(other)}}
    run_sweep(plan_sweep(grid, out=tmp_path / "two", split="dev", cache=False), cache=False, progress=False)
    frame = population(sweeps=[tmp_path / "two"])
    assert {"hypernymy@toy", "hypernymy@other", "definitions@toy", "definitions@other"} <= set(frame.columns)
    assert "hypernymy" not in frame.columns

    file = next((tmp_path / "a" / "predictions").glob("*.parquet"))
    copy = tmp_path / "copy.parquet"
    copy.write_bytes(file.read_bytes())
    refused(workbench("population", "--predictions", file, "--predictions", copy, "--out", tmp_path / "p.parquet"),
            "both hold")  # fmt: skip
    code, out, err = workbench("population", "--predictions", file, "--out", tmp_path / "p.parquet")
    assert code == 0 and "1 models" in out, err  # the README's command (was ColumnNotFoundError "trial")
    assert pl.read_parquet(tmp_path / "p.parquet")["unit"].to_list() == ["m [similarity, cosine, none]"]


def test_a_grid_read_again_reads_the_same_served_model_included(inputs):
    served = {"path": "http://127.0.0.1:9/v1", "scorers": ["generate"], "bos": "<s>", "concurrency": 2, "timeout": 30}
    grid = {**_grid(inputs), "models": {"tiny1": inputs["tiny1"], "served": served}}
    once = read_grid(grid)
    assert read_grid(once) == once and once["models"]["served"]["timeout"] == 30
    with pytest.raises(SpecError, match=r"model 'served': a served model answers the scorers .*not \['mcqa'\]"):
        read_grid({**grid, "models": {"served": {**served, "scorers": ["mcqa"]}}})
    with pytest.raises(SpecError, match=r"model 'served': timeout='30' is out of range"):
        read_grid({**grid, "models": {"served": {**served, "timeout": "30"}}})
