"""The two shapes a schema takes while it is read: :class:`Node`, the constraints of one
flattened level, and :class:`Child`, a not-yet-flattened child (properties, array items)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracemine.openapi.refs import Loc, escape


@dataclass(slots=True, unsafe_hash=True)
class Child:
    """An unflattened child: the value must satisfy ``all`` of the parts (``any`` of them
    when ``union``); each part a :class:`Loc` or a nested :class:`Child`. Never changed
    once made (not ``frozen``, which is three times slower to create)."""

    parts: tuple[Any, ...]
    union: bool = False
    key: str | None = None  # names it within its document, for the cache; None: not cached


MAX_KEY = 4000
"""A child whose cache key would be this long or longer is not cached (hashing the key
would cost more than flattening it again)."""


def _key(union: bool, positions: str) -> str | None:
    key = ("|(" if union else "&(") + positions + ")"
    return key if len(key) < MAX_KEY else None


def child(parts: tuple[Any, ...], union: bool = False) -> Child:
    """A :class:`Child` with its cache key (the positions of its parts)."""
    if len(parts) == 1:
        part = parts[0]
        one = part.base + part.pointer if isinstance(part, Loc) else part.key
        return Child(parts, union, None if one is None else _key(union, one))
    keys = [p.base + p.pointer if isinstance(p, Loc) else p.key for p in parts]
    return Child(parts, union, None if None in keys else _key(union, ",".join(keys)))


def property_children(loc: Loc) -> dict[str, Child]:
    """``child((loc.child("properties", name),))`` for each string-named property of the
    object schema at ``loc``, made in one go (the hot path of flattening a large
    document)."""
    base = loc.base
    prefix = loc.pointer + "/properties/"
    out: dict[str, Child] = {}
    for name, schema in loc.node["properties"].items():
        if isinstance(name, str):
            pointer = prefix + escape(name)
            out[name] = Child((Loc(schema, base, pointer),), False, _key(False, base + pointer))
    return out


@dataclass(slots=True)
class Node:
    """The constraints one schema puts on a value (None: no constraint)."""

    types: frozenset[str] | None = None
    null_ok: bool = False
    required: frozenset[str] = frozenset()
    properties: dict[str, Child] = field(default_factory=dict)
    items: Child | None = None
    enum: tuple[Any, ...] | None = None
    minimum: float | None = None
    min_exclusive: bool = False
    maximum: float | None = None
    max_exclusive: bool = False
    min_items: int | None = None
    max_items: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None
    unique: bool = False
    description: str = ""
    pointer: str = ""
    refs: frozenset[str] = frozenset()
    recursive: bool = False
    memo: dict[Any, Any] | None = None  # the walker's per-node results (declared.py)

    def copy(self) -> Node:
        """A copy to change (the properties dict still shared), without the memo;
        ``dataclasses.replace`` does the same several times slower."""
        return Node(self.types, self.null_ok, self.required, self.properties, self.items,
                    self.enum, self.minimum, self.min_exclusive, self.maximum,
                    self.max_exclusive, self.min_items, self.max_items, self.min_length,
                    self.max_length, self.pattern, self.format, self.unique, self.description,
                    self.pointer, self.refs, self.recursive, None)  # fmt: skip

    def may_be(self, *kinds: str) -> bool:
        """Whether a value of one of these JSON types passes the type constraint."""
        types = self.types
        if types is None:
            return True
        for kind in kinds:
            if kind in types:
                return True
            if (kind == "integer" and "number" in types) or (
                kind == "number" and "integer" in types
            ):
                return True
        return False
