"""Distractor families over a taxonomy (SPEC §2) and the draw of four distractors.

Families: ``random`` (any concept of the same part of speech), ``sister`` (SISTER_l: the
descendants exactly l-1 levels below each of the concept's siblings, so sister_1 is the siblings
themselves; not cumulative), ``isa_up`` / ``isa_down`` (concepts exactly k' ISA links above / below
the concept; ``isa_up_skip`` more links above, as the paper's synonymy draws), ``senses`` (other senses of
the same word). A family short of valid candidates is topped up from the random pool, and the number topped
up is recorded. With ``one_per_branch`` a set from a family two or more levels deep takes at most one concept per
branch: the sibling (``sister``) or the child (``isa_down``) of the concept it descends from (``branch_of``).
"""

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from workbench.knowledge.graph import Taxonomy

N_DISTRACTORS = 4


def same_text(text: str) -> str:
    """The form under which two choices count as the same: case and surrounding white space ignored."""
    return text.strip().casefold()


def candidates(taxonomy: Taxonomy, concept: int, family: str, depth: int) -> list[int]:
    """The concepts of one distractor family of ``concept``, sorted (before any validity filter)."""
    return families(taxonomy, concept, [(family, depth)])[(family, depth)]


def families(
    taxonomy: Taxonomy, concept: int, options: Sequence[tuple[str, int]], isa_up_skip: int = 0
) -> dict[tuple[str, int], list[int]]:
    """``candidates`` of each (family, depth) option but ``random``, every family walked once at its deepest depth;
    ``isa_up`` at depth k is k + ``isa_up_skip`` links above the concept."""
    found: dict[tuple[str, int], set[int]] = {}
    for family, depth in _deepest(tuple(options)).items():
        if family == "sister":
            levels = taxonomy.sister_levels(concept, depth)
            found.update(((family, level), layer) for level, layer in enumerate(levels, 1))
            continue
        skip = isa_up_skip if family == "isa_up" else 0
        for node, level in taxonomy.hops(concept, "up" if family == "isa_up" else "down", depth + skip).items():
            if level > skip:
                found.setdefault((family, level - skip), set()).add(node)
    return {option: sorted(found.get(option, ())) for option in options if option[0] != "random"}


def family_sizes(
    taxonomy: Taxonomy, concept: int, options: Sequence[tuple[str, int]], isa_up_skip: int = 0
) -> dict[tuple[str, int], int]:
    """The length of each of ``families(...)``, counted without building them (what counting a build's rows needs)."""
    found: dict[tuple[str, int], int] = {}
    for family, depth in _deepest(tuple(options)).items():
        if family == "sister":
            sizes, skip = taxonomy.sister_sizes(concept, depth), 0
        else:
            skip = isa_up_skip if family == "isa_up" else 0
            sizes = taxonomy.layer_sizes(concept, "up" if family == "isa_up" else "down", depth + skip)
        for level in range(skip, len(sizes)):
            found[(family, level + 1 - skip)] = sizes[level]
    return {option: found.get(option, 0) for option in options if option[0] != "random"}


def branch_of(taxonomy: Taxonomy, concept: int, family: str, depth: int) -> Callable[[int], int] | None:
    """Which branch a candidate of a family two or more levels deep descends from: the concept's sibling
    (``sister``) or child (``isa_down``) ``depth - 1`` links above it (the smallest id where several are); None for
    the other families and depths, whose candidates are each their own branch."""
    if depth < 2 or family not in ("sister", "isa_down"):
        return None
    if family == "sister":
        heads = {child for parent in taxonomy.parents[concept] for child in taxonomy.children[parent]} - {concept}
    else:
        heads = set(taxonomy.children[concept])

    @cache
    def of(candidate: int) -> int:
        if depth == 2:  # the parents: no walk
            return min((node for node in taxonomy.parents[candidate] if node in heads), default=candidate)
        above = taxonomy.hops(candidate, "up", depth - 1)
        return min((node for node, links in above.items() if links == depth - 1 and node in heads), default=candidate)

    return of


@cache
def _deepest(options: tuple[tuple[str, int], ...]) -> dict[str, int]:
    """The deepest depth asked of each family but ``random`` (one walk serves its shallower depths); memoised, as a
    build asks it of every concept."""
    deepest: dict[str, int] = {}
    for family, depth in options:
        if family == "random":
            continue
        if family not in ("sister", "isa_up", "isa_down"):
            raise ValueError(f"family {family!r} has no candidate set of its own")
        deepest[family] = max(depth, deepest.get(family, 0))
    return deepest


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
    key_of: Callable[[int], str],
    taken_texts: set[str],
    n: int = N_DISTRACTORS,
    branch: Callable[[int], int] | None = None,
) -> Draw | None:
    """Draw ``n`` valid distractors with distinct texts: from the family first, then the random pool.

    ``taken_texts`` holds texts that no choice may repeat (the gold's); it is not modified. ``key_of`` gives a
    candidate's text as ``same_text`` folds it, the form texts are compared in (no "cold war" beside "Cold War").
    With ``branch`` (``branch_of``), at most one family candidate per branch. Returns None when even the pool cannot
    supply enough (a tiny graph).
    """
    texts = {same_text(text) for text in taken_texts}
    chosen: list[int] = []
    branches: set[int] = set()

    def take(candidate: int) -> None:
        if branch is not None and branch(candidate) in branches:  # before the text and validity, which are kept
            return
        text = key_of(candidate)
        if text not in texts and is_valid(candidate):
            if branch is not None:
                branches.add(branch(candidate))
            texts.add(text)
            chosen.append(candidate)

    order, below = list(family_candidates), randbelow(rng)
    for index in range(len(order)):  # a lazy Fisher-Yates shuffle: it stops once n are taken
        if len(chosen) == n:
            break
        swap = index + below(len(order) - index)
        order[index], order[swap] = order[swap], order[index]
        take(order[index])
    from_family = len(chosen)
    _top_up(below, chosen, texts, pool, is_valid, key_of, n)
    if len(chosen) < n:
        return None
    return Draw(concepts=tuple(chosen), n_random_fill=n - from_family)


def draw_disjoint(
    rng: random.Random,
    family_candidates: Sequence[int],
    pool: Sequence[int],
    is_valid: Callable[[int], bool],
    key_of: Callable[[int], str],
    taken_texts: set[str],
    keep: Sequence[bool],
    n: int = N_DISTRACTORS,
    branch: Callable[[int], int] | None = None,
) -> list[Draw | None]:
    """A set of ``n`` distractors for each entry of ``keep``, no concept in two sets: the family shuffled once and
    dealt out in sets of ``n`` (as the paper's perturbations: a question's k-th sister draw never repeats an earlier
    one); a set the family cannot fill is topped up from the random pool.

    With ``branch`` (``branch_of``) a set takes at most one candidate per branch: a candidate whose branch the set
    being dealt holds waits for the next sets, which take the waiting ones first; once the family is dealt, the sets
    left take one waiting candidate per branch each and are topped up.

    Only the sets ``keep`` marks are returned (the others are None): a set before the last kept one is still dealt,
    so each kept set is what it would be among all of them, but the shuffle stops at the last kept set and only kept
    sets are topped up. A single set is ``draw``.
    """
    count = max((index + 1 for index, wanted in enumerate(keep) if wanted), default=0)
    if count <= 1:
        drawn = [draw(rng, family_candidates, pool, is_valid, key_of, taken_texts, n, branch)] if count else []
        return drawn + [None] * (len(keep) - count)
    order, below = list(family_candidates), randbelow(rng)
    taken = {same_text(text) for text in taken_texts}
    sets: list[list[int]] = [[] for _ in range(count)]
    texts: list[set[str]] = [set(taken) for _ in range(count)]
    held: list[set[int]] = [set() for _ in range(count)]  # the branches each set holds
    waiting: list[int] = []  # candidates passed over for a branch the set being dealt held
    current = 0
    for index in range(len(order)):  # a lazy Fisher-Yates shuffle: it stops once the last kept set is dealt
        if current == count:
            break
        swap = index + below(len(order) - index)
        order[index], order[swap] = order[swap], order[index]
        candidate = order[index]
        if branch is not None and branch(candidate) in held[current]:  # its validity and text (both memoised by the
            waiting.append(candidate)  # build) are looked up only if a set takes it
            continue
        text = key_of(candidate)
        if text in texts[current] or not is_valid(candidate):
            continue
        if branch is not None:
            held[current].add(branch(candidate))
        texts[current].add(text)
        sets[current].append(candidate)
        while current < count and len(sets[current]) == n:  # a full set: the next takes the waiting ones first
            current += 1
            if current < count:
                _take_waiting(waiting, sets[current], texts[current], held[current], branch, is_valid, key_of, n)
    while waiting and current < count:  # the family is dealt: each set left takes what waits, one per branch
        _take_waiting(waiting, sets[current], texts[current], held[current], branch, is_valid, key_of, n)
        current += 1
    draws: list[Draw | None] = []
    for wanted, chosen, seen in zip(keep, sets, texts):
        from_family = len(chosen)
        if wanted:
            _top_up(below, chosen, seen, pool, is_valid, key_of, n)
        draws.append(Draw(tuple(chosen), n - from_family) if wanted and len(chosen) == n else None)
    return draws + [None] * (len(keep) - count)


def _take_waiting(
    waiting: list[int],
    chosen: list[int],
    texts: set[str],
    held: set[int],
    branch: Callable[[int], int] | None,
    is_valid: Callable[[int], bool],
    key_of: Callable[[int], str],
    n: int,
) -> None:
    """Move the ``waiting`` candidates a set can take (a new branch, valid, a new text), in the order they waited,
    into it until it holds ``n``."""
    index = 0
    while len(chosen) < n and index < len(waiting):
        candidate = waiting[index]
        if branch is not None and branch(candidate) in held or not is_valid(candidate):
            index += 1
            continue
        text = key_of(candidate)
        if text in texts:
            index += 1
            continue
        del waiting[index]
        if branch is not None:
            held.add(branch(candidate))
        texts.add(text)
        chosen.append(candidate)


def randbelow(rng: random.Random) -> Callable[[int], int]:
    """``rng.randrange(n)`` (n >= 1) without its argument checks, drawing the same bits (CPython's ``_randbelow``:
    ``n.bit_length()`` bits until one is below n), so a shuffle's results are those of ``randrange``: a draw calls
    it once per candidate dealt."""
    getrandbits = rng.getrandbits

    def below(n: int) -> int:
        bits = n.bit_length()
        drawn = getrandbits(bits)
        while drawn >= n:
            drawn = getrandbits(bits)
        return drawn

    return below


def _top_up(
    below: Callable[[int], int],
    chosen: list[int],
    texts: set[str],
    pool: Sequence[int],
    is_valid: Callable[[int], bool],
    key_of: Callable[[int], str],
    n: int,
) -> None:
    """Fill ``chosen`` up to ``n`` from the random pool (valid, with a text not yet in ``texts``); both grow."""
    for _ in range(50 * n):
        if len(chosen) == n or not pool:
            break
        candidate = pool[below(len(pool))]
        text = key_of(candidate)
        if text not in texts and is_valid(candidate):
            texts.add(text)
            chosen.append(candidate)
