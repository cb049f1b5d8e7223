"""The tools an arm's agent calls: answered from the case's fixture values, with the
case's scheduled fault served in place of one result.

The fault schedule is drawn once for all cases by the fault injector
(:func:`tracemine.faults.inject`, seeded) on the cases' nominal trajectories, so every arm
of a case meets the same fault on the same call. A faulty answer is *cached*: calling the
tool again with the same arguments serves it again, until the recovery tool
``refresh_<tool>`` is called with those arguments; the next call then reads the fixture.
That is what makes the list of recovery tools in a receipt worth something.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from tracemine.arms.cases import Case, recovery_tool
from tracemine.errors import InputError
from tracemine.faults import FaultClass, FaultGroup, inject

LIVE_GROUPS = (FaultGroup.STRUCTURAL, FaultGroup.SEMANTIC)
"""Fault groups that live tools can serve: a result that is wrong. Completeness faults are
about ids and arrival order of a recorded trace, which a live loop does not replay."""


@dataclass(frozen=True, slots=True)
class ScheduledFault:
    """The fault a case's tools serve: on ``tool`` called with ``arguments``."""

    fault_class: str
    group: str
    tool: str
    arguments: dict[str, Any]
    result: Any
    path: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "class": self.fault_class,
            "group": self.group,
            "tool": self.tool,
            "arguments": self.arguments,
            "path": self.path,
            "detail": self.detail,
        }


def live_classes(classes: list[FaultClass]) -> list[FaultClass]:
    """``classes`` if every one can be served live, else a clear error."""
    refused = [c.value for c in classes if c.group not in LIVE_GROUPS]
    if refused:
        raise InputError(
            f"--faults: {', '.join(refused)} cannot be served by live tools (completeness "
            "faults concern a recorded trace's ids and order); choose structural or semantic "
            "classes"
        )
    return classes


def schedule(
    cases: list[Case], classes: list[FaultClass], rate: float, seed: int
) -> dict[str, ScheduledFault | None]:
    """Case id → the fault its tools serve, or ``None`` for a clean case."""
    runs = [{"run_id": c.case_id, "task_id": c.case_id, "calls": c.nominal} for c in cases]
    faulty, records = inject(runs, live_classes(classes), rate=rate, seed=seed)
    out: dict[str, ScheduledFault | None] = {c.case_id: None for c in cases}
    by_run = {run["run_id"]: run for run in faulty}
    for record in records:
        call = by_run[record.run_id]["calls"][record.seq or 0]
        out[record.run_id] = ScheduledFault(
            record.fault_class.value,
            record.group,
            record.tool,
            copy.deepcopy(call["arguments"]),
            copy.deepcopy(call["result"]),
            record.path,
            record.detail,
        )
    return out


def canonical(arguments: Any) -> str:
    return json.dumps(arguments, sort_keys=True, default=str)


class ToolWorld:
    """One run's tools. Fresh per run, so no arm inherits another's refreshed cache."""

    def __init__(self, case: Case, fault: ScheduledFault | None) -> None:
        self.case, self.fault = case, fault
        self.cached = fault is not None
        self.names = {t["name"] for t in case.tools}

    def call(self, tool: str, arguments: Any) -> tuple[str, str]:
        """The tool message content and the call's status (``ok`` or ``tool_error``)."""
        if tool not in self.names:
            return _error("unknown_tool", f"no tool named {tool!r}")
        if not isinstance(arguments, dict):
            return _error("invalid_arguments", "arguments must be a JSON object")
        fault = self.fault
        if tool.startswith("refresh_"):
            target = tool.removeprefix("refresh_")
            if (
                fault is not None
                and recovery_tool(fault.tool) == tool
                and (canonical(arguments) == canonical(fault.arguments))
            ):
                self.cached = False
            return _content({"refreshed": True, "tool": target}), "ok"
        if (
            fault is not None
            and self.cached
            and tool == fault.tool
            and (canonical(arguments) == canonical(fault.arguments))
        ):
            return _content(fault.result), "ok"
        return _content(self._fixture(tool, arguments)), "ok"

    def _fixture(self, tool: str, arguments: dict[str, Any]) -> Any:
        same = [f for f in self.case.fixtures if f["tool"] == tool]
        if not same:
            return {"error": {"code": "not_found", "message": f"{tool} has no record"}}
        want = canonical(arguments)
        for fixture in same:
            if canonical(fixture["arguments"]) == want:
                return copy.deepcopy(fixture["result"])

        # arguments no fixture had: the closest record, its echoed arguments replaced, as
        # a service would answer a write it was told to make
        def overlap(fixture: dict[str, Any]) -> int:
            given = fixture["arguments"] or {}
            return sum(canonical(given.get(k)) == canonical(v) for k, v in arguments.items())

        best = max(same, key=overlap)
        result = copy.deepcopy(best["result"])
        if isinstance(result, dict):
            for name, value in (best["arguments"] or {}).items():
                if name in arguments and canonical(result.get(name)) == canonical(value):
                    result[name] = copy.deepcopy(arguments[name])
        return result


def _content(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _error(code: str, message: str) -> tuple[str, str]:
    return _content({"error": {"code": code, "message": message}}), "tool_error"
