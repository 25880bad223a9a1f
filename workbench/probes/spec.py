"""``ProbeSpec``: every choice that shapes a generated probe set, validated at construction."""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import SpecError
from workbench.schema import PROBES

FAMILIES = ("random", "sister", "isa")
MAX_HOPS = 5
MAX_DEPTH = 5
PARTS_OF_SPEECH = ("n", "v", "a", "r")  # WordNet's; adjective satellites ('s') count as adjectives
SENTENCES = ("one", "all", "lemmas")
DRAWS = ("sample", "disjoint")
CHOICE_WORDS = ("lemmas", "name")
SIZE_UNITS = ("row", "question")
# the measures a test_mix may name: workbench.probes.stats.MEASURES, and ``below``, the gold's generality (concepts
# below it, in these bins: workbench.probes.below_bin)
TEST_MEASURES = ("pos", "hops", "kind", "below")
BELOW_BINS = (1, 3, 10, 30, 100, 300, 1000, 2000)
DRAW_FAMILIES = ("sister", "isa", "isa_up", "isa_down")
GOLDS_PER_HOP = {"hyponymy": 10}  # released hyponymy data: up to 10 hyponyms at one hop of one concept
PAPER_DEPTHS = (("isa", 4), ("sister", 2))
# The paper preset's population, probe by probe; each rule with its evidence in docs/REPRODUCTION.md ("What the
# paper preset is"). ``size`` is Table 4's "with perturbations"; ``pos_mix`` the released train files' shares;
# ``hop_mix`` and ``family_mix`` theirs as corrected by workbench.analysis.release.calibrated_mixes (seed 0), which
# corrects hypernymy's and synonymy's ``pos_mix`` too (their train splits leave out the golds of dev and test:
# ``held_out_golds``). ``test_size`` and ``test_mix`` are the released gold-standard test files' size and shares
# (hypernymy, hyponymy), ``test_pool`` the share of concepts whose draw spreads over as many clusters.
PAPER: dict[str, dict] = {
    "definitions": {
        "sentences": "all", "phrasings": 2, "draws": "disjoint", "one_per_branch": True, "spread_sets": ("sister_1",),
        "max_draws": {"sister_1": 101, "sister_2": 43}, "perturbations": 143,
        "size": 148662, "train_pool": 0.3, "pos_mix": {"n": 0.407, "v": 0.55, "a": 0.036, "r": 0.007},
        "family_mix": {
            "isa_down_1": 0.0279, "isa_down_2": 0.0112, "isa_down_3": 0.0019, "isa_down_4": 0.0009,
            "isa_up_1": 0.0546, "isa_up_2": 0.0503, "isa_up_3": 0.0408, "isa_up_4": 0.0242, "random": 0.0388,
            "sister_1": 0.6861, "sister_2": 0.0634,
        },
    },
    "synonymy": {
        "sentences": "lemmas", "phrasings": 3, "examples_only": False, "min_lemmas": 1, "draws": "disjoint",
        "one_per_branch": True, "hide_defined_lemmas": True, "isa_up_skip": 1, "held_out_golds": True,
        "max_draws": {"sister_1": 101, "sister_2": 43}, "perturbations": 143, "size": 91069, "train_pool": 0.7,
        "pos_mix": {"n": 0.7799, "v": 0.2033, "a": 0.0157, "r": 0.0011},
        "family_mix": {
            "isa_down_1": 0.2744, "isa_down_2": 0.0405, "isa_down_3": 0.0167, "isa_down_4": 0.0026,
            "isa_up_1": 0.1277, "isa_up_2": 0.121, "isa_up_3": 0.0731, "isa_up_4": 0.0521, "random": 0.1896,
            "sister_1": 0.0862, "sister_2": 0.0161,
        },
    },
    "hypernymy": {
        "sentences": "all", "phrasings": 2, "draws": "disjoint", "choice_words": "name", "one_per_branch": True,
        "spread_sets": ("sister_1",), "max_draws": {"sister_1": 101, "sister_2": 43}, "perturbations": 2,
        "size": 35094, "size_unit": "question", "train_pool": 0.55, "held_out_golds": True,
        "pos_mix": {"n": 0.7998, "v": 0.2002},
        "hop_mix": {
            1: 0.296, 2: 0.1313, 3: 0.0788, 4: 0.1583, 5: 0.3356,
        },
        "family_mix": {
            "isa_down_1": 0.1455, "isa_down_2": 0.069, "isa_down_3": 0.0559, "isa_down_4": 0.0808, "random": 0.2738,
            "sister_1": 0.2666, "sister_2": 0.1084,
        },
        "test_size": 2254, "test_pool": 1.0, "test_max_below": 2000,
        "test_mix": {
            "pos:n": 0.5497, "pos:v": 0.4503,
            "hops:1": 0.5936, "hops:2": 0.2764, "hops:3": 0.0905, "hops:4": 0.0293, "hops:5": 0.0102,
            "kind:isa_down_1": 0.0621, "kind:isa_down_2": 0.0195, "kind:isa_down_3": 0.0111, "kind:isa_down_4": 0.0027,
            "kind:random": 0.3287, "kind:sister_1": 0.4228, "kind:sister_2": 0.1531,
            "below:0-1": 0.0155, "below:2-3": 0.0404, "below:4-10": 0.1504, "below:11-30": 0.2569,
            "below:31-100": 0.2955, "below:101-300": 0.1491, "below:301-1000": 0.0648, "below:1001-2000": 0.0173,
            "below:2001+": 0.0102,
        },
    },
    "hyponymy": {
        "sentences": "all", "phrasings": 2, "draws": "disjoint", "choice_words": "name", "one_per_branch": True,
        "spread_sets": ("sister_1",), "max_draws": {"sister_1": 101, "sister_2": 43}, "perturbations": 143,
        "size": 35243, "train_pool": 0.8, "pos_mix": {"n": 0.555, "v": 0.445},
        "hop_mix": {
            1: 0.9274, 2: 0.0726,
        },
        "family_mix": {
            "isa_up_1": 0.258, "isa_up_2": 0.1901, "isa_up_3": 0.1322, "isa_up_4": 0.0339, "random": 0.173,
            "sister_1": 0.1533, "sister_2": 0.0594,
        },
        "test_size": 2020, "test_pool": 0.55,
        "test_mix": {
            "pos:n": 0.6663, "pos:v": 0.3337,
            "hops:1": 0.8297, "hops:2": 0.1426, "hops:3": 0.0208, "hops:4": 0.0054, "hops:5": 0.0015,
            "kind:isa_up_1": 0.0738, "kind:isa_up_2": 0.0624, "kind:isa_up_3": 0.0441, "kind:isa_up_4": 0.0163,
            "kind:random": 0.1589, "kind:sister_1": 0.4292, "kind:sister_2": 0.2153,
        },
    },
    "wordsense": {"perturbations": 1, "min_senses": 1},
}  # fmt: skip
ISA_FAMILIES = {  # which ISA direction the 'isa' family means for each probe
    "hypernymy": ("isa_down",),
    "hyponymy": ("isa_up",),
    "definitions": ("isa_up", "isa_down"),
    "synonymy": ("isa_up", "isa_down"),
    "wordsense": (),
}


def _check_choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise SpecError(f"{name}={value!r} is not allowed; choose one of {list(allowed)}")


def _check_range(name: str, value: int, low: int, high: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise SpecError(f"{name}={value!r} is out of range; use a whole number from {low} to {high}")


def _mix(name: str, value, keys: Callable[[object], bool], allowed: str) -> tuple:
    """``value`` (a dict or pairs of key -> weight) as sorted pairs with weights summing to 1; a bad key or weight
    raises naming it."""
    pairs = list(value.items()) if isinstance(value, dict) else list(value)
    for pair in pairs:
        if not (isinstance(pair, tuple | list) and len(pair) == 2):
            raise SpecError(f"{name} holds {pair!r}; give key -> weight pairs, e.g. {{{allowed}: 0.5, ...}}")
        key, weight = pair
        if not keys(key):
            raise SpecError(f"{name} has the key {key!r}; use {allowed}")
        if not isinstance(weight, int | float) or isinstance(weight, bool) or not 0 <= weight < float("inf"):
            raise SpecError(f"{name}[{key!r}]={weight!r} is not a weight; use a number >= 0")
    total = sum(weight for _, weight in pairs)
    if pairs and total <= 0:
        raise SpecError(f"{name} has no positive weight; give at least one key a weight above 0")
    return tuple(sorted((key, weight / total) for key, weight in pairs))


def kind_of(family: str, depth: int) -> str:
    """A distractor kind's name: ``random``, ``sister_1``, ``isa_up_2`` (as ``hops_by_family`` names columns)."""
    return family if depth == 0 else f"{family}_{depth}"


def _is_kind(key) -> bool:
    if key == "random":
        return True
    family, _, depth = str(key).rpartition("_")
    return family in ("sister", "isa_up", "isa_down") and depth.isdigit() and 1 <= int(depth) <= MAX_DEPTH


@dataclass(frozen=True)
class ProbeSpec:
    """How to build one probe.

    ``families`` are distractor families: ``random``, ``sister`` (SISTER_l for l = 1..max_depth) and
    ``isa`` (concepts k' = 1..max_depth ISA links away in the direction that cannot give a right
    answer: below the concept for hypernymy, above it for hyponymy, both for definitions and
    synonymy). Word sense always draws from the other senses of the word.
    ``perturbations`` caps the distractor variants of one question (None: every family and depth).
    ``depths`` lowers the depth limit of single families below ``max_depth`` (e.g. ``{"sister": 2}``).
    ``concepts`` asks only about these concepts (names such as ``dog.n.01``; None: every eligible one);
    each concept gets the questions, gold answers and distractors of the full build (drawn from the
    whole source); only answer positions differ, being balanced over the set built.
    ``golds_per_hop`` caps the gold answers asked for at one hop count (taxonomy probes; None: the released
    data's behaviour, up to 10 hyponyms per hop for hyponymy and one hypernym per hop for hypernymy, as in
    R&S 2020 Table 3). ``instance_links`` also follows WordNet's instance-hypernym links to golds and
    distractors (off, as in the released data); distractors are checked against both kinds of link either way.

    The population of questions (docs/REPRODUCTION.md, "What the paper preset is", gives each rule's evidence):
    ``sentences`` is ``"one"`` (one example sentence per concept: a cluster shares one stem) or ``"all"`` (every usable
    example sentence of a concept is a question of its own) or ``"lemmas"`` (every lemma of a concept is a question of
    its own, with no sentence: synonymy's, whose question shows the definition). ``phrasings`` templates are drawn per
    question, each perturbation taking one of them. ``examples_only`` asks only about concepts with a usable example
    sentence (synonymy's template shows none, so it may ask about the others, with its first lemma as the word).
    ``min_lemmas``: the lemmas a synonymy concept needs. ``draws`` is ``"sample"`` (each perturbation draws one set of
    four from a family) or ``"disjoint"`` (a question has one random perturbation and, family by family, every disjoint
    set of four the family holds, the last one topped up from the random pool, at most ``max_draws`` of a family, until
    the question has ``perturbations`` family sets). ``one_per_branch`` lets a set from a family two or more levels
    deep (``sister_2``, ``isa_down_2``, ...) take at most one concept per branch, the sibling or child of the concept
    it descends from, topping the set up from the random pool where the branches run out. ``spread_sets`` names the
    kinds (such as ``sister_1``) whose sets a question takes at random among every disjoint set of its family (up to
    ``max_draws``), not its first ones, so that the last set, the one topped up, is as likely as any other.
    ``size`` makes the whole set a uniform random sample of that many questions (with perturbations) out of all
    the settings give; ``pos_mix`` (part of speech -> share; ``s`` counts as ``a``) draws that sample part of speech
    by part of speech at these shares. ``size_unit`` is what the sample draws: ``"row"`` (questions with perturbations
    one by one) or ``"question"`` (whole questions, each with all its perturbations, until ``size``).
    ``hop_mix`` (hop count -> share of the golds) thins deeper golds to their shares.
    ``family_mix`` (kind such as ``random``, ``sister_1``, ``isa_up_2`` -> weight) draws the kind of each of a
    question's perturbations from these weights, among the kinds the concept has; with ``draws="disjoint"`` the
    question keeps the number of perturbations the disjoint sets give, and each kind's are disjoint.
    ``train_pool`` draws the train split as ``train_size`` questions at random from the questions of that share of
    the concepts (the rest of their questions are left out, so that no cluster straddles two splits); None gives
    whole clusters to train until ``train_size``; ``held_out_golds`` first leaves out of train every question whose
    gold answer is also a dev or test gold, or for synonymy lists a lemma one lists (the paper de-duplicated its
    splits by correct answer).
    ``hide_defined_lemmas`` shows a gold answer without the lemmas that share text with the concept's definition (its
    first clause), which synonymy's question shows: a word of the lemma in the clause, or a word of the clause in the
    lemma ('time' in 'peacetime'); it asks nothing about a concept whose every lemma does. The released synonymy
    golds do so, their distractors do not.
    ``choice_words`` is how a taxonomy choice names its concept: ``"lemmas"`` (the first lemma, then the next two,
    case folded) or ``"name"`` (the released files' form: the word of the concept's name in lowercase, two of its
    other lemmas drawn at random, and ' event' after a verb's words: 'calve (or break up) event, defined as ...').
    ``test_size`` draws the test split as the paper drew its gold-standard tests (hypernymy and hyponymy): that many
    questions at random from the questions of ``test_pool`` (a share) of the concepts without a train question,
    weighted so that the draw holds ``test_mix``'s shares (keys ``"pos:n"``, ``"hops:1"``, ``"kind:sister_1"``, and
    ``"below:31-100"``, the gold's generality: how many concepts lie below it, in ``BELOW_BINS``; the shares of each
    measure sum to 1); every other concept is dev, the silver development set. None: dev and test
    are halves of the silver set. ``test_max_below`` leaves out of that test every question whose gold answer has
    more concepts below it (at any depth) than this: a gold as general as 'entity' or 'act', which the released
    gold-standard tests do not hold (the automatic stand-in for their human filter).
    ``isa_up_skip`` puts an ``isa_up`` distractor of depth k that many links further up (k + ``isa_up_skip`` links
    above the concept): the released synonymy's hypernym distractors skip the parent.

    >>> ProbeSpec("hypernymy", max_hops=3, families=("sister",), max_depth=2, seed=0)  # doctest: +ELLIPSIS
    ProbeSpec(probe='hypernymy', max_hops=3, ...)
    """

    probe: str
    max_hops: int = 3
    families: tuple[str, ...] = FAMILIES
    max_depth: int = 3
    seed: int = 0
    train_size: int = 3000
    perturbations: int | None = 2
    templates: str | Path | None = None
    min_senses: int = 2
    concepts: tuple[str, ...] | None = None
    golds_per_hop: int | None = None
    instance_links: bool = False
    depths: tuple[tuple[str, int], ...] = ()
    sentences: str = "one"
    phrasings: int = 1
    examples_only: bool = True
    min_lemmas: int = 2
    draws: str = "sample"
    max_draws: tuple[tuple[str, int], ...] = ()
    size: int | None = None
    size_unit: str = "row"
    pos_mix: tuple[tuple[str, float], ...] = ()
    hop_mix: tuple[tuple[int, float], ...] = ()
    family_mix: tuple[tuple[str, float], ...] = ()
    train_pool: float | None = None
    hide_defined_lemmas: bool = False
    held_out_golds: bool = False
    choice_words: str = "lemmas"
    isa_up_skip: int = 0
    one_per_branch: bool = False
    spread_sets: tuple[str, ...] = ()
    test_size: int | None = None
    test_pool: float = 1.0
    test_mix: tuple[tuple[str, float], ...] = ()
    test_max_below: int | None = None

    @classmethod
    def paper(cls, probe: str, **overrides) -> "ProbeSpec":
        """The paper's questions for ``probe`` (R&S 2020; each rule in docs/REPRODUCTION.md), then ``overrides``.

        >>> ProbeSpec.paper("hypernymy").depth_of("sister")
        2
        """
        settings = {
            "perturbations": None,
            "max_hops": MAX_HOPS,
            "families": FAMILIES,
            "max_depth": max(depth for _, depth in PAPER_DEPTHS),
            "depths": PAPER_DEPTHS,
            "instance_links": False,
            "golds_per_hop": None,
            **PAPER.get(probe, {}),
        }
        return cls(probe=probe, **{**settings, **overrides})

    def __post_init__(self) -> None:
        _check_choice("probe", self.probe, PROBES)
        _check_range("max_hops", self.max_hops, 1, MAX_HOPS)
        _check_range("max_depth", self.max_depth, 1, MAX_DEPTH)
        _check_range("seed", self.seed, 0, 2**32 - 1)
        _check_range("train_size", self.train_size, 0, 10**7)
        _check_range("min_senses", self.min_senses, 1, 100)
        if self.perturbations is not None:
            _check_range("perturbations", self.perturbations, 1, 10**4)
        if self.golds_per_hop is not None:
            _check_range("golds_per_hop", self.golds_per_hop, 1, 1000)
        for name in ("instance_links", "examples_only", "hide_defined_lemmas", "held_out_golds", "one_per_branch"):
            if not isinstance(getattr(self, name), bool):
                raise SpecError(f"{name}={getattr(self, name)!r} is not allowed; use True or False")
        _check_choice("sentences", self.sentences, SENTENCES)
        _check_choice("choice_words", self.choice_words, CHOICE_WORDS)
        _check_range("phrasings", self.phrasings, 1, 100)
        _check_range("min_lemmas", self.min_lemmas, 1, 100)
        _check_range("isa_up_skip", self.isa_up_skip, 0, MAX_HOPS)
        _check_choice("draws", self.draws, DRAWS)
        spread = self.spread_sets.split(",") if isinstance(self.spread_sets, str) else self.spread_sets
        object.__setattr__(self, "spread_sets", tuple(sorted({str(kind).strip() for kind in spread} - {""})))
        for kind in self.spread_sets:
            if not _is_kind(kind) or kind == "random":
                raise SpecError(f"spread_sets names {kind!r}; use kinds of a family such as 'sister_1' or 'isa_down_2'")
        draws = self.max_draws.items() if isinstance(self.max_draws, dict) else self.max_draws
        object.__setattr__(self, "max_draws", tuple(sorted((family, count) for family, count in draws)))
        for family, count in self.max_draws:
            base, _, depth = family.rpartition("_") if family[-1:].isdigit() else (family, "", "")
            if base not in DRAW_FAMILIES or (depth and not 1 <= int(depth) <= MAX_DEPTH):
                families = ", ".join(DRAW_FAMILIES)
                raise SpecError(f"max_draws names {family!r}; use a family ({families}) or a kind such as 'sister_2'")
            _check_range(f"max_draws[{family!r}]", count, 1, 10**6)
        if self.size is not None:
            _check_range("size", self.size, 1, 10**8)
        _check_choice("size_unit", self.size_unit, SIZE_UNITS)
        for name in ("train_pool", "test_pool"):
            pool = getattr(self, name)
            share = isinstance(pool, int | float) and not isinstance(pool, bool) and 0 < pool <= 1
            if pool is not None and not share:
                raise SpecError(f"{name}={pool!r} is out of range; use a share of the concepts in (0, 1]")
        if self.test_pool is None:
            raise SpecError("test_pool=None is not allowed; use a share of the concepts in (0, 1] (1: all of them)")
        if self.test_size is not None:
            _check_range("test_size", self.test_size, 1, 10**7)
        if self.test_max_below is not None:
            _check_range("test_max_below", self.test_max_below, 0, 10**7)
        mix = self.test_mix.items() if isinstance(self.test_mix, dict) else self.test_mix
        by_measure: dict[str, list] = {}
        for pair in mix:
            key = pair[0] if isinstance(pair, tuple | list) and len(pair) == 2 else pair
            by_measure.setdefault(str(key).partition(":")[0], []).append(pair)
        for measure in by_measure:
            if measure not in TEST_MEASURES:
                keys = "'pos:n', 'hops:1', 'kind:random'"
                raise SpecError(f"test_mix names the measure {measure!r}; use keys such as {keys}")
        object.__setattr__(self, "test_mix", tuple(sorted(
            pair for measure, pairs in by_measure.items()
            for pair in _mix("test_mix", pairs, lambda key: str(key).partition(":")[2] != "", f"'{measure}:...'")
        )))  # fmt: skip
        hop_keys = lambda key: isinstance(key, int) and not isinstance(key, bool) and 0 <= key <= MAX_HOPS  # noqa: E731
        object.__setattr__(self, "hop_mix", _mix("hop_mix", self.hop_mix, hop_keys, "1"))
        object.__setattr__(self, "pos_mix", _mix("pos_mix", self.pos_mix, PARTS_OF_SPEECH.__contains__, "'n'"))
        if self.pos_mix and self.size is None:
            raise SpecError("pos_mix shares out the size sample; give size too (the number of questions to draw)")
        object.__setattr__(self, "family_mix", _mix("family_mix", self.family_mix, _is_kind, "'sister_1'"))
        depths = self.depths.items() if isinstance(self.depths, dict) else self.depths
        object.__setattr__(self, "depths", tuple(sorted((family, depth) for family, depth in depths)))
        for family, depth in self.depths:
            _check_choice("depths", family, FAMILIES[1:])
            _check_range(f"depths[{family!r}]", depth, 1, MAX_DEPTH)
        if isinstance(self.families, str):
            object.__setattr__(
                self, "families", tuple(part.strip() for part in self.families.split(",") if part.strip())
            )
        if not self.families:
            raise SpecError(f"families is empty; choose one or more of {list(FAMILIES)}")
        for family in self.families:
            _check_choice("families", family, FAMILIES)
        if isinstance(self.concepts, str):
            object.__setattr__(
                self, "concepts", tuple(part.strip() for part in self.concepts.split(",") if part.strip())
            )
        if self.concepts is not None:
            object.__setattr__(self, "concepts", tuple(self.concepts))
            if not self.concepts:
                raise SpecError(
                    "concepts is empty; name one or more concepts (e.g. 'dog.n.01'), or leave it out for all"
                )

    def chosen(self, eligible: dict[str, int]) -> set[int] | None:
        """The ids of ``concepts`` among ``eligible`` (name -> id), or None for all; unknown or ineligible
        names raise."""
        if self.concepts is None:
            return None
        missing = [name for name in self.concepts if name not in eligible]
        if missing:
            raise SpecError(
                f"concepts {missing[:5]} cannot be asked about by the {self.probe} probe: not concept names of its "
                "source, or concepts without a usable example sentence (or, for taxonomy probes, without the ISA links "
                "or lemmas it needs; for synonymy with hide_defined_lemmas, every lemma sharing text with the "
                "definition); use names such as 'dog.n.01' from the concept picker or Graph.concepts"
            )
        return {eligible[name] for name in self.concepts}

    def population_of(self, split: str) -> str:
        """The population (``workbench.schema.POPULATIONS``) of this spec's questions in ``split``: ``gold-like`` for
        a test drawn with ``test_size``; ``silver`` for the rest of a paper-preset build (every sentence or lemma of
        a concept asked, a ``size`` sample, or word sense with ``min_senses=1``); ``uniform`` otherwise."""
        if split == "test" and self.test_size is not None:
            return "gold-like"
        paper = self.sentences != "one" or self.size is not None or (self.probe == "wordsense" and self.min_senses == 1)
        return "silver" if paper else "uniform"

    @property
    def source(self) -> str:
        """The knowledge source the probe is built from."""
        return "gcide" if self.probe == "wordsense" else "wordnet"

    @property
    def gold_cap(self) -> int:
        """Gold answers per hop count: ``golds_per_hop``, else the released data's number for this probe."""
        return self.golds_per_hop if self.golds_per_hop is not None else GOLDS_PER_HOP.get(self.probe, 1)

    @property
    def hop_range(self) -> range:
        """Hop counts k of the gold answer (0 only for probes without ISA answers)."""
        return range(1, self.max_hops + 1) if self.probe in ("hypernymy", "hyponymy") else range(0, 1)

    def distractor_options(self) -> list[tuple[str, int]]:
        """Every (family, depth) this spec asks for, in a fixed order."""
        if self.probe == "wordsense":
            return [("senses", 0)]
        options: list[tuple[str, int]] = []
        if "random" in self.families:
            options.append(("random", 0))
        if "sister" in self.families:
            options.extend(("sister", depth) for depth in range(1, self.depth_of("sister") + 1))
        if "isa" in self.families:
            depths = range(1, self.depth_of("isa") + 1)
            options.extend((family, depth) for family in ISA_FAMILIES[self.probe] for depth in depths)
        return options

    def weight_of(self, family: str, depth: int) -> float:
        """The ``family_mix`` weight of a distractor kind (1 for every kind without a mix)."""
        return dict(self.family_mix).get(kind_of(family, depth), 0.0) if self.family_mix else 1.0

    def draws_of(self, family: str, depth: int) -> int | float:
        """The most disjoint sets ``family`` at ``depth`` gives one question: ``max_draws`` names a family
        (``sister``, ``isa``) or a kind (``sister_2``, ``isa_up``); the most specific entry wins."""
        caps = dict(self.max_draws)
        kind = f"{family}_{depth}"
        for key in (kind, family, "isa" if family.startswith("isa") else family):
            if key in caps:
                return caps[key]
        return float("inf")

    def depth_of(self, family: str) -> int:
        """The largest depth of ``family`` ('sister' or 'isa'): its entry in ``depths``, at most ``max_depth``."""
        return min(dict(self.depths).get(family, self.max_depth), self.max_depth)
