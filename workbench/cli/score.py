"""``workbench score``: score a model on a probe file and write the predictions as Parquet."""

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


class Control(str, Enum):
    none = "none"
    random_weights = "random-weights"
    static_embeddings = "static-embeddings"


@declares(
    model=Reads(), probes=Reads(), prompts=Reads(), shots_from=Reads(), out=Writes("predictions"), name=Label()
)
def score(
    model: str = typer.Option(..., help="A model folder, or a hub name in the local Hugging Face cache."),
    scorer: Scorer = typer.Option(
        ...,
        help="mcqa (multiple-choice head), mlm (masked LM), similarity (cosine), causal (decoder-only LM), "
        "seq2seq (encoder-decoder LM), generate (a causal LM's free answer, matched to the gold: recall).",
    ),
    probes: Path = typer.Option(..., help="Probe file (.parquet, ARC-style .jsonl) or a folder of split files."),
    out: Path = typer.Option(..., help="Where to write the predictions (.parquet)."),
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
    cache: bool = typer.Option(True, help="Reuse and store model outputs in the workspace prediction cache."),
    force: bool = typer.Option(False, help="Replace --out even if it holds something other than predictions."),
) -> None:
    """Score every question of a probe file with a model; write one prediction row per question."""
    import polars as pl

    from workbench.errors import WorkbenchError
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
    with exclusive(out):  # a second run to the same --out is refused at once, naming this one
        predictions = score_probes(
            frame,
            model,
            scorer=scorer.value,
            control=control.value,
            rule=rule,
            seed=seed,
            batch_size=batch_size if batch_size == "auto" else _whole(batch_size),
            max_length=max_length,
            device=device,
            dtype=dtype.value,
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
