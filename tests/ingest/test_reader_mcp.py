"""The MCP reader's pairing rules, one case each."""

from __future__ import annotations

from typing import Any

import pytest

from tracemine.ingest.readers.base import BadRecord, Sink
from tracemine.ingest.readers.mcp import McpReader


def read(*units: Any) -> Sink:
    reader = McpReader("traces/session.jsonl")
    sink = Sink()
    for line, unit in enumerate(units, 1):
        reader.feed(unit, line, sink)
    reader.finish(sink)
    return sink


def call(request_id: Any, tool: str = "get_order", **params: Any) -> dict[str, Any]:
    body = {"name": tool, "arguments": {"order_id": "#W1"}, **params}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": body}


def answer(request_id: Any, **result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def by_tool(sink: Sink) -> dict[str, dict[str, Any]]:
    return {c["tool"]: c for c in sink.calls}


def test_sniff_is_strict() -> None:
    assert McpReader.sniff(call(1))
    assert McpReader.sniff({"timestamp": 1, "direction": "send", "message": call(1)})
    assert McpReader.sniff([call(1), answer(1)])
    assert not McpReader.sniff({"jsonrpc": "2.0"})
    assert not McpReader.sniff({"messages": [{"role": "user", "content": "hi"}]})
    assert not McpReader.sniff({"tool": "get_order", "arguments": {}, "result": {}})


def test_structured_content_is_preferred_and_text_kept() -> None:
    sink = read(call(1), answer(1, content=text('{"a": 1}'), structuredContent={"a": 2}))
    (got,) = sink.calls
    assert got["result"] == {"a": 2}
    assert got["result_text"] == '{"a": 1}'
    assert got["result_raw"] == '[{"type":"text","text":"{\\"a\\": 1}"}]'
    assert (got["status"], got["id_pairing"], got["result_call_id"]) == ("ok", "exact", "1")


def test_text_json_is_parsed_and_other_blocks_are_the_result() -> None:
    image = [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]
    sink = read(
        call(1, "a"), answer(1, content=text("[1, 2]")), call(2, "b"), answer(2, content=image)
    )
    assert by_tool(sink)["a"]["result"] == [1, 2]
    assert by_tool(sink)["b"]["result"] == image
    assert by_tool(sink)["b"]["result_text"] is None


def test_is_error_is_a_tool_error_and_error_object_a_protocol_error() -> None:
    sink = read(
        call(1, "a"),
        answer(1, content=text("bad order id"), isError=True),
        call(2, "b"),
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Unknown tool: b"}},
    )
    a, b = by_tool(sink)["a"], by_tool(sink)["b"]
    assert (a["status"], a["error_message"], a["result"]) == (
        "tool_error",
        "bad order id",
        "bad order id",
    )
    assert (b["status"], b["error_type"], b["error_message"]) == (
        "protocol_error",
        "-32602",
        "Unknown tool: b",
    )
    assert b["result"] is None


def test_numeric_and_string_ids_pair() -> None:
    sink = read(call(7), answer("7", content=text("ok")))
    assert sink.calls[0]["status"] == "ok"
    assert not sink.quarantined


def test_unanswered_call_is_missing_and_orphan_response_is_quarantined() -> None:
    sink = read(call(1), answer(99, content=text("stray")))
    (got,) = sink.calls
    assert (got["status"], got["result_call_id"], got["id_pairing"]) == ("missing", None, "none")
    ((line, _, reason, _),) = sink.quarantined
    assert line == 2 and "99" in reason


def test_cancelled_request_and_late_response() -> None:
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": "3", "reason": "user stop"},
    }
    sink = read(call(3), cancel)
    assert (sink.calls[0]["status"], sink.calls[0]["error_message"]) == ("cancelled", "user stop")
    late = read(call(3), cancel, answer(3, content=text('{"rows": 0}')))
    (got,) = late.calls
    assert got["status"] == "cancelled"
    assert got["result"] == {"rows": 0}
    assert got["anomalies"] == ["result_after_cancel"]
    assert not late.quarantined


def test_duplicate_id_in_flight_is_flagged_and_paired_in_order() -> None:
    sink = read(
        call(8, "a"), call(8, "b"), answer(8, content=text("1")), answer(8, content=text("2"))
    )
    a, b = by_tool(sink)["a"], by_tool(sink)["b"]
    assert (a["anomalies"], a["result"]) == ([], 1)
    assert (b["anomalies"], b["result"]) == (["duplicate_call_id"], 2)


def test_reused_id_after_answer_is_not_a_duplicate() -> None:
    sink = read(
        call(1, "a"), answer(1, content=text("1")), call(1, "b"), answer(1, content=text("2"))
    )
    assert all(c["anomalies"] == [] for c in sink.calls)


def test_directions_keep_server_requests_apart() -> None:
    def wrap(direction: str, message: dict[str, Any]) -> dict[str, Any]:
        return {"direction": direction, "session_id": "s1", "message": message}

    sampling = {"jsonrpc": "2.0", "id": 2, "method": "sampling/createMessage", "params": {}}
    sink = read(
        wrap("send", call(2)),
        wrap("recv", sampling),
        wrap("send", answer(2, role="assistant", content={"type": "text", "text": "x"})),
        wrap("recv", answer(2, content=text('{"ok": true}'))),
    )
    (got,) = sink.calls
    assert got["result"] == {"ok": True}
    assert got["run_id"] == "s1" and got["session_id"] == "s1"
    assert not sink.quarantined


def test_new_initialize_starts_the_files_next_run() -> None:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "x"}}
    sink = read(init, call(1, "a"), answer(1, content=text("1")), init, call(1, "b"))
    assert by_tool(sink)["a"]["run_id"] == "session.jsonl"
    assert by_tool(sink)["b"]["run_id"] == "session.jsonl#2"
    assert by_tool(sink)["b"]["seq"] == 0
    assert by_tool(sink)["b"]["status"] == "missing"
    assert by_tool(sink)["b"]["anomalies"] == []


def test_task_augmented_call_takes_the_tasks_result_answer() -> None:
    created = answer(5, task={"taskId": "t-1", "status": "working"})
    fetch = {"jsonrpc": "2.0", "id": 6, "method": "tasks/result", "params": {"taskId": "t-1"}}
    sink = read(call(5, task={"ttl": 1000}), created, fetch, answer(6, structuredContent={"n": 3}))
    (got,) = sink.calls
    assert (got["status"], got["result"], got["result_call_id"]) == ("ok", {"n": 3}, "5")
    pending = read(call(5, task={"ttl": 1000}), created)
    assert pending.calls[0]["status"] == "missing"


def test_inspector_entry_carries_its_response_and_duration() -> None:
    entry = {
        "timestamp": "2025-07-02T08:30:02.000Z",
        "direction": "request",
        "message": call(1),
        "response": answer(1, content=text("{}")),
        "duration": 250,
    }
    (got,) = read(entry).calls
    assert got["duration_ms"] == 250.0
    assert got["source_pointer"] == "/message"


def test_a_wrapper_says_the_runs_trial_and_outcome() -> None:
    said = {"session_id": "s1", "task_id": "t-7", "trial": 2, "reward": 0.5,
            "run_outcome": "success", "family": "refunds"}  # fmt: skip
    sink = read({**said, "direction": "send", "message": call(1)},
                {**said, "trial": "not a number", "direction": "recv",
                 "message": answer(1, content=text("{}"))})  # fmt: skip
    (got,) = sink.calls
    runs = [r for r in sink.runs if r["run_id"] == got["run_id"]]
    assert runs and runs[0]["task_id"] == "t-7"
    assert {k: runs[0][k] for k in ("trial", "reward", "run_outcome", "family")} == {
        "trial": 2,
        "reward": 0.5,
        "run_outcome": "success",
        "family": "refunds",
    }
    plain = read({"session_id": "s2", "direction": "send", "message": call(1)})
    assert all(r["trial"] is None and r["run_outcome"] is None for r in plain.runs)


def test_bad_units() -> None:
    with pytest.raises(BadRecord):
        read("not a message")
    sink = read([call(1), 42])
    assert sink.quarantined[0][1] == "/1"
    nameless = read(call(1, ""), {"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "x"}})
    assert nameless.calls == []
    assert [q[2] for q in nameless.quarantined] == ["tools/call request without a tool name"]
