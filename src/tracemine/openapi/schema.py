"""One level of a schema, flattened: ``$ref`` followed, ``allOf`` merged, ``oneOf``/``anyOf``
reduced to what every branch guarantees, ``nullable`` (3.0, Swagger ``x-nullable``) and
type arrays with ``"null"`` (3.1) folded into one set of types.

A :class:`Node` holds the constraints on a value; its children (properties, array items)
stay unflattened until a walker asks, so recursive schemas cost nothing until walked and a
walker can stop at a ``$ref`` it is already inside (``Node.refs`` says which it entered).
"""

from __future__ import annotations

from typing import Any

from tracemine.openapi.combine import join, meet
from tracemine.openapi.nodes import Child, Node, child, property_children
from tracemine.openapi.refs import Loc, Refs

# function-calling docs (BFCL and friends) use Python names for JSON types
_TYPE_ALIASES = {"dict": "object", "float": "number", "int": "integer", "bool": "boolean",
                 "str": "string", "list": "array", "tuple": "array"}  # fmt: skip
_KNOWN_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
_COMBINATORS = ("allOf", "oneOf", "anyOf")


def flatten(spec: Loc | Child, refs: Refs, stack: frozenset[str] = frozenset()) -> Node:
    """Flatten one level of ``spec``. ``stack`` holds the schemas the walker is already
    inside: reaching one again yields that schema's own constraints, marked ``recursive``
    so that the walker goes no deeper.
    The node returned may be shared: callers must not change it."""
    if isinstance(spec, Loc):
        return _cached(spec, refs, stack)
    key = spec.key
    if key is None:
        return _combine(spec, refs, stack)
    # a child is cached under its own key too, whose hash its string keeps: a walker asks
    # for the same children over and over
    node = refs.flat_cache.get(key)
    if node is None:
        node = refs.flat_cache[key] = _combine(spec, refs, frozenset())
    if not node.refs or node.refs.isdisjoint(stack):
        return node
    cut = node.refs & stack
    variant = refs.flat_cache.get((key, cut))
    if variant is None:
        variant = refs.flat_cache[(key, cut)] = _combine(spec, refs, stack)
    return variant


def _combine(spec: Child, refs: Refs, stack: frozenset[str]) -> Node:
    parts = spec.parts
    if len(parts) <= 1:
        return flatten(parts[0], refs, stack) if parts else Node()
    nodes = [flatten(part, refs, stack) for part in parts]
    return join(nodes) if spec.union else meet(nodes)


def _cached(loc: Loc, refs: Refs, stack: frozenset[str]) -> Node:
    """Each schema position is flattened once per document (shared component schemas are
    reached from many operations), and again only where it reaches into the walker's
    current stack — which is where the cached answer could be wrong. A position met again
    while it is being flattened (``A: {allOf: [B]}``, ``B: {allOf: [A]}``) is a cycle at one
    level: that branch is dropped, and stays dropped (an endless schema has nothing to lose)."""
    key = loc.base + loc.pointer
    if key in refs.in_progress:
        return Node(pointer=loc.pointer)
    node = refs.flat_cache.get(key)
    if node is None:
        node = _compute(loc, key, refs, frozenset())
        refs.flat_cache[key] = node
    if not node.refs or node.refs.isdisjoint(stack):
        return node
    cut = node.refs & stack
    # the answer depends only on which of its references the stack cuts: cache that too
    variant = refs.flat_cache.get((key, cut))
    if variant is None:
        variant = refs.flat_cache[(key, cut)] = _compute(loc, key, refs, stack)
    return variant


def _compute(loc: Loc, key: str, refs: Refs, stack: frozenset[str]) -> Node:
    refs.in_progress.add(key)
    try:
        return _flatten_loc(loc, refs, stack)
    finally:
        refs.in_progress.discard(key)


def _flatten_loc(loc: Loc, refs: Refs, stack: frozenset[str]) -> Node:
    schema = loc.node
    if isinstance(schema, bool) or not isinstance(schema, dict):
        return Node(pointer=loc.pointer)
    nodes: list[Node] = []
    entered: set[str] = set()
    if "$ref" in schema:
        target = refs.resolve(schema["$ref"], loc)
        if target is not None:
            key = target.base + target.pointer
            if key in stack:
                # recursion: the value's own constraints hold, the walker goes no deeper
                cut = refs.flat_cache.get(("recursive", key))
                if cut is None:
                    cut = _cached(target, refs, frozenset()).copy()
                    cut.recursive = True
                    refs.flat_cache[("recursive", key)] = cut
                return cut
            inner = _cached(target, refs, stack)
            if len(schema) == 1:  # a bare reference is its target
                bare = inner.copy()
                bare.refs = inner.refs | {key}
                return bare
            entered.add(key)
            entered.update(inner.refs)
            nodes.append(inner)
    own = _own(loc)
    nodes.insert(0, own)  # the local keywords first: their description wins
    for name in _COMBINATORS:
        branches = schema.get(name)
        if not isinstance(branches, list) or not branches:
            continue
        parts = [_cached(loc.child(name, i), refs, stack) for i in range(len(branches))]
        for part in parts:
            entered.update(part.refs)
        nodes.append(meet(parts) if name == "allOf" else join(parts))
    node = meet(nodes) if len(nodes) > 1 else own
    node.refs = frozenset(entered)
    node.pointer = loc.pointer
    node.recursive = any(n.recursive for n in nodes)
    return node


_BOUND_KEYS = frozenset({"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum",
                         "minItems", "maxItems", "minLength", "maxLength"})  # fmt: skip


def _own(loc: Loc) -> Node:
    """The keywords written in this schema object itself."""
    s = loc.node
    get = s.get
    node = Node(pointer=loc.pointer)
    types = get("type")
    if isinstance(types, str):
        types = [types]
    if isinstance(types, list):
        named = {_TYPE_ALIASES.get(t, t) for t in types if isinstance(t, str)}
        node.types = frozenset(named) if named and named <= _KNOWN_TYPES else None
    node.null_ok = get("nullable") is True or get("x-nullable") is True
    required = get("required")
    if isinstance(required, list):
        node.required = frozenset(r for r in required if isinstance(r, str))
    properties = get("properties")
    if isinstance(properties, dict):
        node.properties = property_children(loc)
    if isinstance(get("items"), dict):
        node.items = child((loc.child("items"),))
    enum = get("enum")
    if isinstance(enum, list) and enum:
        node.enum = tuple(enum)
    if "const" in s:
        node.enum = (s["const"],)
    if not _BOUND_KEYS.isdisjoint(s):
        node.minimum, node.min_exclusive = _bound(s, "minimum", "exclusiveMinimum", max)
        node.maximum, node.max_exclusive = _bound(s, "maximum", "exclusiveMaximum", min)
        node.min_items = _count(get("minItems"))
        node.max_items = _count(get("maxItems"))
        node.min_length = _count(get("minLength"))
        node.max_length = _count(get("maxLength"))
    pattern, fmt = get("pattern"), get("format")
    node.pattern = pattern if isinstance(pattern, str) and pattern else None
    node.format = fmt if isinstance(fmt, str) and fmt else None
    node.unique = get("uniqueItems") is True
    description = get("description")
    node.description = description if isinstance(description, str) else ""
    return node


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _bound(s: dict[str, Any], inclusive: str, exclusive: str, pick: Any) -> tuple[Any, bool]:
    """A bound and whether it is exclusive. ``exclusiveMinimum`` is a flag on ``minimum``
    in 2.0/3.0 and a number of its own in 3.1."""
    value, flag = _number(s.get(inclusive)), s.get(exclusive)
    if flag is True and value is not None:
        return value, True
    other = _number(flag)
    if other is None:
        return value, False
    if value is None or pick(value, other) == other:
        return other, True
    return value, False
