"""Which reader a file needs, judged from its first readable unit."""

from __future__ import annotations

from pathlib import Path

from tracemine.errors import UnknownFormatError
from tracemine.ingest.readers import READERS, Reader
from tracemine.ingest.source import BadUnit, iter_units

_SNIFF_UNITS = 5


def reader_for(name: str) -> type[Reader]:
    try:
        return READERS[name]
    except KeyError:
        known = ", ".join(READERS)
        raise UnknownFormatError(f"unknown format {name!r}; known formats: {known}") from None


def detect_format(path: Path) -> str:
    """Name of the reader for ``path``; :class:`UnknownFormatError` when none fits."""
    seen = 0
    first_shape = "nothing readable"
    almost: tuple[str, str] | None = None  # (reader, what it expected) of a near miss
    try:
        for _, unit in iter_units(path):
            if isinstance(unit, BadUnit):
                if first_shape == "nothing readable":
                    first_shape = f"nothing readable: {unit.reason}"
                continue
            if seen == 0:
                first_shape = _shape(unit)
            for cls in READERS.values():
                if cls.sniff(unit):
                    return cls.name
                if almost is None:
                    said = cls.near_miss(unit)
                    if said:
                        almost = (cls.name, said)
            seen += 1
            if seen >= _SNIFF_UNITS:
                break
    except OSError as exc:
        raise UnknownFormatError(f"{path}: cannot read: {exc}") from None
    if almost is not None:
        name, said = almost
        raise UnknownFormatError(
            f"{path}: looks like a {name} export, but {said}; "
            f"with --format {name} the records it cannot read are quarantined"
        )
    raise UnknownFormatError(
        f"{path}: no reader recognises this file (first record: {first_shape}); "
        f"pass --format, one of: {', '.join(READERS)}"
    )


def _shape(unit: object) -> str:
    if isinstance(unit, dict):
        keys = ", ".join(sorted(map(str, unit))[:8])
        return f"an object with keys {keys}"
    if isinstance(unit, list):
        return f"an array of {len(unit)}"
    return f"a {type(unit).__name__}"
