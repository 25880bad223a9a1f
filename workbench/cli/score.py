"""``workbench score``: score a model on a probe file and write the predictions as Parquet."""

import functools
from enum import Enum
from pathlib import Path

import typer

from workbench.cli.guard import Label, Reads, Writes, declares


class Scorer(str, Enum):
    mcqa = "mcqa"
    mlm = "mlm"
    similarity = "similarity"
    causal = "causal"
    seq2seq = "seq2seq"
    generate = "generate"


class Dtype(str, Enum):
    float32 = "float32"
    bfloat16 = "bfloat16"
    float16 = "float16"


class Format(str, Enum):
    cloze = "cloze"
    letters = "letters"


class ChatTemplate(str, Enum):
    none = "none"
    auto = "auto"


# The way of asking (workbench.scoring.asking), shared by `score` and `export lm-eval`.
FORMAT = typer.Option(
    Format.cloze,
    help="causal, seq2seq: cloze (each choice scored as the answer's text) or letters (the choices listed as "
    "'A. ...' lines after the question, the letter scored).",
)
SHOTS = typer.Option(0, min=0, help="causal, seq2seq: worked examples before each question.")
SHOTS_FROM = typer.Option(
    None, help="The probe file or folder the shots come from (default: the train split of --probes, if a folder)."
)
SHOTS_PER_QUESTION = typer.Option(
    False, help="Draw the shots anew for each question (default: the same shots for every question)."
)
SHOT_SEED = typer.Option(0, help="Seed of the shots' draw.")
CHAT_TEMPLATE = typer.Option(
    ChatTemplate.none,
    help="auto: render each prompt with the tokenizer's chat template (shots as turns, as lm-eval's "
    "--apply_chat_template --fewshot_as_multiturn); none: plain text.",
)
SYSTEM = typer.Option(
    None, help="An instruction: the chat's system message, or text before the prompt without a template."
)


# A served model (workbench.scoring.served), shared by `score` and `sweep`'s grid keys of the same names.
SERVED_MODEL = typer.Option(None, help="A served model: its name on the server (default: the only one it serves).")
API_KEY_ENV = typer.Option(
    "OPENAI_API_KEY", help="A served model: the environment variable holding the API key (the key is never written)."
)
TOKENIZER = typer.Option(
    None,
    help="A served model: its tokenizer (a folder, hub name or .gguf file), for a chat template in log-likelihood "
    "ways and exact token counts.",
)
CONCURRENCY = typer.Option(8, min=1, max=256, help="A served model: requests in flight at once.")
BOS = typer.Option(
    None,
    help="A served model: text put before every prompt (the model's BOS token, e.g. '<|im_start|>'), for servers "
    "whose echoed log-probabilities line up only after one (llama-cpp-python).",
)
TIMEOUT = typer.Option(
    120.0, min=1, max=3600, help="A served model: seconds each request may take, its retries included."
)


class Control(str, Enum):
    none = "none"
    random_weights = "random-weights"
    static_embeddings = "static-embeddings"


@declares(
    model=Reads(),
    probes=Reads(),
    prompts=Reads(),
    shots_from=Reads(),
    tokenizer=Reads(),
    out=Writes("predictions"),
    name=Label(),
    irt=Reads(),
)
def score(
    model: str = typer.Option(
        ...,
        help="A model folder, a .gguf file, a hub name in the local Hugging Face cache, or a served model's base URL "
        "(http://HOST:PORT/v1: vLLM, llama.cpp, Ollama, an API; docs/SCORING.md, 'Served models').",
    ),
    scorer: Scorer = typer.Option(
        ...,
        help="mcqa (multiple-choice head), mlm (masked LM), similarity (cosine), causal (decoder-only LM), "
        "seq2seq (encoder-decoder LM), generate (a causal LM's free answer, matched to the gold: recall).",
    ),
    probes: Path = typer.Option(..., help="Probe file (.parquet, ARC-style .jsonl) or a folder of split files."),
    out: Path | None = typer.Option(None, help="Where to write the predictions (.parquet); needed but with --dry-run."),
    name: str | None = typer.Option(
        None, help="The model's label in charts, reports and apps (default: its folder or hub name)."
    ),
    control: Control = typer.Option(Control.none, help="Score a control of the model instead of the model."),
    split: str | None = typer.Option(None, help="Score only this split (train, dev or test)."),
    max_questions: int | None = typer.Option(
        None, min=1, help="Score at most this many questions, sampled as whole clusters (seeded by --seed)."
    ),
    rule: str = typer.Option(
        "auto",
        help="mlm: mc-mlm, pll-sum or pll-mean (auto: mc-mlm where every choice is one token). causal, seq2seq: sum "
        "(auto), mean-token, mean-char, mi, or all (one row per question and rule).",
    ),
    prompts: Path | None = typer.Option(
        None,
        help="causal, seq2seq: a prompt template file (JSON like workbench/scoring/prompt_templates/default.json).",
    ),
    batch_size: str = typer.Option(
        "32",
        help="Inputs per forward pass, or auto: start from what fit last time (or a guess), halve on out-of-memory, "
        "remember what fit.",
    ),
    max_length: int | None = typer.Option(
        None, help="Most tokens per input (default 512, or less if the model allows less)."
    ),
    seed: int = typer.Option(
        0, help="Seed of weights initialised rather than loaded (random-weights, a missing head)."
    ),
    device: str | None = typer.Option(None, help="Torch device: cpu, cuda, cuda:N (default: cuda if there is a GPU)."),
    dtype: Dtype = typer.Option(
        Dtype.float32, help="The weights' dtype (float16 needs a GPU); scores are written as float32."
    ),
    device_map: str | None = typer.Option(
        None,
        help="auto: spread a model larger than one device over the GPUs, then the CPU (needs the gpu extra: "
        "pip install 'probe-workbench[gpu]'); replaces --device.",
    ),
    format: Format = FORMAT,
    shots: int = SHOTS,
    shots_from: Path | None = SHOTS_FROM,
    shots_per_question: bool = SHOTS_PER_QUESTION,
    shot_seed: int = SHOT_SEED,
    chat_template: ChatTemplate = CHAT_TEMPLATE,
    system: str | None = SYSTEM,
    max_new_tokens: int | None = typer.Option(
        None, min=1, help="generate: the most tokens of each free answer (default 16); it stops at a newline or EOS."
    ),
    served_model: str | None = SERVED_MODEL,
    api_key_env: str = API_KEY_ENV,
    tokenizer: str | None = TOKENIZER,
    concurrency: int = CONCURRENCY,
    bos: str | None = BOS,
    timeout: float = TIMEOUT,
    dry_run: bool = typer.Option(
        False, help="A served model: print the requests and prompt tokens the run would send, and send none."
    ),
    cache: bool = typer.Option(True, help="Reuse and store model outputs in the workspace prediction cache."),
    force: bool = typer.Option(False, help="Replace --out even if it holds something other than predictions."),
    adaptive: int | None = typer.Option(
        None,
        help="Ask at most N questions, each the most informative at the ability so far (needs --irt); the "
        "file's accuracy is then an estimate for the whole set (docs/IRT.md).",
    ),
    irt: Path | None = typer.Option(None, help="The IRT fit --adaptive chooses questions by (workbench irt fit)."),
    se: float | None = typer.Option(None, min=0, help="--adaptive: stop once the ability's standard error is this."),
) -> None:
    """Score every question of a probe file with a model; write one prediction row per question."""
    import polars as pl

    from workbench.errors import SpecError, WorkbenchError
    from workbench.io import exclusive, write_parquet
    from workbench.probes.formats import read_probes
    from workbench.probes.select import sample_clusters
    from workbench.scoring import score as score_probes

    frame = read_probes(probes)
    pool = _shot_pool(frame, probes, shots, shots_from)
    if split is not None:
        available = sorted(frame["split"].unique().to_list())
        frame = frame.filter(pl.col("split") == split)
        if frame.is_empty():
            raise WorkbenchError(f"{probes} has no questions in split {split!r}; its splits are {available}")
    frame = sample_clusters(frame, max_questions, seed)
    endpoint = _endpoint(model, served_model, api_key_env, tokenizer, concurrency, bos, timeout)
    local = {} if endpoint is None else {"dtype": None}
    if dry_run:
        from workbench.scoring import plan_requests

        if endpoint is None:
            raise SpecError("--dry-run counts the requests a served model would be sent; --model is not a URL")
        plan = plan_requests(frame, endpoint, scorer=scorer.value, rule=rule, prompts=prompts, format=format.value,
                             shots=shots, shots_per_question=shots_per_question, shot_seed=shot_seed,
                             chat_template=chat_template.value, system=system, shot_pool=pool, shots_from=shots_from,
                             max_new_tokens=max_new_tokens, cache=cache)  # fmt: skip
        typer.echo(plan_line(plan, endpoint))
        return
    if out is None:
        raise SpecError("--out is missing: where to write the predictions (.parquet)")
    if (adaptive is None) != (irt is None):
        raise SpecError("--adaptive N and --irt FIT go together: give both (or neither, to score the whole set)")
    if adaptive is not None:
        from workbench.irt import IrtFit
        from workbench.irt.adaptive import askable

        fit = IrtFit.load(irt)
        askable(fit, frame, adaptive)  # refused before the model is loaded and --out locked
    with exclusive(out):  # a second run to the same --out is refused at once, naming this one
        if adaptive is not None:
            from workbench.cli.irt import adaptive_run

            loaded = _loaded(endpoint, model, scorer, control, seed, max_length, device, dtype, device_map,
                             chat_template)  # fmt: skip
            ask = functools.partial(score_probes, model=loaded, progress=False, scorer=scorer.value,
                                    control=control.value, rule=rule, seed=seed, cache=cache, prompts=prompts,
                                    name=name, format=format.value, shots=shots, shot_seed=shot_seed,
                                    chat_template=chat_template.value, system=system, shot_pool=pool,
                                    shots_from=shots_from, max_new_tokens=max_new_tokens)  # fmt: skip
            typer.echo(adaptive_run(fit, frame, ask, adaptive, se, out))
            if endpoint is not None:
                typer.echo(loaded.sent.line(loaded))
            return
        predictions = score_probes(
            frame,
            endpoint or model,
            scorer=scorer.value,
            control=control.value,
            rule=rule,
            seed=seed,
            batch_size=batch_size if batch_size == "auto" else _whole(batch_size),
            max_length=max_length,
            device=device,
            dtype=local.get("dtype", dtype.value),
            device_map=device_map,
            cache=cache,
            prompts=prompts,
            name=name,
            format=format.value,
            shots=shots,
            shots_per_question=shots_per_question,
            shot_seed=shot_seed,
            chat_template=chat_template.value,
            system=system,
            shot_pool=pool,
            shots_from=shots_from,
            max_new_tokens=max_new_tokens,
        )
        write_parquet(predictions, out)
    if rule == "all":
        accuracies = predictions.group_by("rule", maintain_order=True).agg(pl.col("correct").mean())
        shown = ", ".join(f"{name} {accuracy:.3f}" for name, accuracy in accuracies.iter_rows())
        typer.echo(
            f"scored {predictions.height // accuracies.height:,} questions with {scorer.value} "
            f"under {accuracies.height} rules "
            f"(control {control.value}): accuracy {shown} -> {out}"
        )
        return
    if scorer.value == "generate":
        kinds = predictions["match"].value_counts(sort=True).iter_rows()
        typer.echo(
            f"asked {predictions.height:,} questions for a free answer (control {control.value}): recall "
            f"{predictions['correct'].mean():.3f} ({', '.join(f'{kind} {count}' for kind, count in kinds)}) -> {out}"
        )
        return
    rules = ", ".join(f"{name} ({count})" for name, count in predictions["rule"].value_counts(sort=True).iter_rows())
    typer.echo(
        f"scored {predictions.height:,} questions with {scorer.value} (rule {rules}, control {control.value}): "
        f"accuracy {predictions['correct'].mean():.3f} -> {out}"
    )


def _endpoint(model: str, served_model, api_key_env: str, tokenizer, concurrency: int, bos, timeout: float = 120.0):
    """The ``Endpoint`` a URL ``--model`` names with the served-model options, or None for a local model (the
    served-model options are then refused)."""
    from workbench.errors import SpecError
    from workbench.scoring.served import KEY_ENV, Endpoint, is_endpoint

    if is_endpoint(model):
        return Endpoint(model, served_model, api_key_env, tokenizer, concurrency, bos or "", timeout)
    given = {"--served-model": served_model, "--tokenizer": tokenizer, "--bos": bos,
             "--api-key-env": None if api_key_env == KEY_ENV else api_key_env,
             "--concurrency": None if concurrency == 8 else concurrency,
             "--timeout": None if timeout == 120.0 else timeout}  # fmt: skip
    named = [option for option, value in given.items() if value is not None]
    if named:
        raise SpecError(f"{', '.join(named)} are for a served model (--model http://HOST:PORT/v1), not {model}; "
                        "leave them out")  # fmt: skip
    return None


def plan_line(plan, endpoint) -> str:
    """The dry run's line: requests, what the cache holds, prompt tokens (counted or estimated)."""
    counted = plan["prompt_tokens"].sum()
    how = "counted" if plan["counted"].all() else "estimated at 4 characters a token; --tokenizer counts them"
    return (f"would send {plan['requests'].sum():,} requests to {endpoint.host} ({plan['model'][0]}), "
            f"{plan['cached'].sum():,} more answered from the cache: {counted:,} prompt tokens ({how}), "
            f"at most {plan['completion_tokens'].sum():,} completion tokens; nothing was sent")  # fmt: skip


def _shot_pool(frame, probes: Path, shots: int, shots_from: Path | None):
    """The frame shots are drawn from: ``--shots-from``, else the train split of a probe folder."""
    import polars as pl

    from workbench.errors import SpecError
    from workbench.probes.formats import read_probes

    if shots == 0:
        return None
    if shots_from is not None:
        return read_probes(shots_from)
    if not probes.is_dir():
        raise SpecError(
            f"--shots {shots} needs worked examples: pass --shots-from (a probe file or folder, e.g. a train split); "
            f"only a probe folder ({probes} is a file) lends its train split by default"
        )
    train = frame.filter(pl.col("split") == "train")
    if train.is_empty():
        raise SpecError(f"{probes} has no train split to draw --shots {shots} from; pass --shots-from")
    return train


def _whole(text: str) -> int:
    from workbench.errors import SpecError

    try:
        return int(text)
    except ValueError:
        raise SpecError(f"--batch-size {text!r} is not a whole number; pass one (e.g. 32) or auto") from None


def register(app: typer.Typer) -> None:
    app.command("score")(score)


def _loaded(endpoint, model, scorer, control, seed, max_length, device, dtype, device_map, chat_template):
    """--adaptive asks one question at a time: a local model is loaded once for all of them, a served one connected
    once (its models listed, its echo checked, once) and what it was sent counted over all of them."""
    if endpoint is not None:
        from workbench.scoring.serving import connected
        from workbench.scoring.spec import ScoreSpec

        return connected(endpoint, ScoreSpec(scorer.value, control=control.value, chat_template=chat_template.value))
    from workbench.scoring.models import load_model

    return load_model(model, scorer.value, control.value, seed, max_length, device, dtype.value, device_map)
