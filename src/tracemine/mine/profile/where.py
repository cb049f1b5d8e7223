"""``--where``: which runs count as nominal (``run_outcome=success``, ``reward>=1``).

A filter is ``FIELD OP VALUE`` over the fields of a run; several filters must all hold.
Values are passed to DuckDB as parameters, never pasted into SQL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tracemine.errors import InputError

RUN_FIELDS = (
    "run_id", "task_id", "task_id_source", "trial", "session_id", "run_outcome", "reward",
    "family", "source_format", "source_file",
)  # fmt: skip
NUMERIC_FIELDS = frozenset({"trial", "reward"})
_FILTER = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(==|!=|>=|<=|=|>|<)\s*(.*?)\s*$")


@dataclass(frozen=True)
class Filter:
    """One ``field op value`` condition on runs."""

    text: str
    field: str
    op: str
    value: str | float


def parse_filters(specs: str | list[str] | tuple[str, ...] | None) -> list[Filter]:
    """Parse ``--where`` options; an unknown field or operator is an :class:`InputError`."""
    if specs is None:
        return []
    if isinstance(specs, str):
        specs = [specs]
    filters = []
    for spec in specs:
        match = _FILTER.match(spec)
        if match is None:
            raise InputError(f"--where {spec!r}: expected FIELD=VALUE (or != >= <= > <)")
        field, op, raw = match.groups()
        op = "=" if op == "==" else op
        if field.startswith("metadata."):
            pass
        elif field not in RUN_FIELDS:
            raise InputError(
                f"--where {spec!r}: unknown run field {field!r}; "
                f"use one of {', '.join(RUN_FIELDS)} or metadata.KEY"
            )
        value: str | float = raw.strip("'\"")
        if field in NUMERIC_FIELDS or op in ("<", "<=", ">", ">="):
            try:
                value = float(raw)
            except ValueError:
                raise InputError(f"--where {spec!r}: {raw!r} is not a number") from None
        filters.append(Filter(text=f"{field}{op}{raw}", field=field, op=op, value=value))
    return sorted(filters, key=lambda f: f.text)


def where_sql(filters: list[Filter], alias: str = "r") -> tuple[str, list[object]]:
    """A SQL condition over the ``runs`` table (aliased ``alias``) and its parameters."""
    if not filters:
        return "TRUE", []
    parts: list[str] = []
    params: list[object] = []
    for item in filters:
        if item.field.startswith("metadata."):
            key = item.field[len("metadata.") :]
            column = f"json_extract_string({alias}.metadata, ?)"
            params.append("$." + key)
        else:
            column = f"{alias}.{item.field}"
        if isinstance(item.value, float):
            column = f"TRY_CAST({column} AS DOUBLE)"
        parts.append(f"{column} {item.op} ?")
        params.append(item.value)
    return " AND ".join(parts), params
