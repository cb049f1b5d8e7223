"""Constraints stated only in a description: "never negative", "at least one item",
"ISO 4217 currency code", "a UUID", "never null". Each becomes a proposed contract with
source ``prose`` — unless the schema already declares it, or the value's declared type
rules it out (a "positive" remark on a string says nothing checkable).

The phrases are deliberately few and literal: a false prose contract costs a reviewer's
time, a missed one costs nothing the schema did not already lose. A phrase in a hedged
clause ("may be negative", "is not always positive") is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tracemine.model.contract import Kind
from tracemine.openapi.nodes import Node

_NUMERIC = ("integer", "number")
_SIZED = ("array", "string")

# (kind, params, JSON types it can apply to, phrase)
_RULES: tuple[tuple[Kind, dict[str, Any], tuple[str, ...], re.Pattern[str]], ...] = (
    (
        Kind.NON_NEGATIVE,
        {},
        _NUMERIC,
        re.compile(
            r"\b(non-?negative|never (?:be )?negative|not negative"
            r"|zero or (?:greater|more|positive)|positive or zero"
            r"|greater than or equal to (?:0|zero)|>= ?0)(?!\w)",
            re.I,
        ),
    ),
    (
        Kind.POSITIVE,
        {},
        _NUMERIC,
        re.compile(
            r"(?<!non-)(?<!non)\b(strictly positive|always positive|positive (?:integer|number|"
            r"amount|value)|greater than (?:0|zero)\b(?! or)|> ?0\b|must be positive)",
            re.I,
        ),
    ),
    (
        Kind.NON_EMPTY,
        {},
        _SIZED,
        re.compile(
            r"\b(at least one(?! of)|never empty|non-?empty|not empty|one or more(?! of))\b", re.I
        ),
    ),
    (
        Kind.FORMAT,
        {"format": "currency"},
        ("string",),
        re.compile(r"\b(ISO[ -]?4217|three-letter currency code|3-letter currency code)\b", re.I),
    ),
    (Kind.FORMAT, {"format": "uuid"}, ("string",), re.compile(r"\b(UUID|GUID)s?\b")),
    (
        Kind.NOT_NULL,
        {},
        (),
        re.compile(
            r"\b(never null|not null|non-?null|cannot be null|can ?not be null|never nil)\b", re.I
        ),
    ),
)
_HEDGE = re.compile(
    r"\b(may|might|can|could|not always|not necessarily|optionally)\s+(?:\w+\s+){0,2}$",
    re.I,
)
_SENTENCE_END = re.compile(r"[.;:!?\n]")
# substrings every rule needs: rules out the usual description in a few C-level scans
_KEYWORDS = ("negative", "positive", "zero", ">", "at least one", "empty", "one or more",
             "4217", "currency code", "uuid", "guid", "null", "nil")  # fmt: skip


def propose(
    text: str, node: Node, declared: set[Kind], side: str
) -> Iterator[tuple[Kind, dict[str, Any], str]]:
    """Contracts the description ``text`` of ``node`` states and its schema does not:
    ``(kind, params, excerpt)``. ``declared`` holds the kinds already declared there."""
    if not text or len(text) > 4000:
        return
    lowered = text.lower()
    if not any(keyword in lowered for keyword in _KEYWORDS):
        return
    have_bounds = declared & {Kind.NON_NEGATIVE, Kind.POSITIVE, Kind.RANGE}
    have_length = declared & {Kind.NON_EMPTY, Kind.LENGTH}
    for kind, params, types, phrase in _RULES:
        if types and not node.may_be(*types):
            continue
        if kind in (Kind.NON_NEGATIVE, Kind.POSITIVE) and (have_bounds or node.enum):
            continue
        if kind == Kind.NON_EMPTY and (have_length or side == "args"):
            continue  # "at least one" on an argument is usually a rule about the call
        if kind == Kind.FORMAT and (Kind.FORMAT in declared or Kind.PATTERN in declared):
            continue
        if kind == Kind.NOT_NULL and (Kind.NOT_NULL in declared or node.null_ok):
            continue
        match = phrase.search(text)
        if match is None or _hedged(text, match.start()):
            continue
        if kind == Kind.NON_NEGATIVE:
            have_bounds = {kind}  # "positive or zero" must not also yield positive
        yield kind, dict(params), _excerpt(text, match.start(), match.end())


def _hedged(text: str, start: int) -> bool:
    clause_start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
    return _HEDGE.search(text[clause_start:start]) is not None


def _excerpt(text: str, start: int, end: int) -> str:
    """The sentence around the phrase, at most ~120 characters."""
    left = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
    right_match = _SENTENCE_END.search(text, end)
    right = right_match.start() if right_match else len(text)
    sentence = text[left:right].strip()
    if len(sentence) > 120:
        low = max(0, start - left - 50)
        sentence = ("…" if low else "") + sentence[low : low + 118].strip() + "…"
    return sentence
