"""Langfuse traces (read by :mod:`tracemine.ingest.readers.langfuse`), one run a trace, as
``GET /api/public/traces/{traceId}`` returns it: the trace with its observations nested
whole, an ``AGENT`` root observation and one ``TOOL`` observation per call.

The trace's ``metadata`` carries the run's ``task_id``, ``trial``, ``family``, ``reward``
and ``run_outcome``; its ``input`` and ``output`` are the instruction and the final
answer. A tool observation has the arguments as ``input`` (an object; the text the model
wrote when it is no object), the result as ``output`` (as the tool returned it: an object,
or text), and ``metadata.tool_call_id`` the id its result answered, as Langfuse's
LangChain integration records it. A tool error is ``level: ERROR`` with its message as
``statusMessage`` (``Type: message`` when its type is an exception's, as ``TimeoutError``
for a timeout), the error payload kept as ``output`` when the tool answered with one; a
call without a result has no end time and no output. Ids are hex, 32 digits for the trace
and 16 for an observation as the SDK's OpenTelemetry spans have them, derived from the run
id, so the same run always gives the same trace.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from typing import Any

from tracemine.simulate.formats._common import (
    call_times,
    domain_of,
    has_result,
    run_end,
    to_datetime,
)

PROJECT = "tracemine-simulated"
_DEFAULT_TYPES = {"timeout": "TimeoutError", "cancelled": "CancelledError"}
# the exception names a reader takes out of ``Type: message``
_EXCEPTION = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception|Timeout|Exit|Interrupt|Warning)$")


def _hex(text: str, chars: int) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:chars]


def trace_id(run_id: str) -> str:
    """The Langfuse trace id a run is written under (the reader's run id)."""
    return _hex(f"langfuse/trace/{run_id}", 32)


def _iso(moment: datetime | None) -> str | None:
    """A time as the API writes it: milliseconds and ``Z`` (microseconds when it has them)."""
    if moment is None:
        return None
    if moment.microsecond % 1000:
        return moment.isoformat().replace("+00:00", "Z")
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return (end - start).total_seconds() if start is not None and end is not None else None


def _observation(**fields: Any) -> dict[str, Any]:
    """An observation with every field ``ObservationsView`` has."""
    record: dict[str, Any] = {
        "id": None, "traceId": None, "type": "SPAN", "name": None, "startTime": None,
        "endTime": None, "completionStartTime": None, "model": None, "modelParameters": {},
        "input": None, "version": None, "metadata": {}, "output": None,
        "usage": {"input": 0, "output": 0, "total": 0, "unit": "TOKENS"}, "level": "DEFAULT",
        "statusMessage": None, "parentObservationId": None, "promptId": None,
        "usageDetails": {}, "costDetails": {}, "environment": "default", "promptName": None,
        "promptVersion": None, "modelId": None, "inputPrice": None, "outputPrice": None,
        "totalPrice": None, "calculatedInputCost": None, "calculatedOutputCost": None,
        "calculatedTotalCost": None, "latency": None, "timeToFirstToken": None,
    }  # fmt: skip
    record.update(fields)
    return record


def _status_message(call: dict[str, Any], answered: bool) -> str:
    """An error's ``statusMessage``: its message, led by its type when that is an
    exception's (an error payload the tool answered with keeps its message alone)."""
    message = call.get("error_message") or ""
    kind = call.get("error_type") or _DEFAULT_TYPES.get(call.get("status") or "")
    if answered or not kind or not _EXCEPTION.match(kind):
        return message
    return f"{kind}: {message}" if message else kind


def _tool(run: dict[str, Any], call: dict[str, Any], position: int, root_id: str) -> dict[str, Any]:
    run_id = run["run_id"]
    start, end = call_times(run, call, position)
    arguments = call.get("arguments")
    raw = call.get("arguments_raw")
    if not isinstance(arguments, dict) and isinstance(raw, str):
        arguments = raw  # the model's text, as it wrote it
    record = _observation(
        id=_hex(f"langfuse/call/{run_id}/{position}/{call.get('call_id')}", 16),
        traceId=trace_id(run_id),
        type="TOOL",
        name=call["tool"],
        startTime=_iso(start),
        endTime=_iso(end),
        input=arguments,
        metadata={"tool_call_id": call.get("result_call_id") or call.get("call_id")},
        parentObservationId=root_id,
        latency=_seconds(start, end),
    )
    answered = has_result(call)
    if answered:
        result = call.get("result")
        # text that is empty or none reads as no output: written as the JSON it is
        record["output"] = json.dumps(result) if result is None or result == "" else result
    else:
        record.update(endTime=None, latency=None)
    failed = call.get("status") in ("tool_error", "timeout", "cancelled")
    if failed:
        answered = answered and call.get("result") is not None
        if not answered:
            record["output"] = None
        record.update(level="ERROR", statusMessage=_status_message(call, answered))
    return record


def write_run(run: dict[str, Any]) -> list[dict[str, Any]]:
    """One trace: its root observation first, then its calls in order."""
    run_id = run["run_id"]
    trace = trace_id(run_id)
    root_id = _hex(f"langfuse/root/{run_id}", 16)
    tools = [_tool(run, call, n, root_id) for n, call in enumerate(run["calls"])]
    started = to_datetime(run.get("started_at")) or min(
        (call_times(run, c, i)[0] for i, c in enumerate(run["calls"])), default=None
    )
    ends = [call_times(run, c, i)[1] for i, c in enumerate(run["calls"])]
    finished = run_end(run) or (max(ends) if ends else started)
    agent = domain_of(run) or "agent"
    root = _observation(
        id=root_id,
        traceId=trace,
        type="AGENT",
        name=agent,
        startTime=_iso(started),
        endTime=_iso(finished),
        input=run.get("instruction") or "",
        output=run.get("final_text") or "",
        latency=_seconds(started, finished),
    )
    reward = run.get("reward")
    return [
        {
            "id": trace,
            "timestamp": _iso(started),
            "name": agent,
            "input": run.get("instruction") or "",
            "output": run.get("final_text") or "",
            "sessionId": None,
            "release": None,
            "version": None,
            "userId": None,
            "metadata": {
                "task_id": run.get("task_id"),
                "trial": run.get("trial"),
                "family": run.get("family"),
                "reward": float(reward) if reward is not None else None,
                "run_outcome": run.get("run_outcome"),
            },
            "tags": [],
            "public": False,
            "environment": "default",
            "htmlPath": f"/project/{PROJECT}/traces/{trace}",
            "latency": _seconds(started, finished),
            "totalCost": 0.0,
            "observations": [root, *tools],
            "scores": [],
        }
    ]
