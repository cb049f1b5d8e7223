"""Small value helpers the compiled checks share: JSON typing, equality that keeps
booleans apart from numbers, hashable keys, fast path getters, and previews of observed
values that are bounded in size and have personal-looking strings redacted."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tracemine.model.paths import ANY_KEY, MISSING, WILDCARD, Path, evaluate, format_path, select
from tracemine.model.personal import personal_kind, redact_text


class _Nothing:
    """A path that cannot be followed (a step into a string, a number, null)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOTHING"


NOTHING: Any = _Nothing()
_NUMBERS = frozenset((int, float))
Getter = Callable[[Any, Any], Any]


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def same(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0`` but ``True != 1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def key(value: Any) -> Any:
    """A hashable stand-in with the equality of :func:`same`."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, dict | list):
        return ("json", json.dumps(value, sort_keys=True, default=str))
    return value


class Limits:
    """How much of one result a check walks. Past a limit the contract is reported as not
    evaluated (too large) instead of spending seconds inside the agent loop. Set with
    :func:`tracemine.monitor.set_limits`."""

    max_elements = 100_000  # values one contract's path may select from a result
    max_pairs = 1_000_000  # value pairs one relation with many values on each side compares


def set_limits(*, max_elements: int | None = None, max_pairs: int | None = None) -> None:
    """Change how much of one result a check walks (for every monitor of the process):
    ``max_elements`` values selected by one contract's path (default 100,000),
    ``max_pairs`` value pairs compared by one relation (default 1,000,000). Past either,
    the contract is reported as not evaluated, too large.

    >>> set_limits(max_elements=1_000_000)  # doctest: +SKIP
    """
    for name, value in (("max_elements", max_elements), ("max_pairs", max_pairs)):
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
        setattr(Limits, name, value)


class TooLarge(Exception):
    """A check would walk past :class:`Limits`; the message says what and how much."""


def too_large(path: Path, count: int) -> TooLarge:
    return TooLarge(
        f"too large: {path.text} holds {count} values, over the {Limits.max_elements} "
        "a check walks (tracemine.monitor.set_limits)"
    )


def _capped(path: Path, values: list[Any]) -> list[Any]:
    if len(values) > Limits.max_elements:
        raise too_large(path, len(values))
    return values


def getter(path: Path) -> tuple[Getter, bool]:
    """A function ``(args, result) -> value`` for ``path`` and whether it yields a list
    (one value per element under a wildcard) rather than one value. A single value may be
    MISSING (absent key) or NOTHING (the path cannot be followed). The values are those of
    :func:`tracemine.model.paths.evaluate`, so the monitor and the miner agree on them;
    the common shapes get specialised closures because this runs on every check."""
    function = path.function
    if path.has_wildcard:
        values = _wildcard(path)
        if function is None:
            return values, True
        if function == "sum":

            def total(a: Any, r: Any) -> Any:
                found = values(a, r)
                if set(map(type, found)) <= _NUMBERS or all(map(is_number, found)):
                    return sum(found)
                return NOTHING

            return total, False
        return (lambda a, r: evaluate(path, a, r)), True
    value = _plain(path.root == "args", path.steps)
    if function is None:
        return value, False
    if function == "len":

        def length(a: Any, r: Any) -> Any:
            v = value(a, r)
            return len(v) if isinstance(v, list | dict | str) else NOTHING

        return length, False

    def derived(a: Any, r: Any) -> Any:
        found = evaluate(path, a, r)
        return found[0] if found else NOTHING

    return derived, False


def _plain(from_args: bool, steps: tuple[Any, ...]) -> Getter:
    # specialised closures: one- and two-step paths are most of what contracts address
    if not steps:
        return (lambda a, r: a) if from_args else (lambda a, r: r)
    if len(steps) == 1:
        (k,) = steps
        if from_args:
            return lambda a, r: a.get(k, MISSING) if isinstance(a, dict) else NOTHING
        return lambda a, r: r.get(k, MISSING) if isinstance(r, dict) else NOTHING
    if len(steps) == 2:
        k1, k2 = steps

        def two(a: Any, r: Any) -> Any:
            v = a if from_args else r
            if not isinstance(v, dict):
                return NOTHING
            v = v.get(k1, MISSING)
            return v.get(k2, MISSING) if isinstance(v, dict) else NOTHING

        return two

    def many(a: Any, r: Any) -> Any:
        v = a if from_args else r
        for step in steps:
            if not isinstance(v, dict):
                return NOTHING
            v = v.get(step, MISSING)
        return v

    return many


def _wildcard(path: Path) -> Getter:
    """``prefix[*].suffix`` with a single wildcard; other shapes (maps' ``{*}`` too) use
    :func:`select`."""
    if ANY_KEY in path.steps or path.steps.count(WILDCARD) > 1:
        return lambda a, r: _capped(path, select(path, a, r))
    cut = path.steps.index(WILDCARD)
    prefix, suffix = path.steps[:cut], path.steps[cut + 1 :]
    array = _plain(path.root == "args", prefix)
    if not suffix:

        def elements(a: Any, r: Any) -> Any:
            v = array(a, r)
            if not isinstance(v, list):
                return []
            if len(v) > Limits.max_elements:
                raise too_large(path, len(v))
            return v

        return elements
    if len(suffix) == 1:
        (k,) = suffix

        def field(a: Any, r: Any) -> Any:
            v = array(a, r)
            if not isinstance(v, list):
                return []
            if len(v) > Limits.max_elements:
                raise too_large(path, len(v))
            return [x.get(k, MISSING) for x in v if isinstance(x, dict)]

        return field
    inner = _plain(False, suffix)

    def nested(a: Any, r: Any) -> Any:
        v = array(a, r)
        if not isinstance(v, list):
            return []
        if len(v) > Limits.max_elements:
            raise too_large(path, len(v))
        return [y for y in (inner(None, x) for x in v) if y is not NOTHING]

    return nested


def locate(path: Path, args: Any, result: Any, index: int) -> str:
    """The concrete path (``result.items[3].price``) of the ``index``-th value that
    :func:`select` yields for ``path`` — worked out only when a violation is reported."""
    current: list[tuple[list[Any], Any]] = [([], args if path.root == "args" else result)]
    for step in path.steps:
        following: list[tuple[list[Any], Any]] = []
        for steps, value in current:
            if step is WILDCARD:
                if isinstance(value, list):
                    following.extend(([*steps, i], v) for i, v in enumerate(value))
            elif step is ANY_KEY:
                if isinstance(value, dict):
                    following.extend(([*steps, k], v) for k, v in value.items())
            elif isinstance(value, dict):
                following.append(([*steps, step], value.get(step, MISSING)))
        current = following
    if path.function is not None or not 0 <= index < len(current):
        return path.text
    text = path.root
    for step in current[index][0]:
        text += f"[{step}]" if isinstance(step, int) else format_path("", [step])
    return text


def redact(text: str) -> str:
    """Replace what looks personal in free text (emails, IBANs, card, phone and id
    numbers): :func:`tracemine.model.personal.redact_text`."""
    return redact_text(text)


def preview(value: Any, limit: int = 80) -> str:
    """A short, redacted rendering of any value, however large or deep, without
    serialising more than about ``limit`` characters of it."""
    if value is MISSING:
        return "absent"
    if value is NOTHING:
        return "unreachable"
    out: list[str] = []
    _render(value, out, limit * 2, 0)
    text = redact("".join(out))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _render(value: Any, out: list[str], budget: int, depth: int) -> int:
    if budget <= 0:
        return 0
    kind = personal_kind(value)
    if kind is not None:  # screened whole: a name is only a name as a whole value
        text = f"<{kind}>"
    elif isinstance(value, str):
        text = json.dumps(value[:budget], ensure_ascii=False)
    elif value is None or isinstance(value, bool | int | float):
        text = json.dumps(value) if not isinstance(value, int) or abs(value) < 10**30 else "<big>"
    elif isinstance(value, list | tuple | dict):
        if depth >= 3 or not value:
            text = ("[…]" if isinstance(value, list | tuple) else "{…}") if value else (
                "[]" if isinstance(value, list | tuple) else "{}")  # fmt: skip
        else:
            is_dict = isinstance(value, dict)
            out.append("{" if is_dict else "[")
            budget -= 1
            members: Any = value.items() if isinstance(value, dict) else value
            for n, item in enumerate(members):
                if budget <= 0 or n >= 8:
                    out.append(f"… {len(value)} items")
                    break
                if n:
                    out.append(", ")
                if is_dict:
                    name = json.dumps(str(item[0])[:40], ensure_ascii=False) + ": "
                    out.append(name)
                    budget -= len(name)
                    item = item[1]
                budget = _render(item, out, budget, depth + 1)
            out.append("}" if is_dict else "]")
            return budget - 1
    else:
        text = f"<{type(value).__name__}>"
    out.append(text)
    return budget - len(text)
