"""What the language-model scorers (causal, seq2seq) share: tokenising a (prompt, continuation) unit,
truncating its prompt, and turning the continuation's token log-probabilities into the rules.

A unit's cached output is the log-probability of each continuation token given the prompt and the
tokens before it, so every rule comes from one model run (``rule="all"`` reports them side by side):

- ``sum``: the sum of the choice's token log-probabilities (lm-evaluation-harness ``acc``);
- ``mean-token``: that sum over the number of tokens (no penalty for long choices);
- ``mean-char``: that sum over the number of characters of the choice (tokeniser-independent;
  the harness's ``acc_norm`` uses bytes);
- ``mi``: that sum minus the choice's sum under the question-free neutral prompt (pointwise mutual
  information between question and choice: how much the question raises the choice's likelihood).

Prompt and continuation are tokenised apart and concatenated (the harness's convention; the
continuation template gives the leading space), so a choice's tokens never depend on its prompt.
Over-long prompts lose tokens from the left (after any leading special token), never the choice.
"""

from __future__ import annotations  # the local model's types (torch) are annotations only: a served model's rules

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from workbench.errors import WorkbenchError
from workbench.scoring.cache import PredictionCache
from workbench.scoring.scorers import LM_RULES

if TYPE_CHECKING:
    from workbench.scoring.batching import Features, Unit, Work
    from workbench.scoring.models import Model

RULES = LM_RULES
TEXT_PAIR = {"prompt": pl.String, "continuation": pl.String}


def choice_scores(
    model: Model,
    pairs: pl.DataFrame,
    rule: str,
    batch_size: int | str,
    cache: PredictionCache | None,
    progress: bool,
    work: Work,
) -> pl.DataFrame:
    """``pairs`` (with ``prompt``, ``neutral``, ``continuation``) with ``score`` and ``rule``; for
    ``rule="all"``, one copy of ``pairs`` per rule, stacked in the order of ``RULES``."""
    from workbench.scoring.batching import compute

    return rule_scores(pairs, rule, lambda units: compute(model, work, units, batch_size, cache, progress))


def rule_scores(
    pairs: pl.DataFrame, rule: str, outputs: Callable[[list[Unit]], dict[Unit, np.ndarray]]
) -> pl.DataFrame:
    """``choice_scores`` from ``outputs``, which gives each (prompt, continuation) unit's token log-probabilities
    (a local model's ``compute``, or a served model's answers: ``workbench.scoring.served``)."""
    rules = RULES if rule == "all" else (rule,)
    units, neutral = rule_units(pairs, rules)
    values = outputs(units + neutral)
    sums, tokens = token_sums(values, units)
    by_rule = {
        "sum": lambda: sums,
        "mean-token": lambda: sums / tokens,
        "mean-char": lambda: sums / pairs["choice"].str.len_chars().to_numpy(),
        "mi": lambda: sums - token_sums(values, neutral)[0],
    }
    return pl.concat([pairs.with_columns(score=pl.Series(by_rule[name]()), rule=pl.lit(name)) for name in rules])


def rule_units(pairs: pl.DataFrame, rules: tuple[str, ...]) -> tuple[list[Unit], list[Unit]]:
    """The (prompt, continuation) units ``rules`` read: each pair's, and (``mi``) its question-free neutral one."""
    continuations = pairs["continuation"].to_list()
    units = list(zip(shared_texts(pairs["prompt"]), continuations))
    return units, list(zip(shared_texts(pairs["neutral"]), continuations)) if "mi" in rules else []


def shared_texts(texts: pl.Series) -> list[str]:
    """``texts.to_list()`` with one string object for each distinct text (a question's choices share its prompt): hashed
    once, and fewer objects for the thread that runs the model to make and free.

    >>> first, _, again = shared_texts(pl.Series(["Q: a", "Q: b", "Q: a"]))
    >>> first is again
    True
    """
    distinct = texts.unique(maintain_order=True)
    return list(map(distinct.to_list().__getitem__, texts.cast(pl.Enum(distinct)).to_physical().to_list()))


def token_sums(values: dict[Unit, np.ndarray], units: list[Unit]) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's sum of token log-probabilities (in float64) and its number of tokens, over all units at once.

    >>> values = {("p", " a"): np.array([-1.5, -0.25], np.float32), ("p", " b"): np.array([-2.0], np.float32)}
    >>> token_sums(values, [("p", " b"), ("p", " a")])
    (array([-2.  , -1.75]), array([1, 2]))
    """
    arrays = list(map(values.__getitem__, units))
    tokens = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
    if not arrays:
        return np.zeros(0), tokens
    return np.add.reduceat(np.concatenate(arrays).astype(np.float64), np.cumsum(tokens) - tokens), tokens


def encode_units(model: Model, units: list[Unit], joint_limit: bool, prompt_special: bool) -> list[Features]:
    """Tokenise (prompt, continuation) units apart: ``prompt`` (a tuple, so units can share it),
    ``continuation``, ``input_ids`` (both, for ordering), ``truncated``.

    ``joint_limit``: prompt and continuation share ``max_length`` (causal) rather than each having it
    (seq2seq). ``prompt_special``: the prompt gets the tokenizer's special tokens (an encoder input);
    otherwise only a BOS the tokenizer would add itself (a decoder-only prompt).
    """
    tokenizer = model.tokenizer
    prompts = _tokenized(tokenizer, [prompt for prompt, _ in units], prompt_special)  # a question's choices share it
    continuations = _tokenized(tokenizer, [text for _, text in units], False)
    lead = [] if prompt_special else _leading_bos(model)
    fallback = [token for token in (tokenizer.bos_token_id, tokenizer.eos_token_id) if token is not None][:1]
    special = set(tokenizer.all_special_ids)
    features = []
    for (prompt_text, text), prompt, continuation in zip(units, prompts, continuations):
        prompt = lead + prompt or fallback
        if not prompt or not continuation:
            raise WorkbenchError(
                f"cannot score {text!r} after {prompt_text!r}: the "
                f"{'choice' if prompt else 'prompt'} has no tokens and the tokenizer of {model.name} has no BOS or EOS "
                "token to stand in; check the prompt templates (--prompts) and the choice"
            )
        room = model.max_length - (len(continuation) if joint_limit else 0)
        if len(continuation) > model.max_length - (1 if joint_limit else 0):
            raise WorkbenchError(
                f"the choice {text!r} is {len(continuation)} tokens, more than max_length={model.max_length} leaves "
                "for it; the choice is never truncated, so raise max_length or shorten the choice"
            )
        truncated = len(prompt) > room
        if truncated:
            keep = next((index for index, token in enumerate(prompt) if token not in special), 0)
            keep = min(keep, room - 1)
            prompt = prompt[:keep] + prompt[len(prompt) - (room - keep) :]
        features.append(
            {
                "prompt": tuple(prompt),
                "continuation": continuation,
                "input_ids": prompt + continuation,
                "truncated": truncated,
            }
        )
    return features


def by_prompt(features: list[Features]) -> np.ndarray:
    """The order that keeps the units of one prompt together, longest prompts first (then longest continuations)."""
    keys = [(-len(item["prompt"]), item["prompt"], -len(item["continuation"])) for item in features]
    return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)


def by_prompt_text(units: list[Unit]) -> np.ndarray:
    """``by_prompt`` on the units' text, before they are tokenised (the choices of one prompt stay in one chunk):
    longest prompt first, the same prompts together (in code-point order), longest continuation first; ties keep
    their order.

    >>> by_prompt_text([("Q: a", " x"), ("Q: bb", " y"), ("Q: a", " zzz"), ("Q: c", " w")]).tolist()
    [1, 2, 0, 3]
    """
    frame = pl.DataFrame(
        {"prompt": [unit[0] for unit in units], "continuation": [unit[1] for unit in units]}, schema=TEXT_PAIR
    )
    ordered = frame.with_row_index().sort(
        pl.col("prompt").str.len_chars(), "prompt", pl.col("continuation").str.len_chars(),
        descending=[True, False, True], maintain_order=True,
    )  # fmt: skip
    return ordered["index"].to_numpy().astype(np.int64)


def _tokenized(tokenizer, texts: list[str], special: bool) -> list[list[int]]:
    """Each text's token ids, each distinct text tokenised once (the lists are shared: read them, never change them)."""
    distinct = list(dict.fromkeys(texts))
    ids = dict(zip(distinct, tokenizer(distinct, add_special_tokens=special, verbose=False)["input_ids"]))
    return [ids[text] for text in texts]


def _leading_bos(model: Model) -> list[int]:
    """``[bos]`` if the tokenizer puts a BOS before a text by itself (Llama-style), else ``[]`` (GPT-2)."""
    bos = model.tokenizer.bos_token_id
    probe = model.tokenizer("a", verbose=False)["input_ids"]
    return [bos] if bos is not None and probe[:1] == [bos] else []
