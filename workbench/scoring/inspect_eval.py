"""Interoperability with UK AISI's Inspect (``inspect-ai``): our probes as its tasks, its logs as our predictions,
and our predictions as its logs.

``export_inspect`` writes a folder that ``inspect eval DIR/task.py --model PROVIDER/MODEL`` runs unchanged: one
task per probe (``workbench_<probe>``), each question an Inspect sample (our id, the choices, the gold's letter as
target, every probe column in its metadata), asked with Inspect's ``multiple_choice`` solver and scored with its
``choice`` scorer. The multiple-choice template is our letters prompt (the packaged ``inspect.json`` templates
by default: Inspect's own single-answer template, choices listed ``A) ...``); shots are turns of the sample's chat
before the question, a system instruction its system message; the chat template is the provider's. The folder
keeps the prompt templates (``prompts.json``), so ``workbench score --scorer generate --format letters
--chat-template auto --prompts DIR/prompts.json`` asks a served model exactly what Inspect asks it. Log-likelihood
cloze cannot be asked through Inspect's providers: ``export_lm_eval`` writes it for lm-evaluation-harness.

``import_inspect`` reads logs with Inspect's own reader (``inspect_ai.log``) into a prediction frame (scorer
``inspect``, rule ``choice``; or, for a log ``export_inspect_log`` wrote, the scorer and rule it came from): each
question matched to the probe set by its identity (id, text and choices), the pick, the messages the model saw
(``prompt``, as JSON), what it answered (``generated``), the model, provider and run as Inspect records them
(``served``). ``export_inspect_log`` writes a prediction frame as an Inspect log with Inspect's own writer, for
``inspect view``.

>>> export_inspect(read_probes("hypernymy_test.jsonl"), "task/")  # doctest: +SKIP
>>> preds = import_inspect("logs/", probes)  # doctest: +SKIP
>>> export_inspect_log(preds, "ours.eval")  # doctest: +SKIP
"""

import datetime
import hashlib
import json
import os
import warnings
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

import polars as pl

from workbench.errors import WorkbenchError
from workbench.io import atomic_path, inside, staged_folder, write_text
from workbench.probes.templates import _parsed
from workbench.schema import PREDICTION_SCHEMA, PROBE_SCHEMA, conform, model_label
from workbench.scoring import asking_label
from workbench.scoring.asking import LETTERS, Asking, Shots, chats
from workbench.scoring.harness import task_name
from workbench.scoring.prompts import PromptTemplates, load_prompts

MANIFEST = "workbench_inspect.json"
"""The export folder's record of what it wrote (``io.folder_kind`` knows the folder by it)."""
TASK_FILE = "task.py"
PROMPTS_FILE = "prompts.json"
GENERATOR = "workbench export inspect"
SCORER, RULE = "inspect", "choice"
"""An Inspect run's predictions: scorer ``inspect``, rule ``choice`` (its scorer's name)."""
OURS = "workbench"
"""The scorer name (and metadata key) of a log written from our predictions (``export_inspect_log``)."""
LOG_VERSIONS = (2,)
"""The Inspect log format versions read here (``EvalLog.version``); a newer one is refused."""
CHOICE_LINE = "{letter}) {choice}"
"""How Inspect's ``multiple_choice`` lists a choice (``answer_options``): a letters template must list them so."""
MAX_TOKENS = 16
"""Tokens an answer may take (the generate scorer's default ``max_new_tokens``); generation stops at a newline."""


def inspect_prompts() -> Path:
    """The packaged prompt templates whose letters prompt is Inspect's multiple-choice template."""
    return Path(str(resources.files("workbench.scoring").joinpath("prompt_templates", "inspect.json")))


def export_inspect(
    probes: pl.DataFrame,
    out: str | Path,
    prompts: str | Path | None = None,
    asking: Asking = Asking("letters", chat_template="auto"),
    shots: Shots | None = None,
    max_tokens: int = MAX_TOKENS,
) -> list[Path]:
    """Write an Inspect task folder for ``probes`` into ``out`` (replaced whole); the written paths.

    ``prompts``: our prompt templates (None: the packaged ``inspect_prompts()``); each probe's letters prompt
    becomes its task's ``multiple_choice`` template, so its lines must be ``{letter}) {choice}`` as Inspect lists
    choices. ``asking``: letters through the provider's chat template, with its ``shots`` (drawn by ``draw_shots``;
    shared or per question) as chat turns and its system instruction as the system message.

    >>> sorted(path.name for path in export_inspect(probes, "task"))  # doctest: +SKIP
    ['prompts.json', 'task.py', 'workbench_hypernymy.jsonl', 'workbench_inspect.json']
    """
    if asking.format != "letters":
        raise WorkbenchError(
            "Inspect asks multiple choice as lettered choices (its multiple_choice solver); log-likelihood cloze is "
            "ours and lm-eval's: export it with `workbench export lm-eval`, or export --format letters"
        )
    if asking.chat_template != "auto":
        raise WorkbenchError(
            "Inspect asks every model through its chat API, with the provider's chat template: export with "
            "--chat-template auto (ask a plain prompt with `workbench score` or lm-eval)"
        )
    if (asking.shots > 0) != (shots is not None):
        raise WorkbenchError(f"asking for {asking.shots} shots needs the drawn shots (draw_shots), and only then")
    if not 1 <= max_tokens <= 4096:
        raise WorkbenchError(f"max_tokens={max_tokens} is out of range; use 1 to 4096")
    probes = conform(probes, PROBE_SCHEMA, "probe frame")
    if probes.is_empty():
        raise WorkbenchError("the probe frame holds no questions; export a probe set with some")
    source = Path(prompts) if prompts is not None else inspect_prompts()
    templates = load_prompts(source)
    widest = probes["choices"].list.len().max()
    if widest > len(LETTERS):
        raise WorkbenchError(f"a question here has {widest} choices, more than the {len(LETTERS)} letters")
    tasks = {probe: task_name(probe) for probe in probes["probe"].unique(maintain_order=True)}
    if len(set(tasks.values())) < len(tasks):
        raise WorkbenchError(
            f"the probes {sorted(tasks)} give one task name twice {sorted(tasks.values())}; rename one"
        )
    forms = {probe: _template(templates, probe, source) for probe in tasks}
    messages = chats(probes, templates, asking, shots)
    records = [
        _record(row, conversation, f"{row['id']}#{n}" if n else row["id"])
        for row, conversation, n in zip(probes.iter_rows(named=True), messages, _occurrence(probes))
    ]
    folder = Path(out)
    with staged_folder(folder) as staging:
        written = []
        for probe, task in tasks.items():
            lines = "".join(
                json.dumps(record, ensure_ascii=False) + "\n"
                for record in records
                if record["metadata"]["probe"] == probe
            )
            written.append(write_text(lines, inside(staging, f"{task}.jsonl")))
        written.append(write_text(source.read_text(encoding="utf-8"), staging / PROMPTS_FILE))
        task_file = _task_file(tasks, forms, asking_label(asking, shots), max_tokens, probes.height)
        written.append(write_text(task_file, staging / TASK_FILE))
        manifest = {
            "generator": GENERATOR,
            "tasks": sorted(tasks.values()),
            "asking": asking_label(asking, shots),
            "questions": probes.height,
            "files": sorted(path.name for path in written),
        }
        write_text(json.dumps(manifest, indent=1) + "\n", staging / MANIFEST)
    return [folder / path.name for path in written] + [folder / MANIFEST]


def inspect_command(out: str | Path, model: str = "openai-api/local/MODEL --model-base-url URL") -> str:
    """The Inspect command line that runs an exported task folder from here (the model and its server are the
    user's; a server's key in ``LOCAL_API_KEY`` for ``openai-api/local/...``). The task's path is relative:
    Inspect 0.3.285 on Python 3.11 fails on an absolute one (``Path.glob``: "Non-relative patterns are
    unsupported").

    >>> inspect_command("t")
    'inspect eval t/task.py --model openai-api/local/MODEL --model-base-url URL'
    """
    return f"inspect eval {os.path.relpath(Path(out) / TASK_FILE)} --model {model}"


def score_command(out: str | Path, probes: str | Path, asking: Asking, shots_from: str | Path | None = None,
                  max_tokens: int = MAX_TOKENS, url: str = "URL") -> str:  # fmt: skip
    """Our ``workbench score`` line that asks a served model what the exported task asks it."""
    line = (f"workbench score --model {url} --scorer generate --format letters --chat-template auto "
            f"--prompts {Path(out) / PROMPTS_FILE} --max-new-tokens {max_tokens} --probes {probes}")  # fmt: skip
    if asking.shots:
        line += f" --shots {asking.shots} --shot-seed {asking.shot_seed}"
        line += f" --shots-from {shots_from}" if shots_from is not None else ""
        line += " --shots-per-question" if asking.shots_per_question else ""
    if asking.system is not None:
        line += f" --system {json.dumps(asking.system, ensure_ascii=False)}"
    return line


def _occurrence(probes: pl.DataFrame) -> list[int]:
    """Each row's count of earlier rows with its id (released files reuse ids; Inspect's sample ids are unique)."""
    return probes.select(pl.int_range(pl.len()).over("id"))["literal"].to_list()


def _template(templates: PromptTemplates, probe: str, source: Path) -> str:
    """A probe's letters prompt as Inspect's ``multiple_choice`` template (``str.format`` fields, braces escaped)."""
    entry = templates.letters.get(probe, templates.letters["default"])
    if entry["line"] != CHOICE_LINE:
        raise WorkbenchError(
            f"{source}: the letters line of {probe} is {entry['line']!r}, where Inspect's multiple_choice lists each "
            f"choice as {CHOICE_LINE!r}; use that line, or leave out --prompts for the packaged Inspect templates"
        )
    literals, names = _parsed(entry["prompt"])
    if not {"question", "choices"} <= set(names):
        raise WorkbenchError(f"{source}: the letters prompt of {probe} must hold {{question}} and {{choices}}, as "
                             "Inspect's multiple_choice template does")  # fmt: skip
    escaped = [text.replace("{", "{{").replace("}", "}}") for text in literals]
    return "".join(text + "{" + name + "}" for text, name in zip(escaped, names)) + escaped[-1]


def _record(row: dict, conversation: list[dict], sample_id: str) -> dict:
    """One question as an Inspect dataset record: the chat before the question, the question (``multiple_choice``
    lists the choices after it), the choices, the gold's letter, the probe columns as metadata."""
    before = conversation[:-1]
    question = row["question"]
    return {
        "id": sample_id,
        "input": [*before, {"role": "user", "content": question}] if before else question,
        "choices": row["choices"],
        "target": LETTERS[row["answer"]],
        "metadata": {column: row[column] for column in PROBE_SCHEMA},
    }


def _task_file(tasks: dict[str, str], forms: dict[str, str], asked: str, max_tokens: int, count: int) -> str:
    functions = "".join(
        f"\n\n@task\ndef {task}() -> Task:\n    return _task({json.dumps(probe, ensure_ascii=False)}, "
        f"{json.dumps(task)})\n"
        for probe, task in tasks.items()
    )
    return f'''"""Written by `{GENERATOR}`: {count} questions asked {asked} (Inspect's multiple_choice
solver and choice scorer, the provider's chat template, temperature 0). Run with
    inspect eval task.py --model openai-api/local/MODEL --model-base-url http://HOST:PORT/v1  (key: LOCAL_API_KEY)
and read the log back with `workbench import inspect LOG --probes PROBES`."""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice

HERE = Path(__file__).parent
TEMPLATES = {json.dumps(forms, ensure_ascii=False, indent=4)}
CONFIG = GenerateConfig(temperature=0.0, max_tokens={max_tokens}, stop_seqs=["\\n"])


def _task(probe: str, name: str) -> Task:
    return Task(
        dataset=json_dataset(str(HERE / f"{{name}}.jsonl"), name=name),
        solver=multiple_choice(template=TEMPLATES[probe]),
        scorer=choice(),
        config=CONFIG,
        name=name,
        metadata={{"{OURS}": {{"generator": "{GENERATOR}", "probe": probe, "asking": {json.dumps(asked)}}}}},
    )
{functions}'''


def import_inspect(logs: str | Path, probes: pl.DataFrame, name: str | None = None) -> pl.DataFrame:
    """The predictions in Inspect logs (a ``.eval``/``.json`` log, or a folder of them) of tasks written by
    ``export_inspect`` (or logs written by ``export_inspect_log``), each question matched to ``probes``.

    Refused in one line: a log of another task, a question not in ``probes`` or changed since the export, a sample
    that ended in an error, a log format newer than Inspect's here. A log cut short (an interrupted eval) gives
    the questions it holds, with a warning saying how many. ``name``: the model's label (default: the model's
    name as Inspect records it, without its provider).
    """
    from inspect_ai.log import list_eval_logs

    path = Path(logs)
    if path.is_dir():
        files = [Path(info.name.removeprefix("file://")) for info in list_eval_logs(str(path.resolve()))]
        if not files:
            raise WorkbenchError(f"{path} holds no Inspect logs (.eval or .json); pass a log or the folder of logs")
    elif path.is_file():
        files = [path]
    else:
        raise WorkbenchError(f"{path} does not exist; pass an Inspect log (.eval or .json) or a folder of them")
    probes = conform(probes, PROBE_SCHEMA, "probe set")
    frame = pl.concat([_read_log(file, probes, name) for file in sorted(files)])
    twice = frame.select("model", "fingerprint", "id", "question", "choices").is_duplicated()
    if twice.any():
        id = frame.filter(twice)["id"][0]
        raise WorkbenchError(
            f"{path} holds one model's answer to question {id!r} twice (two logs of one run, or a run and its "
            "retry?); import one log of each run"
        )
    return frame


def _read_log(path: Path, probes: pl.DataFrame, name: str | None) -> pl.DataFrame:
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path))
    except ValueError as err:  # a newer format (the JSON reader checks the version) or a file that is not a log
        said = " ".join(str(err).split())[:160]
        newer = "version" in said
        raise WorkbenchError(
            f"{path}: {'a log format newer than this Inspect reads' if newer else 'not an Inspect log'} ({said}); "
            + (
                "upgrade inspect-ai, or read it with the Inspect that wrote it"
                if newer
                else "pass an .eval or .json log"
            )
        ) from None
    except (OSError, KeyError) as err:
        raise WorkbenchError(f"{path}: not a readable Inspect log ({type(err).__name__}: {err}); pass an .eval or "
                             ".json log")  # fmt: skip
    if log.version not in LOG_VERSIONS:
        raise WorkbenchError(
            f"{path}: Inspect log format version {log.version}, where this workbench reads {list(LOG_VERSIONS)}; "
            "upgrade probe-workbench and inspect-ai, or read it with the Inspect that wrote it"
        )
    ours = (log.eval.metadata or {}).get(OURS)
    if not isinstance(ours, dict) or not log.eval.task.startswith("workbench_"):
        raise WorkbenchError(
            f"{path} is a log of the task {log.eval.task!r}, not of one written by `{GENERATOR}` (or "
            "`workbench export inspect-log`); import logs of the exported task"
        )
    samples = log.samples or []
    failed = [sample for sample in samples if sample.error is not None]
    if failed:
        first = failed[0]
        message = " ".join(first.error.message.split())[:120]
        raise WorkbenchError(
            f"{path}: {len(failed)} of {len(samples)} samples ended in an error (first: sample {first.id}: {message}); "
            f"retry them (inspect eval-retry {path}) and import the retried log"
        )
    if not samples:
        raise WorkbenchError(f"{path} holds no samples (status {log.status}); run the task again")
    expected = log.eval.dataset.samples or len(samples)
    if log.status != "success" or len(samples) < expected:
        warnings.warn(
            f"{path} was cut short (status {log.status}): {len(samples)} of its {expected} questions imported; "
            f"finish it with inspect eval-retry {path}",
            stacklevel=3,
        )
    asked = pl.DataFrame(
        {
            "sample": [str(sample.id) for sample in samples],
            "id": [str((sample.metadata or {}).get("id")) for sample in samples],
            "question": [_question(sample) for sample in samples],
            "choices": pl.Series([list(sample.choices or []) for sample in samples], dtype=pl.List(pl.String)),
            "target": [_target(sample) for sample in samples],
        }
    )
    matched = _match(asked, probes, path)
    if ours.get("scorer"):
        frame = matched.hstack(_ours(log, samples))
    else:  # correct as our scorers have it (the choice scorer's C where the pick is the gold)
        frame = matched.hstack(_inspect_rows(log, samples, name))
        frame = frame.with_columns(correct=(pl.col("pred") == pl.col("answer")).fill_null(False))
    return conform(frame, PREDICTION_SCHEMA, f"predictions of {path}")


def _target(sample) -> str:
    return sample.target if isinstance(sample.target, str) else ",".join(sample.target)


def _question(sample) -> str:
    """The question a sample asks: its input, or the last user turn of its chat."""
    if isinstance(sample.input, str):
        return sample.input
    users = [message for message in sample.input if message.role == "user"]
    return users[-1].text if users else ""


def _match(asked: pl.DataFrame, probes: pl.DataFrame, path: Path) -> pl.DataFrame:
    """The probe row of each asked question, by identity: id, question text and choices (and gold)."""
    keyed = probes.with_columns(target=pl.col("answer").map_elements(lambda i: LETTERS[i], return_dtype=pl.String))
    found = asked.join(keyed, on=["id", "question", "choices", "target"], how="left", maintain_order="left")
    if found.height != asked.height:
        raise WorkbenchError(f"{path}: a question matches two rows of the probe set; the probe set repeats a question")
    lost = found.filter(pl.col("probe").is_null())
    if not lost.is_empty():
        sample, id = lost["sample"][0], lost["id"][0]
        was = probes.filter(pl.col("id") == id)
        how = (f"its text, choices or gold changed since the export (the probe set asks {was['question'][0]!r:.60})"
               if not was.is_empty() else "the probe set has no question with this id")  # fmt: skip
        raise WorkbenchError(
            f"{path}: {lost.height} of {asked.height} questions do not match the probe set; sample {sample} (question "
            f"id {id!r}): {how}; import against the probe set the task was exported from, or export and run it again"
        )
    return found.select(list(PROBE_SCHEMA))


def _inspect_rows(log, samples, name: str | None) -> pl.DataFrame:
    """The score columns of an Inspect run: its choice scorer's pick, what the model saw and said, the run."""
    spec = log.eval
    provider, _, served_name = spec.model.rpartition("/")  # openai-api/SERVICE/MODEL, hf/ORG/MODEL: the last part
    label = name or model_label(served_name)
    base = spec.model_base_url or ""
    identity = {
        "host": urlsplit(base).netloc or provider,
        "model": served_name,
        "provider": provider,
        "inspect_model": spec.model,
        "base_url": base,
        "task": spec.task,
        "eval_id": spec.eval_id,
        "run_id": spec.run_id,
        "created": spec.created,
        "inspect_ai": spec.packages.get("inspect_ai", ""),
    }
    asking = str(((spec.metadata or {}).get(OURS) or {}).get("asking", ""))
    config = spec.model_generate_config.model_dump(exclude_none=True)
    key = json.dumps([identity["inspect_model"], base, asking, config], sort_keys=True, default=str)
    rows = []
    for sample in samples:
        score = (sample.scores or {}).get(RULE)
        if score is None:
            raise WorkbenchError(f"sample {sample.id} of {spec.task} has no {RULE!r} score; it is not a sample of the "
                                 "exported task's choice scorer")  # fmt: skip
        letter = (score.answer or "").strip()
        width = len(sample.choices or [])
        pred = LETTERS.index(letter) if len(letter) == 1 and letter in LETTERS[:width] else None
        gold = LETTERS.index(sample.target) if isinstance(sample.target, str) and sample.target in LETTERS else None
        seen = [m for m in sample.messages if m.role != "assistant" or m is not sample.messages[-1]]
        rows.append({
            "scores": [float(index == pred) for index in range(width)],
            "pred": pred,
            "prompt": json.dumps([{"role": m.role, "content": m.text} for m in seen], ensure_ascii=False),
            "generated": sample.output.completion,
            "matched": letter if pred is not None else None,
            "match": "other" if pred is None else "exact" if pred == gold else "choice",
        })  # fmt: skip
    frame = pl.DataFrame(rows, schema={"scores": pl.List(pl.Float64), "pred": pl.Int64, "prompt": pl.String,
                                       "generated": pl.String, "matched": pl.String, "match": pl.String})  # fmt: skip
    return frame.with_columns(
        model=pl.lit(label),
        fingerprint=pl.lit(hashlib.sha256(f"{SCORER}\x1f{key}".encode()).hexdigest()[:16]),
        scorer=pl.lit(SCORER),
        rule=pl.lit(RULE),
        control=pl.lit("none"),
        asking=pl.lit(asking),
        served=pl.lit(json.dumps(identity, sort_keys=True, ensure_ascii=False)),
    )


def _ours(log, samples) -> pl.DataFrame:
    """The score columns of a log ``export_inspect_log`` wrote: as the prediction file held them."""
    columns = {name: dtype for name, dtype in PREDICTION_SCHEMA.items() if name not in PROBE_SCHEMA}
    identity = (log.eval.metadata or {})[OURS]
    rows = []
    for sample in samples:
        kept = (sample.metadata or {}).get(OURS)
        if not isinstance(kept, dict):
            raise WorkbenchError(f"sample {sample.id} of {log.eval.task} lacks the workbench's scores in its metadata")
        rows.append({name: kept.get(name, identity.get(name)) for name in columns})
    return pl.DataFrame(rows, schema=columns)


def export_inspect_log(predictions: pl.DataFrame, out: str | Path) -> Path:
    """Write one model's predictions as an Inspect log (``.eval`` or ``.json``), with Inspect's writer: a sample
    per question (the prompt it saw, its pick as the answer, every choice's score), its accuracy as the result.

    A frame of several models (model and fingerprint: weights, scorer, rule, control) is refused: pass one model's
    rows (``workbench export inspect-log --label``).
    """
    from inspect_ai import log as logs
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score

    preds = conform(predictions, PREDICTION_SCHEMA, "predictions")
    if preds.is_empty():
        raise WorkbenchError("the prediction file holds no rows; nothing to write as a log")
    models = preds.select("model", "rule", "fingerprint").unique(maintain_order=True)
    if models.height > 1:
        shown = [f"{model} ({rule})" for model, rule, _ in models.head(6).iter_rows()]
        raise WorkbenchError(
            f"the predictions hold {models.height} models {shown}; an Inspect log holds one: choose one (--label)"
        )
    first = preds.row(0, named=True)
    probes = preds["probe"].unique(maintain_order=True).to_list()
    task = task_name(probes[0]) if len(probes) == 1 else "workbench_predictions"
    identity = {name: first[name] for name in ("model", "scorer", "rule", "control", "fingerprint", "asking", "served")}
    ids = [f"{id}#{n}" if n else id for id, n in zip(preds["id"], _occurrence(preds))]
    samples = []
    for sample_id, row in zip(ids, preds.iter_rows(named=True)):
        seen = _seen(row, ChatMessageSystem, ChatMessageUser, ChatMessageAssistant)
        pred = row["pred"]
        said = row["generated"] if row["generated"] is not None else (
            f"{LETTERS[pred]}) {row['choices'][pred]}" if pred is not None else "")  # fmt: skip
        shown = ", ".join(f"{LETTERS[i]}) {value:.4g}" for i, value in enumerate(row["scores"]))
        samples.append(logs.EvalSample(
            id=sample_id, epoch=1, input=row["question"], choices=row["choices"], target=LETTERS[row["answer"]],
            messages=[*seen, ChatMessageAssistant(content=said or "(no answer)", model=row["model"])],
            output=ModelOutput.from_content(model=row["model"], content=said),
            scores={OURS: Score(value="C" if row["correct"] else "I", answer=LETTERS[pred] if pred is not None else "",
                                explanation=f"{row['scorer']} {row['rule']} scores: {shown}")},
            metadata={**{c: row[c] for c in PROBE_SCHEMA}, OURS: {c: row[c] for c in PREDICTION_SCHEMA
                                                                 if c not in PROBE_SCHEMA}},
        ))  # fmt: skip
    accuracy = float(preds["correct"].fill_null(False).mean())
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    digest = hashlib.sha256(json.dumps([identity, ids], default=str).encode()).hexdigest()[:22]
    log = logs.EvalLog(
        status="success",
        eval=logs.EvalSpec(
            created=now, task=task, task_id=digest, run_id=digest, eval_id=digest,
            dataset=logs.EvalDataset(name=task, samples=len(samples), sample_ids=ids),
            model=f"{OURS}/{first['model']}", config=logs.EvalConfig(),
            packages={"probe-workbench": _version()},
            metadata={OURS: {**identity, "generator": "workbench export inspect-log", "probes": probes}},
        ),
        results=logs.EvalResults(
            total_samples=len(samples), completed_samples=len(samples),
            scores=[logs.EvalScore(name=OURS, scorer=OURS, metrics={
                "accuracy": logs.EvalMetric(name="accuracy", value=accuracy)})],
        ),
        stats=logs.EvalStats(started_at=now, completed_at=now),
        samples=samples,
    )  # fmt: skip
    path = Path(out)
    with atomic_path(path) as tmp:  # Inspect's writer, into a temporary file moved into place whole
        logs.write_eval_log(log, str(tmp), format="json" if path.suffix.lower() == ".json" else "eval")
    return path


def _seen(row: dict, system, user, assistant) -> list:
    """The messages a prediction row's model saw: a served chat's messages (its ``prompt`` JSON), else its prompt
    text, else the question (scorers without a prompt: similarity, mcqa, mlm)."""
    text = row["prompt"]
    if text is not None and text.startswith("[{"):
        try:
            messages = json.loads(text)
            kinds = {"system": system, "user": user, "assistant": assistant}
            return [kinds[m["role"]](content=m["content"]) for m in messages]
        except (ValueError, KeyError, TypeError):
            pass
    if text is None:
        text = row["question"] + "\n" + "\n".join(f"{LETTERS[i]}) {c}" for i, c in enumerate(row["choices"]))
    return [user(content=text)]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("probe-workbench")
    except PackageNotFoundError:
        return ""
