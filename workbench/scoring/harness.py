"""Interoperability with lm-evaluation-harness: our probes as its tasks, its logged samples as our predictions.

``export_lm_eval`` writes one task per probe (``workbench_<probe>.yaml`` and its ``.jsonl`` data file) that
``lm_eval --include_path DIR --tasks workbench_hypernymy`` runs unchanged: ``output_type: multiple_choice``, the
context is the causal scorer's prompt (``workbench.scoring.prompts``) and each choice follows it after a space,
so the harness's ``acc`` is our ``sum`` rule and its ``acc_norm`` our ``mean-char``. Every probe column (cluster,
hops, distractor family and depth, ...) is kept in the data file, so the harness logs it with each sample.

``import_lm_eval`` reads the ``samples_<task>_<date>.jsonl`` that ``--log_samples`` writes back into a
prediction frame (``PREDICTION_SCHEMA``, scorer ``lm-eval``, rules ``sum`` and ``mean-char``): clusters, heat
maps, calibration and ``compare`` then work on harness runs.

>>> export_lm_eval(read_probes("hypernymy_test.jsonl"), "tasks/")  # doctest: +SKIP
>>> preds = import_lm_eval("out/model/samples_workbench_hypernymy_2026-11-25T08-00-00.jsonl")  # doctest: +SKIP
"""

import hashlib
import json
import math
import re
from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError
from workbench.io import check_label, inside, write_text
from workbench.schema import PREDICTION_SCHEMA, PROBE_SCHEMA, conform, model_label
from workbench.scoring.asking import LETTERS, SHOT_DELIMITER, TURN, Asking, Shots, turn
from workbench.scoring.prompts import PromptTemplates, load_prompts

TASK_PREFIX = "workbench_"
DELIMITER = " "
"""What the harness puts between context and choice (its ``target_delimiter``): our choice template's space."""
IMPORT_RULES = {"sum": "acc", "mean-char": "acc_norm"}
"""Our rule for each harness metric it reproduces: the summed log-likelihood, and that per character."""


def export_lm_eval(
    probes: pl.DataFrame,
    out: str | Path,
    prompts: str | Path | None = None,
    asking: Asking = Asking(),
    shots: Shots | None = None,
) -> list[Path]:
    """Write one lm-eval task per probe of ``probes`` into ``out`` (YAML + JSONL); the written paths.

    ``prompts``: the causal scorer's prompt template file (None: the packaged default); its choice template must
    be a space then the choice (a space then the letter, for ``letters``: the harness's convention), so that the
    harness scores what our scorer does. ``asking``: the way of asking (format, shots, chat template, system
    instruction); its ``shots`` (``draw_shots``, the same for every question) are written into the task as its
    fixed few-shot docs, in order (``fewshot_config: sampler: first_n``), the system instruction as its
    ``description``; a chat template is asked of lm_eval with ``--apply_chat_template --fewshot_as_multiturn``
    (``lm_eval_command`` gives the command line).

    >>> [path.name for path in export_lm_eval(probes, "tasks")]  # doctest: +SKIP
    ['workbench_hypernymy.jsonl', 'workbench_hypernymy.yaml']
    """
    probes = conform(probes, PROBE_SCHEMA, "probe frame")
    if asking.shots_per_question:
        raise WorkbenchError(
            "lm-eval asks every question after the same few-shot docs; export shots shared by all questions "
            "(leave out --shots-per-question)"
        )
    if (asking.shots > 0) != (shots is not None):
        raise WorkbenchError(f"asking for {asking.shots} shots needs the drawn shots (draw_shots), and only then")
    templates = load_prompts(prompts)
    docs = _docs(probes, templates, asking.format).with_columns(asking=pl.lit(asking.label))
    shot_docs = _docs(shots.frame.drop("row", "position"), templates, asking.format) if shots is not None else None
    folder = Path(out).resolve()
    written = []
    tasks = {probe: task_name(probe) for probe in docs["probe"].unique(maintain_order=True)}
    if len(set(tasks.values())) < len(tasks):
        raise WorkbenchError(
            f"the probes {sorted(tasks)} give one task name twice {sorted(tasks.values())}; rename one"
        )
    for (probe,), part in docs.group_by("probe", maintain_order=True):
        task = tasks[probe]
        data = inside(folder, f"{task}.jsonl")
        lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in part.iter_rows(named=True))
        written.append(write_text(lines, data))
        task_yaml = _task_yaml(task, data, part.height, asking, shot_docs)
        written.append(write_text(task_yaml, inside(folder, f"{task}.yaml")))
    return written


def task_name(probe: str) -> str:
    """The lm-eval task (and file) name of a probe: ``workbench_<probe>``, any character but letters, digits,
    ``-`` and ``_`` replaced by ``_`` (a probe name comes from the data: ``/../victim`` must not leave the folder)."""
    return TASK_PREFIX + (re.sub(r"[^A-Za-z0-9_-]+", "_", probe).strip("_") or "probe")


def _sample(line: str, where: str) -> tuple[int | None, dict]:
    """One logged sample: its ``doc_id`` and its row (probe columns, ``sum`` and ``mean-char`` scores), or a
    one-line error naming ``where`` (file and line) and the field: a sample giving a wrong number is refused."""
    try:
        record = json.loads(line)
    except ValueError as err:
        raise WorkbenchError(f"{where}: not a JSON record ({err}); the samples file is damaged") from None
    doc = record.get("doc") if isinstance(record, dict) else None
    if not isinstance(doc, dict) or set(PROBE_SCHEMA) - set(doc):
        raise WorkbenchError(
            f"{where}: the sample's doc does not carry the probe columns; it is not a sample of a task written by "
            "`workbench export lm-eval` (export the probes, run lm_eval with --log_samples, import its samples file)"
        )
    choices, answer = doc["choices"], doc["answer"]
    if not isinstance(choices, list) or len(choices) < 2 or not all(isinstance(c, str) and c for c in choices):
        raise WorkbenchError(f"{where}: doc.choices must be two or more non-empty texts (got {choices!r:.80})")
    if isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer < len(choices):
        raise WorkbenchError(
            f"{where}: doc.answer {answer!r:.40} is not the index of one of its {len(choices)} choices"
        )
    responses = record.get("filtered_resps")
    if not isinstance(responses, list) or len(responses) != len(choices):
        raise WorkbenchError(
            f"{where}: filtered_resps must hold one log-likelihood per choice ({len(choices)}), got {responses!r:.80}; "
            "it is not a multiple_choice sample of an exported task"
        )
    loglik = [_loglik(response, where) for response in responses]
    try:
        row = conform(pl.DataFrame([{column: doc[column] for column in PROBE_SCHEMA}], schema=PROBE_SCHEMA,
                                   strict=False), PROBE_SCHEMA, "doc").row(0, named=True)  # fmt: skip
    except (WorkbenchError, pl.exceptions.PolarsError, TypeError, ValueError) as err:
        raise WorkbenchError(f"{where}: the doc's probe columns are malformed ({' '.join(str(err).split())[:120]})")
    if row["id"] is None or row["question"] is None:
        raise WorkbenchError(f"{where}: doc.id and doc.question must be texts")
    per_char = [value / len(choice) for value, choice in zip(loglik, choices)]
    doc_id = record.get("doc_id")
    doc_id = doc_id if isinstance(doc_id, int) and not isinstance(doc_id, bool) else None
    asked = doc.get("asking", "")
    return doc_id, {**row, "asking": asked if isinstance(asked, str) else "", "sum": loglik, "mean-char": per_char}


def _loglik(response, where: str) -> float:
    """A response's log-likelihood: ``[value, is_greedy]`` as lm-eval logs it (both as text: ``["-80.3", "False"]``),
    or a bare value; finite, not > 0."""
    value = response[0] if isinstance(response, list) and response else response
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value > 0:
        raise WorkbenchError(f"{where}: filtered_resps holds {response!r:.40}, not a finite log-likelihood (<= 0)")
    return float(value)


def lm_eval_command(tasks: list[str], out: str | Path, asking: Asking = Asking()) -> str:
    """The ``lm_eval`` arguments that run exported tasks as ``asking`` asks (the model arguments are the user's).

    >>> lm_eval_command(["workbench_hypernymy"], "/t", Asking(chat_template="auto"))
    'lm_eval --include_path /t --tasks workbench_hypernymy --apply_chat_template --fewshot_as_multiturn'
    """
    chat = " --apply_chat_template --fewshot_as_multiturn" if asking.chat_template == "auto" else ""
    return f"lm_eval --include_path {out} --tasks {','.join(tasks)}{chat}"


def _docs(frame: pl.DataFrame, templates: PromptTemplates, format: str) -> pl.DataFrame:
    """The probe rows with the user text (``prompt``) and, for ``letters``, the letters scored."""
    rendered = [turn(templates, format, *row) for row in frame.select(*TURN).iter_rows()]
    scored = [DELIMITER + (LETTERS[0] if format == "letters" else choices[0]) for choices in frame["choices"]]
    odd = [(answers[0], want) for (_, answers, _), want in zip(rendered, scored) if answers[0] != want]
    if odd:
        raise WorkbenchError(
            f"the prompt templates render a choice as {odd[0][0]!r} where the harness scores {odd[0][1]!r} (it puts "
            f"{DELIMITER!r} before each choice); use a choice template of ' {{choice}}' (letters: ' {{letter}}') "
            "for the export"
        )
    docs = frame.select(*PROBE_SCHEMA).with_columns(
        prompt=pl.Series([user for user, _, _ in rendered], dtype=pl.String)
    )
    if format == "letters":
        docs = docs.with_columns(letters=pl.Series([[a.strip() for a in answers] for _, answers, _ in rendered]))
    return docs


def _task_yaml(task: str, data: Path, count: int, asking: Asking, shots: pl.DataFrame | None) -> str:
    chat = asking.chat_template == "auto"
    lines = [
        f"# Written by workbench export lm-eval: {count} questions asked {asking.label}; run with "
        f"{lm_eval_command([task], data.parent, asking)}",
        f"task: {task}",
        "dataset_path: json",
        "dataset_kwargs:",
        "  data_files:",
        f"    test: {json.dumps(str(data))}",
        "test_split: test",
        "output_type: multiple_choice",
        "doc_to_text: prompt",
        f"doc_to_choice: {'letters' if asking.format == 'letters' else 'choices'}",
        "doc_to_target: answer",
        f"target_delimiter: {json.dumps(DELIMITER)}",
        f"fewshot_delimiter: {json.dumps(SHOT_DELIMITER)}",
    ]
    if asking.system is not None:  # without a chat template lm-eval puts the description right before the first turn
        lines.append(f"description: {json.dumps(asking.system + ('' if chat else SHOT_DELIMITER))}")
    if shots is not None:
        lines += [f"num_fewshot: {shots.height}", "fewshot_config:", "  sampler: first_n", "  samples:"]
        lines += [f"    - {json.dumps(row, ensure_ascii=False)}" for row in shots.iter_rows(named=True)]
    lines += [
        "metric_list:",
        *[f"  - metric: {metric}\n    aggregation: mean\n    higher_is_better: true" for metric in ("acc", "acc_norm")],
        "metadata:",
        "  version: 1.0",
        "  source: probe-workbench",
        f"  asking: {json.dumps(asking.label)}",
        f"  probe_columns: {json.dumps(list(PROBE_SCHEMA))}",
        "",
    ]
    return "\n".join(lines)


def import_lm_eval(samples: str | Path, name: str | None = None) -> pl.DataFrame:
    """The predictions logged by ``lm_eval --log_samples`` on an exported task (``samples_<task>_<date>.jsonl``):
    one row per question and rule (``sum``: the harness's ``acc``; ``mean-char``: its ``acc_norm``).

    ``name``: the model's label (default: the folder lm-eval wrote the file into, which it names after the model).

    >>> preds = import_lm_eval("out/smollm2/samples_workbench_hypernymy_2026-11-25T08-00-00.jsonl")  # doctest: +SKIP
    >>> preds.filter(pl.col("rule") == "sum")["correct"].mean()  # the harness's acc  # doctest: +SKIP
    """
    path = Path(samples)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError) as err:
        raise WorkbenchError(f"cannot read lm-eval samples from {path}: {err}; pass a samples_*.jsonl file") from err
    label = check_label(name or model_label(path.parent.name), f"the model label (from the folder {path.parent.name!r}"
                        " lm-eval wrote into; or give --name)")  # fmt: skip
    rows, seen = [], {}
    for number, line in enumerate(lines, 1):
        if line.strip():
            doc_id, row = _sample(line, f"{path}, line {number}")
            key = doc_id if doc_id is not None else json.dumps([row[c] for c in PROBE_SCHEMA], ensure_ascii=False)
            if key in seen:
                raise WorkbenchError(f"{path}, line {number}: question {row['id']!r} (doc_id {doc_id}) is logged again "
                                     f"(first on line {seen[key]}); import a file with each question once")  # fmt: skip
            seen[key] = number
            rows.append(row)
    if not rows:
        raise WorkbenchError(f"{path} holds no samples; pass the samples_*.jsonl that lm_eval --log_samples wrote")
    frame = pl.DataFrame(
        rows, schema={**PROBE_SCHEMA, "asking": pl.String, **{rule: pl.List(pl.Float64) for rule in IMPORT_RULES}}
    )
    per_rule = [
        frame.with_columns(
            rule=pl.lit(rule),
            scores=pl.col(rule),
            fingerprint=pl.lit(hashlib.sha256(f"lm-eval\x1f{label}\x1f{rule}".encode()).hexdigest()[:16]),
        )
        for rule in IMPORT_RULES
    ]
    return conform(
        pl.concat(per_rule)
        .with_columns(model=pl.lit(label), scorer=pl.lit("lm-eval"), control=pl.lit("none"))
        .with_columns(pred=pl.col("scores").list.arg_max())
        .with_columns(correct=pl.col("pred") == pl.col("answer")),
        PREDICTION_SCHEMA,
        "predictions",
    )
