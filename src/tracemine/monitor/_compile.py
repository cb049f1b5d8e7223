"""Contracts of one call compiled into plain closures ``(args, result) -> Fail | None``.

Everything that can be decided on load is: paths are parsed into specialised getters,
regular expressions compiled (and refused if unsafe), value sets hashed, the expected
text rendered. A closure raises :class:`NotEvaluated` when the call gives it nothing to
judge (an operand absent, a string too long to match), which the receipt reports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tracemine.model.paths import MISSING, Path, element_steps, format_path, parse
from tracemine.monitor._load import VOCABULARY, Spec
from tracemine.monitor._predicates import (
    NUMBERS,
    NotEvaluated,
    Pred,
    bulk_predicate,
    unary_predicate,
)
from tracemine.monitor._tokens import tokens
from tracemine.monitor._values import (
    NOTHING,
    Limits,
    TooLarge,
    getter,
    is_number,
    json_type,
    key,
    preview,
    same,
    too_large,
)

Check = Callable[[Any, Any], "Fail | None"]


class Fail:
    """What a check saw: the observed value, the path it came from and, under a
    wildcard, the index of the offending element (located only when reported)."""

    __slots__ = ("index", "observed", "path", "text")

    def __init__(self, observed: Any, path: Path, index: int | None = None, text: str = ""):
        self.observed, self.path, self.index, self.text = observed, path, index, text


@dataclass(frozen=True, slots=True)
class Compiled:
    """A call contract ready to run; the monitor unpacks it once into a tuple."""

    spec: Spec
    expected: str
    test: Check
    when: Callable[[Any, Any], bool] | None
    needs_result: bool  # reads the result, so it says nothing about a failed call


def _unary(path: Path, kind: str, pred: Pred | None, bulk: Any = None) -> Check:
    get, multi = getter(path)
    if kind == "present":
        if multi:

            def present_all(a: Any, r: Any) -> Fail | None:
                for i, v in enumerate(get(a, r)):
                    if v is MISSING:
                        return Fail(v, path, i)
                return None

            return present_all

        if len(path.steps) < 2 or path.function is not None:

            def present(a: Any, r: Any) -> Fail | None:
                v = get(a, r)
                return Fail(v, path) if v is MISSING or v is NOTHING else None

            return present
        steps = path.steps

        def present_nested(a: Any, r: Any) -> Fail | None:
            # like the miner, presence is judged where the parent exists: an optional
            # parent that is absent or null excuses its fields (its own contracts speak
            # for it), while a parent of the wrong shape (text where an object belongs)
            # does not
            v = a if path.root == "args" else r
            for depth, step in enumerate(steps):
                if not isinstance(v, dict):
                    if depth > 0 and (v is MISSING or v is None):
                        return None
                    return Fail(NOTHING, path)
                v = v.get(step, MISSING)
            return Fail(v, path) if v is MISSING else None

        return present_nested
    if kind == "unique":

        def unique(a: Any, r: Any) -> Fail | None:
            values = get(a, r)
            if not multi:
                values = values if isinstance(values, list) else []
            seen: set[Any] = set()
            for i, v in enumerate(values):
                if v is MISSING or v is None:
                    continue  # as mined: only values that are there can repeat
                k = key(v)
                if k in seen:
                    return Fail(v, path, i if multi else None, f"{preview(v, 60)} repeated")
                seen.add(k)
            return None

        return unique
    assert pred is not None
    if multi:

        def each(a: Any, r: Any) -> Fail | None:
            values = get(a, r)
            if (bulk is not None and bulk(values)) or all(map(pred, values)):
                return None  # the nominal case, looped in C
            for i, v in enumerate(values):  # find the culprit (MISSING is not one)
                if v is not MISSING and not pred(v):
                    return Fail(v, path, i)
            return None

        return each

    def one(a: Any, r: Any) -> Fail | None:
        v = get(a, r)
        if v is MISSING or v is NOTHING or pred(v):
            return None
        return Fail(v, path)

    return one  # fmt: skip


def _operand(path: Path) -> Callable[[Any, Any], list[Any]]:
    get, multi = getter(path)
    if multi:
        return lambda a, r: [v for v in get(a, r) if v is not MISSING]

    def single(a: Any, r: Any) -> list[Any]:
        v = get(a, r)
        if v is MISSING or v is NOTHING:
            raise NotEvaluated(f"{path.text} is absent")
        return [v]

    return single


def _flat(values: list[Any]) -> list[Any]:
    if len(values) == 1 and isinstance(values[0], list):
        return values[0]
    return values


def _ordered(a: Any, b: Any) -> bool:
    if a.__class__ in NUMBERS and b.__class__ in NUMBERS:
        return True
    if (is_number(a) and is_number(b)) or (isinstance(a, str) and isinstance(b, str)):
        return True
    raise NotEvaluated(f"cannot compare {json_type(a)} with {json_type(b)}")


def judge(kind: str, tolerance: Any) -> Callable[[Any, Any], bool]:
    """Whether one pair (left value, right value) satisfies the relation."""
    if kind == "equals":
        return same
    if kind == "sum_equals":

        def sums(x: Any, y: Any) -> bool:
            if not (is_number(x) and is_number(y)):
                raise NotEvaluated("sum or total is not a number")
            slack = tolerance if tolerance is not None else 1e-9 * max(1.0, abs(y))
            return abs(x - y) <= slack

        return sums
    if kind == "le":
        return lambda x, y: _ordered(x, y) and x <= y
    return lambda x, y: _ordered(x, y) and x < y


def _relational(spec: Spec) -> tuple[Check, str]:
    left_path, right_path = spec.paths
    kind = spec.kind
    symbol = {"equals": "==", "le": "<=", "lt": "<", "sum_equals": "==",
              "member": "in", "subset": "⊆"}[kind]  # fmt: skip
    expected = f"{left_path.text} {symbol} {right_path.text}"
    (lget, lmulti), (rget, rmulti) = getter(left_path), getter(right_path)
    left, right = _operand(left_path), _operand(right_path)
    if kind in ("member", "subset"):

        def within(a: Any, r: Any) -> Fail | None:
            allowed = {key(v) for v in _flat(right(a, r))}
            for v in _flat(left(a, r)):
                if key(v) not in allowed:
                    return Fail(v, left_path, None, f"{preview(v, 60)} not in {right_path.text}")
            return None

        return within, expected
    judge_pair = judge(kind, spec.params.get("tolerance"))
    if not lmulti and not rmulti:  # the usual shape: one value on each side

        def pair(a: Any, r: Any) -> Fail | None:
            x, y = lget(a, r), rget(a, r)
            if x is MISSING or x is NOTHING:
                raise NotEvaluated(f"{left_path.text} is absent")
            if y is MISSING or y is NOTHING:
                raise NotEvaluated(f"{right_path.text} is absent")
            if judge_pair(x, y):
                return None
            return Fail(x, left_path, None, f"{preview(x, 60)} vs {preview(y, 60)}")

        return pair, expected

    def pairs(a: Any, r: Any) -> Fail | None:
        ls, rs = left(a, r), right(a, r)
        if kind == "equals" and len(ls) != 1 and len(rs) != 1:
            if len(ls) != len(rs):
                return Fail(ls, left_path, None, f"{len(ls)} values vs {len(rs)}")
            matched: Any = zip(ls, rs, strict=True)
        else:  # every left value against every right value
            if len(ls) * len(rs) > Limits.max_pairs:
                raise TooLarge(f"too large: {len(ls)} × {len(rs)} value pairs, over the "
                               f"{Limits.max_pairs} a check compares "
                               "(tracemine.monitor.set_limits)")  # fmt: skip
            matched = ((x, y) for x in ls for y in rs)
        for x, y in matched:
            if not judge_pair(x, y):
                return Fail(x, left_path, None, f"{preview(x, 60)} vs {preview(y, 60)}")
        return None

    return pairs, expected


def _one(get: Callable[[Any, Any], Any], path: Path, a: Any, r: Any) -> Any:
    v = get(a, r)
    if v is MISSING or v is NOTHING:
        raise NotEvaluated(f"{path.text} is absent")
    return v


def _vocabulary(spec: Spec) -> tuple[Check, str]:
    """``shares_token``, ``ratio``, ``page_full`` and ``product``: one value on each side,
    read once (a product's three keys of one list's elements: one value each, per element)."""
    paths = spec.paths
    if spec.kind == "product":
        return _product(spec)
    gets = [getter(p)[0] for p in paths]
    if spec.kind == "shares_token":
        (left, right), (lget, rget) = paths, gets
        expected = f"{left.text} shares a word with {right.text}"

        def shares(a: Any, r: Any) -> Fail | None:
            x, y = _one(lget, left, a, r), _one(rget, right, a, r)
            if not (isinstance(x, str) and isinstance(y, str)):
                raise NotEvaluated("not two strings")
            asked = tokens(y)
            if not asked:
                raise NotEvaluated(f"{right.text} has no word to look for")
            if asked.isdisjoint(tokens(x)):
                return Fail(x, left, None, f"{preview(x, 60)} has no word of {preview(y, 60)}")
            return None

        return shares, expected
    if spec.kind == "ratio":
        (left, right), (lget, rget) = paths, gets
        ratio, tolerance = float(spec.params["ratio"]), float(spec.params["tolerance"])
        low, high = sorted((ratio / (1 + tolerance), ratio * (1 + tolerance)))
        expected = f"{left.text} / {right.text} in [{low:.6g}, {high:.6g}]"

        def scaled(a: Any, r: Any) -> Fail | None:
            x, y = _one(lget, left, a, r), _one(rget, right, a, r)
            if not (is_number(x) and is_number(y)):
                raise NotEvaluated("not two numbers")
            if y == 0:
                raise NotEvaluated(f"{right.text} is 0")
            q = x / y
            if low <= q <= high:
                return None
            return Fail(x, left, None, f"{preview(x, 60)} is {q:.6g} × {preview(y, 60)}")

        return scaled, expected
    size, count, limit = paths
    sget, cget, xget = gets
    start_text, page_text = spec.params.get("start"), spec.params.get("page")
    offset = parse(str(start_text or page_text)) if (start_text or page_text) else None
    oget = getter(offset)[0] if offset is not None else None
    otext = offset.text if offset is not None else ""
    expected = f"{size.text} == min({limit.text}, {count.text}"
    expected += f" - {otext})" if start_text else (
        f" - ({otext} - 1) × {limit.text})" if page_text else ")")  # fmt: skip

    def full(a: Any, r: Any) -> Fail | None:
        n, total, most = (_one(g, p, a, r) for g, p in zip((sget, cget, xget), paths, strict=True))
        if not (is_number(n) and is_number(total) and is_number(most)):
            raise NotEvaluated("length, count or limit is not a number")
        at = oget(a, r) if oget is not None else MISSING
        at = at if is_number(at) else None
        if start_text:
            start = at or 0
        elif page_text:
            start = ((at if at is not None else 1) - 1) * most
        else:
            start = 0
        want = max(min(most, total - start), 0)
        if n == want:
            return None
        return Fail(n, size, None, f"{n} items where the page holds {want:g}")

    return full, expected


def product_holds(x: Any, a: Any, b: Any, tolerance: float) -> bool:
    """Whether ``x == a × b`` within ``tolerance`` plus 1e-9 of ``x`` (the miner's test)."""
    return abs(x - a * b) <= tolerance + 1e-9 * abs(x)


def _product(spec: Spec) -> tuple[Check, str]:
    """``x == a × b``: three numbers of the call, or per element of one list its three keys
    (an element without the three numbers is not judged; a list with none is not
    evaluated)."""
    total, left, right = spec.paths
    tolerance = float(spec.params["tolerance"])
    expected = f"{total.text} == {left.text} × {right.text}"
    within = element_steps(spec.paths)
    if within is None:
        gets = [getter(p)[0] for p in spec.paths]

        def one(a: Any, r: Any) -> Fail | None:
            x, p, q = (_one(g, path, a, r) for g, path in zip(gets, spec.paths, strict=True))
            if not (is_number(x) and is_number(p) and is_number(q)):
                raise NotEvaluated("not three numbers")
            if product_holds(x, p, q, tolerance):
                return None
            return Fail(x, total, None, f"{preview(x, 60)} is not {p!r} × {q!r}")

        return one, expected
    steps, (kx, ka, kb) = within
    parent = parse(format_path(total.root, steps))
    get_list = getter(parent)[0]

    def each(a: Any, r: Any) -> Fail | None:
        found = get_list(a, r)
        if not isinstance(found, list):
            raise NotEvaluated(f"{parent.text} is not a list")
        if len(found) > Limits.max_elements:
            raise too_large(parent, len(found))
        judged = False
        for i, element in enumerate(found):
            if not isinstance(element, dict):
                continue
            x, p, q = element.get(kx), element.get(ka), element.get(kb)
            if not (is_number(x) and is_number(p) and is_number(q)):
                continue
            judged = True
            if not product_holds(x, p, q, tolerance):
                return Fail(x, total, i, f"{preview(x, 60)} is not {p!r} × {q!r}")
        if not judged:
            raise NotEvaluated(f"no element of {parent.text} holds the three numbers")
        return None

    return each, expected


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda v, w: v < w, "<=": lambda v, w: v <= w,
    ">": lambda v, w: v > w, ">=": lambda v, w: v >= w,
}  # fmt: skip


def compile_when(when: dict[str, Any]) -> Callable[[Any, Any], bool]:
    """``path op value`` as a function of the call; under a wildcard, any element counts."""
    path, op, value = parse(when["path"]), when["op"], when.get("value")
    get, multi = getter(path)
    if op in ("present", "absent"):
        want = op == "present"
        if multi:
            return lambda a, r: any(v is not MISSING for v in get(a, r)) is want
        return lambda a, r: (get(a, r) not in (MISSING, NOTHING)) is want
    if op in ("in", "not_in"):
        allowed = frozenset(key(v) for v in value or ())
        inside = op == "in"
        test: Pred = lambda v: (key(v) in allowed) is inside  # noqa: E731
    elif op in ("==", "!="):
        equal = op == "=="
        test = lambda v: same(v, value) is equal  # noqa: E731
    else:
        compare = _COMPARE[op]

        def test(v: Any) -> bool:
            comparable = (is_number(v) and is_number(value)) or (
                isinstance(v, str) and isinstance(value, str)
            )
            return comparable and compare(v, value)

    if multi:
        return lambda a, r: any(v is not MISSING and test(v) for v in get(a, r))

    def single(a: Any, r: Any) -> bool:
        v = get(a, r)
        return v is not MISSING and v is not NOTHING and test(v)

    return single


def compile_call_contract(spec: Spec) -> Compiled:
    """Compile a unary or relational contract; :class:`ContractLoadError` if it cannot be."""
    if spec.kind in ("equals", "le", "lt", "sum_equals", "member", "subset"):
        test, expected = _relational(spec)
    elif spec.kind in VOCABULARY:
        test, expected = _vocabulary(spec)
    else:
        if spec.kind in ("present", "unique"):
            pred, expected = None, ("present" if spec.kind == "present" else "unique values")
        else:
            pred, expected = unary_predicate(spec.kind, spec.params)
        bulk = bulk_predicate(spec.kind, spec.params)
        checks = [_unary(path, spec.kind, pred, bulk) for path in spec.paths]
        if len(checks) == 1:
            test = checks[0]
        else:

            def test(a: Any, r: Any) -> Fail | None:
                for check in checks:
                    fail = check(a, r)
                    if fail is not None:
                        return fail
                return None

    when = compile_when(spec.when) if spec.when else None
    reads = [*spec.paths, *([parse(spec.when["path"])] if spec.when else [])]
    reads += [parse(spec.params[k]) for k in ("start", "page")
              if spec.kind == "page_full" and spec.params.get(k)]  # fmt: skip
    return Compiled(spec, expected, test, when, any(p.root == "result" for p in reads))
