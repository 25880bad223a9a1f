"""``ProbeSpec``: every choice that shapes a generated probe set, validated at construction."""

from dataclasses import dataclass
from pathlib import Path

from workbench.errors import SpecError
from workbench.schema import PROBES

FAMILIES = ("random", "sister", "isa")
MAX_HOPS = 5
MAX_DEPTH = 5
GOLDS_PER_HOP = {"hyponymy": 10}  # released hyponymy data: up to 10 hyponyms at one hop of one concept
# The released data's settings (docs/REPRODUCTION.md): hops 1-5, sister depths 1-2, isa depths 1-4 in every
# WordNet probe; perturbations from Table 4's rows per unique question (hypernymy 35,094 / 19,705 = 1.8,
# hyponymy 5.3, synonymy 3.2, definitions 4.7).
PAPER_PERTURBATIONS = {"hypernymy": 2, "hyponymy": 5, "synonymy": 3, "definitions": 5, "wordsense": 1}
PAPER_DEPTHS = (("isa", 4), ("sister", 2))
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
    if not isinstance(value, int) or not low <= value <= high:
        raise SpecError(f"{name}={value!r} is out of range; use a whole number from {low} to {high}")


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

    @classmethod
    def paper(cls, probe: str, **overrides) -> "ProbeSpec":
        """The released data's settings for ``probe`` (R&S 2020; derived in docs/REPRODUCTION.md), then ``overrides``.

        >>> ProbeSpec.paper("hypernymy").depth_of("sister")
        2
        """
        settings = {
            "max_hops": MAX_HOPS,
            "families": FAMILIES,
            "max_depth": max(depth for _, depth in PAPER_DEPTHS),
            "depths": PAPER_DEPTHS,
            "perturbations": PAPER_PERTURBATIONS.get(probe, 2),
            "instance_links": False,
            "golds_per_hop": None,
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
            _check_range("perturbations", self.perturbations, 1, 100)
        if self.golds_per_hop is not None:
            _check_range("golds_per_hop", self.golds_per_hop, 1, 1000)
        if not isinstance(self.instance_links, bool):
            raise SpecError(f"instance_links={self.instance_links!r} is not allowed; use True or False")
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
                "or lemmas it needs); use names such as 'dog.n.01' from the concept picker or Graph.concepts"
            )
        return {eligible[name] for name in self.concepts}

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

    def depth_of(self, family: str) -> int:
        """The largest depth of ``family`` ('sister' or 'isa'): its entry in ``depths``, at most ``max_depth``."""
        return min(dict(self.depths).get(family, self.max_depth), self.max_depth)
