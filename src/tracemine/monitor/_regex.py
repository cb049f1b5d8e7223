"""Patterns from a contract file, matched in time linear in the input.

Python's ``re`` backtracks and cannot be interrupted, so a pattern such as ``(a+)+$`` or
``(.*a){20}$`` can spend minutes on a few dozen characters, and no check of the pattern's
shape catches every such case while letting everyday patterns through. So ``re`` never runs
a contract's pattern. The pattern is parsed with the parser ``re`` itself uses and turned
into an automaton (Thompson's construction) that is run as a DFA built lazily: a set of
automaton states per input position, never a choice to go back to, so each character costs
one dictionary look-up once the automaton has seen it, whatever the pattern. Only whether
the pattern matches is asked, which an automaton answers exactly.

Single characters are still tested by ``re`` (each class compiled on its own), so case
folding, ``\\w``, ``\\d`` and the flags mean what they mean to Python. Refused on load, with
the reason: what only a backtracker can do (back-references, conditionals, possessive
quantifiers, atomic groups; look-arounds except look-aheads right after a leading ``^`` or
``\\A``, which run once), patterns longer than :data:`MAX_PATTERN` and patterns whose
repetition counts expand to more than :data:`MAX_STATES` states (``(.*){1,32000}``).
Inputs longer than :data:`MAX_INPUT` characters are not matched (the contract is reported
as not evaluated), which bounds the cost of one check.
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Callable
from typing import Any

# the parser and compiler ``re`` uses: private, but they make a character class mean
# exactly what it means to ``re``
_parser: Any = importlib.import_module("re._parser")
_compiler: Any = importlib.import_module("re._compiler")
C: Any = importlib.import_module("re._constants")

MAX_PATTERN = 512
MAX_INPUT = 1024
MAX_STATES = 1000
"""Automaton states a pattern may expand to (``x{0,61}`` is 122 of them)."""
_MAX_CACHED = 4096  # DFA states kept per pattern; past that the cache starts again

_CHAR, _SPLIT, _ASSERT, _MATCH = range(4)
_TYPE_FLAGS = re.ASCII | re.LOCALE | re.UNICODE
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT)
_CHARS = (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN, C.CATEGORY)
_WORD = re.compile(r"\w").fullmatch
_ASCII_WORD = re.compile(r"\w", re.ASCII).fullmatch
_EMPTY_NON_BOUNDARY = re.search(r"\B", "") is not None  # changed in Python 3.14
_REFUSED = {
    C.GROUPREF: "back-references are not allowed",
    C.GROUPREF_EXISTS: "conditionals (?(group)...) are not allowed",
    C.POSSESSIVE_REPEAT: "possessive quantifiers are not allowed",
    C.ATOMIC_GROUP: "atomic groups are not allowed",
    C.ASSERT: "look-arounds are allowed only as look-aheads right after a leading ^ or \\A",
    C.ASSERT_NOT: "look-arounds are allowed only as look-aheads right after a leading ^ or \\A",
}
_MATCHED: Any = object()
_DEAD: Any = object()

Prev = tuple[bool, bool, bool] | None  # the previous character: newline, \w, ASCII \w


class UnsafePattern(ValueError):
    """A pattern refused on load, with the reason."""


def compile_pattern(pattern: str) -> SafePattern:
    """The pattern as a :class:`SafePattern`; :class:`UnsafePattern` says why not."""
    if len(pattern) > MAX_PATTERN:
        raise UnsafePattern(f"pattern longer than {MAX_PATTERN} characters")
    try:
        with warnings.catch_warnings():  # ECMA idioms Python frowns on ("[[]") still work
            warnings.simplefilter("ignore")
            re.compile(pattern)  # the errors ``re`` gives, worded as ``re`` words them
            parsed = _parser.parse(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        raise UnsafePattern(f"pattern does not compile: {exc}") from None
    items, flags = list(parsed), parsed.state.flags
    anchored = bool(items) and items[0][0] is C.AT and (
        items[0][1] is C.AT_BEGINNING_STRING
        or (items[0][1] is C.AT_BEGINNING and not flags & re.MULTILINE)
    )  # fmt: skip
    looks: list[tuple[_Automaton, bool]] = []
    if anchored:
        while len(items) > 1 and items[1][0] in (C.ASSERT, C.ASSERT_NOT) and items[1][1][0] == 1:
            op, (_, body) = items.pop(1)
            looks.append((_Automaton(list(body), flags, search=False), op is C.ASSERT_NOT))
    return SafePattern(pattern, _Automaton(items, flags, search=not anchored), looks)


class SafePattern:
    """A pattern that answers :meth:`search` in time linear in the input."""

    def __init__(self, pattern: str, main: _Automaton, looks: list[tuple[_Automaton, bool]]):
        self.pattern = pattern
        self._main = main
        self._looks = looks

    def search(self, text: str) -> bool:
        """Whether ``re.search(pattern, text)`` would find a match."""
        for look, negated in self._looks:
            if look.run(text) is negated:
                return False
        return self._main.run(text)

    def __repr__(self) -> str:
        return f"SafePattern({self.pattern!r})"


class _State:
    """One DFA state: the automaton states live before the next character, and what the
    assertions need to know of the character before."""

    __slots__ = ("end", "next", "prev", "raw")

    def __init__(self, raw: frozenset[int], prev: Prev) -> None:
        self.raw = raw
        self.prev = prev
        self.next: dict[str, Any] = {}
        self.end: bool | None = None


class _Automaton:
    def __init__(self, items: list[Any], flags: int, *, search: bool) -> None:
        self.kind: list[int] = []
        self.arg: list[Any] = []
        self.out: list[tuple[int, ...]] = []
        self._tests: dict[tuple[Any, ...], Callable[[str], Any]] = {}
        self.ends = False  # a ``$`` that looks past a final newline
        accept = self._node(_MATCH)
        self.start = self._sequence(items, accept, flags)
        self.search = search
        self._states: dict[tuple[frozenset[int], Prev], _State] = {}
        self._first = self._state(frozenset((self.start,)), None)

    # -- construction: right to left, each item given the state that follows it ----------

    def _node(self, kind: int, arg: Any = None, out: tuple[int, ...] = ()) -> int:
        if len(self.kind) >= MAX_STATES:
            raise UnsafePattern(f"pattern expands to more than {MAX_STATES} states")
        self.kind.append(kind)
        self.arg.append(arg)
        self.out.append(out)
        return len(self.kind) - 1

    def _sequence(self, items: list[Any], follow: int, flags: int) -> int:
        for op, av in reversed(items):
            follow = self._item(op, av, follow, flags)
        return follow

    def _item(self, op: Any, av: Any, follow: int, flags: int) -> int:
        if op in _CHARS:
            return self._node(_CHAR, self._test(op, av, flags), (follow,))
        if op is C.SUBPATTERN:
            _, add, remove, body = av
            if add & _TYPE_FLAGS:  # (?a:...) replaces the unicode flag, as ``re`` has it
                flags &= ~_TYPE_FLAGS
            return self._sequence(list(body), follow, (flags | add) & ~remove)
        if op is C.BRANCH:
            starts = tuple(self._sequence(list(b), follow, flags) for b in av[1])
            return self._node(_SPLIT, None, starts)
        if op in _REPEATS:
            return self._repeat(av, follow, flags)
        if op is C.AT:
            if av is C.AT_END and not flags & re.MULTILINE:
                self.ends = True
            return self._node(_ASSERT, (av, flags), (follow,))
        raise UnsafePattern(_REFUSED.get(op, f"{str(op).lower()} is not supported"))

    def _repeat(self, av: Any, follow: int, flags: int) -> int:
        low, high, body = av
        body = list(body)
        after = follow
        if high == C.MAXREPEAT:
            loop = self._node(_SPLIT)
            self.out[loop] = (self._sequence(body, loop, flags), follow)
            after = loop
        else:
            for _ in range(high - low):  # x{0,3} is (x(x(x)?)?)?
                after = self._node(_SPLIT, None, (self._sequence(body, after, flags), follow))
        for _ in range(low):
            after = self._sequence(body, after, flags)
        return after

    def _test(self, op: Any, av: Any, flags: int) -> Callable[[str], Any]:
        key = (op, repr(av), flags)
        test = self._tests.get(key)
        if test is None:
            state = _parser.State()
            state.flags = flags
            one = _compiler.compile(_parser.SubPattern(state, [(op, av)]), 0)
            test = self._tests[key] = one.fullmatch
        return test

    # -- running ----------------------------------------------------------------------------

    def run(self, text: str) -> bool:
        """Whether a match starts anywhere (``search``) or at 0 and ends anywhere."""
        state = self._first
        for c in text[:-1]:
            state = state.next.get(c) or self._step(state, c, last=False)
            if state is _MATCHED or state is _DEAD:
                return state is _MATCHED
        if text:
            c = text[-1]
            final = c == "\n" and self.ends  # ``$`` before a final newline: not cached
            state = (None if final else state.next.get(c)) or self._step(state, c, last=True)
            if state is _MATCHED or state is _DEAD:
                return state is _MATCHED
        if state.end is None:
            state.end = self._closure(state.raw, state.prev, None, False)[1]
        return state.end

    def _step(self, state: _State, c: str, *, last: bool) -> Any:
        chars, matched = self._closure(state.raw, state.prev, c, last)
        if matched:
            found = _MATCHED
        else:
            raw = {self.out[n][0] for n in chars if self.arg[n](c) is not None}
            if self.search:
                raw.add(self.start)
            found = self._state(frozenset(raw), (c == "\n", bool(_WORD(c)), bool(_ASCII_WORD(c))))
            found = found if raw else _DEAD
        if not (last and c == "\n" and self.ends):
            state.next[c] = found
        return found

    def _state(self, raw: frozenset[int], prev: Prev) -> _State:
        found = self._states.get((raw, prev))
        if found is None:
            if len(self._states) >= _MAX_CACHED:  # adversarial input: start the cache again
                for old in list(self._states.values()):
                    old.next.clear()
                self._states.clear()
            found = self._states[(raw, prev)] = _State(raw, prev)
        return found

    def _closure(
        self, raw: frozenset[int], prev: Prev, c: str | None, last: bool
    ) -> tuple[list[int], bool]:
        """The character-reading states reachable without reading, between ``prev`` and
        ``c`` (None: the end), and whether the pattern has matched there."""
        kind, out = self.kind, self.out
        stack, seen, chars = list(raw), set(raw), []
        while stack:
            n = stack.pop()
            k = kind[n]
            if k == _CHAR:
                chars.append(n)
                continue
            if k == _MATCH:
                return chars, True
            if k == _ASSERT and not _holds(self.arg[n], prev, c, last):
                continue
            for m in out[n]:
                if m not in seen:
                    seen.add(m)
                    stack.append(m)
        return chars, False


def _holds(assertion: tuple[Any, int], prev: Prev, c: str | None, last: bool) -> bool:
    """Whether the zero-width assertion holds between ``prev`` and ``c``."""
    at, flags = assertion
    if at is C.AT_BEGINNING:
        return prev is None or bool(flags & re.MULTILINE and prev[0])
    if at is C.AT_BEGINNING_STRING:
        return prev is None
    if at is C.AT_END:
        return c is None or (c == "\n" and bool(last or flags & re.MULTILINE))
    if at is C.AT_END_STRING:
        return c is None
    ascii_only = bool(flags & re.ASCII)
    before = prev is not None and prev[2 if ascii_only else 1]
    after = c is not None and bool((_ASCII_WORD if ascii_only else _WORD)(c))
    if at is C.AT_BOUNDARY:
        return before != after
    if prev is None and c is None:
        return _EMPTY_NON_BOUNDARY
    return before == after  # AT_NON_BOUNDARY


def pattern_refusal(pattern: str) -> str | None:
    """Why the monitor would refuse ``pattern`` on load, or None when it runs it.

    >>> pattern_refusal(r"(\\w)\\1")
    'back-references are not allowed'
    """
    try:
        compile_pattern(pattern)
    except UnsafePattern as exc:
        return str(exc)
    return None
