"""Completeness faults: is every call answered once, under its own id, in time, without an
error. They change ids, statuses and timing rather than payload values."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from tracemine.faults._base import Context, Site, ok_calls, touched_result
from tracemine.simulate._core import iso, token
from tracemine.simulate.formats._common import call_times, to_datetime


def missing_result(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def apply(run: dict[str, Any], rng: random.Random, index: int) -> str:
        call = run["calls"][index]
        call.update(status="missing", result=None, result_call_id=None)
        touched_result(call)
        return "the result never arrived"

    for index, _ in ok_calls(run):
        yield Site(index, "call", ["result"], _bind(apply, index))


def duplicate_call_id(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def apply(run: dict[str, Any], rng: random.Random, index: int) -> str:
        earlier = rng.choice([c for c in run["calls"][:index] if c.get("call_id")])
        call = run["calls"][index]
        call["call_id"] = call["result_call_id"] = earlier["call_id"]
        return f"issued under the id of call seq {earlier.get('seq')}"

    for index, call in ok_calls(run):
        if index > 0 and call.get("call_id"):
            yield Site(index, "call", ["call_id"], _bind(apply, index))


def mismatched_call_id(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def apply(run: dict[str, Any], rng: random.Random, index: int) -> str:
        call = run["calls"][index]
        call["result_call_id"] = "call_" + token(rng, 24)
        return f"answered as {call['result_call_id']}"

    for index, call in ok_calls(run):
        if call.get("call_id"):
            yield Site(index, "call", ["result_call_id"], _bind(apply, index))


def reordered_results(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    """Neighbouring results swapped while each keeps its own id: what a harness that pairs
    results by position produces when answers come back out of order."""

    def apply(run: dict[str, Any], rng: random.Random, index: int) -> str:
        first, second = run["calls"][index], run["calls"][index + 1]
        for key in ("result", "result_text", "result_raw"):
            first[key], second[key] = second.get(key), first.get(key)
        return f"result swapped with call seq {second.get('seq')}"

    calls = run["calls"]
    okay = {index for index, _ in ok_calls(run)}
    for index in range(len(calls) - 1):
        if index in okay and index + 1 in okay:
            yield Site(index, "call", ["result"], _bind(apply, index), also=[index + 1])


def late_result(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def apply(run: dict[str, Any], rng: random.Random, index: int) -> str:
        done = _fill_timing(run)
        call = run["calls"][index]
        call["ended_at"] = iso(done + timedelta(seconds=rng.randint(5, 180)))
        call["duration_ms"] = None
        return f"arrived after the final answer at {iso(done)}"

    for index, _ in ok_calls(run):
        yield Site(index, "call", ["ended_at"], _bind(apply, index))


def execution_error(run: dict[str, Any], ctx: Context) -> Iterator[Site]:
    def apply(run: dict[str, Any], rng: random.Random, index: int) -> str:
        call = run["calls"][index]
        code, message = rng.choice(
            [("internal_error", "unhandled exception in tool handler"),
             ("dependency_failed", "database connection reset"),
             ("execution_failed", "tool process exited with status 1")]
        )  # fmt: skip
        call.update(status="tool_error", error_type=code, error_message=message)
        call["result"] = {"error": {"code": code, "message": message}}
        touched_result(call)
        return f"{code}: {message}"

    for index, _ in ok_calls(run):
        yield Site(index, "call", ["status"], _bind(apply, index))


def _fill_timing(run: dict[str, Any]) -> Any:
    """Give every call a time (sources without timing get one per call, as the writers do)
    and the run an end; returns that end."""
    ends = []
    for position, call in enumerate(run["calls"]):
        start, end = call_times(run, call, position)
        call["started_at"], call["ended_at"] = iso(start), iso(end)
        ends.append(end)
    done = to_datetime(run.get("ended_at"))
    if done is None:
        done = max(ends) + timedelta(seconds=1)
        run["ended_at"] = iso(done)
    return done


def _bind(fn: Any, index: int) -> Any:
    return lambda run, rng: fn(run, rng, index)
