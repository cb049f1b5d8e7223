"""LangSmith runs (read by :mod:`tracemine.ingest.readers.langsmith`), one trace a run: a
``chain`` root run and one ``tool`` run per call, as ``langchain-core``'s tracer writes
them and ``Client().list_runs()`` returns them.

The root run's ``extra.metadata`` carries the run's ``task_id``, ``trial``, ``family``,
``reward`` and ``run_outcome``. A tool run has the arguments as ``inputs`` (``{"input":
text}`` for arguments that are no object) and, when it answered, its result as the
``ToolMessage`` LangChain makes for a model's tool call (``outputs.output.content``, the
result as text; ``tool_call_id`` the id its result answered). A tool error is the
exception as LangChain records it (``Type('message')`` and the stack trace, in ``error``)
with empty outputs, or, when it answered with an error payload, the ``ToolMessage`` with
``status: "error"`` a tool that handles its errors returns; a call without a result has
no end time and no outputs. Ids are UUIDs derived from the run id, so the same run always
gives the same runs.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from tracemine.simulate.formats._common import (
    call_times,
    domain_of,
    has_result,
    result_text,
    run_end,
    to_datetime,
)

_NAMESPACE = uuid.UUID("6f1c1b7e-2f4a-4e55-9a43-5b1f0c9d7e21")


def run_uuid(*parts: Any) -> str:
    """The LangSmith run id of a part of a run (the trace id for the root)."""
    return str(uuid.uuid5(_NAMESPACE, "/".join(str(p) for p in parts)))


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _dotted(moment: datetime, run_id: str) -> str:
    return f"{moment.strftime('%Y%m%dT%H%M%S%f')}Z{run_id}"


def _stacktrace(error_type: str, message: str) -> str:
    return (f"{error_type}({message!r})Traceback (most recent call last):\n\n\n"
            f'  File "tools.py", line 1, in run\n\n\n{error_type}: {message}')  # fmt: skip


def write_run(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The runs of one trace: its root first, then its calls in order."""
    root_id = run_uuid("root", run["run_id"])
    started = to_datetime(run.get("started_at")) or min(
        (call_times(run, c, i)[0] for i, c in enumerate(run["calls"])), default=None
    )
    tools, ends = [], []
    root_dotted = _dotted(started, root_id) if started else root_id
    for position, call in enumerate(run["calls"]):
        start, end = call_times(run, call, position)
        ends.append(end)
        tool_id = run_uuid("call", run["run_id"], position, call.get("call_id"))
        call_id = call.get("result_call_id") or call.get("call_id")
        arguments = call.get("arguments")
        raw = call.get("arguments_raw")
        if not isinstance(arguments, dict):
            arguments = {"input": raw if isinstance(raw, str) else arguments}
        record: dict[str, Any] = {
            "id": tool_id,
            "name": call["tool"],
            "run_type": "tool",
            "start_time": _iso(start),
            "end_time": _iso(end),
            "extra": {"tool_call_id": call_id, "metadata": {}},
            "error": None,
            "inputs": arguments,
            "outputs": {},
            "reference_example_id": None,
            "parent_run_id": root_id,
            "tags": [],
            "status": "success",
            "trace_id": root_id,
            "dotted_order": f"{root_dotted}.{_dotted(start, tool_id)}",
        }
        failed = call.get("status") in ("tool_error", "timeout", "cancelled")
        if failed and not (call.get("status") == "tool_error" and call.get("result") is not None):
            kind = call.get("error_type") or "ToolException"
            record["error"] = _stacktrace(kind, call.get("error_message") or "")
            record["status"] = "error"
        elif has_result(call):
            record["outputs"] = {"output": {
                "content": result_text(call), "additional_kwargs": {},
                "response_metadata": {}, "type": "tool", "name": call["tool"], "id": None,
                "tool_call_id": call_id, "artifact": None,
                "status": "error" if failed else "success",
            }}  # fmt: skip
        else:
            record.update(end_time=None, outputs=None, status="pending")
        tools.append(record)
    finished = run_end(run) or (max(ends) if ends else started)
    reward = run.get("reward")
    root: dict[str, Any] = {
        "id": root_id,
        "name": domain_of(run) or "agent",
        "run_type": "chain",
        "start_time": _iso(started) if started else None,
        "end_time": _iso(finished) if finished else None,
        "extra": {
            "metadata": {
                "task_id": run.get("task_id"),
                "trial": run.get("trial"),
                "family": run.get("family"),
                "reward": float(reward) if reward is not None else None,
                "run_outcome": run.get("run_outcome"),
            }
        },
        "error": None,
        "inputs": {"input": run.get("instruction") or ""},
        "outputs": {"output": run.get("final_text") or ""},
        "reference_example_id": None,
        "parent_run_id": None,
        "tags": [],
        "status": "success",
        "trace_id": root_id,
        "dotted_order": root_dotted,
    }
    return [root, *tools]
