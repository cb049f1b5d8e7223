"""OTLP JSON lines (the OTLP/HTTP JSON encoding, one export request per line, one run per
request) with OpenTelemetry GenAI spans: an ``invoke_agent`` root span carrying the run's
attributes and one ``execute_tool`` span per call.

Tool spans carry ``gen_ai.operation.name``, ``gen_ai.tool.name``, ``gen_ai.tool.type``,
``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``
(both JSON as strings) and ``gen_ai.conversation.id`` (the run id); the task id is
``task.id``, the root span also has ``trial`` and ``tracemine.family``, ``tracemine.reward``
and ``tracemine.run_outcome``. A tool error sets status code 2 and ``error.type``. A call without
a result has no result attribute. A span holds both a call and its result, so a result
answered under another id is written with that id.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from tracemine.simulate.formats._common import (
    arguments_text,
    call_times,
    domain_of,
    has_result,
    result_text,
    run_end,
    to_datetime,
)

SCOPE = {"name": "tracemine.simulate", "version": "1"}
SPAN_KIND_INTERNAL = 1
STATUS_ERROR = 2


def _hex(text: str, chars: int) -> str:
    # ids derived from content, not drawn: the same run always gets the same ids
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:chars]


def _nanos(moment: datetime) -> str:
    seconds = int(moment.timestamp())
    return str(seconds * 1_000_000_000 + moment.microsecond * 1_000)


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # int64 is a string in the OTLP JSON encoding
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def _attributes(pairs: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"key": key, "value": _value(value)} for key, value in pairs.items() if value is not None
    ]


def write_run(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The one line (an OTLP export request) of a run."""
    run_id = run["run_id"]
    trace_id = _hex(f"trace/{run_id}", 32)
    root_id = _hex(f"root/{run_id}", 16)
    task_id = run.get("task_id")
    spans = []
    ends = []
    for position, call in enumerate(run["calls"]):
        start, end = call_times(run, call, position)
        ends.append(end)
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call["tool"],
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": call.get("result_call_id") or call.get("call_id"),
            "gen_ai.tool.call.arguments": arguments_text(call),
            "gen_ai.conversation.id": run_id,
            "task.id": task_id,
        }
        status: dict[str, Any] = {}
        if has_result(call):
            attrs["gen_ai.tool.call.result"] = result_text(call)
        if call.get("status") == "tool_error":
            attrs["error.type"] = call.get("error_type") or "tool_error"
            status = {"code": STATUS_ERROR, "message": call.get("error_message") or ""}
        spans.append(
            {
                "traceId": trace_id,
                "spanId": _hex(f"span/{run_id}/{position}/{call.get('call_id')}", 16),
                "parentSpanId": root_id,
                "name": f"execute_tool {call['tool']}",
                "kind": SPAN_KIND_INTERNAL,
                "startTimeUnixNano": _nanos(start),
                "endTimeUnixNano": _nanos(end),
                "attributes": _attributes(attrs),
                "status": status,
            }
        )
    started = to_datetime(run.get("started_at")) or min(
        (call_times(run, c, i)[0] for i, c in enumerate(run["calls"])), default=None
    )
    finished = run_end(run) or (max(ends) if ends else started)
    agent = domain_of(run) or "agent"
    root = {
        "traceId": trace_id,
        "spanId": root_id,
        "name": f"invoke_agent {agent}",
        "kind": SPAN_KIND_INTERNAL,
        "startTimeUnixNano": _nanos(started) if started else "0",
        "endTimeUnixNano": _nanos(finished) if finished else "0",
        "attributes": _attributes(
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent,
                "gen_ai.conversation.id": run_id,
                "task.id": task_id,
                "trial": run.get("trial"),
                "tracemine.family": run.get("family"),
                "tracemine.reward": float(run["reward"]) if run.get("reward") is not None else None,
                "tracemine.run_outcome": run.get("run_outcome"),
            }
        ),
        "status": {},
    }
    resource = {"attributes": _attributes({"service.name": "tracemine-simulate"})}
    return [
        {
            "resourceSpans": [
                {"resource": resource, "scopeSpans": [{"scope": SCOPE, "spans": [root, *spans]}]}
            ]
        }
    ]
