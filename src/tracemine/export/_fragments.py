"""Contracts as JSON Schema fragments rooted at a tool's result, and their merge.

Each contract becomes one fragment (or :class:`Unexpressible` with the reason), so a
target can say exactly which contracts it could not carry. Fragments mirror the path
language: ``result.items[*].price`` is ``properties.items.items.properties.price``.
A property step constrains only objects and an ``items`` step only arrays, as the
monitor's paths select nothing inside a value of another type.
"""

from __future__ import annotations

import copy
from typing import Any

from tracemine.model.contract import RELATIONAL_KINDS, RUN_KINDS, Contract, Kind, Predicate, Side
from tracemine.model.paths import ANY_KEY, WILDCARD, PathError, parse
from tracemine.monitor._predicates import type_names

DIALECT = "https://json-schema.org/draft/2020-12/schema"

# Regular expressions make formats assert: JSON Schema validators treat ``format`` as an
# annotation unless told otherwise, and some formats (currency) are not in the standard.
FORMAT_PATTERNS = {
    "date-time": r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$",
    "date": r"^\d{4}-\d{2}-\d{2}$",
    "uuid": r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "email": r"^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$",
    "uri": r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$",
    "url": r"^https?://[^\s/?#]+\S*$",
    "currency": r"^[A-Z]{3}$",
}
STANDARD_FORMATS = frozenset(
    {"date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uri",
     "uri-reference", "uuid"}
)  # fmt: skip
_SIZE_WORDS = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems"),
               "object": ("minProperties", "maxProperties")}  # fmt: skip


class Unexpressible(Exception):
    """The contract has no faithful form in the target; the message says why."""


def _sizes(low: Any, high: Any, json_type: str | None) -> dict[str, Any]:
    types = [json_type] if json_type in _SIZE_WORDS else list(_SIZE_WORDS)
    out: dict[str, Any] = {}
    for name in types:
        least, most = _SIZE_WORDS[name]
        if low is not None:
            out[least] = int(low) if float(low).is_integer() else int(low) + 1
        if high is not None:
            out[most] = int(high)
    return out


def _value_schema(c: Contract, json_type: str | None) -> dict[str, Any]:
    p = c.params
    match c.kind:
        case Kind.NOT_NULL:
            return {"not": {"type": "null"}}
        case Kind.TYPE:
            return {"type": p["type"]}
        case Kind.NON_NEGATIVE:
            return {"minimum": 0}
        case Kind.POSITIVE:
            return {"exclusiveMinimum": 0}
        case Kind.RANGE:
            bounds = {"minimum": p.get("min"), "maximum": p.get("max")}
            return {k: v for k, v in bounds.items() if v is not None}
        case Kind.ONE_OF:
            return {"enum": list(p["values"])}
        case Kind.CONST:
            return {"const": p["value"]}
        case Kind.NON_EMPTY:
            return _sizes(1, None, json_type)
        case Kind.LENGTH:
            return _sizes(p.get("min"), p.get("max"), json_type)
        case Kind.PATTERN:
            return {"pattern": p["regex"]}
        case Kind.FORMAT:
            name = str(p["format"])
            out = {"format": name} if name in STANDARD_FORMATS else {}
            if name in FORMAT_PATTERNS:
                out["pattern"] = FORMAT_PATTERNS[name]
            if "pattern" not in out:
                raise Unexpressible(f"format {name!r} has no assertion in JSON Schema")
            return out
    raise Unexpressible(f"kind {c.kind.value} has no JSON Schema form")


def _length_of(c: Contract) -> dict[str, Any]:
    """A unary contract on ``len(x)``, as size keywords on ``x``."""
    p = c.params
    bounds = {
        Kind.RANGE: (p.get("min"), p.get("max")), Kind.LENGTH: (p.get("min"), p.get("max")),
        Kind.POSITIVE: (1, None), Kind.NON_NEGATIVE: (0, None),
        Kind.CONST: (p.get("value"), p.get("value")),
    }.get(c.kind)  # fmt: skip
    if bounds is None:
        raise Unexpressible(f"{c.kind.value} of a length has no JSON Schema form")
    return _sizes(*bounds, None)


def _wrap(steps: tuple[Any, ...], inner: dict[str, Any]) -> dict[str, Any]:
    for step in reversed(steps):
        if step is WILDCARD:
            inner = {"items": inner}
        elif step is ANY_KEY:
            inner = {"additionalProperties": inner}  # a map: every entry
        else:
            inner = {"properties": {step: inner}}
    return inner


def contract_fragment(c: Contract, json_types: dict[str, str] | None = None) -> dict[str, Any]:
    """The schema, rooted at the tool's result, that a result satisfying ``c`` satisfies
    (a condition becomes ``if``/``then``). ``json_types`` maps paths to the type a ``type``
    contract gives them, so ``length`` picks ``maxLength`` or ``maxItems``. Raises
    :class:`Unexpressible`."""
    body = fragment_body(c, json_types)
    if c.when is None:
        return body
    return {"allOf": [{"if": predicate_schema(c.when), "then": body}]}


def fragment_body(c: Contract, json_types: dict[str, str] | None = None) -> dict[str, Any]:
    """Like :func:`contract_fragment`, ignoring the contract's condition."""
    if c.kind in RUN_KINDS:
        raise Unexpressible("run-level: a result schema sees one call at a time")
    if c.side != Side.RESULT:
        raise Unexpressible("constrains the arguments, not the result")
    if c.kind in RELATIONAL_KINDS:
        raise Unexpressible("relates values of a call; JSON Schema constrains one value at a time")
    try:
        path = parse(c.paths[0])
    except (PathError, IndexError) as exc:
        raise Unexpressible(f"path does not parse: {exc}") from None
    if path.root != "result":
        raise Unexpressible("addresses the arguments")
    if c.kind == Kind.SCHEMA:  # already the result's schema: everything but the dialect
        return {k: copy.deepcopy(v) for k, v in c.params.get("schema", {}).items()
                if k != "$schema"}  # fmt: skip
    if path.function == "len":
        body = _wrap(path.steps, _length_of(c))
    elif path.function is not None:
        raise Unexpressible(f"derived value {path.function}(…) has no JSON Schema form")
    elif c.kind == Kind.PRESENT:
        if not path.steps or path.steps[-1] is WILDCARD or path.steps[-1] is ANY_KEY:
            body = {}  # the result itself, or an element that exists when selected
        else:
            body = _wrap(path.steps[:-1], {"required": [path.steps[-1]]})
    elif c.kind == Kind.UNIQUE:
        inner = path.steps[:-1]
        if (
            path.steps
            and path.steps[-1] is WILDCARD
            and WILDCARD not in inner
            and ANY_KEY not in inner
        ):
            body = _wrap(path.steps[:-1], {"uniqueItems": True})
        elif WILDCARD not in path.steps and ANY_KEY not in path.steps:
            body = _wrap(path.steps, {"uniqueItems": True})
        else:
            raise Unexpressible("uniqueness of a field across elements has no JSON Schema form")
    else:
        body = _wrap(path.steps, _value_schema(c, (json_types or {}).get(path.plain)))
    if c.when is not None:
        predicate_schema(c.when)  # raises when the condition cannot be expressed
    return body


def predicate_schema(when: Predicate) -> dict[str, Any]:
    """A schema true exactly when the predicate holds on the result (the path present,
    except for ``absent``)."""
    try:
        path = parse(when.path)
    except PathError as exc:
        raise Unexpressible(f"condition path does not parse: {exc}") from None
    if path.root != "result":
        raise Unexpressible("the condition reads the arguments, which a result schema cannot")
    if path.function is not None or path.has_wildcard:
        raise Unexpressible("the condition addresses a derived value or array elements")
    value = when.value
    leaf = {
        "==": {"const": value}, "!=": {"not": {"const": value}},
        "in": {"enum": value}, "not_in": {"not": {"enum": value}},
        "<": {"type": "number", "exclusiveMaximum": value},
        "<=": {"type": "number", "maximum": value},
        ">": {"type": "number", "exclusiveMinimum": value},
        ">=": {"type": "number", "minimum": value},
    }.get(when.op, {})  # fmt: skip
    present = leaf
    for step in reversed(path.steps):
        present = {"type": "object", "required": [step], "properties": {step: present}}
    return {"not": present} if when.op == "absent" else present


_LOWER = frozenset({"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"})
_UPPER = frozenset({"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"})


def _numeric(*values: Any) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def merge(target: dict[str, Any], fragment: dict[str, Any]) -> dict[str, Any]:
    """Merge ``fragment`` into ``target`` (in place) so the result requires both: nested
    properties and items merge, ``required`` unites, and a keyword already set to another
    value goes into ``allOf`` rather than replacing it."""
    for key, value in fragment.items():
        if key == "properties":
            props = target.setdefault("properties", {})
            for name, sub in value.items():
                props[name] = merge(props.get(name, {}), sub)
        elif key == "items":
            target["items"] = merge(target.get("items", {}), value)
        elif key == "required":
            target["required"] = sorted(set(target.get("required", [])) | set(value))
        elif key == "allOf":
            target.setdefault("allOf", []).extend(copy.deepcopy(value))
        elif key not in target:
            target[key] = copy.deepcopy(value)
        elif key in _LOWER and _numeric(target[key], value):
            target[key] = max(target[key], value)  # both hold: the tighter bound says it all
        elif key in _UPPER and _numeric(target[key], value):
            target[key] = min(target[key], value)
        elif target[key] != value:
            target.setdefault("allOf", []).append({key: copy.deepcopy(value)})
    return target


def type_hints(contracts: list[Contract], side: Side = Side.RESULT) -> dict[tuple[str, str], str]:
    """(tool, plain path) → JSON type, from ``side``'s unconditional ``type`` contracts."""
    hints = {}
    for c in contracts:
        if c.kind == Kind.TYPE and c.when is None and c.side == side and c.paths:
            names = [n for n in type_names(c.params.get("type")) if n != "null"]
            hints[(c.tool, c.paths[0])] = str(names[0] if names else "null")
    return hints
