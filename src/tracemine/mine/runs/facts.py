"""What run-level mining reads from the store: the nominal runs with every call (any
status), and which earlier call each argument value could have been taken from.

A run is nominal when it has a nominal call (``tm_calls``, so the same ``--where`` and task
key as call-level mining); then all its calls count, failed ones included, because caps,
prior calls and the completeness gate look at every call the agent made.

"Earlier" is an earlier turn when both calls have one; else, when both have times, a call
that ended before the other started; else a smaller ``seq``. Calls the model issued
together in one turn cannot have informed each other, so a parallel batch returned (or
recorded) in another order never makes or breaks an order contract — and a format that
records times but no turns (OTLP spans) sees the batch as the calls that overlap, as a
format with turns but no times (chat messages) sees the turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa

from tracemine.mine.profile.formats import name_tokens
from tracemine.mine.propose.relations import VAGUE_WORDS

_SCALARS = "('string', 'integer', 'number')"


@dataclass(frozen=True, slots=True)
class RunCall:
    """One call of a nominal run, as the gate and the order contracts need it."""

    key: int
    seq: int
    turn: int | None
    tool: str
    status: str | None
    call_id: str | None
    result_call_id: str | None
    started_at: datetime | None = None
    ended_at: datetime | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class RunInfo:
    """A nominal run: its task, family and calls in ``seq`` order."""

    run_id: str
    task: str
    family: str | None
    calls: list[RunCall] = field(default_factory=list)


def before(a: RunCall, b: RunCall) -> bool:
    """Whether ``a`` came before ``b``: an earlier turn; without turns, ended before ``b``
    started; without times either, a smaller ``seq``."""
    if a.turn is not None and b.turn is not None:
        return a.turn < b.turn
    if a.ended_at is not None and b.started_at is not None:
        return a.ended_at <= b.started_at
    return a.seq < b.seq


def load_runs(con: duckdb.DuckDBPyConnection, tasks: Iterable[str]) -> dict[str, RunInfo]:
    """Every call of the nominal runs of ``tasks``; registers ``_tm_rl_calls`` for
    :func:`value_sources_sql` (unregister it when done)."""
    con.register("_tm_rl_tasks", pa.table({"task": sorted(set(tasks))}))
    try:
        rows = con.execute(
            """
            WITH nominal AS (
                SELECT DISTINCT run_id, task FROM tm_calls SEMI JOIN _tm_rl_tasks USING (task)
            )
            SELECT c.run_id, n.task, r.family, c.call_key, c.seq, c.turn, c.tool, c.status,
                   c.call_id, c.result_call_id, c.started_at, c.ended_at
            FROM calls c JOIN nominal n USING (run_id) JOIN runs r USING (run_id)
            ORDER BY c.run_id, c.seq, c.call_key
            """
        ).fetchall()
    finally:
        con.unregister("_tm_rl_tasks")
    runs: dict[str, RunInfo] = {}
    keys, run_ids, seqs, turns, tools, statuses, starts, ends = ([] for _ in range(8))
    for run_id, task, family, key, seq, turn, tool, status, cid, rcid, start, end in rows:
        info = runs.get(run_id)
        if info is None:
            info = runs[run_id] = RunInfo(run_id, task, family)
        position = seq if seq is not None else len(info.calls)
        info.calls.append(RunCall(int(key), int(position), turn, tool, status, cid, rcid,
                                  start, end))  # fmt: skip
        starts.append(start)
        ends.append(end)
        keys.append(int(key))
        run_ids.append(run_id)
        seqs.append(int(position))
        turns.append(turn)
        tools.append(tool)
        statuses.append(status)
    con.register(
        "_tm_rl_calls",
        pa.table({"call_key": pa.array(keys, pa.int64()), "run_id": run_ids,
                  "seq": pa.array(seqs, pa.int64()), "turn": pa.array(turns, pa.int64()),
                  "tool": tools, "status": statuses,
                  "started_at": pa.array(starts, pa.timestamp("us")),
                  "ended_at": pa.array(ends, pa.timestamp("us"))}),
    )  # fmt: skip
    return runs


_ARGUMENTS = (
    f"v.side = 'args' AND v.path <> 'args' AND v.jtype IN {_SCALARS} AND (v.idx IS NULL OR "
    r"regexp_full_match(v.path, '[^\[\]{}*]+\[\*\]'))"
)
"""Argument values provenance can trace back: scalars outside arrays, and the elements of
an array of scalars (``args.recipients[*]``), each element separately."""
_EARLIER = (
    "CASE WHEN a.turn IS NOT NULL AND b.turn IS NOT NULL THEN a.turn < b.turn "
    "WHEN a.ended_at IS NOT NULL AND b.started_at IS NOT NULL THEN a.ended_at <= b.started_at "
    "ELSE a.seq < b.seq END"
)
"""SQL of :func:`before`."""


def argument_values_sql() -> str:
    """SQL: the scalar values of every call's arguments outside arrays, and each element
    of an array of scalars (``idx`` set) — the values a provenance contract could trace
    back."""
    return f"""
    SELECT v.call_key, v.path, v.idx, v.jtype, v.num, v.str
    FROM tm_values v SEMI JOIN _tm_rl_calls c ON c.call_key = v.call_key
    WHERE {_ARGUMENTS}
    """


def value_sources_sql() -> str:
    """SQL: for each argument value (call, path, element index), every (tool, path) of an
    earlier call of another tool in the same run that ended ok and held an equal value
    (strings to strings, numbers to numbers) — the value matching provenance is mined
    from."""
    return f"""
    WITH b AS (
        SELECT c.run_id, c.seq, c.turn, c.started_at, c.ended_at, c.tool, v.call_key, v.path,
               v.idx, v.jtype, v.num, v.str
        FROM tm_values v JOIN _tm_rl_calls c ON c.call_key = v.call_key
        WHERE {_ARGUMENTS}
    ), a AS (
        SELECT c.run_id, c.seq, c.turn, c.started_at, c.ended_at, c.tool, v.path, v.jtype,
               v.num, v.str
        FROM tm_values v JOIN _tm_rl_calls c ON c.call_key = v.call_key
        WHERE c.status = 'ok' AND v.jtype IN {_SCALARS}
    ), matched AS (
        SELECT b.call_key, b.path AS bpath, b.idx AS bidx, a.tool AS atool, a.path AS apath
        FROM b JOIN a ON a.run_id = b.run_id AND a.str = b.str
        WHERE b.jtype = 'string' AND a.jtype = 'string' AND a.tool <> b.tool AND {_EARLIER}
        UNION ALL
        SELECT b.call_key, b.path, b.idx, a.tool, a.path
        FROM b JOIN a ON a.run_id = b.run_id AND a.num = b.num
        WHERE b.jtype <> 'string' AND a.jtype <> 'string' AND a.tool <> b.tool AND {_EARLIER}
    )
    SELECT DISTINCT call_key, bpath, bidx, atool, apath FROM matched
    """


def numeric_paths_sql() -> str:
    """SQL: the (tool, side, path) of every number outside arrays in the nominal runs:
    arguments that could be bounded, and the earlier values that could bound them."""
    return """
    SELECT DISTINCT c.tool, v.side, v.path
    FROM tm_values v JOIN _tm_rl_calls c ON c.call_key = v.call_key
    WHERE v.idx IS NULL AND v.jtype IN ('integer', 'number') AND v.path NOT IN ('args', 'result')
      AND NOT contains(v.path, '[*]') AND NOT contains(v.path, '{*}')
    """


def value_bounds_sql() -> str:
    """SQL: for each numeric argument value (call, path), every (tool, path) of the pairs
    in ``_tm_rl_bound_pairs`` whose value at an earlier ok call of the same run was at
    least as large — the values a ``bounded_by`` contract is mined from. Only pairs with
    affinity are joined: every number against every earlier number would explode."""
    return f"""
    WITH b AS (
        SELECT c.run_id, c.seq, c.turn, c.started_at, c.ended_at, c.tool, v.call_key, v.path,
               v.num
        FROM tm_values v JOIN _tm_rl_calls c ON c.call_key = v.call_key
        WHERE v.side = 'args' AND v.idx IS NULL AND v.jtype IN ('integer', 'number')
    ), a AS (
        SELECT c.run_id, c.seq, c.turn, c.started_at, c.ended_at, c.tool, v.path, v.num
        FROM tm_values v JOIN _tm_rl_calls c ON c.call_key = v.call_key
        WHERE c.status = 'ok' AND v.idx IS NULL AND v.jtype IN ('integer', 'number')
    )
    SELECT DISTINCT b.call_key, b.path, a.tool, a.path
    FROM b JOIN _tm_rl_bound_pairs p ON p.btool = b.tool AND p.bpath = b.path
    JOIN a ON a.run_id = b.run_id AND a.tool = p.atool AND a.path = p.apath
    WHERE b.num <= a.num AND {_EARLIER}
    """


@dataclass
class ValueFacts:
    """Argument values and their possible sources: ``values[(call_key, path)]`` is the
    value (as the monitor compares it; for ``args.x[*]`` the tuple of the elements),
    ``sources[(call_key, path)]`` the (tool, path) pairs of earlier calls that held it
    (every element of it), ``bounds[(call_key, path)]`` the affine (tool, path) pairs of
    earlier calls that held a number at least as large."""

    values: dict[tuple[int, str], Any]
    sources: dict[tuple[int, str], set[tuple[str, str]]]
    bounds: dict[tuple[int, str], set[tuple[str, str]]] = field(default_factory=dict)


def load_values(con: duckdb.DuckDBPyConnection) -> ValueFacts:
    values: dict[tuple[int, str], Any] = {}
    elements: dict[tuple[int, str], dict[int, Any]] = {}
    for key, path, idx, jtype, num, text in con.execute(argument_values_sql()).fetchall():
        # 5 and 5.0 are one value, as for the monitor; a string never equals a number
        value = text if jtype == "string" else ("n", float(num))
        if idx is None:
            values[(int(key), path)] = value
        else:
            elements.setdefault((int(key), path), {})[int(idx)] = value
    for where, items in elements.items():
        values[where] = tuple(items[i] for i in sorted(items))
    found: dict[tuple[int, str], dict[int, set[tuple[str, str]]]] = {}
    for key, bpath, bidx, atool, apath in con.execute(value_sources_sql()).fetchall():
        index = -1 if bidx is None else int(bidx)
        found.setdefault((int(key), bpath), {}).setdefault(index, set()).add((atool, apath))
    sources: dict[tuple[int, str], set[tuple[str, str]]] = {}
    for where, by_index in found.items():
        if where in elements:  # a source of the array holds every one of its elements
            wanted = elements[where].keys()
            sets = [by_index.get(i, set()) for i in wanted]
            sources[where] = set.intersection(*sets) if sets else set()
        else:
            sources[where] = by_index.get(-1, set())
    return ValueFacts(values, sources, load_bounds(con))


def load_bounds(con: duckdb.DuckDBPyConnection) -> dict[tuple[int, str], set[tuple[str, str]]]:
    """Per numeric argument value, the affine earlier values that bound it."""
    numeric = con.execute(numeric_paths_sql()).fetchall()
    arguments = [(tool, path) for tool, side, path in numeric if side == "args"]
    pairs = [(btool, bpath, atool, apath) for btool, bpath in arguments
             for atool, _, apath in numeric
             if atool != btool and bound_affinity(bpath, apath)]  # fmt: skip
    if not pairs:
        return {}
    columns = list(zip(*pairs, strict=True))
    names = ("btool", "bpath", "atool", "apath")
    con.register("_tm_rl_bound_pairs", pa.table(dict(zip(names, map(list, columns), strict=True))))
    try:
        rows = con.execute(value_bounds_sql()).fetchall()
    finally:
        con.unregister("_tm_rl_bound_pairs")
    bounds: dict[tuple[int, str], set[tuple[str, str]]] = {}
    for key, bpath, atool, apath in rows:
        bounds.setdefault((int(key), bpath), set()).add((atool, apath))
    return bounds


BOUND_WORDS = frozenset({"amount", "total", "subtotal", "sum", "balance", "limit", "max",
                         "available", "remaining", "price", "cost"})  # fmt: skip
"""Names of quantities that bound one another across calls: a refund ``amount`` within an
order ``total``, a withdrawal within a ``balance``."""


def bound_affinity(argument: str, earlier: str) -> bool:
    """Whether a number at ``argument`` may be bounded by one at ``earlier``: their names
    share a word (``quantity``), units aside, or both name an amount (``amount_cents`` and
    ``total_cents``)."""
    mine, theirs = name_tokens(argument) - VAGUE_WORDS, name_tokens(earlier) - VAGUE_WORDS
    return bool(mine & theirs) or bool(mine & BOUND_WORDS and theirs & BOUND_WORDS)
