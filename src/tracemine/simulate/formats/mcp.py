"""MCP JSON-RPC transcripts, as a logging client or ``tracemine mcp wrap`` writes them: one
wrapped message a line, a session per run::

    {"timestamp": "...", "direction": "send", "session_id": "<run id>", "task_id": "...",
     "trial": 0, "reward": 1.0, "run_outcome": "success", "family": "...",
     "message": {"jsonrpc": "2.0", "id": "<call id>", "method": "tools/call",
                 "params": {"name": "get_order", "arguments": {...}}}}
    {"timestamp": "...", "direction": "recv", ..., "message": {"jsonrpc": "2.0",
     "id": "<call id>", "result": {"content": [{"type": "text", "text": "<result>"}],
                                   "structuredContent": {...}, "isError": false}}}

A session opens with ``initialize`` (protocol 2025-11-25). Each call's request id is its
call id (JSON-RPC allows text ids), so the calls keep their ids. A result that is a JSON
object is also given as ``structuredContent``, as a server with an ``outputSchema`` gives
it; a tool error is ``isError: true`` with the error payload as text; a call without a
result has no response. ``trial``, ``reward``, ``run_outcome`` and ``family`` are on every
line, as the task id is on the lines the proxy writes.
"""

from __future__ import annotations

from typing import Any

from tracemine.simulate.formats._common import call_times, has_result, result_text

PROTOCOL = "2025-11-25"


def _line(run: dict[str, Any], when: Any, direction: str, message: dict[str, Any]) -> dict:
    return {
        "timestamp": when.isoformat().replace("+00:00", "Z"),
        "direction": direction,
        "session_id": run["run_id"],
        "task_id": run.get("task_id"),
        "trial": run.get("trial"),
        "reward": run.get("reward"),
        "run_outcome": run.get("run_outcome"),
        "family": run.get("family"),
        "message": {"jsonrpc": "2.0", **message},
    }


def _result(call: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": result_text(call)}]}
    if call.get("status") == "ok" and isinstance(call.get("result"), dict):
        result["structuredContent"] = call["result"]
    result["isError"] = call.get("status") == "tool_error"
    return result


def write_run(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The lines of a run's session: the handshake, then each call and its answer."""
    calls = run["calls"]
    opened, _ = call_times(run, calls[0], 0) if calls else call_times(run, {}, 0)
    hello = {"protocolVersion": PROTOCOL, "capabilities": {},
             "clientInfo": {"name": "tracemine-simulate", "version": "1"}}  # fmt: skip
    lines = [
        _line(run, opened, "send", {"id": "init", "method": "initialize", "params": hello}),
        _line(run, opened, "recv", {"id": "init", "result": {
            "protocolVersion": PROTOCOL, "capabilities": {"tools": {}},
            "serverInfo": {"name": "simulated", "version": "1"}}}),
    ]  # fmt: skip
    for position, call in enumerate(calls):
        start, end = call_times(run, call, position)
        params = {"name": call["tool"], "arguments": call.get("arguments") or {}}
        request = {"id": call.get("call_id"), "method": "tools/call", "params": params}
        lines.append(_line(run, start, "send", request))
        if has_result(call):
            answer = {"id": call.get("result_call_id") or call.get("call_id"),
                      "result": _result(call)}  # fmt: skip
            lines.append(_line(run, end, "recv", answer))
    return lines
