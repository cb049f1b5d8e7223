"""A plain-Python reading of mined contracts, independent of the miner's SQL and of the
product's path code (paths are read by :mod:`reference_paths`): for one call, does a
contract hold (True), break (False) or not apply (None)? Tests use it to count false alarms
of mined contracts on traces the miner never saw."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
from reference_paths import MISSING, evaluate, parse, select

from tracemine.mine.profile.formats import CURRENCIES, FORMAT_NAMES
from tracemine.model.contract import Contract, Kind, Predicate

_FORMATS = {
    "date-time": r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?",
    "date": r"\d{4}-\d{2}-\d{2}",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "email": r"[^@\s]+@[^@\s.]+(\.[^@\s.]+)+",
    "uri": r"[A-Za-z][A-Za-z0-9+.\-]*://\S+",
}
assert set(_FORMATS) | {"currency"} == set(FORMAT_NAMES)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}[type(value)]


def _predicate(predicate: Predicate, args: Any, result: Any) -> bool:
    values = [v for v in select(parse(predicate.path), args, result) if v is not MISSING]
    if predicate.op == "present":
        return bool(values)
    if predicate.op == "absent":
        return not values
    if len(values) != 1:
        return False
    value, wanted = values[0], predicate.value
    if predicate.op == "==":
        return value == wanted
    if predicate.op == "in":
        return value in wanted
    if not _number(value):
        return False
    return {"<": value < wanted, "<=": value <= wanted, ">": value > wanted,
            ">=": value >= wanted}[predicate.op]  # fmt: skip


def holds(contract: Contract, args: Any, result: Any) -> bool | None:
    """Whether ``contract`` holds on one call; None when it does not apply."""
    if contract.when is not None and not _predicate(contract.when, args, result):
        return None
    kind, params = contract.kind, contract.params
    if kind == Kind.SCHEMA:  # read by the JSON Schema validator, not by the product
        value = args if contract.side.value == "args" else result
        return jsonschema.Draft202012Validator(params["schema"]).is_valid(value)
    if kind == Kind.PRODUCT:
        return _product(contract, args, result)
    path = parse(contract.paths[0])
    if kind == Kind.PRESENT:
        parent = path.parent
        objects = [v for v in select(parent, args, result) if isinstance(v, dict)] if parent else []
        return None if not objects else all(path.last in o for o in objects)
    if len(contract.paths) == 2:
        return _relation(contract, args, result)
    values = [v for v in select(path, args, result) if v is not MISSING]
    if not values:
        return None
    if kind == Kind.NOT_NULL:
        return all(v is not None for v in values)
    if kind == Kind.TYPE:
        wanted = params["type"]
        return all(_type(v) == wanted or (wanted == "number" and _number(v)) for v in values)
    if kind == Kind.NON_NEGATIVE:
        return all(_number(v) and v >= 0 for v in values)
    if kind == Kind.POSITIVE:
        return all(_number(v) and v > 0 for v in values)
    if kind == Kind.RANGE:
        return all(_number(v) and params["min"] <= v <= params["max"] for v in values)
    if kind in (Kind.ONE_OF, Kind.CONST):
        allowed = params["values"] if kind == Kind.ONE_OF else [params["value"]]
        return all(any(v == a and type(v) is type(a) for a in allowed) for v in values)
    if kind == Kind.NON_EMPTY:
        return all(isinstance(v, str | list | dict) and len(v) > 0 for v in values)
    if kind == Kind.LENGTH:
        return all(isinstance(v, str | list | dict) and params["min"] <= len(v) <= params["max"]
                   for v in values)  # fmt: skip
    if kind == Kind.FORMAT:
        name = params["format"]
        if name == "currency":
            return all(v in CURRENCIES for v in values)
        return all(isinstance(v, str) and re.fullmatch(_FORMATS[name], v) for v in values)
    if kind == Kind.PATTERN:
        return all(isinstance(v, str) and re.fullmatch(params["regex"], v) for v in values)
    if kind == Kind.UNIQUE:
        return None if len(values) < 2 else len(set(map(repr, values))) == len(values)
    raise AssertionError(f"no reference reading for {kind}")


def _product(contract: Contract, args: Any, result: Any) -> bool | None:
    """``x == a × b``: three numbers, or three keys of each element of one list (an
    element without the three numbers is not judged)."""
    tolerance = contract.params["tolerance"]

    def ok(x: float, a: float, b: float) -> bool:
        return abs(x - a * b) <= tolerance + 1e-9 * abs(x)

    if "[*]" in contract.paths[0]:
        head = contract.paths[0].rsplit("[*].", 1)[0]
        keys = [p.rsplit("[*].", 1)[1] for p in contract.paths]
        found = [v for v in select(parse(head), args, result) if v is not MISSING]
        if not found or not isinstance(found[0], list):
            return None
        judged = [[e[k] for k in keys] for e in found[0]
                  if isinstance(e, dict) and all(_number(e.get(k)) for k in keys)]  # fmt: skip
        return all(ok(*e) for e in judged) if judged else None
    values = [evaluate(parse(p), args, result) for p in contract.paths]
    if any(len(v) != 1 or not _number(v[0]) for v in values):
        return None
    return ok(*(v[0] for v in values))


def _relation(contract: Contract, args: Any, result: Any) -> bool | None:
    left_path, right_path = (parse(p) for p in contract.paths)
    left = [v for v in evaluate(left_path, args, result) if v is not MISSING]
    if contract.kind in (Kind.MEMBER, Kind.SUBSET):
        found = [v for v in select(right_path, args, result) if v is not MISSING]
        if not left or not (found or right_path.has_wildcard):
            return None
        if right_path.has_wildcard:  # what was asked for, among the result's values
            return all(v in found for v in left)
        allowed = found[0] if isinstance(found[0], list) else []  # an empty list holds none
        return all(v in allowed for v in left)
    right = [v for v in evaluate(right_path, args, result) if v is not MISSING]
    if contract.kind == Kind.SUM_EQUALS and not left and left_path.has_wildcard:
        left = [0]
    if len(right) != 1 or not left or right[0] is None:
        return None
    other = right[0]
    if contract.kind == Kind.EQUALS:
        return all(v == other for v in left)
    if contract.kind == Kind.SUM_EQUALS:
        return abs(left[0] - other) <= contract.params["tolerance"] + 1e-9 * abs(other)
    if not all(_number(v) or isinstance(v, str) for v in [*left, other]):
        return False
    if contract.kind == Kind.LE:
        return all(v <= other for v in left)
    return all(v < other for v in left)


def false_alarms(contracts: list[Contract], lines: list[dict]) -> dict[str, tuple[int, int]]:
    """Per contract id: (calls it applied to, calls it broke) over nominal flat lines."""
    out = {c.id: (0, 0) for c in contracts}
    by_tool: dict[str, list[Contract]] = {}
    for contract in contracts:
        by_tool.setdefault(contract.tool, []).append(contract)
    for line in lines:
        if line["status"] != "ok" or line.get("run_outcome", "success") != "success":
            continue
        for contract in by_tool.get(line["tool"], []):
            verdict = holds(contract, line["arguments"], line["result"])
            if verdict is not None:
                checked, broken = out[contract.id]
                out[contract.id] = (checked + 1, broken + (not verdict))
    return out
