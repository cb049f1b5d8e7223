"""One generated function per tool, so the nominal check costs little more than reading
the values the contracts speak of.

The per-contract closures of :mod:`._compile` stay the reference: the generated function
runs the same tests with the common ones inlined (plain path reads shared between
contracts, the predicates of unary kinds written out, wildcard arrays read once and judged
in C). It returns ``None`` when every contract held, or ``(index, Fail | Exception)``
pairs; the monitor then asks the closures for the details. Each contract has its own
``try`` so one that breaks on odd input is reported and the others still run. Only
indices and ``repr`` literals go into the source: nothing from the contract file is code.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tracemine.model.paths import ANY_KEY, MISSING, WILDCARD, Path, parse
from tracemine.monitor._compile import Compiled, Fail, judge
from tracemine.monitor._predicates import bulk_predicate, type_names, unary_predicate
from tracemine.monitor._values import NOTHING, Limits, getter, is_number, key

Found = list[tuple[int, Any]] | None

# inline predicates: ``{v}`` is a local holding one value, never MISSING or NOTHING
_INLINE = {
    "not_null": "{v} is not None",
    "non_negative": "(({v} >= 0) if {v}.__class__ is int or {v}.__class__ is float "
    "else (not _num({v}) or {v} >= 0))",
    "positive": "(({v} > 0) if {v}.__class__ is int or {v}.__class__ is float "
    "else (not _num({v}) or {v} > 0))",
}
_INLINE_TYPES = {
    "string": "{v}.__class__ is str or isinstance({v}, str)",
    "object": "{v}.__class__ is dict or isinstance({v}, dict)",
    "array": "isinstance({v}, (list, tuple))",
    "boolean": "{v}.__class__ is bool",
    "null": "{v} is None",
    "number": "({v}.__class__ is float or {v}.__class__ is int or _num({v}))",
}


_NUMBERS = frozenset((int, float))
_PLAIN = frozenset((str, int, float, type(None)))


def _sum(values: Any) -> Any:
    """``sum(path[*])`` as :func:`tracemine.model.paths.evaluate` has it."""
    if set(map(type, values)) <= _NUMBERS or all(map(is_number, values)):
        return sum(values)
    return NOTHING


def _add(found: Found, index: int, item: Any) -> list[tuple[int, Any]]:
    return [*found, (index, item)] if found else [(index, item)]


class _Source:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[Any, str] = {}
        self.namespace: dict[str, Any] = {
            "MISSING": MISSING,
            "NOTHING": NOTHING,
            "_Fail": Fail,
            "_add": _add,
            "_num": is_number,
            "_key": key,
            "_sum": _sum,
            "_PLAIN": _PLAIN,
            "_NUMS": _NUMBERS,
        }

    def bind(self, prefix: str, value: Any) -> str:
        name = f"{prefix}{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def value(self, path: Path) -> str:
        """A local holding ``path``'s value: plain paths read inline (prefixes shared),
        anything else through its getter, once per call."""
        if path.function is None and not path.has_wildcard:
            return self._plain(path.root, path.steps)
        if path.text in self.names:
            return self.names[path.text]
        if path.function in ("len", "sum") and (path.function == "len") != path.has_wildcard:
            base = self.value(parse(path.plain))
            name = f"d{len(self.names)}"
            if path.function == "len":
                expression = f"len({base}) if isinstance({base}, (list, dict, str)) else NOTHING"
            else:
                expression = f"_sum({base})"
            self.lines.append(f"    {name} = {expression}")
            self.names[path.text] = name
            return name
        name = f"w{len(self.names)}"
        steps = path.steps
        # one array wildcard gets a comprehension; maps' ``{*}`` go through the getter
        cut = steps.index(WILDCARD) if WILDCARD in steps and ANY_KEY not in steps else -1
        if path.function is None and cut >= 0 and len(steps) - cut - 1 <= 1:
            # ``array[*]`` or ``array[*].key``: a comprehension over the shared array local
            array = self._plain(path.root, steps[:cut])
            each = "x" if cut == len(steps) - 1 else f"x.get({steps[-1]!r}, MISSING)"
            where = "" if each == "x" else " if x.__class__ is dict or isinstance(x, dict)"
            # past the limit the slow path says, contract by contract, what was not judged
            limits = self.bind("_lim", Limits)
            self.lines.append(
                f"    if isinstance({array}, list) and "
                f"len({array}) > {limits}.max_elements: raise OverflowError"
            )
            self.lines.append(f"    {name} = [{each} for x in {array}{where}] "
                              f"if isinstance({array}, list) else []")  # fmt: skip
        else:
            get, _ = getter(path)
            self.lines.append(f"    {name} = {self.bind('_g', get)}(a, r)")
        self.names[path.text] = name
        return name

    def _plain(self, root: str, steps: tuple[Any, ...]) -> str:
        if not steps:
            return "a" if root == "args" else "r"
        known = self.names.get((root, steps))
        if known:
            return known
        parent = self._plain(root, steps[:-1])
        is_dict = self.names.get(("dict", parent))
        if is_dict is None:
            is_dict = self.names[("dict", parent)] = f"o{len(self.names)}"
            self.lines.append(
                f"    {is_dict} = {parent}.__class__ is dict or isinstance({parent}, dict)"
            )
        name = f"p{len(self.names)}"
        self.lines.append(
            f"    {name} = {parent}.get({steps[-1]!r}, MISSING) if {is_dict} else NOTHING"
        )
        self.names[(root, steps)] = name
        return name


def _inline(src: _Source, kind: str, params: dict[str, Any]) -> str | None:
    """The predicate as an expression over ``{v}``, or None to call the closure."""
    if kind == "type":
        found = [_INLINE_TYPES.get(name) for name in type_names(params["type"])]
        if None in found:
            return None
        return found[0] if len(found) == 1 else "(" + " or ".join(f"({e})" for e in found) + ")"
    if kind in ("range", "length"):
        low = src.bind("_lo", -math.inf if params.get("min") is None else params["min"])
        high = src.bind("_hi", math.inf if params.get("max") is None else params["max"])
        if kind == "length":
            return f"(not isinstance({{v}}, (list, dict, str)) or {low} <= len({{v}}) <= {high})"
        return (f"(({low} <= {{v}} <= {high}) if {{v}}.__class__ is int or {{v}}.__class__ is "
                f"float else (not _num({{v}}) or {low} <= {{v}} <= {high}))")  # fmt: skip
    if kind == "non_empty":
        return "(not isinstance({v}, (list, dict, str)) or len({v}) > 0)"
    if kind == "one_of":
        allowed = src.bind("_in", frozenset(key(v) for v in params["values"]))
        return f"(({{v}} in {allowed}) if {{v}}.__class__ in _PLAIN else _key({{v}}) in {allowed})"
    return _INLINE.get(kind)


_JUDGES = {
    "equals": "({x} == {y} and ({x}.__class__ is bool) is ({y}.__class__ is bool))",
    "le": "(({x} <= {y}) if {x}.__class__ in _NUMS and {y}.__class__ in _NUMS else {j}({x}, {y}))",
    "lt": "(({x} < {y}) if {x}.__class__ in _NUMS and {y}.__class__ in _NUMS else {j}({x}, {y}))",
    "sum_equals": "{j}({x}, {y})",
}


def _relation(src: _Source, compiled: Compiled) -> str | None:
    """With one value on each side: a condition, over the shared locals, under which the
    closure must be asked (an operand absent, or the relation not holding)."""
    spec = compiled.spec
    if spec.kind not in _JUDGES or any(getter(p)[1] for p in spec.paths):
        return None
    x, y = (src.value(p) for p in spec.paths)
    name = src.bind("_j", judge(spec.kind, spec.params.get("tolerance")))
    holds = _JUDGES[spec.kind].format(x=x, y=y, j=name)
    return f"{x} is MISSING or {x} is NOTHING or {y} is MISSING or {y} is NOTHING or not {holds}"


def _body(src: _Source, index: int, compiled: Compiled) -> list[str]:
    """Statements checking contract ``index`` (indented for its ``try``)."""
    spec = compiled.spec
    if len(spec.paths) != 1:
        relation = _relation(src, compiled)
        if relation is None:
            return _exact(src, index, compiled)
        # the closure is asked only when the inline relation does not plainly hold
        return [f"if {relation}:", *("    " + line for line in _exact(src, index, compiled))]
    path = spec.paths[0]
    if spec.kind == "present" and not path.has_wildcard and len(path.steps) >= 2:
        # nested presence excuses an absent parent: the closure knows how
        exact = src.bind("_t", compiled.test)
        return [f"f = {exact}(a, r)", "if f is not None:", f"    found = _add(found, {index}, f)"]
    if spec.kind == "present" and not path.has_wildcard:
        v, where = src.value(path), src.bind("_P", path)
        return [
            f"if {v} is MISSING or {v} is NOTHING:",
            f"    found = _add(found, {index}, _Fail({v}, {where}))",
        ]
    if spec.kind in _UNARY_KINDS:
        pred, _ = unary_predicate(spec.kind, spec.params)
        v = src.value(path)
        if path.has_wildcard and path.function != "sum":
            bulk = bulk_predicate(spec.kind, spec.params)
            test = f"{src.bind('_b', bulk)}({v}) or " if bulk else ""
            each, exact = src.bind("_p", pred), src.bind("_t", compiled.test)
            return [
                f"if not ({test}all(map({each}, {v}))):",
                f"    f = {exact}(a, r)",
                "    if f is not None:",
                f"        found = _add(found, {index}, f)",
            ]
        inline = _inline(src, spec.kind, spec.params)
        check = inline.format(v=v) if inline else f"{src.bind('_p', pred)}({v})"
        where = src.bind("_P", path)
        return [
            f"if {v} is not MISSING and {v} is not NOTHING and not ({check}):",
            f"    found = _add(found, {index}, _Fail({v}, {where}))",
        ]
    return _exact(src, index, compiled)


def _exact(src: _Source, index: int, compiled: Compiled) -> list[str]:
    """Run the contract's own closure (it builds the Fail, or raises NotEvaluated)."""
    return [
        f"f = {src.bind('_t', compiled.test)}(a, r)",
        "if f is not None:",
        f"    found = _add(found, {index}, f)",
    ]


_UNARY_KINDS = frozenset(
    (
        "not_null",
        "type",
        "non_negative",
        "positive",
        "range",
        "one_of",
        "non_empty",
        "length",
        "format",
        "pattern",
        "const",
    )
)


def generate(compiled: list[Compiled]) -> Callable[[Any, Any], Found]:
    """The generated checker for one tool's call contracts (in ``compiled`` order)."""
    src = _Source()
    blocks: list[str] = []
    for index, item in enumerate(compiled):
        body = _body(src, index, item)
        if item.when is not None:
            body = [f"if {src.bind('_w', item.when)}(a, r):", *("    " + line for line in body)]
        blocks += [
            "    try:",
            *("        " + line for line in body),
            "    except Exception as exc:",
            f"        found = _add(found, {index}, exc)",
        ]
    reads = src.lines
    source = "\n".join(
        ["def check(a, r):", "    found = None", *reads, *blocks, "    return found"]
    )
    namespace = src.namespace
    exec(compile(source, "<tracemine contracts>", "exec"), namespace)
    checker: Callable[[Any, Any], Found] = namespace["check"]
    checker.__doc__ = source  # kept for debugging: help(plan.fast) shows what runs
    return checker
