"""Replaying recorded calls through a monitor, run by run: what ``tracemine check`` does
over trace files, available here without any reader (the calls are normalized records)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracemine.model.result import CONTENT_NOT_CAPTURED
from tracemine.monitor._monitor import Monitor
from tracemine.monitor._receipt import Receipt, RunVerdict


@dataclass(slots=True)
class CallOutcome:
    """One replayed call: where it was in its run and its receipt (``None`` when the call
    had no result to check; ``skipped`` then says why, when the call was made but the
    trace did not record what it said)."""

    run_id: str
    seq: int
    tool: str
    call_id: str | None
    status: str | None
    receipt: Receipt | None
    arguments: Any = None
    skipped: str | None = None


@dataclass(slots=True)
class RunReplay:
    run_id: str
    calls: list[CallOutcome] = field(default_factory=list)
    verdict: RunVerdict | None = None

    def problems(self) -> list[str]:
        """What broke, a line each, as a harness reports it: each call's violations (its
        tool and place in the run, what was expected and seen, the contract id), the
        run's, and each gap that leaves the run incomplete."""
        lines = [
            f"{o.tool} call {o.seq}: {v.describe()} ({v.contract_id})"
            for o in self.calls if o.receipt is not None for v in o.receipt.violations
        ]  # fmt: skip
        if self.verdict is not None:
            lines += [f"run: {v.describe()} ({v.contract_id})" for v in self.verdict.violations]
            lines += [f"run incomplete: {gap.message}" for gap in self.verdict.gaps]
        return lines

    def receipts(self) -> dict[str, Any]:
        """Each call's receipt under ``seq:tool`` (why it was not checked, if it was not)
        and the run's verdict under ``run``: the whole replay as JSON-able data."""
        found: dict[str, Any] = {
            f"{o.seq}:{o.tool}": o.receipt.to_dict() if o.receipt is not None
            else {"skipped": o.skipped or "no result"} for o in self.calls
        }  # fmt: skip
        if self.verdict is not None:
            found["run"] = self.verdict.to_dict()
        return found


def replay(
    monitor: Monitor,
    calls: Iterable[Mapping[str, Any]],
    *,
    families: Mapping[str, str | None] | None = None,
) -> list[RunReplay]:
    """Check every call of every run in ``seq`` order, then finalize each run.

    ``calls`` are normalized call records (``run_id``, ``seq``, ``tool``, ``call_id``,
    ``result_call_id``, ``arguments``, ``result``, ``status``); ``families`` maps run ids
    to the family ``expected_tools`` contracts select on.

    >>> runs = replay(monitor, tracemine.read_traces("t.jsonl").calls)  # doctest: +SKIP
    >>> [r.verdict.verdict for r in runs]  # doctest: +SKIP
    """
    by_run: dict[str, list[Mapping[str, Any]]] = {}
    for call in calls:
        by_run.setdefault(str(call.get("run_id")), []).append(call)
    replays = []
    for run_id, run_calls in by_run.items():
        ordered = sorted(
            enumerate(run_calls),
            key=lambda pair: (pair[1].get("seq") if isinstance(pair[1].get("seq"), int)
                              else pair[0], pair[0]),
        )  # fmt: skip
        family = (families or {}).get(run_id)
        run = monitor.start_run(run_id, family=family, declared=True)
        out = RunReplay(run_id)
        for position, (_, call) in enumerate(ordered):
            tool, status = str(call.get("tool")), call.get("status")
            cid = run.record_call(call.get("call_id"), tool, call.get("arguments"))
            receipt, skipped = None, None
            if CONTENT_NOT_CAPTURED in (call.get("anomalies") or ()):
                skipped = "content not captured"  # nothing said, nothing to judge
                # it was answered, though: its run is not incomplete for want of it
                run.record_result(call.get("result_call_id") or cid, call.get("result"), status)
            elif status != "missing":
                answered = call.get("result_call_id") or cid
                receipt = monitor.check(tool, call.get("arguments"), call.get("result"),
                                        call_id=answered, run=run, status=status)  # fmt: skip
            seq = call["seq"] if isinstance(call.get("seq"), int) else position
            outcome = CallOutcome(run_id, seq, tool, call.get("call_id"), status, receipt,
                                  call.get("arguments"), skipped)  # fmt: skip
            out.calls.append(outcome)
        out.verdict = monitor.finalize(run)
        replays.append(out)
    return replays
