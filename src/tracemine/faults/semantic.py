"""Semantic faults: a payload shaped as always but wrong for the task — the failures
transport monitoring cannot see."""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Iterator
from typing import Any

from tracemine.faults._base import (
    Context,
    Site,
    ok_calls,
    structured,
    touched_arguments,
    touched_result,
)
from tracemine.faults.paths import (
    Token,
    digits_in,
    get,
    is_number,
    last_key,
    pattern,
    put,
    walk,
)

QUANTITY = re.compile(
    r"(qty|quantity|amount|cents|price|total|count|seats|size|fee|points|hits|matched)"
)
MONEY = re.compile(r"(cents|amount|price)")  # not fee_pct: a percentage has no unit to mix
COUNTS = ("total", "total_hits", "total_count", "count", "files_matched")
HTML_PAGE = (
    "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
    "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n"
)
OUT_OF_VOCABULARY = ["on_hold", "unknown", "PENDING_REVIEW", "archived", "partially_refunded"]


def _leaves(run: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any], list[Token], Any]]:
    for index, call in ok_calls(run):
        if structured(call):
            for tokens, value in walk(call["result"]):
                yield index, call, tokens, value


def _result_edit(index: int, tokens: list[Token], change: Any) -> Any:
    def apply(run: dict[str, Any], rng: random.Random) -> str | None:
        call = run["calls"][index]
        detail = change(call, tokens, rng)
        touched_result(call)
        return detail

    return apply


def negative_quantity(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def negate(call: dict[str, Any], tokens: list[Token], rng: random.Random) -> str:
        put(call["result"], tokens, -get(call["result"], tokens))
        return "sign flipped"

    for index, _, tokens, value in _leaves(run):
        if is_number(value) and value > 0 and QUANTITY.search(last_key(tokens)):
            yield Site(index, "result", tokens, _result_edit(index, tokens, negate))


def empty_match(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def empty(call: dict[str, Any], tokens: list[Token], rng: random.Random) -> str:
        dropped = len(get(call["result"], tokens))
        put(call["result"], tokens, [])
        return f"{dropped} matching items dropped"

    for index, _, tokens, value in _leaves(run):
        if isinstance(value, list) and value and isinstance(tokens[-1], str):
            yield Site(index, "result", tokens, _result_edit(index, tokens, empty))


def truncated_list(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def truncate(call: dict[str, Any], tokens: list[Token], rng: random.Random) -> str:
        items = get(call["result"], tokens)
        keep = rng.randint(1, len(items) - 1) if len(items) > 2 else 1
        put(call["result"], tokens, items[:keep])
        return f"{len(items) - keep} of {len(items)} items cut off"

    for index, call, tokens, value in _leaves(run):
        if not (isinstance(value, list) and len(value) >= 2 and isinstance(tokens[-1], str)):
            continue
        parent = get(call["result"], tokens[:-1])
        if any(is_number(parent.get(key)) and parent[key] >= len(value) for key in COUNTS):
            yield Site(index, "result", tokens, _result_edit(index, tokens, truncate))


def html_error_page(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def serve_html(call: dict[str, Any], tokens: list[Token], rng: random.Random) -> str:
        call["result"] = HTML_PAGE
        return "a proxy's error page served as the result"

    for index, call in ok_calls(run):
        if structured(call):
            yield Site(index, "result", [], _result_edit(index, [], serve_html))


def unit_mismatch(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def scale(call: dict[str, Any], tokens: list[Token], rng: random.Random) -> str:
        put(call["result"], tokens, get(call["result"], tokens) * 100)
        return "amount in the wrong unit (x100)"

    for index, _, tokens, value in _leaves(run):
        if is_number(value) and value != 0 and MONEY.search(last_key(tokens)):
            yield Site(index, "result", tokens, _result_edit(index, tokens, scale))


def wrong_id(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    """The whole result of another call of the same tool, for another id, from another
    task; where the tool has no such result, the id itself changed in shape-keeping way."""
    task = str(run.get("task_id") or run["run_id"])

    def swap(call: dict[str, Any], tokens: list[Token], rng: random.Random) -> str | None:
        current = get(call["result"], tokens)
        donors = [
            result
            for other, result in ctx.results.get(call["tool"], [])
            if other != task and _lookup(result, tokens) not in (None, current)
        ][:20]
        if donors:
            call["result"] = copy.deepcopy(rng.choice(donors))
            return f"result of {get(call['result'], tokens)} instead of {current}"
        put(call["result"], tokens, _reshape(current, rng))
        return f"id {current} replaced by one of the same shape"

    for index, call, tokens, value in _leaves(run):
        arguments = call.get("arguments")
        args: dict[str, Any] = arguments if isinstance(arguments, dict) else {}
        if (
            isinstance(value, str)
            and last_key(tokens).endswith("id")
            and value in args.values()
            and all(isinstance(t, str) for t in tokens)
        ):
            yield Site(index, "result", tokens, _result_edit(index, tokens, swap))


def stale_value(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    task = str(run.get("task_id") or run["run_id"])

    def carry_over(call: dict[str, Any], tokens: list[Token], rng: random.Random) -> str | None:
        current = get(call["result"], tokens)
        options = ctx.other_task_values(call["tool"], pattern("result", tokens), task, current)
        if not options:
            return None
        put(call["result"], tokens, rng.choice(options))
        return "value taken from another task's call of this tool"

    for index, _, tokens, value in _leaves(run):
        if isinstance(value, str) or is_number(value):
            yield Site(index, "result", tokens, _result_edit(index, tokens, carry_over))


def amount_from_id(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    """An amount filled from the digits of an id: in a call's arguments (a refund sized
    from the order id) or inside a result object that holds both."""

    def from_args(
        run: dict[str, Any], rng: random.Random, index: int, key: str, id_key: str
    ) -> str:
        call = run["calls"][index]
        before = call["arguments"][key]
        amount = _digits(call["arguments"][id_key])
        call["arguments"] = {**call["arguments"], key: amount}
        touched_arguments(call)
        if isinstance(call.get("result"), dict) and call["result"].get(key) == before:
            call["result"][key] = amount  # the tool did what it was asked
            touched_result(call)
        return f"{key} taken from {id_key}"

    found = False
    for index, call in enumerate(run["calls"]):
        args = call.get("arguments")
        if not isinstance(args, dict) or call.get("status") != "ok":
            continue
        for key, value in args.items():
            if not (is_number(value) and MONEY.search(key)):
                continue
            for id_key, id_value in args.items():
                if id_key.endswith("id") and isinstance(id_value, str) and _digits(id_value):
                    apply = _bind_args(from_args, index, key, id_key)
                    found = True
                    yield Site(index, "args", [key], apply)
    if found:
        return  # the documented failure is in the arguments (a refund sized from an id)
    objects: list[tuple[int, list[Token], dict[str, Any]]] = [
        (i, [], c["result"]) for i, c in ok_calls(run) if isinstance(c["result"], dict)
    ]
    objects += [(i, t, v) for i, _, t, v in _leaves(run) if isinstance(v, dict)]
    for index, tokens, value in objects:
        ids = [
            k for k, v in value.items() if k.endswith("id") and isinstance(v, str) and _digits(v)
        ]
        for key, amount in value.items():
            if ids and is_number(amount) and MONEY.search(key):
                here = [*tokens, key]
                source = ids[0]

                def from_result(
                    call: dict[str, Any], at: list[Token], rng: random.Random, source: str = source
                ) -> str:
                    put(call["result"], at, _digits(get(call["result"], [*at[:-1], source])))
                    return f"{at[-1]} taken from {source}"

                yield Site(index, "result", here, _result_edit(index, here, from_result))


def unknown_enum(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def invent(call: dict[str, Any], tokens: list[Token], rng: random.Random) -> str:
        vocabulary = ctx.vocab[(call["tool"], pattern("result", tokens))]
        value = rng.choice([v for v in OUT_OF_VOCABULARY if v not in vocabulary])
        put(call["result"], tokens, value)
        return f"{value!r} is none of {', '.join(vocabulary)}"

    for index, call, tokens, value in _leaves(run):
        if isinstance(value, str) and (call["tool"], pattern("result", tokens)) in ctx.vocab:
            yield Site(index, "result", tokens, _result_edit(index, tokens, invent))


def _lookup(value: Any, tokens: list[Token]) -> Any:
    try:
        return get(value, tokens)
    except (KeyError, IndexError, TypeError):
        return None


def _digits(text: str) -> int:
    return digits_in(text) or 0


def _reshape(value: str, rng: random.Random) -> str:
    """Same shape (letters stay letters, digits digits), other characters."""
    out = []
    for ch in value:
        if ch.isdigit():
            out.append(rng.choice("0123456789".replace(ch, "")))
        else:
            out.append(ch)
    return "".join(out)


def _bind_args(fn: Any, index: int, key: str, id_key: str) -> Any:
    return lambda run, rng: fn(run, rng, index, key, id_key)
