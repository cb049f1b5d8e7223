"""What a declared contract declares, in words: ``result.status one of shipped,
delivered, cancelled — declared in shop.openapi.yaml``. The claim comes first, so a
reviewer reads the constraint itself rather than where it came from."""

from __future__ import annotations

import json
from typing import Any

from tracemine.model.contract import Kind, Source, between

_LISTED = 8  # values named before "… (n in all)": an enum of hundreds is not a sentence


def declared_description(kind: Kind, path: str, params: dict[str, Any], spec: str,
                         source: Source = Source.DECLARED) -> str:  # fmt: skip
    """One line: the constraint at ``path``, then the document that states it.

    >>> declared_description(Kind.ONE_OF, "result.status",
    ...                      {"values": ["shipped", "delivered"]}, "shop.openapi.yaml")
    'result.status one of shipped, delivered — declared in shop.openapi.yaml'
    """
    where = "stated in a description in" if source == Source.PROSE else "declared in"
    return f"{_claim(kind, path, params)} — {where} {spec}"


def _claim(kind: Kind, path: str, params: dict[str, Any]) -> str:
    if kind == Kind.PRESENT:
        return f"{path} is present"
    if kind == Kind.NOT_NULL:
        return f"{path} is not null"
    if kind == Kind.TYPE:
        return f"{path} is {params.get('type')}"
    if kind == Kind.NON_NEGATIVE:
        return f"{path} >= 0"
    if kind == Kind.POSITIVE:
        return f"{path} > 0"
    if kind == Kind.RANGE:
        return between(path, params)
    if kind == Kind.LENGTH:
        return between(f"len({path})", params)
    if kind == Kind.NON_EMPTY:
        return f"{path} is not empty"
    if kind == Kind.ONE_OF:
        return f"{path} one of {_values(params.get('values') or [])}"
    if kind == Kind.CONST:
        return f"{path} is {_value(params.get('value'))}"
    if kind == Kind.FORMAT:
        return f"{path} is a {params.get('format')}"
    if kind == Kind.PATTERN:
        return f"{path} matches {params.get('regex')}"
    if kind == Kind.UNIQUE:
        return f"{path} has no duplicates"
    return f"{kind.value}({path})"


def _value(value: Any) -> str:
    # strings as written in the spec; anything else (null, numbers, objects) as JSON
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _values(values: list[Any]) -> str:
    shown = ", ".join(_value(v) for v in values[:_LISTED])
    return shown if len(values) <= _LISTED else f"{shown}, … ({len(values)} in all)"
