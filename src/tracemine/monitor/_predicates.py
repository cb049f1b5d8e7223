"""What one value must be, by contract kind: the predicates the compiled checks apply to
each value a path selects, and their whole-array forms run in C under a wildcard."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from tracemine.monitor._formats import FORMATS, MAX_FORMAT_INPUT
from tracemine.monitor._load import ContractLoadError
from tracemine.monitor._regex import MAX_INPUT, UnsafePattern, compile_pattern
from tracemine.monitor._values import is_number, json_type, key, same

Pred = Callable[[Any], bool]


class NotEvaluated(Exception):
    """The contract could not be judged on this call; the message says why."""


def _short(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


_PLAIN = frozenset((str, int, float, type(None)))  # classes whose key() is the value itself
NUMBERS = frozenset((int, float))


def _fast_number(test: Callable[[Any], bool]) -> Pred:
    # exact int/float first: the common case costs two identity checks, not isinstance
    return lambda v: test(v) if v.__class__ is int or v.__class__ is float else (
        not is_number(v) or test(v))  # fmt: skip


_TYPES: dict[str, Pred] = {
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list | tuple),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: v.__class__ is float or v.__class__ is int or is_number(v),
    "integer": lambda v: (
        v.__class__ is int or json_type(v) == "integer" or (isinstance(v, float) and v.is_integer())
    ),
}


_CLASSES: dict[str, set[type]] = {
    "string": {str},
    "integer": {int},
    "number": {int, float},
    "boolean": {bool},
    "null": {type(None)},
    "object": {dict},
    "array": {list},
}


def _numbers(values: list[Any]) -> bool:
    # exact ints and floats, and no NaN (a NaN hides from min and max)
    if not set(map(type, values)) <= NUMBERS:
        return False
    total = sum(values)
    return total == total


def type_names(value: Any) -> tuple[str, ...]:
    """The JSON types a ``type`` contract allows: one name, or a list of them
    (``["string", "null"]``, as JSON Schema writes a nullable type)."""
    return tuple(value) if isinstance(value, list | tuple) else (value,)


def type_text(value: Any) -> str:
    """``string``, or ``string or null`` for a list of types."""
    return " or ".join(type_names(value))


def _type_test(value: Any) -> Pred:
    tests = [_TYPES[name] for name in type_names(value)]
    if len(tests) == 1:
        return tests[0]
    return lambda v: any(test(v) for test in tests)


def bulk_predicate(kind: str, params: dict[str, Any]) -> Callable[[list[Any]], bool] | None:
    """A whole-array test run in C for wildcard paths: True means every element passes;
    False only means "look element by element" (which also finds the culprit)."""
    if kind == "type":
        classes = set().union(*(_CLASSES[name] for name in type_names(params["type"])))
        return lambda vs: set(map(type, vs)) <= classes
    if kind == "not_null":
        return lambda vs: None not in vs
    if kind == "non_negative":
        return lambda vs: not vs or (_numbers(vs) and min(vs) >= 0)
    if kind == "positive":
        return lambda vs: not vs or (_numbers(vs) and min(vs) > 0)
    if kind == "range":
        low, high = params.get("min"), params.get("max")
        low = -math.inf if low is None else low
        high = math.inf if high is None else high
        return lambda vs: not vs or (_numbers(vs) and min(vs) >= low and max(vs) <= high)
    if kind == "one_of":
        allowed = frozenset(key(v) for v in params["values"])
        return lambda vs: set(map(type, vs)) <= _PLAIN and set(vs) <= allowed
    return None


def unary_predicate(kind: str, params: dict[str, Any]) -> tuple[Pred, str]:
    """The test one value must pass (True also for values the kind does not speak of:
    ``non_negative`` says nothing about a string — the ``type`` contract does)."""
    if kind == "not_null":
        return (lambda v: v is not None), "not null"
    if kind == "type":
        return _type_test(params["type"]), f"type {type_text(params['type'])}"
    if kind == "non_negative":
        return _fast_number(lambda v: v >= 0), ">= 0"
    if kind == "positive":
        return _fast_number(lambda v: v > 0), "> 0"
    if kind in ("range", "length"):
        low, high = params.get("min"), params.get("max")
        low = -math.inf if low is None else low
        high = math.inf if high is None else high
        bounds = " and ".join(
            f"{op} {b}" for op, b in ((">=", params.get("min")), ("<=", params.get("max")))
            if b is not None
        )  # fmt: skip
        if kind == "range":
            return _fast_number(lambda v: low <= v <= high), bounds
        return (
            lambda v: not isinstance(v, list | dict | str) or low <= len(v) <= high
        ), f"length {bounds}"
    if kind == "one_of":
        allowed = frozenset(key(v) for v in params["values"])
        return (
            lambda v: (v in allowed) if v.__class__ in _PLAIN else key(v) in allowed
        ), f"one of {_short(params['values'])}"
    if kind == "non_empty":
        return (lambda v: not isinstance(v, list | dict | str) or len(v) > 0), "non-empty"
    if kind == "const":
        value = params["value"]
        return (lambda v: same(v, value)), f"== {_short(value)}"
    if kind == "format":
        return _format(params["format"]), f"format {params['format']}"
    if kind == "pattern":
        return _pattern(params["regex"]), f"matches {params['regex']}"
    raise ValueError(kind)  # pragma: no cover - load validated the kind


def _format(name: str) -> Pred:
    test = FORMATS.get(name)

    def check(v: Any) -> bool:
        if not isinstance(v, str):
            return True
        if test is None:
            raise NotEvaluated(f"format {name!r} is not known to this monitor")
        if len(v) > MAX_FORMAT_INPUT:
            raise NotEvaluated(f"string of {len(v)} characters is too long to check")
        return test(v)

    return check


def _pattern(regex: str) -> Pred:
    try:
        find = compile_pattern(regex).search
    except UnsafePattern as exc:
        raise ContractLoadError(f"pattern {regex!r} refused: {exc}") from None

    def check(v: Any) -> bool:
        if not isinstance(v, str):
            return True
        if len(v) > MAX_INPUT:
            raise NotEvaluated(f"string of {len(v)} characters is longer than {MAX_INPUT}")
        return find(v)

    return check
