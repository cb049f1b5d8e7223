"""Scoring an arm: replay nominal and faulted evaluation runs through its monitor, and
compare each faulted run with the same run replayed without its fault.

An *alarm* is anything the monitor raises for a run: a violation in a call's receipt, a
gap of the completeness gate (the run is then ``incomplete``), or a violated run-level
contract. The status-only harness has no monitor: it reads each call's status, and
alarms on a call whose result never came (``missing``) or that failed and was not retried
with success by a later call of the same tool — the gate's rule for execution errors.

- **false alarm**: a nominal evaluation call that an alarm names (its receipt, or a gap or
  run-level violation carrying its call id). Rate per nominal call, Wilson 95 % interval.
- **detected**: an injected fault whose run raises an alarm that the same run without the
  fault does not raise (alarms compared as a multiset of contract or gap code, tool and
  call position). A faulted run holds exactly one fault, so every new alarm is its doing.
- **localized**: a detected fault one of whose new alarms names the injected tool at the
  faulted call and a path on the ground truth's pattern path (equal, inside it or
  enclosing it; indices as ``[*]``, ``len()``/``sum()``/``keys()`` unwrapped); for faults
  in ids, status or timing, a gap or violation at the faulted call. Rate over detected.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tracemine.evaluate.arms import Arm
from tracemine.faults import FaultClass, FaultRecord
from tracemine.monitor import RunReplay, replay

ERROR_STATUSES = frozenset(("tool_error", "protocol_error", "timeout", "cancelled", "denied"))

COVERAGE: dict[FaultClass, str] = {
    FaultClass.MISSING_RESULT: "gate",
    FaultClass.DUPLICATE_CALL_ID: "gate",
    FaultClass.MISMATCHED_CALL_ID: "gate",
    FaultClass.REORDERED_RESULTS: "relational",
    FaultClass.LATE_RESULT: "none",
    FaultClass.EXECUTION_ERROR: "gate",
    FaultClass.FIELD_OMITTED: "vocabulary",
    FaultClass.FIELD_NULL: "vocabulary",
    FaultClass.WRONG_TYPE: "vocabulary",
    FaultClass.NEGATIVE_QUANTITY: "vocabulary",
    FaultClass.EMPTY_MATCH: "vocabulary",
    FaultClass.TRUNCATED_LIST: "vocabulary",
    FaultClass.HTML_ERROR_PAGE: "vocabulary",
    FaultClass.UNIT_MISMATCH: "vocabulary",
    FaultClass.WRONG_ID: "relational",
    FaultClass.STALE_VALUE: "relational",
    FaultClass.AMOUNT_FROM_ID: "vocabulary",
    FaultClass.UNKNOWN_ENUM: "vocabulary",
}
"""What in the monitor can see each class, by design: the completeness ``gate``; a
unary contract of the ``vocabulary``; only a ``relational`` contract tying the result to
the arguments or to earlier calls (``equals``, provenance); or ``none`` — the monitor reads
no timing, so a result arriving after the final answer looks like any other."""
COVERED = frozenset(c for c, how in COVERAGE.items() if how != "none")

_INDEX = re.compile(r"\[\d+\]")
_QUOTED = re.compile(r'\["((?:[^"\\]|\\.)*)"\]')
_FUNCTION = re.compile(r"^(?:len|sum|keys)\((.*)\)$")


@dataclass(frozen=True, slots=True)
class Alarm:
    source: str  # violation | gap | run | status
    name: str  # contract id, gap code or status
    tool: str
    seqs: tuple[int, ...]  # the calls it names (a reused id names several; none: the run)
    paths: tuple[str, ...] = ()


def run_calls(runs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs' calls as normalized records the replay takes (each with its run id)."""
    return [{**call, "run_id": run["run_id"]} for run in runs for call in run["calls"]]


def replay_runs(arm: Arm, runs: list[dict[str, Any]]) -> dict[str, list[Alarm]]:
    """Every run's alarms under ``arm``, by run id."""
    if arm.status_only:
        return {run["run_id"]: status_alarms(run) for run in runs}
    assert arm.monitor is not None
    families = {run["run_id"]: run.get("family") for run in runs}
    by_id = {run["run_id"]: run for run in runs}
    paths = _contract_paths(arm)
    found = {
        replayed.run_id: alarms(replayed, by_id[replayed.run_id], paths)
        for replayed in replay(arm.monitor, run_calls(runs), families=families)
    }
    if arm.schemas is not None:
        for run in runs:
            found[run["run_id"]].extend(schema_alarms(arm, run))
    return found


def schema_alarms(arm: Arm, run: dict[str, Any]) -> list[Alarm]:
    """The inferred-schema arm's alarms of one run: one per schema error, at its call."""
    assert arm.schemas is not None
    found = []
    for position, call in enumerate(run["calls"]):
        seq = call["seq"] if isinstance(call.get("seq"), int) else position
        for side, keyword, path in arm.schemas.errors(call):
            found.append(Alarm("violation", f"{arm.name}:{side}:{keyword}",
                               str(call.get("tool")), (seq,), (path,)))  # fmt: skip
    return found


def alarms(
    replayed: RunReplay, run: dict[str, Any], paths: dict[str, tuple[str, ...]]
) -> list[Alarm]:
    """The alarms of one replayed run, each placed at the calls it names."""
    seqs = _positions(run)
    found: list[Alarm] = []
    verdict = replayed.verdict
    assert verdict is not None
    for gap in verdict.gaps:
        where = seqs.get(str(gap.call_id), ()) if gap.call_id is not None else ()
        found.append(Alarm("gap", gap.code, gap.tool or "", where))
    for outcome in replayed.calls:
        for v in outcome.receipt.violations if outcome.receipt is not None else ():
            extra = paths.get(v.contract_id, ())
            found.append(Alarm("violation", v.contract_id, v.tool, (outcome.seq,),
                               (v.path, *extra)))  # fmt: skip
    for v in verdict.violations:
        where = seqs.get(str(v.call_id), ()) if v.call_id is not None else ()
        found.append(Alarm("run", v.contract_id, v.tool, where, (v.path,)))
    return found


def status_alarms(run: dict[str, Any]) -> list[Alarm]:
    """What a harness reading only call statuses flags (see the module doc)."""
    calls = run["calls"]
    found = []
    for position, call in enumerate(calls):
        status, tool = call.get("status"), str(call.get("tool"))
        seq = call["seq"] if isinstance(call.get("seq"), int) else position
        if status == "missing":
            found.append(Alarm("status", "missing", tool, (seq,)))
        elif status in ERROR_STATUSES and not any(
            later.get("tool") == tool and later.get("status") == "ok"
            for later in calls[position + 1 :]
        ):
            found.append(Alarm("status", "execution_error", tool, (seq,)))
    return found


def new_alarms(faulted: list[Alarm], nominal: list[Alarm]) -> list[Alarm]:
    """Alarms of the faulted run beyond those of the same run without the fault."""
    extra = Counter(_key(a) for a in faulted) - Counter(_key(a) for a in nominal)
    out = []
    for alarm in faulted:
        if extra[_key(alarm)] > 0:
            extra[_key(alarm)] -= 1
            out.append(alarm)
    return out


def localized(found: list[Alarm], records: list[FaultRecord]) -> bool:
    """Whether an alarm names the injected tool, call and path (see the module doc)."""
    for record in records:
        for alarm in found:
            if record.seq not in alarm.seqs or (alarm.tool and alarm.tool != record.tool):
                continue
            if record.side == "call":
                return True
            truth = normalize(record.path_pattern)
            if any(_related(normalize(p), truth) for p in alarm.paths):
                return True
    return False


def normalize(path: str) -> str:
    """``len(result.items[3].tags)`` → ``result.items[*].tags``; ``["a"]`` → ``.a``."""
    text = path.strip()
    match = _FUNCTION.match(text)
    if match:
        text = match.group(1)
    text = _QUOTED.sub(lambda m: "." + m.group(1), text)
    return _INDEX.sub("[*]", text)


_SEGMENTS = re.compile(r"\.[^.\[{]+|\[\*\]|\{\*\}")


def _segments(path: str) -> list[str]:
    root = re.match(r"[^.\[{]*", path)
    head = root.group(0) if root else ""
    return [head, *_SEGMENTS.findall(path[len(head) :])]


def _related(a: str, b: str) -> bool:
    """One path lies on the other (a map's ``{*}`` stands for any one key)."""
    if a == b or b.startswith((a + ".", a + "[")) or a.startswith((b + ".", b + "[")):
        return True
    if "{*}" not in a and "{*}" not in b:
        return False
    left, right = _segments(a), _segments(b)
    return all(
        x == y or (x == "{*}" and y.startswith(".")) or (y == "{*}" and x.startswith("."))
        for x, y in zip(left, right, strict=False)
    )


def _key(alarm: Alarm) -> tuple[str, str, str, tuple[int, ...]]:
    return alarm.source, alarm.name, alarm.tool, alarm.seqs


def _positions(run: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Call ids (own, answered-under, or the ``#n`` the monitor makes up) → the positions
    of the calls that carry them (more than one where an id was reused)."""
    seqs: dict[str, tuple[int, ...]] = {}
    for position, call in enumerate(run["calls"]):
        seq = call.get("seq") if isinstance(call.get("seq"), int) else position
        for cid in {call.get("call_id"), call.get("result_call_id"), f"#{position}"}:
            if cid is not None and seq not in seqs.get(str(cid), ()):
                seqs[str(cid)] = (*seqs.get(str(cid), ()), seq)
    return seqs


def _contract_paths(arm: Arm) -> dict[str, tuple[str, ...]]:
    if arm.contracts is None:
        return {}
    return {c.id: tuple(c.paths) for c in arm.contracts.contracts}
