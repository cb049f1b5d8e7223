"""What run-level mining reads from the store: the nominal runs with every call (any
status), and which earlier call each argument value could have been taken from.

A run is nominal when it has a nominal call (``tm_calls``, so the same ``--where`` and task
key as call-level mining); then all its calls count, failed ones included, because caps,
prior calls and the completeness gate look at every call the agent made.

"Earlier" is an earlier turn when both calls have one, else a smaller ``seq``: calls the
model issued together in one turn cannot have informed each other, so a parallel batch
returned (or recorded) in another order never makes or breaks an order contract.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

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
    """Whether ``a`` was issued before ``b`` (an earlier turn; ``seq`` without turns)."""
    if a.turn is not None and b.turn is not None:
        return a.turn < b.turn
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
                   c.call_id, c.result_call_id
            FROM calls c JOIN nominal n USING (run_id) JOIN runs r USING (run_id)
            ORDER BY c.run_id, c.seq, c.call_key
            """
        ).fetchall()
    finally:
        con.unregister("_tm_rl_tasks")
    runs: dict[str, RunInfo] = {}
    keys, run_ids, seqs, turns, tools, statuses = [], [], [], [], [], []
    for run_id, task, family, key, seq, turn, tool, status, cid, rcid in rows:
        info = runs.get(run_id)
        if info is None:
            info = runs[run_id] = RunInfo(run_id, task, family)
        position = seq if seq is not None else len(info.calls)
        info.calls.append(RunCall(int(key), int(position), turn, tool, status, cid, rcid))
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
                  "tool": tools, "status": statuses}),
    )  # fmt: skip
    return runs


def argument_values_sql() -> str:
    """SQL: the scalar values of every call's top-level arguments (one per call and path)
    — the values a provenance contract could trace back."""
    return f"""
    SELECT v.call_key, v.path, v.jtype, v.num, v.str
    FROM tm_values v SEMI JOIN _tm_rl_calls c ON c.call_key = v.call_key
    WHERE v.side = 'args' AND v.idx IS NULL AND v.path <> 'args' AND v.jtype IN {_SCALARS}
    """


def value_sources_sql() -> str:
    """SQL: for each argument value (call, path), every (tool, path) of an earlier call of
    another tool in the same run that ended ok and held an equal value (strings to strings,
    numbers to numbers) — the value matching provenance is mined from."""
    earlier = (
        "CASE WHEN a.turn IS NOT NULL AND b.turn IS NOT NULL THEN a.turn < b.turn "
        "ELSE a.seq < b.seq END"
    )
    return f"""
    WITH b AS (
        SELECT c.run_id, c.seq, c.turn, c.tool, v.call_key, v.path, v.jtype, v.num, v.str
        FROM tm_values v JOIN _tm_rl_calls c ON c.call_key = v.call_key
        WHERE v.side = 'args' AND v.idx IS NULL AND v.path <> 'args' AND v.jtype IN {_SCALARS}
    ), a AS (
        SELECT c.run_id, c.seq, c.turn, c.tool, v.path, v.jtype, v.num, v.str
        FROM tm_values v JOIN _tm_rl_calls c ON c.call_key = v.call_key
        WHERE c.status = 'ok' AND v.jtype IN {_SCALARS}
    ), matched AS (
        SELECT b.call_key, b.path AS bpath, a.tool AS atool, a.path AS apath
        FROM b JOIN a ON a.run_id = b.run_id AND a.str = b.str
        WHERE b.jtype = 'string' AND a.jtype = 'string' AND a.tool <> b.tool AND {earlier}
        UNION ALL
        SELECT b.call_key, b.path, a.tool, a.path
        FROM b JOIN a ON a.run_id = b.run_id AND a.num = b.num
        WHERE b.jtype <> 'string' AND a.jtype <> 'string' AND a.tool <> b.tool AND {earlier}
    )
    SELECT DISTINCT call_key, bpath, atool, apath FROM matched
    """


@dataclass
class ValueFacts:
    """Argument values and their possible sources: ``values[(call_key, path)]`` is the
    value (as the monitor compares it), ``sources[(call_key, path)]`` the (tool, path)
    pairs of earlier calls that held it."""

    values: dict[tuple[int, str], Any]
    sources: dict[tuple[int, str], set[tuple[str, str]]]


def load_values(con: duckdb.DuckDBPyConnection) -> ValueFacts:
    values: dict[tuple[int, str], Any] = {}
    for key, path, jtype, num, text in con.execute(argument_values_sql()).fetchall():
        # 5 and 5.0 are one value, as for the monitor; a string never equals a number
        values[(int(key), path)] = text if jtype == "string" else ("n", float(num))
    sources: dict[tuple[int, str], set[tuple[str, str]]] = {}
    for key, bpath, atool, apath in con.execute(value_sources_sql()).fetchall():
        sources.setdefault((int(key), bpath), set()).add((atool, apath))
    return ValueFacts(values, sources)
