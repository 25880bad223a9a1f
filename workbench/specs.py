"""The one calling convention of the public verbs: ``verb(data, spec=None, **overrides)``.

A verb's settings live in one frozen, validated dataclass (``ProbeSpec``, ``ScoreSpec``, ``InoculationSpec``,
``PLSSpec``). A caller passes the spec, or only the settings that differ from its defaults, or both:

    >>> build_probes(ProbeSpec("hypernymy", max_hops=2))  # doctest: +SKIP
    >>> build_probes("hypernymy", max_hops=2)             # the same: the first field, then overrides
    >>> score(probes, model, spec, batch_size=64)         # a saved spec with one setting changed
"""

import dataclasses
from typing import Any, TypeVar

from workbench.errors import SpecError

Spec = TypeVar("Spec")


def resolve_spec(kind: type[Spec], spec: Spec | Any | None, overrides: dict[str, Any]) -> Spec:
    """``spec`` with ``overrides`` applied, validated by ``kind``'s constructor.

    ``spec`` is a ``kind`` instance, None (the defaults), or the value of ``kind``'s first field (e.g. a
    probe name for ``ProbeSpec``). An override that is not a field of ``kind`` is a ``SpecError`` that
    lists the fields.
    """
    fields = [field.name for field in dataclasses.fields(kind)]
    unknown = sorted(set(overrides) - set(fields))
    if unknown:
        raise SpecError(f"{', '.join(unknown)} {'is not a setting' if len(unknown) == 1 else 'are not settings'} "
                        f"of {kind.__name__}; choose from {fields}")  # fmt: skip
    if isinstance(spec, kind):
        return dataclasses.replace(spec, **overrides) if overrides else spec
    if spec is None:
        return kind(**overrides)
    if fields[0] in overrides:
        raise SpecError(f"{fields[0]} is given twice ({spec!r} and {overrides[fields[0]]!r}); give it once")
    return kind(**{fields[0]: spec}, **overrides)
