"""Combining flattened schemas: ``allOf`` meets (every constraint holds), ``oneOf`` and
``anyOf`` join (only what every branch guarantees holds)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tracemine.openapi.nodes import Node, child

_NULL = frozenset({"null"})


def meet(nodes: list[Node]) -> Node:
    """All of ``nodes`` hold (allOf)."""
    if len(nodes) == 1:
        return nodes[0]
    out = nodes[0].copy()
    out.properties = dict(out.properties)
    for n in nodes[1:]:
        if n.types is not None:
            out.types = n.types if out.types is None else _intersect_types(out.types, n.types)
        # lenient on purpose: `nullable: true` beside an allOf means "this may be null" in
        # practice, though 3.0 reads it strictly; a false not_null would alarm on good data
        out.null_ok = out.null_ok or n.null_ok
        out.required |= n.required
        for name, theirs in n.properties.items():
            mine = out.properties.get(name)
            out.properties[name] = theirs if mine is None else child((mine, theirs))
        if n.items is not None:
            out.items = n.items if out.items is None else child((out.items, n.items))
        if n.enum is not None:
            out.enum = n.enum if out.enum is None else tuple(v for v in out.enum if v in n.enum)
        if n.minimum is not None and (out.minimum is None or n.minimum >= out.minimum):
            same = out.minimum == n.minimum
            out.min_exclusive = n.min_exclusive or (same and out.min_exclusive)
            out.minimum = n.minimum
        if n.maximum is not None and (out.maximum is None or n.maximum <= out.maximum):
            same = out.maximum == n.maximum
            out.max_exclusive = n.max_exclusive or (same and out.max_exclusive)
            out.maximum = n.maximum
        out.min_items = _tight(out.min_items, n.min_items, max)
        out.max_items = _tight(out.max_items, n.max_items, min)
        out.min_length = _tight(out.min_length, n.min_length, max)
        out.max_length = _tight(out.max_length, n.max_length, min)
        out.pattern = out.pattern or n.pattern
        out.format = out.format or n.format
        out.unique = out.unique or n.unique
        out.description = out.description or n.description
        out.refs |= n.refs
        out.recursive = out.recursive or n.recursive
    return out


def _intersect_types(a: frozenset[str], b: frozenset[str]) -> frozenset[str] | None:
    def widen(t: frozenset[str]) -> set[str]:
        return set(t) | ({"integer"} if "number" in t else set())

    both = widen(a) & widen(b)
    if "number" in both:
        both.discard("integer")
    # contradictory branches are a broken schema: claim nothing rather than everything
    return frozenset(both) or None


def _tight(a: int | None, b: int | None, pick: Any) -> int | None:
    if a is None:
        return b
    return a if b is None else pick(a, b)


def join(nodes: list[Node]) -> Node:
    """Any of ``nodes`` holds (oneOf/anyOf): keep only what every branch guarantees.
    Type-specific keywords count only the branches that admit that type, as in JSON
    Schema (``maxLength`` says nothing about a number)."""
    out = Node(pointer=nodes[0].pointer, description=nodes[0].description)
    out.refs = frozenset().union(*(n.refs for n in nodes))
    out.recursive = any(n.recursive for n in nodes)
    if all(n.types is not None for n in nodes):
        out.types = frozenset().union(*(n.types or () for n in nodes))
    out.null_ok = any(n.null_ok for n in nodes)
    # a branch that admits only null ({"type": "null"}) lists exactly one value
    enums = [(None,) if n.enum is None and n.types == _NULL else n.enum for n in nodes]
    if all(e is not None for e in enums):
        out.enum = _distinct(v for e in enums for v in e or ())
    objects = [n for n in nodes if n.may_be("object")]
    if objects:
        out.required = frozenset.intersection(*(n.required for n in objects))
        shared = set.intersection(*(set(n.properties) for n in objects))
        out.properties = {
            k: child(tuple(n.properties[k] for n in objects), union=True)
            for k in objects[0].properties
            if k in shared
        }
    arrays = [n for n in nodes if n.may_be("array")]
    if arrays and all(n.items is not None for n in arrays):
        out.items = child(tuple(n.items for n in arrays), union=True)
    if arrays:
        out.min_items = _loose(arrays, "min_items", min)
        out.max_items = _loose(arrays, "max_items", max)
        out.unique = all(n.unique for n in arrays)
    numbers = [n for n in nodes if n.may_be("integer", "number")]
    if numbers and all(n.minimum is not None for n in numbers):
        low = min(numbers, key=lambda n: (n.minimum, n.min_exclusive))
        out.minimum, out.min_exclusive = low.minimum, low.min_exclusive
    if numbers and all(n.maximum is not None for n in numbers):
        high = max(numbers, key=lambda n: (n.maximum, not n.max_exclusive))
        out.maximum, out.max_exclusive = high.maximum, high.max_exclusive
    strings = [n for n in nodes if n.may_be("string")]
    if strings:
        out.min_length = _loose(strings, "min_length", min)
        out.max_length = _loose(strings, "max_length", max)
        out.pattern = _same(strings, "pattern")
        out.format = _same(strings, "format")
    return out


def _loose(nodes: list[Node], name: str, pick: Any) -> Any:
    values = [getattr(n, name) for n in nodes]
    return None if any(v is None for v in values) else pick(values)


def _same(nodes: list[Node], name: str) -> Any:
    values = {getattr(n, name) for n in nodes}
    return values.pop() if len(values) == 1 else None


def _distinct(values: Iterable[Any]) -> tuple[Any, ...]:
    """In order, without repeats; enum values may be objects, which do not hash."""
    out: list[Any] = []
    for value in values:
        if value not in out:
            out.append(value)
    return tuple(out)
