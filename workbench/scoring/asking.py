"""Ways of asking a language model a multiple-choice question, as the harnesses do (lm-evaluation-harness, OLMES).

A *way of asking* (``Asking``) is data: the format (``cloze``: each choice scored as the continuation of the
question; ``letters``: the choices listed as "A. ..." lines and the letter scored), ``shots`` worked examples
before the question, the model's chat template (``chat_template="auto"``) with an optional system instruction,
the shots as turns of the chat (lm-eval's ``--fewshot_as_multiturn``). ``render`` turns question-choice pairs
into the (prompt, neutral, continuation) texts the causal and seq2seq scorers run, exactly as lm-eval renders
them for a task written by ``workbench export lm-eval``:

- without a chat template: ``system + shot_1 + "\\n\\n" + ... + shot_k + "\\n\\n" + prompt``, each shot its prompt
  followed by its answer's continuation (the choice template's leading space, then the answer);
- with one: ``tokenizer.apply_chat_template(messages, add_generation_prompt=True)`` over the system message,
  each shot as a user turn and an assistant turn (its answer, no leading space), and the question as the last
  user turn; the continuation is then the answer without its leading space (lm-eval's ``target_delimiter``
  is empty under a chat template).

Shots (``draw_shots``) come from another probe set (the train split by default), seeded, never of a scored
question's concept, cluster or gold; in ``letters`` their gold letters are balanced by moving each shot's gold
to a letter of an even, shuffled cycle. The neutral prompt of the ``mi`` rule stays the bare question-free
prompt, with no shots and no template.

>>> Asking(format="letters", shots=5, chat_template="auto").label  # doctest: +SKIP
'letters/5-shot/chat'
"""

import hashlib
import itertools
import json
import string
from dataclasses import dataclass

import numpy as np
import polars as pl

from workbench.errors import SpecError, WorkbenchError
from workbench.probes.templates import fill, fill_column
from workbench.schema import PROBE_SCHEMA, conform
from workbench.scoring.prompts import PromptTemplates

FORMATS = ("cloze", "letters")
CHAT_TEMPLATES = ("none", "auto")
LETTERS = string.ascii_uppercase
SHOT_DELIMITER = "\n\n"
"""Between shots, and between the last shot and the question (lm-eval's ``fewshot_delimiter``)."""
MAX_SHOTS = 64
TURN = ("probe", "question", "choices", "answer")
"""The probe columns a question's turn is rendered from (``turn``)."""


@dataclass(frozen=True)
class Asking:
    """How a language model is asked: ``format`` (cloze, letters), ``shots`` (worked examples, 0 for zero-shot),
    ``shots_per_question`` (draw anew for each question rather than one set for all), ``shot_seed``,
    ``chat_template`` ("none", or "auto": the tokenizer's own), ``system`` (an instruction: the chat's system
    message, or text put before the prompt without a template).

    >>> Asking("letters", shots=5).label
    'letters/5-shot/plain'
    """

    format: str = "cloze"
    shots: int = 0
    shots_per_question: bool = False
    shot_seed: int = 0
    chat_template: str = "none"
    system: str | None = None

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise SpecError(f"format={self.format!r} is not a way of asking; choose one of {list(FORMATS)}")
        if self.chat_template not in CHAT_TEMPLATES:
            raise SpecError(f"chat_template={self.chat_template!r}: choose one of {list(CHAT_TEMPLATES)}")
        if not isinstance(self.shots, int) or not 0 <= self.shots <= MAX_SHOTS:
            raise SpecError(f"shots={self.shots!r} is out of range; use a whole number from 0 to {MAX_SHOTS}")
        if not isinstance(self.shot_seed, int) or not 0 <= self.shot_seed < 2**32:
            raise SpecError(f"shot_seed={self.shot_seed!r} is out of range; use a whole number from 0 to 2**32 - 1")
        if self.system is not None and (not isinstance(self.system, str) or not self.system.strip()):
            raise SpecError("system must be a non-empty text, or left out")

    @classmethod
    def from_label(cls, label: str, system: str | None = None, shot_seed: int = 0) -> "Asking":
        """The way a ``label`` names (``"letters/5-shot/chat"``; the parts after the third are digests, ignored).

        >>> Asking.from_label("letters/5-shot/chat") == Asking("letters", shots=5, chat_template="auto")
        True
        """
        parts = label.split("/")
        shots = parts[1].removesuffix("-shot").removesuffix("-shots per question") if len(parts) > 1 else "0"
        if len(parts) < 3 or not shots.isdigit() or parts[2] not in ("chat", "plain"):
            raise SpecError(
                f"{label!r} does not name a way of asking; write FORMAT/K-shot/TEMPLATE, e.g. letters/5-shot/chat "
                f"(FORMAT one of {list(FORMATS)}, TEMPLATE chat or plain)"
            )
        return cls(
            parts[0], int(shots), parts[1].endswith("per question"), shot_seed,
            "auto" if parts[2] == "chat" else "none", system,
        )  # fmt: skip

    @property
    def default(self) -> bool:
        """Zero-shot cloze without template or instruction: how the scorers asked before there were ways."""
        return self == Asking()

    @property
    def label(self) -> str:
        """A short readable name of the way: format, shots, template (and an instruction, if any)."""
        parts = [self.format, f"{self.shots}-shot" + ("s per question" if self.shots_per_question else "")]
        parts.append("chat" if self.chat_template == "auto" else "plain")
        if self.system is not None:
            parts.append("system")
        return "/".join(parts)


@dataclass(frozen=True)
class Shots:
    """The worked examples drawn for a scoring run: ``frame`` (probe columns, plus ``row``: the scored question
    each shot belongs to, or -1 for shots shared by every question, and ``position``: its place, 0 first);
    ``digest`` names them (ids, choices and answers, in order)."""

    frame: pl.DataFrame
    digest: str


def draw_shots(
    pool: pl.DataFrame, probes: pl.DataFrame, asking: Asking, *, source: str = "the shot source"
) -> Shots | None:
    """``asking.shots`` worked examples from ``pool`` for the questions of ``probes`` (None for zero-shot).

    Shots never come from a scored question's cluster; shared shots (the default) avoid every scored question's
    concept and gold too, per-question shots their own question's. A pool that holds scored questions is
    refused (take the shots from another split), and so is one of another probe (hyponymy shots teach another task
    than the hypernymy questions they precede) or with too few questions left."""
    if asking.shots == 0:
        return None
    pool = conform(pool, PROBE_SCHEMA, source).unique("id", keep="first", maintain_order=True)
    asked, held = sorted(set(probes["probe"])), sorted(set(pool["probe"]))
    if not set(asked) <= set(held):
        raise WorkbenchError(
            f"{source} holds {', '.join(held)} questions, but the scored questions are {', '.join(asked)}: shots of "
            "another probe show another task; take them from the same probe (--shots-from its train split)"
        )
    pool = pool.filter(pl.col("probe").is_in(asked))
    content = ["id", "question", "choices"]  # released files reuse ids (DictionaryQA's train and test): not enough
    same = pool.select(content).join(probes.select(content), on=content, how="semi")["id"].to_list()
    if same:
        raise WorkbenchError(
            f"{source} holds {len(same)} of the scored questions themselves (e.g. id {sorted(same)[0]!r}): shots "
            "must come from other clusters; take them from another split (--shots-from the train split)"
        )
    pool = pool.filter(~pl.col("cluster_id").is_in(probes["cluster_id"].unique().implode()))
    if pool.height < asking.shots:
        raise WorkbenchError(
            f"{source} holds {pool.height} questions outside the scored clusters, fewer than the {asking.shots} shots "
            "asked; ask fewer shots "
            "or pass a larger --shots-from"
        )
    concepts = pool["concept"].to_list()
    golds = pool["gold_concept"].to_list()
    if asking.shots_per_question:  # each question's own draw, seeded by its id (the same in any set)
        taken = [
            (
                row,
                _pick(
                    _order(pool.height, asking.shot_seed, id), concepts, golds, {concept, gold}, asking.shots, source
                ),
            )
            for row, (id, concept, gold) in enumerate(probes.select("id", "concept", "gold_concept").iter_rows())
        ]
    else:
        avoid = set(probes["concept"].to_list()) | set(probes["gold_concept"].to_list())
        order = _order(pool.height, asking.shot_seed, "")
        taken = [(-1, _pick(order, concepts, golds, avoid, asking.shots, source, shared=True))]
    frame = pl.concat(
        [
            pool[picked].with_columns(row=pl.lit(row, pl.Int64), position=pl.int_range(pl.len(), dtype=pl.Int64))
            for row, picked in taken
        ]
    )
    if asking.format == "letters":
        frame = _balance_letters(frame, asking.shot_seed)
    digest = hashlib.sha256(
        json.dumps(frame.select("row", "id", "choices", "answer").rows(), ensure_ascii=False).encode()
    ).hexdigest()[:16]
    return Shots(frame, digest)


def _order(size: int, seed: int, key: str) -> np.ndarray:
    """A seeded permutation of the pool, one per ``key`` (a question id, or "" for the shared draw)."""
    salt = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")
    return np.random.default_rng([seed, salt]).permutation(size)


def _pick(
    order: np.ndarray, concepts: list, golds: list, avoid: set, count: int, source: str, shared: bool = False
) -> list[int]:
    """The first ``count`` pool rows in ``order`` whose concept and gold are not in ``avoid``, one per concept."""
    picked, seen = [], set()
    for index in order:
        concept, gold = concepts[index], golds[index]
        if concept in avoid or gold in avoid or concept in seen:
            continue
        picked.append(int(index))
        seen.add(concept)
        if len(picked) == count:
            return picked
    fix = "ask fewer shots, pass a larger --shots-from" + ("" if not shared else ", or --shots-per-question")
    raise WorkbenchError(
        f"{source} has only {len(picked)} questions of other concepts and golds than the scored ones, fewer than "
        f"the {count} shots asked; {fix}"
    )


def _balance_letters(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    """Each run of shots with its gold moved to an even, shuffled cycle of letters (the choice there swapped in)."""
    rng = np.random.default_rng([seed, 0x1E77])
    choices, answers = [], []
    for _, part in frame.group_by("row", maintain_order=True):
        width = min(len(options) for options in part["choices"])
        cycle = np.resize(rng.permutation(width), part.height)
        for options, answer, target in zip(part["choices"].to_list(), part["answer"].to_list(), cycle):
            options = list(options)
            options[answer], options[target] = options[target], options[answer]
            choices.append(options)
            answers.append(int(target))
    return frame.with_columns(choices=pl.Series(choices, dtype=pl.List(pl.String)), answer=pl.Series(answers))


def render(
    pairs: pl.DataFrame,
    probes: pl.DataFrame,
    templates: PromptTemplates,
    asking: Asking,
    shots: Shots | None = None,
    tokenizer=None,
) -> pl.DataFrame:
    """``pairs`` (``row``, ``probe``, ``question``, ``choice``; one per choice of ``probes``' rows, in order) with
    ``prompt``, ``neutral`` and ``continuation``: the texts the scorer runs, asked as ``asking`` says.

    ``tokenizer``: the model's, whose ``apply_chat_template`` renders the chat (``chat_template="auto"``)."""
    chat = asking.chat_template == "auto"
    if chat:
        check_chat_template(tokenizer)
    if asking.format == "letters":
        widest = probes["choices"].list.len().max()
        if widest > len(LETTERS):
            raise WorkbenchError(
                f"letters can name at most {len(LETTERS)} choices, and a question here has {widest}; "
                "ask in cloze (--format cloze) or drop the longer questions"
            )
    cloze = asking.format == "cloze"  # its prompts and continuations are filled for all rows at once (``by_probe``)
    users, answers, examples = _turns(probes, templates, asking, shots)
    if chat:
        prompts = [
            tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)
            for conversation in conversations(users, examples, asking.system)
        ]
    elif examples or asking.system is not None:
        lead = (asking.system + SHOT_DELIMITER) if asking.system is not None else ""
        prompts = [
            lead + "".join(user + answer + SHOT_DELIMITER for user, answer in shown) + question
            for shown, question in zip(examples or itertools.repeat([]), users)
        ]
    else:
        prompts = users
    if cloze:
        kinds = pairs["probe"].unique().to_list()
        filled = pairs.select(by_probe(templates, kinds, "choice", {"choice": pl.col("choice")})).to_series()
    else:
        filled = pl.Series(list(itertools.chain.from_iterable(answers)), dtype=pl.String)
    continuation = pl.Series([text.lstrip() for text in filled.to_list()], dtype=pl.String) if chat else filled
    kinds = probes["probe"].to_list()
    by_kind = {probe: fill(templates.entry(probe)["neutral"], {}) for probe in set(kinds)}
    neutral = [by_kind[probe] for probe in kinds]
    return pairs.with_columns(
        prompt=pl.Series(prompts, dtype=pl.String).gather(pairs["row"]),
        neutral=pl.Series(neutral, dtype=pl.String).gather(pairs["row"]),
        continuation=continuation.alias("continuation"),
    )


def _turns(
    probes: pl.DataFrame, templates: PromptTemplates, asking: Asking, shots: Shots | None
) -> tuple[list[str], list[list[str]], list[list[tuple[str, str]]] | None]:
    """Each question's user text, its choices' continuations (letters only; cloze fills them per pair) and the
    (user, answer) turns of its shots (None without shots)."""
    if asking.format == "cloze":
        question = {"question": pl.col("question")}
        users = probes.select(by_probe(templates, probes["probe"].unique().to_list(), "prompt", question))
        users, answers = users.to_series().to_list(), []
    else:
        turns = [turn(templates, asking.format, *row) for row in probes.select(*TURN).iter_rows()]
        users, answers = [user for user, _, _ in turns], [texts for _, texts, _ in turns]
    shot_turns: dict[int, list[tuple[str, str]]] = {}
    if shots is not None:
        for (row,), part in shots.frame.sort("row", "position").group_by("row", maintain_order=True):
            rendered = (turn(templates, asking.format, *shot) for shot in part.select(*TURN).iter_rows())
            shot_turns[row] = [(user, texts[answer]) for user, texts, answer in rendered]
    examples = [shot_turns.get(row, shot_turns.get(-1, [])) for row in range(len(users))] if shot_turns else None
    return users, answers, examples


def conversations(
    users: list[str], examples: list[list[tuple[str, str]]] | None, system: str | None
) -> list[list[dict[str, str]]]:
    """Each question as chat messages: the system message, each shot as a user turn and an assistant turn (its
    answer, no leading space), the question as the last user turn."""
    chats = []
    for row, user in enumerate(users):
        messages = [{"role": "system", "content": system}] if system is not None else []
        for shot_user, shot_answer in examples[row] if examples else []:
            messages += [{"role": "user", "content": shot_user}, {"role": "assistant", "content": shot_answer.lstrip()}]
        chats.append([*messages, {"role": "user", "content": user}])
    return chats


def chats(
    probes: pl.DataFrame, templates: PromptTemplates, asking: Asking, shots: Shots | None = None
) -> list[list[dict[str, str]]]:
    """Each question of ``probes`` as the chat messages ``render`` gives a chat template (for a server that applies
    its own: ``workbench.scoring.served``)."""
    users, _, examples = _turns(probes, templates, asking, shots)
    return conversations(users, examples, asking.system)


def by_probe(templates: PromptTemplates, kinds: list[str | None], part: str, values: dict[str, pl.Expr]) -> pl.Expr:
    """Each row's ``part`` template ("prompt", "choice") of its ``probe`` type (one of ``kinds``) filled from
    ``values``, as one polars expression over all rows."""
    by_template: dict[str, list[str]] = {}
    for kind in kinds:
        by_template.setdefault(templates.entry(kind)[part], []).append(kind or "")
    (first, _), *others = by_template.items()
    filled = fill_column(first, values)
    probe = pl.col("probe").fill_null("")
    for template, group in others:
        filled = pl.when(probe.is_in(group)).then(fill_column(template, values)).otherwise(filled)
    return filled.alias(part)


def turn(
    templates: PromptTemplates,
    format: str,
    probe: str,
    question: str,
    choices: list[str],
    answer: int,
    continuations: bool = True,
) -> tuple[str, list[str], int]:
    """A question's user text, each choice's continuation (with the template's leading space; in cloze, none without
    ``continuations``), its answer."""
    if format == "letters":
        user, texts = templates.render_letters(probe, question, list(choices))
        return user, texts, answer
    entry = templates.entry(probe)
    texts = [fill(entry["choice"], {"choice": choice}) for choice in choices] if continuations else []
    return fill(entry["prompt"], {"question": question}), texts, answer


def check_chat_template(tokenizer) -> None:
    """A one-line error if the tokenizer has no chat template to ask with."""
    if tokenizer is None or not getattr(tokenizer, "chat_template", None):
        name = getattr(tokenizer, "name_or_path", "") or "this model"
        raise WorkbenchError(
            f"the tokenizer of {name} has no chat template; ask without one (--chat-template none), or use an "
            "instruction-tuned model whose tokenizer_config.json has a chat_template"
        )
