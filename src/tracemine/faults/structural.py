"""Structural faults: a result shaped unlike every nominal one (a field left out, a null
where there never was one, a value of another JSON type)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

from tracemine.faults._base import Context, Site, ok_calls, structured, touched_result
from tracemine.faults.paths import Token, delete, digits_in, get, is_number, pattern, put, walk


def _members(run: dict[str, Any]) -> Iterator[tuple[int, list[Token], Any]]:
    """Object members inside structured results (array slots are not fields)."""
    for index, call in ok_calls(run):
        if structured(call):
            for tokens, value in walk(call["result"]):
                if isinstance(tokens[-1], str):
                    yield index, tokens, value


def _edit(index: int, tokens: list[Token], change: Any) -> Any:
    def apply(run: dict[str, Any], rng: random.Random) -> str:
        call = run["calls"][index]
        detail = change(call["result"], tokens, rng)
        touched_result(call)
        return detail

    return apply


def field_omitted(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def omit(result: Any, tokens: list[Token], rng: random.Random) -> str:
        delete(result, tokens)
        return "field removed"

    for index, tokens, _ in _members(run):
        if (run["calls"][index]["tool"], pattern("result", tokens)) in ctx.required:
            yield Site(index, "result", tokens, _edit(index, tokens, omit))


def field_null(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def nullify(result: Any, tokens: list[Token], rng: random.Random) -> str:
        put(result, tokens, None)
        return "value replaced by null"

    for index, tokens, value in _members(run):
        # a null where nominal results have had one is no fault
        if (
            value is not None
            and (run["calls"][index]["tool"], pattern("result", tokens)) not in ctx.nullable
        ):
            yield Site(index, "result", tokens, _edit(index, tokens, nullify))


def retyped(value: Any, rng: random.Random) -> Any:
    """The value as another JSON type, the way serializers get it wrong."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_number(value):
        return str(value)  # a number sent as a string
    if isinstance(value, dict | list):
        return json.dumps(value)  # an object serialized twice
    if isinstance(value, str):
        number = digits_in(value)
        return [value] if number is None else number
    return None


def wrong_type(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def retype(result: Any, tokens: list[Token], rng: random.Random) -> str:
        before = get(result, tokens)
        after = retyped(before, rng)
        put(result, tokens, after)
        return f"{type(before).__name__} became {type(after).__name__}"

    for index, tokens, value in _members(run):
        if value is not None:
            yield Site(index, "result", tokens, _edit(index, tokens, retype))
