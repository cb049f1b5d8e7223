"""Rows of an Arize Phoenix spans dataframe (what ``get_spans_dataframe`` returns; read by
:mod:`tracemine.ingest.readers.phoenix`), one run a trace: an ``AGENT`` root span and one
``TOOL`` span per call, every row with the same columns (None where a span has none).

The root span carries ``attributes.metadata`` with the run's ``task_id``, ``trial``,
``family``, ``reward`` and ``run_outcome``. A tool span carries ``attributes.tool.name``,
``attributes.tool_call.id`` (the id its result answered), ``attributes.input.value`` (the
arguments as JSON text, ``application/json``) and ``attributes.output.value`` (the result:
JSON text, or a text result as it is, ``text/plain``); a call without a result has no
output. A tool error has ``status_code`` ERROR, its message as ``status_message`` and,
when it has a type, an ``exception`` event naming it. Times are ISO 8601 text (what
``to_json(date_format="iso")`` writes; a parquet writer may make them timestamps). Ids
derive from the run id (:func:`trace_id`), so the same run always gives the same rows.
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

COLUMNS = (
    "name", "span_kind", "parent_id", "start_time", "end_time", "status_code",
    "status_message", "events", "context.span_id", "context.trace_id",
    "attributes.openinference.span.kind", "attributes.tool.name", "attributes.tool_call.id",
    "attributes.input.value", "attributes.input.mime_type", "attributes.output.value",
    "attributes.output.mime_type", "attributes.agent.name", "attributes.metadata",
)  # fmt: skip


def _hex(text: str, chars: int) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:chars]


def trace_id(run_id: str) -> str:
    """The trace id a run is written under (the reader's run id)."""
    return _hex(f"trace/{run_id}", 32)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _row(**columns: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(columns)
    return row


def write_run(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of one run: its root span first, then its calls in order."""
    run_id = run["run_id"]
    trace = trace_id(run_id)
    root_id = _hex(f"root/{run_id}", 16)
    tools = []
    ends = []
    for position, call in enumerate(run["calls"]):
        start, end = call_times(run, call, position)
        ends.append(end)
        row = _row(
            name=call["tool"],
            span_kind="TOOL",
            parent_id=root_id,
            start_time=_iso(start),
            end_time=_iso(end),
            status_code="OK",
            status_message="",
            events=[],
            **{
                "context.span_id": _hex(f"span/{run_id}/{position}/{call.get('call_id')}", 16),
                "context.trace_id": trace,
                "attributes.openinference.span.kind": "TOOL",
                "attributes.tool.name": call["tool"],
                "attributes.tool_call.id": call.get("result_call_id") or call.get("call_id"),
                "attributes.input.value": arguments_text(call),
                "attributes.input.mime_type": "application/json",
            },
        )
        if has_result(call):
            text = isinstance(call.get("result"), str)
            row["attributes.output.value"] = result_text(call)
            row["attributes.output.mime_type"] = "text/plain" if text else "application/json"
        if call.get("status") == "tool_error":
            row["status_code"] = "ERROR"
            row["status_message"] = call.get("error_message") or ""
            if call.get("error_type"):
                row["events"] = [
                    {
                        "name": "exception",
                        "timestamp": _iso(end),
                        "attributes": {
                            "exception.type": call["error_type"],
                            "exception.message": call.get("error_message") or "",
                        },
                    }
                ]
        tools.append(row)
    started = to_datetime(run.get("started_at")) or min(
        (call_times(run, c, i)[0] for i, c in enumerate(run["calls"])), default=None
    )
    finished = run_end(run) or (max(ends) if ends else started)
    agent = domain_of(run) or "agent"
    reward = run.get("reward")
    root = _row(
        name=agent,
        span_kind="AGENT",
        start_time=_iso(started) if started else None,
        end_time=_iso(finished) if finished else None,
        status_code="OK",
        status_message="",
        events=[],
        **{
            "context.span_id": root_id,
            "context.trace_id": trace,
            "attributes.openinference.span.kind": "AGENT",
            "attributes.agent.name": agent,
            "attributes.metadata": {
                "task_id": run.get("task_id"),
                "trial": run.get("trial"),
                "family": run.get("family"),
                "reward": float(reward) if reward is not None else None,
                "run_outcome": run.get("run_outcome"),
            },
        },
    )
    return [root, *tools]
