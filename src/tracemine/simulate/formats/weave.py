"""W&B Weave calls (read by :mod:`tracemine.ingest.readers.weave`), one trace a run, as the
calls stream query API returns them: an ``agent`` root call and one call of a
``weave.op(kind="tool")`` op per tool call, oldest first.

The root call's ``attributes`` carry the run's ``task_id``, ``trial``, ``family``,
``reward`` and ``run_outcome`` (what ``weave.attributes`` around the agent sets, and every
call of the trace inherits; here on the root only). A tool call has the op's ref as
``op_name``, the arguments as ``inputs`` (``{"input": text}`` for arguments that are no
object), the result as ``output`` (a text result as text, any other as the JSON value the
op returned) and ``tool_call_id`` in its attributes (the id its result answered). A tool
error is the ``exception`` SDK 0.54 writes (``{"type", "message", "traceback"}`` as JSON
text), with the result as ``output`` when the call had one (what
``client.finish_call(call, output, exception=...)`` records); a call without a result has
no end time (``summary.weave.status`` ``running``). Ids are UUIDs derived from the run id,
so the same run always gives the same calls.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from datetime import datetime
from typing import Any

from tracemine.simulate.formats._common import (
    call_times,
    domain_of,
    has_result,
    run_end,
    to_datetime,
)

_NAMESPACE = uuid.UUID("9d3e1a47-52c8-4f06-b1e9-7a2c5d8f3e60")
_ENTITY = "simulated"
_CLIENT = {"client_version": "0.54.0", "source": "python-sdk"}
_DEFAULT_ERRORS = {"timeout": "TimeoutError", "cancelled": "CancelledError"}


def call_uuid(*parts: Any) -> str:
    """The Weave call id of a part of a run (the trace id for ``("trace", run id)``)."""
    return str(uuid.uuid5(_NAMESPACE, "/".join(str(p) for p in parts)))


def _digest(name: str) -> str:
    """An op version's digest as Weave writes one (43 characters of base64 of SHA-256)."""
    raw = base64.urlsafe_b64encode(hashlib.sha256(name.encode("utf-8")).digest()).decode()
    return raw[:43].replace("-", "X").replace("_", "Y")


def _op_ref(project: str, name: str) -> str:
    return f"weave:///{_ENTITY}/{project}/op/{name}:{_digest(name)}"


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment is not None else None


def _summary(name: str, start: datetime, end: datetime | None, error: bool) -> dict[str, Any]:
    derived: dict[str, Any] = {"status": "error" if error else "success"}
    if end is None:
        derived["status"] = "running"
    else:
        derived["latency_ms"] = int((end - start).total_seconds() * 1000)
    derived["trace_name"] = name
    counts = {"success": 0 if error else 1, "error": 1 if error else 0}
    return {"status_counts": counts, "weave": derived} if end else {"weave": derived}


def _call(**fields: Any) -> dict[str, Any]:
    call: dict[str, Any] = dict.fromkeys(
        ("id", "project_id", "op_name", "display_name", "trace_id", "parent_id", "thread_id",
         "turn_id", "started_at", "attributes", "inputs", "ended_at", "exception", "output",
         "summary", "wb_user_id", "wb_run_id", "wb_run_step", "wb_run_step_end", "deleted_at")
    )  # fmt: skip
    call.update(fields)
    return call


def write_run(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls of one trace: its root first, then its tool calls in order."""
    trace = call_uuid("trace", run["run_id"])
    root_id = call_uuid("root", run["run_id"])
    agent = domain_of(run) or "agent"
    project = f"{agent}-agent"
    tools, ends, errors = [], [], 0
    for position, call in enumerate(run["calls"]):
        start, end = call_times(run, call, position)
        arguments = call.get("arguments")
        raw = call.get("arguments_raw")
        if not isinstance(arguments, dict):
            arguments = {"input": raw if isinstance(raw, str) else arguments}
        status = call.get("status")
        failed = status in ("tool_error", "timeout", "cancelled")
        answered = has_result(call)
        exception = None
        if failed:
            errors += 1
            kind = call.get("error_type") or _DEFAULT_ERRORS.get(status or "") or "ToolException"
            exception = json.dumps({"type": kind, "message": call.get("error_message") or "",
                                    "traceback": []})  # fmt: skip
        output = call.get("result") if answered else None
        ended = end if answered or failed else None
        if ended is not None:
            ends.append(ended)
        tools.append(_call(
            id=call_uuid("call", run["run_id"], position, call.get("call_id")),
            project_id=f"{_ENTITY}/{project}", op_name=_op_ref(project, call["tool"]),
            trace_id=trace, parent_id=root_id, started_at=_iso(start),
            attributes={"weave": {"kind": "tool", **_CLIENT},
                        "tool_call_id": call.get("result_call_id") or call.get("call_id")},
            inputs=arguments, ended_at=_iso(ended), exception=exception, output=output,
            summary=_summary(call["tool"], start, ended, failed),
        ))  # fmt: skip
    started = to_datetime(run.get("started_at")) or min(
        (call_times(run, c, i)[0] for i, c in enumerate(run["calls"])), default=None
    )
    finished = run_end(run) or (max(ends) if ends else started)
    reward = run.get("reward")
    root = _call(
        id=root_id,
        project_id=f"{_ENTITY}/{project}",
        op_name=_op_ref(project, agent),
        trace_id=trace,
        started_at=_iso(started),
        attributes={
            "weave": {"kind": "agent", **_CLIENT},
            "task_id": run.get("task_id"),
            "trial": run.get("trial"),
            "family": run.get("family"),
            "reward": float(reward) if reward is not None else None,
            "run_outcome": run.get("run_outcome"),
        },
        inputs={"instruction": run.get("instruction") or ""},
        ended_at=_iso(finished),
        output=run.get("final_text") or "",
        summary={
            "status_counts": {"success": len(tools) + 1 - errors, "error": errors},
            "weave": {
                "status": "descendant_error" if errors else "success",
                "latency_ms": int((finished - started).total_seconds() * 1000)
                if started and finished
                else None,
                "trace_name": agent,
            },
        },
    )
    return [root, *tools]
