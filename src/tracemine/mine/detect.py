"""What each candidate would catch: the fault library injected into sampled nominal calls.

Selection spends a false-alarm budget on the contracts that buy the most detection, so it
needs an estimate of detection per contract. For each tool a few nominal calls are drawn
(one per task, seeded), every call-level fault of :mod:`tracemine.faults` that fits is
injected into copies of them (a bounded number of sites per call and class), and the
monitor, loaded with every candidate of the tool, says which candidates each faulty copy
breaks that the nominal call did not. A tool's detection of a set of contracts is then the
mean, over the fault classes that fit the tool, of the share of its faults the set
catches — the figure ``tracemine evaluate`` reports per class, estimated before selection.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import duckdb

from tracemine.faults import FaultClass, variants
from tracemine.mine.profile import order_sql
from tracemine.model.contract import Contract, ContractFile
from tracemine.monitor import Monitor

if TYPE_CHECKING:
    from tracemine.mine.shards import Shards

SAMPLE_CALLS = 12
"""Nominal calls drawn per tool (one per task while tasks last)."""
MAX_SITES = 8
"""Sites per call and fault class: a wide result has hundreds of fields."""
CALL_CLASSES = (
    FaultClass.FIELD_OMITTED, FaultClass.FIELD_NULL, FaultClass.WRONG_TYPE,
    FaultClass.NEGATIVE_QUANTITY, FaultClass.EMPTY_MATCH, FaultClass.TRUNCATED_LIST,
    FaultClass.HTML_ERROR_PAGE, FaultClass.UNIT_MISMATCH, FaultClass.WRONG_ID,
    FaultClass.STALE_VALUE, FaultClass.AMOUNT_FROM_ID, FaultClass.UNKNOWN_ENUM,
)  # fmt: skip
"""The classes a check of one call can see (ids, ordering and status are the gate's)."""


@dataclass
class ToolFaults:
    """The faults injected into one tool's sampled calls: each fault's weight (its class's
    share of the mean, split over the class's faults) and, per contract id, the faults it
    catches."""

    weights: list[float] = field(default_factory=list)
    catches: dict[str, set[int]] = field(default_factory=dict)
    classes: dict[str, int] = field(default_factory=dict)  # class → faults injected

    def detection(self, ids: Iterable[str]) -> float:
        """Estimated mean detection, over the tool's fault classes, of contracts ``ids``."""
        caught: set[int] = set()
        for cid in ids:
            caught |= self.catches.get(cid, set())
        return sum(self.weights[i] for i in caught)


def sample_calls_sql() -> str:
    """SQL: per tool, one nominal call of each of up to ``?`` tasks, the tasks drawn by a
    seeded hash (returned, so that shards' draws merge into the one draw of their union).
    A task's call is the first in :func:`~tracemine.mine.profile.order_sql` order: what
    the calls said decides, not the order the store holds them in."""
    return f"""
    WITH firsts AS (SELECT tool, task, min_by(call_key, {order_sql("tm_calls")}) AS call_key
                    FROM tm_calls GROUP BY ALL),
    ranked AS (SELECT *, hash(task, ?) AS h, row_number() OVER (PARTITION BY tool
                   ORDER BY hash(task, ?), task) AS r FROM firsts)
    SELECT r.tool, r.task, r.call_key, CAST(c.arguments AS VARCHAR), CAST(c.result AS VARCHAR),
           r.h
    FROM ranked r JOIN calls c ON c.call_key = r.call_key
    WHERE r.r <= ? ORDER BY r.tool, r.r
    """


def sample_calls(con: duckdb.DuckDBPyConnection, seed: int) -> list[tuple]:
    """Shard step: the shard's draw of :func:`sample_calls_sql`. A task lies in one shard,
    and the draw orders tasks by their hash alone, so the first ``SAMPLE_CALLS`` tasks of
    a tool over all shards are among the first of the shards they lie in."""
    return con.execute(sample_calls_sql(), [str(seed), str(seed), SAMPLE_CALLS]).fetchall()


def merge_samples(shards: list[list[tuple]]) -> list[tuple]:
    """The draw of the union of the shards: per tool (in order) its first ``SAMPLE_CALLS``
    tasks by (hash, task)."""
    by_tool: dict[str, list[tuple]] = {}
    for rows in shards:
        for row in rows:
            by_tool.setdefault(row[0], []).append(row)
    out = []
    for tool in sorted(by_tool):
        out += sorted(by_tool[tool], key=lambda row: (row[5], row[1]))[:SAMPLE_CALLS]
    return out


def estimate(
    shards: Shards, candidates: Iterable[Contract], seed: int = 0
) -> dict[str, ToolFaults]:
    """Per tool, the faults injected into its sampled nominal calls and which of
    ``candidates`` (call-level, as proposed on every task) catch each one."""
    contracts = list(candidates)
    by_tool = {contract.tool for contract in contracts}
    if not by_tool:
        return {}
    rows = merge_samples(shards.map(sample_calls, seed, label="detection sample"))
    runs: list[dict] = []
    for tool, task, _, arguments, result, _ in rows:
        if tool not in by_tool:
            continue
        # named by position in the draw, not by call key: a key says where a file put
        # the call, and the injector's choices follow the runs it is given
        number = len(runs)
        call = {"tool": tool, "call_id": f"c{number}", "seq": 0, "status": "ok",
                "arguments": _load(arguments), "result": _load(result)}  # fmt: skip
        runs.append({"run_id": f"sample-{number}", "task_id": task, "calls": [call]})
    document = ContractFile(contracts=contracts).model_dump(mode="json", exclude_none=True)
    monitor = Monitor.from_dict(document, include_proposed=True)
    out = {tool: ToolFaults() for tool in by_tool}
    found: dict[str, list[tuple[str, set[str]]]] = {tool: [] for tool in by_tool}
    nominal = [_broken(monitor, run) for run in runs]
    for index, fault_class, faulty in variants(runs, CALL_CLASSES, max_sites=MAX_SITES,
                                               seed=seed):  # fmt: skip
        tool = runs[index]["calls"][0]["tool"]
        found[tool].append((fault_class.value, _broken(monitor, faulty) - nominal[index]))
    for tool, faults in found.items():
        entry = out[tool]
        for name, _ in faults:
            entry.classes[name] = entry.classes.get(name, 0) + 1
        for number, (name, caught) in enumerate(faults):
            entry.weights.append(1.0 / (len(entry.classes) * entry.classes[name]))
            for cid in caught:
                entry.catches.setdefault(cid, set()).add(number)
    return out


def _broken(monitor: Monitor, run: dict) -> set[str]:
    call = run["calls"][0]
    receipt = monitor.check(call["tool"], call["arguments"], call["result"])
    return {v.contract_id for v in receipt.violations}


def _load(text: str | None) -> object:
    return None if text is None else json.loads(text)
