"""What every command reads and writes, declared once above it, and the one guard that checks the values before
the command does any work (docs/RELIABILITY.md).

>>> @declares(probes=Reads(), out=Writes("predictions"), name=Label())  # doctest: +SKIP
... def score(probes: Path, out: Path, name: str | None = None, force: bool = False): ...

``tests/test_outputs.py`` walks every command of the app and fails on a path option no declaration names, so a
new command cannot forget its outputs.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import SpecError
from workbench.io import FOLDER_KINDS, OUTPUT_SUFFIXES, check_input, check_label, check_output


@dataclass(frozen=True)
class Reads:
    """An option naming input files or folders (a value that is no path, a hub name, names no file).
    ``pairs``: its values are ``NAME=PATH``, the name part of file names (checked as ``Label(file_name=True)``)."""

    pairs: bool = False


@dataclass(frozen=True)
class Writes:
    """An option naming an output: ``kind`` is a key of ``io.OUTPUT_SUFFIXES`` (a file) or ``io.FOLDER_KINDS``
    (a folder), what ``io.check_output`` holds it to."""

    kind: str

    def __post_init__(self) -> None:
        if self.kind not in {*OUTPUT_SUFFIXES, *FOLDER_KINDS}:
            raise SpecError(f"Writes({self.kind!r}): choose one of {sorted({*OUTPUT_SUFFIXES, *FOLDER_KINDS})}")


@dataclass(frozen=True)
class Label:
    """An option naming something (a model label) that ends up in charts, reports and file names."""

    file_name: bool = False


Declaration = Reads | Writes | Label


def declares(**options: Declaration) -> Callable:
    """Declare a command's path and name options; ``guard`` checks their values before the command runs."""

    def decorate(command: Callable) -> Callable:
        @functools.wraps(command)
        def guarded(**values):
            guard(options, values)
            return command(**values)

        guarded.declared = options
        return guarded

    return decorate


def guard(declared: dict[str, Declaration], values: dict) -> None:
    """Refuse, in one line, a label that is too long or holds control characters, and an output that is an input
    (by device and inode), of another kind (without ``--force``), of a wrong suffix, or a device."""
    inputs: list[Path] = []
    for name, what in declared.items():
        option = "--" + name.replace("_", "-")
        for value in _listed(values[name]):
            if isinstance(what, Label):
                check_label(str(value), option, file_name=what.file_name)
            elif isinstance(what, Reads):
                if what.pairs:
                    label, _, value = str(value).partition("=")
                    check_label(label, f"the name of {option}", file_name=True)
                check_input(value, option)
                inputs.append(Path(value))
    for name, what in declared.items():
        if isinstance(what, Writes) and values[name] is not None:
            check_output(Path(values[name]), kind=what.kind, inputs=tuple(inputs), force=bool(values.get("force")),
                         can_force="force" in values)  # fmt: skip


def _listed(value) -> list:
    if value is None:
        return []
    return [item for item in value if item is not None] if isinstance(value, list | tuple) else [value]
