"""What each candidate would catch: the fault library injected into sampled nominal calls.

Selection spends a false-alarm budget on the contracts that buy the most detection, so it
needs an estimate of detection per contract. For each tool a few nominal calls are drawn
(one per task, seeded), every call-level fault of :mod:`tracemine.faults` that fits is
injected into copies of them (a bounded number of sites per call and class), and the
monitor's own compiled checks say which candidates each faulty copy breaks that the
nominal call did not. A fault changes a few sites of one call, so only
the candidates reading those sites (a path at, above or below one) are checked again on
the faulty copy; the rest keep the verdict they gave the nominal call, and the cost
follows the sites a fault touches, not the tool's paths. A tool's detection of a set of
contracts is then the mean, over the fault classes that fit the tool, of the share of its
faults the set catches — the figure ``tracemine evaluate`` reports per class, estimated
before selection.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb

from tracemine.faults import FaultClass, variants
from tracemine.mine.profile.aggregates import order_sql
from tracemine.model.contract import Contract, ContractFile, Kind
from tracemine.model.paths import ANY_KEY, WILDCARD, PathError, parse
from tracemine.model.result import is_error_payload, result_value
from tracemine.monitor._compile import Compiled, Fail, compile_call_contract
from tracemine.monitor._load import RUN_LEVEL, WHOLE, parse_document

if TYPE_CHECKING:
    from tracemine.mine.profile.shards import Shards

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
    A task's call is the first in :func:`~tracemine.mine.profile.aggregates.order_sql` order: what
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
    readers = Readers(contracts, document)
    out = {tool: ToolFaults() for tool in by_tool}
    found: dict[str, list[tuple[str, set[str]]]] = {tool: [] for tool in by_tool}
    nominal = [_as_checked(run["calls"][0]) for run in runs]
    verdicts: list[dict[int, bool]] = [{} for _ in runs]  # per call, contract → breaks it
    for index, fault_class, faulty in variants(runs, CALL_CLASSES, max_sites=MAX_SITES,
                                               seed=seed):  # fmt: skip
        tool = runs[index]["calls"][0]["tool"]
        before, after = nominal[index], _as_checked(faulty["calls"][0])
        places = [("args",), ("result",)] if before[2] != after[2] else changed(before, after)
        caught = set()
        for number in sorted(readers.reading(tool, places)):
            was = verdicts[index].get(number)
            if was is None:
                was = verdicts[index][number] = readers.breaks(number, *before)
            if not was and readers.breaks(number, *after):
                caught.add(readers.ids[number])
        found[tool].append((fault_class.value, caught))
    for tool, faults in found.items():
        entry = out[tool]
        for name, _ in faults:
            entry.classes[name] = entry.classes.get(name, 0) + 1
        for number, (name, caught) in enumerate(faults):
            entry.weights.append(1.0 / (len(entry.classes) * entry.classes[name]))
            for cid in caught:
                entry.catches.setdefault(cid, set()).add(number)
    return out


def _as_checked(call: dict) -> tuple[Any, Any, bool]:
    """(arguments, result, failed) as :meth:`Monitor.check` reads a call said to be ``ok``:
    content text parsed, an error payload a failed call."""
    result = call.get("result")
    if result.__class__ is str:
        result = result_value(result)
    return call.get("arguments"), result, isinstance(result, dict) and is_error_payload(result)


def changed(before: tuple, after: tuple) -> list[tuple]:
    """Where a faulty call's (arguments, result) differ from its nominal copy's: (root,
    steps…) of each deepest differing value (a list of another length, a value of another
    type, a key added or removed is a change at that place)."""
    out: list[tuple] = []
    _diff(before[0], after[0], ("args",), out)
    _diff(before[1], after[1], ("result",), out)
    return out


def _diff(a: object, b: object, at: tuple, out: list[tuple]) -> None:
    if type(a) is not type(b):
        out.append(at)
    elif isinstance(a, dict):
        assert isinstance(b, dict)
        for key in a.keys() | b.keys():
            if key not in a or key not in b:
                out.append((*at, key))
            else:
                _diff(a[key], b[key], (*at, key), out)
    elif isinstance(a, list):
        assert isinstance(b, list)
        if len(a) != len(b):
            out.append(at)
        else:
            for n, (x, y) in enumerate(zip(a, b, strict=True)):
                _diff(x, y, (*at, n), out)
    elif a != b:
        out.append(at)


class _Node:
    __slots__ = ("below", "children", "here")

    def __init__(self) -> None:
        self.children: dict[object, _Node] = {}
        self.here: list[int] = []  # contracts reading exactly this place
        self.below: list[int] | None = None  # here and every place under it (memoized)

    def every(self) -> list[int]:
        if self.below is None:
            found = list(self.here)
            for child in self.children.values():
                found += child.every()
            self.below = found
        return self.below


class Readers:
    """Per tool, which candidates read which places (their paths and their condition's
    path, a derived ``len(x)`` reading ``x``), and each candidate compiled as the monitor
    compiles it, when first needed."""

    def __init__(self, contracts: list[Contract], document: dict) -> None:
        self.ids = [c.id for c in contracts]
        self.document = document  # its contracts in the order of ``contracts``
        self.compiled: dict[int, Compiled | None] = {}
        self.roots: dict[str, _Node] = {}
        self.everywhere: dict[str, list[int]] = {}  # candidates of paths that do not parse
        for number, contract in enumerate(contracts):
            if contract.kind == Kind.SCHEMA:  # checked through its members: nothing here
                continue
            tool = contract.tool
            texts = [*contract.paths, *([contract.when.path] if contract.when else [])]
            try:
                parsed = [parse(text) for text in texts]
            except PathError:
                parsed = []
            if not parsed:
                self.everywhere.setdefault(tool, []).append(number)
            for path in parsed:
                top = self.roots.setdefault(tool, _Node())
                node = top.children.setdefault(path.root, _Node())
                for step in path.steps:
                    node = node.children.setdefault(step, _Node())
                node.here.append(number)

    def reading(self, tool: str, places: list[tuple]) -> set[int]:
        """The candidates of ``tool`` that read at, above or below one of ``places``."""
        found = set(self.everywhere.get(tool, ()))
        top = self.roots.get(tool)
        if top is None:
            return found
        for place in places:
            nodes = [top.children[place[0]]] if place[0] in top.children else []
            for step in place[1:]:
                following = []
                for node in nodes:
                    found.update(node.here)  # a path above the place reads it
                    many = WILDCARD if isinstance(step, int) else ANY_KEY
                    for key in (step, many):
                        child = node.children.get(key)
                        if child is not None:
                            following.append(child)
                nodes = following
            for node in nodes:
                found.update(node.every())
        return found

    def breaks(self, number: int, args: Any, result: Any, failed: bool) -> bool:
        """Whether candidate ``number`` reports a violation on this call, as the monitor's
        reference path decides it (a contract that cannot be evaluated breaks nothing)."""
        if number not in self.compiled:
            head = {k: v for k, v in self.document.items() if k != "contracts"}
            one = {**head, "contracts": [self.document["contracts"][number]]}
            (spec,) = parse_document(one)
            call_level = spec.kind not in RUN_LEVEL and spec.kind not in WHOLE
            self.compiled[number] = compile_call_contract(spec) if call_level else None
        compiled = self.compiled[number]
        if compiled is None or (failed and compiled.needs_result):
            return False
        try:
            if compiled.when is not None and not compiled.when(args, result):
                return False
            return isinstance(compiled.test(args, result), Fail)
        except Exception:  # not evaluated, or a contract breaking on odd input
            return False


def _load(text: str | None) -> object:
    return None if text is None else json.loads(text)
