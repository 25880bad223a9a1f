"""oLMpics MC-MLM probes (SPEC §9; Talmor et al. 2020): the frame, four generators, and a JSONL format.

``OLMPICS_SCHEMA`` is one row per statement: a single ``[MASK]``, the candidate words (every one a
single token for the model that scores it), the gold index, and two lists the language controls
need: ``args`` (the words the task is about, all that NO-LANG keeps) and ``keywords`` (the words
PERTURBED-LANG replaces with nonsense). Generators keep train and dev apart as the paper does:

- ``age-compare``: train ages 43-120, dev ages 15-38;
- ``antonym-negation``: WordNet adjective antonym and synonym pairs (half each); no word in both splits;
- ``taxonomy-conjunction``: two nouns under different children of their lowest common hypernym
  (the gold); distractors are hypernyms of one entity only; dev is the food and animal trees,
  train the rest of WordNet, with no word of a dev row in any train row;
- ``multi-hop-comparison``: three ages, oldest or youngest; train 43-120, dev 15-38.

>>> frame = build_olmpics(OlmpicsSpec("age-compare", n_train=500, n_dev=100, seed=0))  # doctest: +SKIP
>>> write_jsonl(frame, "probes/age.jsonl"); read_jsonl("probes/age.jsonl")  # doctest: +SKIP
"""

import hashlib
import json
import random
from dataclasses import dataclass
from itertools import permutations
from pathlib import Path

import polars as pl

from workbench.errors import ProbeFormatError, SpecError
from workbench.io import write_text
from workbench.schema import conform

OLMPICS_PROBES = ("age-compare", "antonym-negation", "taxonomy-conjunction", "multi-hop-comparison")
OLMPICS_SPLITS = ("train", "dev")
MASK = "[MASK]"

OLMPICS_SCHEMA: dict[str, pl.DataType] = {
    "id": pl.String(),  # stable id (hash of probe, split and statement)
    "probe": pl.String(),  # one of OLMPICS_PROBES, or the user's own name
    "split": pl.String(),  # "train" or "dev"
    "statement": pl.String(),  # the statement, with exactly one [MASK]
    "choices": pl.List(pl.String()),  # candidate words for the mask
    "answer": pl.Int64(),  # index of the gold candidate
    "args": pl.List(pl.String()),  # the task's arguments, in the statement (kept by NO-LANG)
    "keywords": pl.List(pl.String()),  # key words of the template (replaced by PERTURBED-LANG)
    "control": pl.String(),  # "none", "no-lang" or "perturbed-lang"
    "concepts": pl.List(pl.String()),  # WordNet synsets behind the words (entities, gold, distractors), or []
}

AGE_RANGES = {"train": (43, 120), "dev": (15, 38)}
TEMPLATES = {
    "age-compare": "A {0} year old person is [MASK] than me in age, If I am a {1} year old person.",
    "antonym-negation": "He was [MASK] {0}, he was very {1}.",
    "taxonomy-conjunction": "{0} {1} and {2} {3} are both a type of [MASK].",
    "multi-hop-comparison": "When comparing a {0}, a {1} and a {2} year old, the [MASK] is {3}.",
}
KEYWORDS = {
    "age-compare": ["age", "than"],
    "antonym-negation": ["was", "very"],
    "taxonomy-conjunction": ["and", "both"],
    "multi-hop-comparison": ["comparing", "and"],
}
DEV_ROOTS = ("food.n.01", "food.n.02", "animal.n.01")


@dataclass(frozen=True)
class OlmpicsSpec:
    """Which probe to generate, how many statements per split, and the seed.

    ``min_count``: WordNet words must have at least this SemCor count (the paper kept frequent
    words, by Google Books counts we do not have); 0 keeps every word.

    >>> OlmpicsSpec("age-compare", n_train=1000, n_dev=200)  # doctest: +ELLIPSIS
    OlmpicsSpec(probe='age-compare', ...)
    """

    probe: str
    n_train: int = 4000
    n_dev: int = 500
    seed: int = 0
    min_count: int = 0

    def __post_init__(self) -> None:
        if self.probe not in OLMPICS_PROBES:
            raise SpecError(f"probe={self.probe!r} is not an oLMpics probe; choose one of {list(OLMPICS_PROBES)}")
        for name, low, high in (
            ("n_train", 0, 1_000_000),
            ("n_dev", 0, 1_000_000),
            ("seed", 0, 2**32 - 1),
            ("min_count", 0, 10_000),
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise SpecError(f"{name}={value!r} is out of range; use a whole number from {low} to {high}")


def build_olmpics(spec: OlmpicsSpec, graph=None, vocabulary: frozenset[str] | None = None) -> pl.DataFrame:
    """Generate ``spec.probe`` as an ``OLMPICS_SCHEMA`` frame (train rows, then dev rows).

    ``graph``: the WordNet ``Graph`` (loaded when needed); ``vocabulary``: if given, every candidate
    word must be in it (pass a tokenizer's single-token words so MC-MLM can score every row).
    """
    rng = random.Random(spec.seed)
    if spec.probe == "age-compare":
        rows = _age_compare(spec, rng)
    elif spec.probe == "multi-hop-comparison":
        rows = _multi_hop(spec, rng)
    elif spec.probe == "antonym-negation":
        rows = _antonym_negation(spec, rng)  # its candidates (not, very) are fixed
    else:
        if graph is None:
            from workbench.knowledge import load_graph

            graph = load_graph("wordnet")
        rows = _taxonomy_conjunction(spec, rng, graph, vocabulary)
    return _frame(spec.probe, rows)


def _frame(probe: str, rows: list[dict]) -> pl.DataFrame:
    rows = list({row_id(probe, row["split"], row["statement"]): row for row in rows}.values())
    for row in rows:
        row.setdefault("control", "none")
        row.setdefault("concepts", [])
        row["probe"] = probe
        row["id"] = row_id(probe, row["split"], row["statement"], row.get("control", "none"))
    return conform(pl.DataFrame(rows, schema_overrides=OLMPICS_SCHEMA), OLMPICS_SCHEMA, "oLMpics frame")


def row_id(probe: str, split: str, statement: str, control: str = "none") -> str:
    """The stable id of a statement: a short hash of what makes it unique."""
    return hashlib.sha256(f"{probe}\x1f{split}\x1f{statement}\x1f{control}".encode()).hexdigest()[:16]


def _age_compare(spec: OlmpicsSpec, rng: random.Random) -> list[dict]:
    rows = []
    for split, count in (("train", spec.n_train), ("dev", spec.n_dev)):
        low, high = AGE_RANGES[split]
        pairs = list(permutations(range(low, high + 1), 2))
        for first, second in rng.sample(pairs, min(count, len(pairs))):
            rows.append({
                "split": split, "statement": TEMPLATES["age-compare"].format(first, second),
                "choices": ["younger", "older"], "answer": int(first > second),
                "args": [str(first), str(second)], "keywords": KEYWORDS["age-compare"],
            })  # fmt: skip
    return rows


def _multi_hop(spec: OlmpicsSpec, rng: random.Random) -> list[dict]:
    rows = []
    for split, count in (("train", spec.n_train), ("dev", spec.n_dev)):
        low, high = AGE_RANGES[split]
        seen: set[tuple] = set()
        ordinals = ["first", "second", "third"]
        limit = (high - low + 1) * (high - low) * (high - low - 1) * 2
        while len(seen) < min(count, limit):
            ages = tuple(rng.sample(range(low, high + 1), 3))
            word = rng.choice(("oldest", "youngest"))
            if (ages, word) in seen:
                continue
            seen.add((ages, word))
            target = max(ages) if word == "oldest" else min(ages)
            rows.append({
                "split": split, "statement": TEMPLATES["multi-hop-comparison"].format(*ages, word),
                "choices": ordinals, "answer": ages.index(target),
                "args": [*map(str, ages), word], "keywords": KEYWORDS["multi-hop-comparison"],
            })  # fmt: skip
    return rows


def antonym_and_synonym_pairs(min_count: int = 0) -> tuple[list, list]:
    """Single-word WordNet adjective pairs: (antonyms, synonyms), each a sorted list of sorted pairs.

    Antonyms are lemma antonym links; synonyms are two lemmas of one adjective synset that are
    antonyms in no sense. Both words need a SemCor count of at least ``min_count``.
    """
    from workbench.knowledge.wordnet import open_wordnet

    reader = open_wordnet()
    counts: dict[str, int] = {}
    antonyms, synonyms = set(), set()
    ok = lambda name: "_" not in name and "-" not in name and name.isalpha() and name.islower()  # noqa: E731
    for synset in reader.all_synsets("a"):
        lemmas = [lemma for lemma in synset.lemmas() if ok(lemma.name())]
        for lemma in lemmas:
            counts[lemma.name()] = counts.get(lemma.name(), 0) + lemma.count()
            for other in lemma.antonyms():
                if ok(other.name()):
                    antonyms.add(tuple(sorted((lemma.name(), other.name()))))
        names = sorted({lemma.name() for lemma in lemmas})
        synonyms.update((a, b) for i, a in enumerate(names) for b in names[i + 1 :])
    for synset in reader.all_synsets("a"):  # counts of words that only appear in antonym targets
        for lemma in synset.lemmas():
            counts.setdefault(lemma.name(), lemma.count())
    synonyms -= antonyms
    keep = lambda pair: all(counts.get(w, 0) >= min_count for w in pair)  # noqa: E731
    return sorted(filter(keep, antonyms)), sorted(filter(keep, synonyms))


def _antonym_negation(spec: OlmpicsSpec, rng: random.Random) -> list[dict]:
    antonyms, synonyms = antonym_and_synonym_pairs(spec.min_count)
    labelled = [(pair, 0) for pair in antonyms] + [(pair, 1) for pair in synonyms]
    rng.shuffle(labelled)
    quota = {("dev", 0): spec.n_dev // 2, ("dev", 1): spec.n_dev - spec.n_dev // 2}
    quota |= {("train", 0): spec.n_train // 2, ("train", 1): spec.n_train - spec.n_train // 2}
    dev_words: set[str] = set()
    rows = []
    for split in ("dev", "train"):  # dev first; train then skips every pair that shares a word with dev
        for (first, second), label in labelled:
            if quota[(split, label)] == 0 or (split == "train" and dev_words & {first, second}):
                continue
            quota[(split, label)] -= 1
            if split == "dev":
                dev_words |= {first, second}
            a, b = (first, second) if rng.random() < 0.5 else (second, first)
            rows.append({
                "split": split, "statement": TEMPLATES["antonym-negation"].format(a, b),
                "choices": ["not", "very"], "answer": label,
                "args": [a, b], "keywords": KEYWORDS["antonym-negation"],
            })  # fmt: skip
    balanced = []
    for split in OLMPICS_SPLITS:  # as many antonym as synonym rows in each split
        part = [row for row in rows if row["split"] == split]
        size = min(sum(row["answer"] == label for row in part) for label in (0, 1))
        kept = {label: 0 for label in (0, 1)}
        for row in part:
            if kept[row["answer"]] < size:
                kept[row["answer"]] += 1
                balanced.append(row)
    return balanced


class _NounWords:
    """Concept id -> first lemma for nouns whose first lemma is one lowercase word; SemCor counts on demand."""

    def __init__(self, graph, min_count: int) -> None:
        from workbench.knowledge.wordnet import open_wordnet

        first = graph.lemmas.filter(pl.col("rank") == 0).join(graph.concepts.select("id", "name", "pos"), on="id")
        first = first.filter((pl.col("pos") == "n") & pl.col("lemma").str.contains(r"^[a-z]+$"))
        self.word = dict(zip(first["id"].to_list(), first["lemma"].to_list()))
        self.name = dict(zip(first["id"].to_list(), first["name"].to_list()))
        self.min_count = min_count
        self._reader = open_wordnet() if min_count else None
        self._frequent: dict[int, bool] = {}

    def ok(self, concept: int) -> bool:
        """True for a one-word noun used at least ``min_count`` times in SemCor."""
        if concept not in self.word:
            return False
        if concept not in self._frequent:
            count = self._reader.synset(self.name[concept]).lemmas()[0].count() if self.min_count else 0
            self._frequent[concept] = count >= self.min_count
        return self._frequent[concept]


def article(word: str) -> str:
    """'an' before a vowel letter, else 'a'."""
    return "an" if word[:1] in "aeiou" else "a"


def _taxonomy_conjunction(spec: OlmpicsSpec, rng: random.Random, graph, vocabulary) -> list[dict]:
    taxonomy = graph.taxonomy
    words = _NounWords(graph, spec.min_count)
    choice_ok = lambda concept: words.ok(concept) and (vocabulary is None or words.word[concept] in vocabulary)  # noqa: E731
    roots = {graph.id_of(name) for name in DEV_ROOTS}
    in_dev = lambda concept: concept in roots or bool(taxonomy.ancestors(concept) & roots)  # noqa: E731
    heads = sorted(c for c in words.word if len(taxonomy.ancestors(c)) >= 4 and len(taxonomy.children[c]) >= 2)
    pools = {"dev": [c for c in heads if in_dev(c)], "train": [c for c in heads if not in_dev(c)]}
    found: dict[str, list[dict]] = {"dev": [], "train": []}
    seen: set[tuple[int, int]] = set()
    for split, wanted in (("dev", spec.n_dev), ("train", spec.n_train)):
        pool = [c for c in pools[split]]
        rng.shuffle(pool)
        for attempt in range(30 * wanted):
            if len(found[split]) >= wanted or not pool:
                break
            head = pool[attempt % len(pool)]
            if not choice_ok(head):
                continue
            row = _conjunction_row(taxonomy, graph.names, words, choice_ok, head, rng, seen)
            if row is not None:
                found[split].append({**row, "split": split})
    dev_words = {word for row in found["dev"] for word in (*row["args"], *row["choices"])}
    train = [row for row in found["train"] if not dev_words & {*row["args"], *row["choices"]}]
    return train + found["dev"]


def _conjunction_row(
    taxonomy, taxonomy_names, words, choice_ok, head: int, rng: random.Random, seen: set
) -> dict | None:
    """One statement whose gold is ``head``, or None when this draw does not give a clean one."""
    first_child, second_child = rng.sample(taxonomy.children[head], 2)
    below = lambda child: sorted(c for c in taxonomy.hops(child, "down", 2) if words.ok(c))  # noqa: E731
    firsts, seconds = below(first_child), below(second_child)
    if not firsts or not seconds:
        return None
    first, second = rng.choice(firsts), rng.choice(seconds)
    key = (min(first, second), max(first, second))
    up1, up2 = taxonomy.ancestors(first), taxonomy.ancestors(second)
    common = up1 & up2
    if key in seen or first == second or head not in common or any(head in taxonomy.ancestors(c) for c in common):
        return None
    word = words.word
    common_words = {word.get(c) for c in common}
    taken = {word[first], word[second], word[head]}
    picks = []
    for own, other in ((up1, up2), (up2, up1)):
        options = sorted(
            c for c in own - other
            if c != first and c != second and head in taxonomy.ancestors(c) and choice_ok(c)
            and word[c] not in common_words and word[c] not in taken
        )  # fmt: skip
        if not options:
            return None
        picks.append(rng.choice(options))
        taken.add(word[picks[-1]])
    if len(taken) != 5:
        return None
    seen.add(key)
    choices = [word[head], word[picks[0]], word[picks[1]]]
    rng.shuffle(choices)
    return {
        "statement": TEMPLATES["taxonomy-conjunction"].format(
            article(word[first]).capitalize(), word[first], article(word[second]), word[second]
        ),
        "choices": choices, "answer": choices.index(word[head]),
        "args": [word[first], word[second]], "keywords": KEYWORDS["taxonomy-conjunction"],
        "concepts": [taxonomy_names[c] for c in (first, second, head, *picks)],
    }  # fmt: skip


def read_jsonl(path: str | Path) -> pl.DataFrame:
    """Read a user's MC-MLM probe file (JSONL) into an ``OLMPICS_SCHEMA`` frame.

    One object per line: ``statement`` (with one ``[MASK]``), ``choices`` (list of words), ``answer``
    (index or the gold word); optional ``probe`` (default: the file name), ``split`` (default
    ``dev``), ``args`` and ``keywords`` (lists of words in the statement; the controls need them),
    ``id``. A malformed line raises ``ProbeFormatError`` naming the file and line.
    """
    path = Path(path)
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise ProbeFormatError(f"cannot read {path} ({err}); check the path") from err
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            rows.append(_user_row(item, path.stem))
        except (ValueError, TypeError, KeyError) as err:
            raise ProbeFormatError(f"{path}, line {number}: {err}. See docs/OLMPICS.md for the format.") from err
    if not rows:
        raise ProbeFormatError(f"{path} holds no statements; write one JSON object per line (docs/OLMPICS.md)")
    frame = pl.DataFrame(rows, schema_overrides=OLMPICS_SCHEMA)
    return conform(frame, OLMPICS_SCHEMA, f"{path}")


def _user_row(item: dict, default_probe: str) -> dict:
    statement, choices, answer = item["statement"], item["choices"], item["answer"]
    if not isinstance(statement, str) or statement.count(MASK) != 1:
        raise ValueError(f"'statement' must be text with exactly one {MASK}")
    if not isinstance(choices, list) or len(choices) < 2 or not all(isinstance(c, str) and c.strip() for c in choices):
        raise ValueError("'choices' must be a list of at least two non-empty words")
    if isinstance(answer, str):
        if answer not in choices:
            raise ValueError(f"'answer' {answer!r} is not one of the choices {choices}")
        answer = choices.index(answer)
    if not isinstance(answer, int) or not 0 <= answer < len(choices):
        raise ValueError(f"'answer' must be an index from 0 to {len(choices) - 1} or one of the choices")
    split = item.get("split", "dev")
    if split not in OLMPICS_SPLITS:
        raise ValueError(f"'split' {split!r} must be one of {list(OLMPICS_SPLITS)}")
    probe = item.get("probe", default_probe)
    control = item.get("control", "none")
    row = {
        "probe": probe, "split": split, "statement": statement, "choices": choices, "answer": answer,
        "args": list(item.get("args", [])), "keywords": list(item.get("keywords", [])), "control": control,
        "concepts": list(item.get("concepts", [])),
    }  # fmt: skip
    row["id"] = str(item.get("id") or row_id(probe, split, statement, control))
    return row


def write_jsonl(frame: pl.DataFrame, path: str | Path) -> Path:
    """Write an ``OLMPICS_SCHEMA`` frame as JSONL (the format ``read_jsonl`` reads), atomically."""
    frame = conform(frame, OLMPICS_SCHEMA, "oLMpics frame")
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in frame.iter_rows(named=True))
    return write_text(text, path)
