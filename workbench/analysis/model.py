"""A PLS path model: latent variables, the score columns that measure them, the paths among them.

Declared in Python (``PathModel``) or in a small text form read by ``parse_model``::

    # measurement: a latent is reflected in one or more columns (mode A)
    TAXONOMY =~ hypernymy + hyponymy
    DEFINITIONS =~ definitions
    SCIENCE =~ orig
    # structure: the latent on the left is explained by those on the right
    SCIENCE ~ TAXONOMY + DEFINITIONS
    # formative block (mode B outer weights) and non-metric indicators (optimal scaling, Russolillo 2012)
    ALGORITHM <~ nom(P_alg)
    SIZE =~ ord(P_dim)

``check_data`` tests a model against a table before fitting (unknown, non-numeric, missing or
constant columns; too few rows) so a fit never fails half way with a numerical error.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from workbench.errors import SpecError, WorkbenchError

_NAME = re.compile(r"^[^\s+~=#<()]+$")
MODES = ("A", "B")
SCALINGS = ("num", "ord", "nom")  # numeric, ordinal, nominal (R plspm's ``scaling``)
_SCALED = re.compile(r"^(num|ord|nom)\((.+)\)$")


@dataclass(frozen=True)
class PathModel:
    """Latent variables (``blocks``: latent -> its indicator columns) and directed ``paths`` (source, target).

    Validated at construction: no empty block, no column in two blocks, paths only between declared
    latents, no self-loop, no cycle, every latent on at least one path.

    >>> PathModel(blocks={"TAXONOMY": ("hypernymy", "hyponymy"), "SCIENCE": ("orig",)},
    ...           paths=(("TAXONOMY", "SCIENCE"),)).endogenous
    ('SCIENCE',)
    """

    blocks: Mapping[str, Sequence[str]]
    paths: Sequence[tuple[str, str]]
    modes: Mapping[str, str] = field(default_factory=dict)  # latent -> "A" (reflective, default) or "B" (formative)
    scaling: Mapping[str, str] = field(default_factory=dict)  # indicator -> "num" (default), "ord" or "nom"
    latents: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.blocks, Mapping) or not self.blocks:
            raise SpecError(f"blocks={self.blocks!r} must map at least one latent name to its indicator columns")
        blocks: dict[str, tuple[str, ...]] = {}
        owner: dict[str, str] = {}
        for latent, columns in self.blocks.items():
            _check_name("latent", latent)
            columns = (columns,) if isinstance(columns, str) else tuple(columns)
            if not columns:
                raise SpecError(
                    f"the block of latent {latent!r} is empty; give it at least one score column ({latent} =~ column)"
                )
            for column in columns:
                _check_name(f"indicator of {latent}", column)
                if column in owner:
                    raise SpecError(
                        f"column {column!r} measures both {owner[column]!r} and {latent!r}; "
                        "a column may belong to one block only"
                    )
                owner[column] = latent
            blocks[latent] = columns
        paths = tuple((str(s), str(t)) for s, t in self.paths)
        if not paths:
            raise SpecError("paths=() is empty; declare at least one path between latents (TARGET ~ SOURCE)")
        for source, target in paths:
            for end in (source, target):
                if end not in blocks:
                    raise SpecError(
                        f"the path {source} -> {target} names {end!r}, which is not a declared latent; "
                        f"declared: {list(blocks)}"
                    )
            if source == target:
                raise SpecError(f"the path {source} -> {target} is a self-loop; a latent cannot explain itself")
        duplicates = sorted({p for p in paths if paths.count(p) > 1})
        if duplicates:
            raise SpecError(f"the paths {duplicates} are declared more than once")
        isolated = [name for name in blocks if not any(name in p for p in paths)]
        if isolated:
            raise SpecError(
                f"the latents {isolated} take part in no path; connect them (TARGET ~ SOURCE) or drop their blocks"
            )
        for latent, mode in dict(self.modes).items():
            if latent not in blocks or mode not in MODES:
                raise SpecError(f"modes[{latent!r}]={mode!r}: give a declared latent and one of {list(MODES)}")
        for column, scale in dict(self.scaling).items():
            if column not in owner or scale not in SCALINGS:
                raise SpecError(f"scaling[{column!r}]={scale!r}: give an indicator column and one of {list(SCALINGS)}")
        object.__setattr__(self, "modes", {latent: dict(self.modes).get(latent, "A") for latent in blocks})
        object.__setattr__(self, "scaling", {column: dict(self.scaling).get(column, "num") for column in owner})
        object.__setattr__(self, "blocks", blocks)
        object.__setattr__(self, "paths", paths)
        object.__setattr__(self, "latents", _topological(tuple(blocks), paths))

    @property
    def endogenous(self) -> tuple[str, ...]:
        """Latents with at least one incoming path, in topological order."""
        return tuple(name for name in self.latents if self.predecessors(name))

    @property
    def indicators(self) -> tuple[str, ...]:
        """Every indicator column, block by block in topological order of the latents."""
        return tuple(column for latent in self.latents for column in self.blocks[latent])

    def predecessors(self, latent: str) -> tuple[str, ...]:
        """The latents with a path into ``latent``, in topological order."""
        sources = {s for s, t in self.paths if t == latent}
        return tuple(name for name in self.latents if name in sources)

    def to_text(self) -> str:
        """The model in the text form that ``parse_model`` reads back."""

        def term(column: str) -> str:
            return column if self.scaling[column] == "num" else f"{self.scaling[column]}({column})"

        lines = [
            f"{latent} {'<~' if self.modes[latent] == 'B' else '=~'} {' + '.join(map(term, self.blocks[latent]))}"
            for latent in self.latents
        ]
        lines += [f"{target} ~ {' + '.join(self.predecessors(target))}" for target in self.endogenous]
        return "\n".join(lines) + "\n"


def parse_model(text: str) -> PathModel:
    """Read a model from its text form: ``LATENT =~ col + col`` (measurement, mode A), ``LATENT <~ col + col``
    (mode B), ``ord(col)`` / ``nom(col)`` for non-metric indicators, ``TARGET ~ A + B`` (structure), ``#``
    comments, blank lines ignored; repeated lines for one latent add up.

    >>> parse_model("T =~ hypernymy + hyponymy\\nS =~ orig\\nS ~ T").paths
    (('T', 'S'),)
    """
    blocks: dict[str, list[str]] = {}
    paths: list[tuple[str, str]] = []
    modes: dict[str, str] = {}
    scaling: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "=~" in line or "<~" in line:
            operator = "=~" if "=~" in line else "<~"
            left, right = line.split(operator, 1)
            target = left.strip()
            _check_line_name(target, number, raw)
            modes[target] = "A" if operator == "=~" else "B"
            for term in (t.strip() for t in right.split("+")):
                scaled = _SCALED.match(term)
                column = scaled.group(2).strip() if scaled else term
                if scaled:
                    scaling[column] = scaled.group(1)
                blocks.setdefault(target, []).extend(_terms(column, number, raw))
        elif "~" in line:
            left, right = line.split("~", 1)
            target, terms = left.strip(), _terms(right, number, raw)
            _check_line_name(target, number, raw)
            paths.extend((source, target) for source in terms)
        else:
            raise SpecError(
                f"line {number} ({raw.strip()!r}) is neither a measurement (LATENT =~ col + col) "
                "nor a path (TARGET ~ SOURCE + SOURCE)"
            )
    if not blocks:
        raise SpecError(
            "the model declares no latent; add measurement lines such as 'TAXONOMY =~ hypernymy + hyponymy'"
        )
    return PathModel(blocks=blocks, paths=tuple(paths), modes=modes, scaling=scaling)


def check_data(frame: pl.DataFrame, model: PathModel) -> pl.DataFrame:
    """The model's indicator columns of ``frame`` as Float64, after checking they can be fitted.

    Raises a ``WorkbenchError`` for an unknown or non-numeric column, missing values, a constant
    column, or fewer rows than the largest structural regression needs (predictors + 2).
    """
    unknown = [c for c in model.indicators if c not in frame.columns]
    if unknown:
        raise WorkbenchError(f"the table has no columns {unknown}; its columns are {frame.columns}")
    numeric = [
        c
        for c in model.indicators
        if not frame.schema[c].is_numeric() and frame.schema[c] != pl.Boolean and model.scaling[c] == "num"
    ]
    if numeric:
        raise WorkbenchError(
            f"the columns {numeric} are not numeric; indicators must be scores (numbers), "
            "or declared nom(column) / ord(column)"
        )
    # a non-metric indicator may be text (an algorithm's name): its categories are coded in sorted order
    coded = [
        pl.col(c).rank("dense").cast(pl.Float64)
        if not (frame.schema[c].is_numeric() or frame.schema[c] == pl.Boolean)
        else pl.col(c).cast(pl.Float64)
        for c in model.indicators
    ]  # fmt: skip
    data = frame.select(coded)
    missing = {c: n for c, n in data.null_count().fill_nan(None).row(0, named=True).items() if n}
    nans = {c: int(data[c].is_nan().sum()) for c in data.columns if data[c].is_nan().any()}
    missing = {c: missing.get(c, 0) + nans.get(c, 0) for c in {**missing, **nans}}
    if missing:
        raise WorkbenchError(
            f"the columns {missing} (name: count) have missing values; drop those rows or fill them before fitting"
        )
    needed = max(len(model.predecessors(t)) for t in model.endogenous) + 2
    if data.height < max(needed, 3):
        raise WorkbenchError(
            f"the table has {data.height} rows; this model needs at least {max(needed, 3)} "
            f"(the largest structural regression has {needed - 2} predictors, plus 2); add models to the population"
        )
    constant = [c for c in data.columns if data[c].std() == 0]
    if constant:
        raise WorkbenchError(
            f"the columns {constant} are constant; a constant score measures nothing: drop it from its block"
        )
    return data


def _topological(names: tuple[str, ...], paths: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """Order latents so every path goes forward (stable: declaration order among equals); reject cycles."""
    order: list[str] = []
    remaining = list(names)
    while remaining:
        ready = [n for n in remaining if not any(t == n and s in remaining for s, t in paths)]
        if not ready:
            cycle = [f"{s} -> {t}" for s, t in paths if s in remaining and t in remaining]
            raise SpecError(
                f"the paths form a cycle among {remaining} ({', '.join(cycle)}); PLS path models must be acyclic"
            )
        order.extend(ready)
        remaining = [n for n in remaining if n not in ready]
    return tuple(order)


def _check_name(what: str, name: object) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise SpecError(f"{what} name {name!r} is not allowed; use a name without spaces, '+', '~', '=' or '#'")


def _check_line_name(name: str, number: int, raw: str) -> None:
    if not name or not _NAME.match(name):
        raise SpecError(f"line {number} ({raw.strip()!r}): {name!r} is not one latent name on the left-hand side")


def _terms(right: str, number: int, raw: str) -> list[str]:
    terms = [t.strip() for t in right.split("+")]
    if not right.strip() or any(not t or not _NAME.match(t) for t in terms):
        raise SpecError(f"line {number} ({raw.strip()!r}): the right-hand side must be names joined by '+'")
    return terms
