"""Addressing values inside a call: ``result.items[2].quantity`` (one value) and its
pattern ``result.items[*].quantity`` (the contract path it belongs to)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Token = str | int


def concrete(side: str, tokens: list[Token]) -> str:
    return side + "".join(f"[{t}]" if isinstance(t, int) else f".{t}" for t in tokens)


def pattern(side: str, tokens: list[Token]) -> str:
    return side + "".join("[*]" if isinstance(t, int) else f".{t}" for t in tokens)


def walk(value: Any, tokens: list[Token] | None = None) -> Iterator[tuple[list[Token], Any]]:
    """Every value below ``value`` (not ``value`` itself) with its tokens, depth first."""
    tokens = tokens or []
    if isinstance(value, dict):
        for key, child in value.items():
            here = [*tokens, key]
            yield here, child
            yield from walk(child, here)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            here = [*tokens, index]
            yield here, child
            yield from walk(child, here)


def get(root: Any, tokens: list[Token]) -> Any:
    for token in tokens:
        root = root[token]
    return root


def put(root: Any, tokens: list[Token], value: Any) -> None:
    get(root, tokens[:-1])[tokens[-1]] = value


def delete(root: Any, tokens: list[Token]) -> None:
    del get(root, tokens[:-1])[tokens[-1]]


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# enough for any id-shaped number and far below int()'s limit on digit strings
MAX_DIGITS = 18


def digits_in(text: str) -> int | None:
    """The decimal digits of ``text`` read as one number (``"ORD-0042"`` → 42), None when
    it has none. Digits of any script count (``"٣٤"`` → 34); superscripts and other
    characters that are digits but not decimal (``"m²"``) do not, since ``int`` rejects them."""
    digits = "".join(ch for ch in text if ch.isdecimal())[:MAX_DIGITS]
    return int(digits) if digits else None


def last_key(tokens: list[Token]) -> str:
    """The nearest object key on the path (``items[3]`` → ``items``)."""
    for token in reversed(tokens):
        if isinstance(token, str):
            return token
    return ""
