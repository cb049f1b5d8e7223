"""Patterns from a contract file, made safe to run inside an agent process.

Python's ``re`` backtracks and cannot be interrupted, so a pattern such as ``(a+)+$`` or
``.*x.*y`` can spend minutes on a few kilobytes. Patterns are therefore checked on load
(no back-references, no variable quantifier inside another, no alternation under an
unbounded quantifier, no two unbounded quantifiers that can eat the same characters with
nothing between them that only one of them could match) and inputs longer than
:data:`MAX_INPUT` characters are not matched at all (the contract is reported as not
evaluated). What is left runs in time close to linear in the (capped) input.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

sre_parse: Any
C: Any
try:  # the parser ``re`` itself uses; private, so fall back to a textual check without it
    sre_parse = importlib.import_module("re._parser")
    C = importlib.import_module("re._constants")
except ImportError:  # pragma: no cover
    sre_parse = None

MAX_PATTERN = 512
MAX_INPUT = 1024
_LARGE = 32  # a quantifier allowing more repetitions than this counts as unbounded
_UNIVERSE = frozenset([*range(256), 0x0660, 0x4E00, 0x2028])
_ALL = _UNIVERSE


class UnsafePattern(ValueError):
    """A pattern refused on load, with the reason."""


def compile_pattern(pattern: str) -> tuple[re.Pattern[str], bool]:
    """The compiled pattern and whether it is anchored at the start (``match`` suffices)."""
    if len(pattern) > MAX_PATTERN:
        raise UnsafePattern(f"pattern longer than {MAX_PATTERN} characters")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise UnsafePattern(f"pattern does not compile: {exc}") from None
    if sre_parse is None:  # pragma: no cover
        if re.search(r"\)[*+?{]|\\[1-9]", pattern) and re.search(r"[*+}]\)", pattern):
            raise UnsafePattern("nested quantifiers")
        return compiled, pattern.startswith("^")
    tree = list(sre_parse.parse(pattern))
    _check_sequence(tree)
    anchored = (
        bool(tree) and tree[0][0] is C.AT and tree[0][1] in (C.AT_BEGINNING, C.AT_BEGINNING_STRING)
    )
    return compiled, anchored


def _repeat(op: Any, av: Any) -> tuple[int, int, list[Any]] | None:
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
        low, high, body = av
        return low, high, list(body)
    return None


def _children(op: Any, av: Any) -> list[list[Any]]:
    if op is C.SUBPATTERN:
        return [list(av[-1])]
    if op is C.BRANCH:
        return [list(branch) for branch in av[1]]
    if op in (C.ASSERT, C.ASSERT_NOT):
        return [list(av[1])]
    if getattr(C, "ATOMIC_GROUP", None) is op:
        return [list(av)]
    repeat = _repeat(op, av)
    return [repeat[2]] if repeat else []


def _contains(items: list[Any], wanted: str) -> bool:
    for op, av in items:
        repeat = _repeat(op, av)
        if wanted == "variable" and repeat and repeat[0] != repeat[1]:
            return True
        if wanted == "branch" and op is C.BRANCH:
            return True
        if any(_contains(child, wanted) for child in _children(op, av)):
            return True
    return False


def _check_sequence(items: list[Any]) -> None:
    pending: list[frozenset[int]] = []  # unbounded quantifiers not yet separated
    for op, av in items:
        if op in (C.GROUPREF, C.GROUPREF_EXISTS):
            raise UnsafePattern("back-references are not allowed")
        repeat = _repeat(op, av)
        if repeat is not None:
            low, high, body = repeat
            if low != high and _contains(body, "variable"):
                raise UnsafePattern("nested quantifiers (a quantifier inside a quantifier)")
            if high > _LARGE and _contains(body, "branch"):
                raise UnsafePattern("alternation under an unbounded quantifier")
            if high > _LARGE:
                chars = _charset(body)
                if any(chars & earlier for earlier in pending):
                    raise UnsafePattern(
                        "two unbounded quantifiers can match the same characters back to back"
                    )
                pending.append(chars)
                continue
        for child in _children(op, av):
            _check_sequence(child)
        chars, nullable = _charset([(op, av)]), _nullable(op, av)
        if not nullable:
            pending = [earlier for earlier in pending if earlier & chars]


def _nullable(op: Any, av: Any) -> bool:
    repeat = _repeat(op, av)
    if repeat is not None:
        return repeat[0] == 0 or all(_nullable(*item) for item in repeat[2])
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return True
    if op is C.SUBPATTERN:
        return all(_nullable(*item) for item in av[-1])
    if op is C.BRANCH:
        return any(all(_nullable(*item) for item in branch) for branch in av[1])
    return False


def _charset(items: list[Any]) -> frozenset[int]:
    """Characters (of a small representative universe) the items can consume."""
    out: set[int] = set()
    for op, av in items:
        if op is C.LITERAL:
            out.add(av)
        elif op is C.NOT_LITERAL or op is C.ANY:
            out |= _ALL - ({av} if op is C.NOT_LITERAL else set())
        elif op is C.IN:
            out |= _in_set(av)
        elif op is C.CATEGORY:
            out |= _category(av)
        else:
            for child in _children(op, av):
                out |= _charset(child)
    return frozenset(out)


def _in_set(items: list[Any]) -> frozenset[int]:
    chars: set[int] = set()
    negate = False
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            chars.add(av)
        elif op is C.RANGE:
            chars |= {c for c in _UNIVERSE if av[0] <= c <= av[1]}
        elif op is C.CATEGORY:
            chars |= _category(av)
        else:  # anything unusual: assume it may match anything
            chars |= _ALL
    return frozenset(_ALL - chars) if negate else frozenset(chars)


def _category(category: Any) -> frozenset[int]:
    name = str(category).upper()
    test: Callable[[str], bool]
    if "DIGIT" in name:
        test = str.isdecimal
    elif "SPACE" in name:
        test = str.isspace
    elif "WORD" in name:
        test = lambda s: s.isalnum() or s == "_"  # noqa: E731 - \w is letters, digits, _
    else:
        return _ALL
    members = frozenset(c for c in _UNIVERSE if test(chr(c)))
    return _ALL - members if "NOT" in name else members
