"""How much of one record ingest accepts: what a hostile or broken file may not make it
spend. Past a limit the record (or, for a gzip bomb, the rest of the file) is quarantined
with the limit's name, never read into memory whole.

max_record_bytes   bytes of one unit: a JSONL line, an array element, a whole document
max_depth          nesting of arrays and objects in a stored value (arguments, result,
                   run metadata); orjson writes up to 254 levels, deeper ones are written
                   by the standard library, up to this limit
max_gzip_ratio     decompressed bytes over compressed bytes read so far, checked while
                   the file streams once ``gzip_ratio_after`` bytes are decompressed
"""

from __future__ import annotations

from dataclasses import dataclass

from tracemine.errors import InputError

MAX_RECORD_BYTES = 64 << 20
MAX_DEPTH = 400
MAX_GZIP_RATIO = 1000.0
GZIP_RATIO_AFTER = 8 << 20
ORJSON_DEPTH = 254
"""The deepest value orjson writes; a lower ``max_depth`` costs a walk of every value."""
PYTHON_DEPTH = 450
"""About the deepest value the standard library's JSON writer reaches under Python's
default recursion limit (two frames a level), with the frames an ingest already uses;
past it a value is quarantined as too deep to store whatever the limit says."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits one ingest applies (see the module's docstring)."""

    max_record_bytes: int = MAX_RECORD_BYTES
    max_depth: int = MAX_DEPTH
    max_gzip_ratio: float = MAX_GZIP_RATIO
    gzip_ratio_after: int = GZIP_RATIO_AFTER

    def __post_init__(self) -> None:
        if self.max_record_bytes < 1:
            raise InputError(f"--max-record-bytes {self.max_record_bytes}: give at least 1")
        if not 1 <= self.max_depth <= PYTHON_DEPTH:
            raise InputError(f"--max-depth {self.max_depth}: give 1 to {PYTHON_DEPTH}")
        if not self.max_gzip_ratio >= 1:
            raise InputError(f"--max-gzip-ratio {self.max_gzip_ratio}: give at least 1")
        if self.gzip_ratio_after < 0:
            raise InputError(f"gzip_ratio_after {self.gzip_ratio_after}: give 0 or more")


DEFAULT = Limits()


class LimitExceeded(ValueError):
    """A stream went past one of the :class:`Limits`; the message names the limit."""


def depth_exceeds(value: object, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects deeper than ``limit`` levels (walked
    without recursion: the value may be deeper than Python's stack)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: object = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > limit:
            return True
        stack.extend((child, depth) for child in children)  # type: ignore[attr-defined]
    return False
