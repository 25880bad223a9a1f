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
from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError
from workbench.io import write_text
from workbench.schema import PREDICTION_SCHEMA, PROBE_SCHEMA, conform, model_label
from workbench.scoring.prompts import load_prompts, render_prompts

TASK_PREFIX = "workbench_"
DELIMITER = " "
"""What the harness puts between context and choice (its ``target_delimiter``): our choice template's space."""
IMPORT_RULES = {"sum": "acc", "mean-char": "acc_norm"}
"""Our rule for each harness metric it reproduces: the summed log-likelihood, and that per character."""


def export_lm_eval(probes: pl.DataFrame, out: str | Path, prompts: str | Path | None = None) -> list[Path]:
    """Write one lm-eval task per probe of ``probes`` into ``out`` (YAML + JSONL); the written paths.

    ``prompts``: the causal scorer's prompt template file (None: the packaged default); its choice template must
    be a space then the choice (the harness's convention), so that the harness scores what our scorer does.

    >>> [path.name for path in export_lm_eval(probes, "tasks")]  # doctest: +SKIP
    ['workbench_hypernymy.jsonl', 'workbench_hypernymy.yaml']
    """
    probes = conform(probes, PROBE_SCHEMA, "probe frame")
    pairs = render_prompts(
        probes.select("probe", "question", pl.col("choices").list.first().alias("choice")), load_prompts(prompts)
    )
    odd = pairs.filter(pl.col("continuation") != DELIMITER + pl.col("choice"))
    if not odd.is_empty():
        raise WorkbenchError(
            f"the prompt templates render the choice {odd['choice'][0]!r} as {odd['continuation'][0]!r}, but the "
            f"harness puts {DELIMITER!r} before each choice; use a choice template of ' {{choice}}' for the export"
        )
    folder = Path(out).resolve()
    docs = probes.with_columns(prompt=pairs["prompt"])
    written = []
    for (probe,), part in docs.group_by("probe", maintain_order=True):
        task = f"{TASK_PREFIX}{probe}"
        data = folder / f"{task}.jsonl"
        lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in part.iter_rows(named=True))
        written.append(write_text(lines, data))
        written.append(write_text(_task_yaml(task, data, part.height), folder / f"{task}.yaml"))
    return written


def _task_yaml(task: str, data: Path, count: int) -> str:
    return "\n".join(
        [
            f"# Written by workbench export lm-eval: {count} questions; run with lm_eval --include_path "
            f"{data.parent} --tasks {task}",
            f"task: {task}",
            "dataset_path: json",
            "dataset_kwargs:",
            "  data_files:",
            f"    test: {json.dumps(str(data))}",
            "test_split: test",
            "output_type: multiple_choice",
            "doc_to_text: prompt",
            "doc_to_choice: choices",
            "doc_to_target: answer",
            f"target_delimiter: {json.dumps(DELIMITER)}",
            "metric_list:",
            *[
                f"  - metric: {metric}\n    aggregation: mean\n    higher_is_better: true"
                for metric in ("acc", "acc_norm")
            ],
            "metadata:",
            "  version: 1.0",
            "  source: probe-workbench",
            f"  probe_columns: {json.dumps(list(PROBE_SCHEMA))}",
            "",
        ]
    )


def import_lm_eval(samples: str | Path, name: str | None = None) -> pl.DataFrame:
    """The predictions logged by ``lm_eval --log_samples`` on an exported task (``samples_<task>_<date>.jsonl``):
    one row per question and rule (``sum``: the harness's ``acc``; ``mean-char``: its ``acc_norm``).

    ``name``: the model's label (default: the folder lm-eval wrote the file into, which it names after the model).

    >>> preds = import_lm_eval("out/smollm2/samples_workbench_hypernymy_2026-11-25T08-00-00.jsonl")  # doctest: +SKIP
    >>> preds.filter(pl.col("rule") == "sum")["correct"].mean()  # the harness's acc  # doctest: +SKIP
    """
    path = Path(samples)
    try:
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError) as err:
        raise WorkbenchError(f"cannot read lm-eval samples from {path}: {err}; pass a samples_*.jsonl file") from err
    if not records or any(set(PROBE_SCHEMA) - set(record.get("doc", {})) for record in records):
        raise WorkbenchError(
            f"{path} holds no samples of a task written by `workbench export lm-eval` (each sample's doc must carry "
            "the probe columns); export the probes, run lm_eval with --log_samples, and import its samples file"
        )
    label = name or model_label(path.parent.name)
    rows = []
    for record in records:
        doc = record["doc"]
        loglik = [float(response[0]) for response in record["filtered_resps"]]
        if len(loglik) != len(doc["choices"]):
            raise WorkbenchError(
                f"{path}: sample {record.get('doc_id')} has {len(loglik)} log-likelihoods for {len(doc['choices'])} "
                "choices; it is not a multiple_choice sample of an exported task"
            )
        per_char = [value / len(choice) for value, choice in zip(loglik, doc["choices"])]
        rows.append({**{column: doc[column] for column in PROBE_SCHEMA}, "sum": loglik, "mean-char": per_char})
    frame = pl.DataFrame(rows, schema={**PROBE_SCHEMA, **{rule: pl.List(pl.Float64) for rule in IMPORT_RULES}})
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
