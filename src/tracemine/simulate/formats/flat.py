"""Flat JSONL: one call per line, every normalized field under its own name, plus the run's
``task_id``, ``trial``, ``family``, ``reward`` and ``run_outcome`` on each line."""

from __future__ import annotations

from typing import Any

from tracemine.simulate.formats._common import call_times, has_result, raw_says_more

_RUN_KEYS = ("run_id", "task_id", "trial", "family", "reward", "run_outcome")
_CALL_KEYS = ("seq", "turn", "parallel_index", "call_id", "tool")


def write_run(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The lines of one run."""
    lines = []
    for position, call in enumerate(run["calls"]):
        line: dict[str, Any] = {key: run.get(key) for key in _RUN_KEYS}
        line.update({key: call.get(key) for key in _CALL_KEYS})
        result_call_id = call.get("result_call_id")
        if result_call_id is not None and result_call_id != call.get("call_id"):
            line["result_call_id"] = result_call_id
        if raw_says_more(call):
            line["arguments_raw"] = call["arguments_raw"]
        line["arguments"] = call.get("arguments")
        if has_result(call):
            line["result"] = call.get("result")
        line["status"] = call.get("status") or "ok"
        line["error_type"] = call.get("error_type")
        line["error_message"] = call.get("error_message")
        start, end = call_times(run, call, position)
        line["started_at"] = start.isoformat().replace("+00:00", "Z")
        line["ended_at"] = end.isoformat().replace("+00:00", "Z")
        line["duration_ms"] = round((end - start).total_seconds() * 1000.0, 3)
        lines.append(line)
    return lines
