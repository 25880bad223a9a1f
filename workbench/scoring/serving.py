"""A served model as ``score`` asks it: connected with the spec's settings checked, asked for log-likelihoods or
answers, and what a run would send counted first (``plan_requests``, the dry run), sending nothing but the listing."""

import json
from pathlib import Path

import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.scoring import lm, served
from workbench.scoring.answers import answered
from workbench.scoring.cache import PredictionCache, open_cache
from workbench.scoring.prompting import rendered, server_chat
from workbench.scoring.questions import by_question, check_probes, question_prompts
from workbench.scoring.spec import ScoreSpec
from workbench.specs import resolve_spec


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
    probes = check_probes(probes)
    if not served.is_endpoint(model):
        raise SpecError(f"plan_requests counts what a served model is sent; {model!r} is not an Endpoint or a URL")
    server = connected(model, spec, listing_only=True)
    pairs, _, _ = rendered(server, spec, probes, shot_pool)
    if spec.scorer == "generate":
        asked = question_prompts(pairs)
        kind, completion = served.KINDS["chat" if server_chat(server, spec) else "text"], spec.new_tokens
        units = [(text, str(completion)) for text in asked]
    else:
        units, neutral = lm.rule_units(pairs, lm.RULES if spec.rule == "all" else (spec.rule,))
        units, kind, completion = units + neutral, served.KINDS["echo"], 1
    units = list(dict.fromkeys(units))
    todo = served.uncached(server, kind, units, open_cache(cache))
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


def connected(
    model: "str | served.Endpoint | served.Server", spec: ScoreSpec, listing_only: bool = False
) -> "served.Server":
    """A served model checked and connected (``workbench.scoring.served``); the settings of a local model refused.
    The server's chat template (``/props``) is asked only where a way needs it, and never by a dry run
    (``listing_only``), which sends nothing but the listing of its models. A ``Server`` connected before is kept
    (an adaptive run asks it one question at a time, listing its models once), if connected for ``spec.scorer``."""
    local = {"control": (spec.control, "none"), "device": (spec.device, None), "dtype": (spec.dtype, "float32"),
             "device_map": (spec.device_map, None)}  # fmt: skip
    clashes = [f"{name}={value!r}" for name, (value, default) in local.items() if value not in (None, default)]
    if clashes:
        raise SpecError(
            f"{', '.join(clashes)} place or change a local model's weights, and a served model's are the server's; "
            "leave them out (score a control locally, on the same weights)"
        )
    templated = spec.chat_template == "auto" and spec.scorer != "generate"
    if isinstance(model, served.Server):
        if model.scorer != spec.scorer:
            raise SpecError(f"the server passed in was connected for scorer {model.scorer!r}, not {spec.scorer!r}; "
                            "connect it again with that scorer")  # fmt: skip
        server = model
    else:
        endpoint = model if isinstance(model, served.Endpoint) else served.Endpoint(str(model))
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


def ask_server(
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
        asked = question_prompts(pairs)
        questions = [json.loads(text) for text in asked] if chat else asked
        said = served.answers(server, questions, spec.new_tokens, chat, store, progress)
        served.report(server, progress)
        return answered(probes, asked, said, spec.format == "letters")
    served.check_echo(server)
    scored = lm.rule_scores(pairs, rule, served.logprob_outputs(server, store, progress))
    served.report(server, progress)
    return by_question(scored, prompted=True)
