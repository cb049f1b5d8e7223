"""Braintrust project logs (read by :mod:`tracemine.ingest.readers.braintrust`), one trace a
run: a ``task`` root span and one ``tool`` span per call, each row as the fetch API returns
it (``POST /v1/project_logs/{id}/fetch``) and as the ``braintrust`` SDK's ``@traced``
functions log it.

The root span's ``metadata`` carries the run's ``task_id``, ``trial``, ``family``,
``reward`` and ``run_outcome``; its ``input`` is the instruction, its ``output`` the final
answer. A tool span has the arguments as ``input`` (the arguments' text when they are no
object), the result as ``output``, the id its result answered as ``metadata.tool_call_id``
and its times as ``metrics.start`` and ``metrics.end`` (Unix seconds). A tool error is the
exception as the SDK records it (a stack trace ending ``Type: message``, in ``error``),
or, when the tool answered with an error payload, that payload as ``output`` and its
message as ``error`` (``str(error)``, as the SDK's integrations log it); a call without a
result is a span still open: no output, no error, no end. Ids are derived from the run id (trace
and span ids as the SDK's OpenTelemetry-compatible ids: 32 and 16 hex digits), so the
same run always gives the same rows.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from typing import Any

from tracemine.simulate._core import EPOCH
from tracemine.simulate.formats._common import (
    call_times,
    domain_of,
    has_result,
    run_end,
    to_datetime,
)

_NAMESPACE = uuid.UUID("3b0e9a52-6c1d-4f7e-9d2a-8e4f1c6b5a73")
PROJECT_ID = str(uuid.uuid5(_NAMESPACE, "project/tracemine-simulated"))
ORG_ID = str(uuid.uuid5(_NAMESPACE, "org/tracemine"))
_DEFAULT_TYPE = {"timeout": "TimeoutError", "cancelled": "CancelledError"}


def _hex(digits: int, *parts: Any) -> str:
    text = "/".join(str(p) for p in parts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:digits]


def _row_id(*parts: Any) -> str:
    return str(uuid.uuid5(_NAMESPACE, "/".join(str(p) for p in parts)))


def _iso(moment: datetime) -> str:
    return moment.isoformat()


def _stacktrace(error_type: str, message: str) -> str:
    return ("Traceback (most recent call last):\n"
            '  File "tools.py", line 1, in run\n'
            f"{error_type}: {message}\n")  # fmt: skip


def _row(span_id: str, trace: str, parents: list[str] | None, moment: datetime,
         xact: int) -> dict[str, Any]:  # fmt: skip
    """The fields every row has, as the fetch API returns them."""
    return {
        "id": _row_id("row", trace, span_id),
        "_xact_id": str(xact),
        "created": _iso(moment),
        "org_id": ORG_ID,
        "project_id": PROJECT_ID,
        "log_id": "g",
        "span_id": span_id,
        "root_span_id": trace,
        "span_parents": parents,
    }


def _tool_span(
    run: dict[str, Any], call: dict[str, Any], position: int, trace: str, root_span: str,
    xact: int,
) -> dict[str, Any]:  # fmt: skip
    start, end = call_times(run, call, position)
    span_id = _hex(16, "span", run["run_id"], position, call.get("call_id"))
    arguments = call.get("arguments")
    raw = call.get("arguments_raw")
    if not isinstance(arguments, dict) and isinstance(raw, str):
        arguments = raw  # text that is no object: as the model gave it
    row = _row(span_id, trace, [root_span], start, xact)
    row.update(
        span_attributes={"name": call["tool"], "type": "tool"},
        input=arguments,
        metadata={"tool_call_id": call.get("result_call_id") or call.get("call_id")},
        metrics={"start": start.timestamp(), "end": end.timestamp()},
    )
    status = call.get("status")
    failed = status in ("tool_error", "timeout", "cancelled")
    if failed and status == "tool_error" and call.get("result") is not None:
        # it answered with an error payload: the error as text, as integrations log it
        row["error"] = call.get("error_message") or "tool error"
        row["output"] = call["result"]
    elif failed:
        kind = call.get("error_type") or _DEFAULT_TYPE.get(status or "", "ToolException")
        row["error"] = _stacktrace(kind, call.get("error_message") or "")
    elif has_result(call):
        row["output"] = call.get("result")
    else:
        row["metrics"] = {"start": start.timestamp()}  # still open: no end, no output
    return row


def write_run(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of one trace: its root first, then its calls in order."""
    trace = _hex(32, "trace", run["run_id"])
    root_span = _hex(16, "root", run["run_id"])
    started = to_datetime(run.get("started_at")) or min(
        (call_times(run, c, i)[0] for i, c in enumerate(run["calls"])), default=None
    )
    origin = started or EPOCH
    xact = 1_000_000_000_000_000_000 + int(origin.timestamp() * 1000) * 1000
    tools = [
        _tool_span(run, call, position, trace, root_span, xact + position + 1)
        for position, call in enumerate(run["calls"])
    ]
    ends = [call_times(run, c, i)[1] for i, c in enumerate(run["calls"])]
    finished = run_end(run) or (max(ends) if ends else started)
    reward = run.get("reward")
    root = _row(root_span, trace, None, origin, xact)
    root.update(
        span_attributes={"name": domain_of(run) or "agent", "type": "task"},
        input=run.get("instruction") or "",
        output=run.get("final_text") or "",
        metadata={
            "task_id": run.get("task_id"),
            "trial": run.get("trial"),
            "family": run.get("family"),
            "reward": float(reward) if reward is not None else None,
            "run_outcome": run.get("run_outcome"),
        },
        metrics={
            "start": started.timestamp() if started else None,
            "end": finished.timestamp() if finished else None,
        },
    )
    return [root, *tools]
