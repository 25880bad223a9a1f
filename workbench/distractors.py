"""Distractor families over a taxonomy (SPEC §2) and the draw of four distractors.

Families: ``random`` (any concept of the same part of speech), ``sister`` (SISTER_l: the
descendants exactly l-1 levels below each of the concept's siblings, so sister_1 is the siblings
themselves; not cumulative), ``isa_up`` / ``isa_down`` (concepts exactly k' ISA links above / below
the concept), ``senses`` (other senses of the same word). A family short of valid candidates is
topped up from the random pool, and the number topped up is recorded.
"""

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workbench.knowledge.graph import Taxonomy

N_DISTRACTORS = 4


def same_text(text: str) -> str:
    """The form under which two choices count as the same: case and surrounding white space ignored."""
    return text.strip().casefold()


def candidates(taxonomy: Taxonomy, concept: int, family: str, depth: int) -> list[int]:
    """The concepts of one distractor family of ``concept``, sorted (before any validity filter)."""
    if family == "sister":
        found = taxonomy.sisters(concept, depth)
    elif family in ("isa_up", "isa_down"):
        direction = "up" if family == "isa_up" else "down"
        found = {node for node, hops in taxonomy.hops(concept, direction, depth).items() if hops == depth}
    else:
        raise ValueError(f"family {family!r} has no candidate set of its own")
    return sorted(found)


@dataclass(frozen=True)
class Draw:
    """Four distractors and how many of them were topped up from the random pool."""

    concepts: tuple[int, ...]
    n_random_fill: int


def draw(
    rng: random.Random,
    family_candidates: Sequence[int],
    pool: Sequence[int],
    is_valid: Callable[[int], bool],
    text_of: Callable[[int], str],
    taken_texts: set[str],
    n: int = N_DISTRACTORS,
) -> Draw | None:
    """Draw ``n`` valid distractors with distinct texts: from the family first, then the random pool.

    ``taken_texts`` holds texts that no choice may repeat (the gold's); it is not modified. Texts are
    compared by ``same_text`` (no "cold war" beside "Cold War").
    Returns None when even the pool cannot supply enough (a tiny graph).
    """
    texts = {same_text(text) for text in taken_texts}
    chosen: list[int] = []

    def take(candidate: int) -> None:
        text = same_text(text_of(candidate))
        if text not in texts and is_valid(candidate):
            texts.add(text)
            chosen.append(candidate)

    order = list(family_candidates)
    for index in range(len(order)):  # a lazy Fisher-Yates shuffle: it stops once n are taken
        if len(chosen) == n:
            break
        swap = rng.randrange(index, len(order))
        order[index], order[swap] = order[swap], order[index]
        take(order[index])
    from_family = len(chosen)
    _top_up(rng, chosen, texts, pool, is_valid, text_of, n)
    if len(chosen) < n:
        return None
    return Draw(concepts=tuple(chosen), n_random_fill=n - from_family)


def draw_disjoint(
    rng: random.Random,
    family_candidates: Sequence[int],
    pool: Sequence[int],
    is_valid: Callable[[int], bool],
    text_of: Callable[[int], str],
    taken_texts: set[str],
    count: int,
    n: int = N_DISTRACTORS,
) -> list[Draw | None]:
    """``count`` sets of ``n`` distractors, no concept in two sets: the family shuffled once and dealt out in
    sets of ``n`` (as the paper's perturbations: a question's k-th sister draw never repeats an earlier one);
    a set the family cannot fill is topped up from the random pool. ``count=1`` is ``draw``.
    """
    if count == 1:
        return [draw(rng, family_candidates, pool, is_valid, text_of, taken_texts, n)]
    order = list(family_candidates)
    rng.shuffle(order)
    taken = {same_text(text) for text in taken_texts}
    sets: list[list[int]] = [[] for _ in range(count)]
    texts: list[set[str]] = [set(taken) for _ in range(count)]
    current = 0
    for candidate in order:
        if current == count:
            break
        text = same_text(text_of(candidate))
        if text in texts[current] or not is_valid(candidate):
            continue
        texts[current].add(text)
        sets[current].append(candidate)
        if len(sets[current]) == n:
            current += 1
    draws: list[Draw | None] = []
    for chosen, seen in zip(sets, texts):
        from_family = len(chosen)
        _top_up(rng, chosen, seen, pool, is_valid, text_of, n)
        draws.append(Draw(tuple(chosen), n - from_family) if len(chosen) == n else None)
    return draws


def _top_up(
    rng: random.Random,
    chosen: list[int],
    texts: set[str],
    pool: Sequence[int],
    is_valid: Callable[[int], bool],
    text_of: Callable[[int], str],
    n: int,
) -> None:
    """Fill ``chosen`` up to ``n`` from the random pool (valid, with a text not yet in ``texts``); both grow."""
    for _ in range(50 * n):
        if len(chosen) == n or not pool:
            break
        candidate = pool[rng.randrange(len(pool))]
        text = same_text(text_of(candidate))
        if text not in texts and is_valid(candidate):
            texts.add(text)
            chosen.append(candidate)
