"""The Anthropic Messages reader's pairing and status rules, one case each."""

from __future__ import annotations

from typing import Any

import pytest

from tracemine.ingest.readers import READERS
from tracemine.ingest.readers.anthropic import AnthropicReader
from tracemine.ingest.readers.base import BadRecord, Sink


def read(*units: Any) -> Sink:
    reader = AnthropicReader("traces/claude.jsonl")
    sink = Sink()
    for line, unit in enumerate(units, 1):
        reader.feed(unit, line, sink)
    reader.finish(sink)
    return sink


def use(call_id: str, name: str = "get_order", **input_: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": input_}


def result(call_id: str, content: Any = "ok", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, **extra}


def assistant(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), **extra}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def detected(unit: Any) -> str | None:
    return next((cls.name for cls in READERS.values() if cls.sniff(unit)), None)


def test_sniff_recognises_each_shape_and_nothing_else() -> None:
    conversation = [user(), assistant(use("t1")), user(result("t1"))]
    assert AnthropicReader.sniff({"messages": conversation})
    assert AnthropicReader.sniff(conversation)
    assert AnthropicReader.sniff({"type": "message", **assistant(use("t1"))})
    assert AnthropicReader.sniff({"type": "user", "message": user(result("t1"))})
    assert not AnthropicReader.sniff({"messages": [{"role": "user", "content": "hi"}]})
    chat = {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f"}}]}
    assert not AnthropicReader.sniff({"messages": [chat]})
    assert not AnthropicReader.sniff({"jsonrpc": "2.0", "role": "user", "content": [result("t")]})
    assert detected({"messages": conversation}) == "anthropic"


def test_parallel_tool_use_pairs_by_id() -> None:
    sink = read(
        {
            "messages": [
                user(),
                assistant({"type": "text", "text": "checking"}, use("a", n=1), use("b", n=2)),
                user(result("b", '{"n": 2}'), result("a", [{"type": "text", "text": "[1]"}])),
                assistant(use("c", "cancel")),
                user(result("c")),
            ]
        }
    )
    a, b, c = sink.calls
    assert (a["turn"], a["parallel_index"], b["parallel_index"], c["turn"]) == (0, 0, 1, 1)
    assert a["arguments"] == {"n": 1} and a["arguments_raw"] == '{"n":1}'
    assert a["result"] == [1] and a["result_raw"] == '[{"type":"text","text":"[1]"}]'
    assert b["result"] == {"n": 2} and b["result_text"] == '{"n": 2}'
    assert a["source_pointer"] == "/messages/1/content/1"
    assert all(x["status"] == "ok" and x["id_pairing"] == "exact" for x in sink.calls)


def test_is_error_makes_a_tool_error_with_its_text() -> None:
    blocks = [{"type": "text", "text": "order not found"}]
    sink = read([assistant(use("a"), use("b")), user(result("a", blocks, is_error=True),
                                                      result("b", "gone", is_error=True))])  # fmt: skip
    a, b = sink.calls
    assert a["status"] == "tool_error" and a["error_message"] == "order not found"
    assert b["status"] == "tool_error" and b["error_message"] == "gone"


def test_image_only_result_keeps_the_blocks() -> None:
    image = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}
    ]
    (call,) = read([assistant(use("a")), user(result("a", image))]).calls
    assert call["result"] == image and call["result_text"] is None
    assert call["status"] == "ok"


def test_server_tool_error_object_is_a_tool_error() -> None:
    error = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
    server_call = {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}
    server_result = {"type": "web_search_tool_result", "tool_use_id": "s1", "content": error}
    (call,) = read([assistant(server_call, server_result)]).calls
    assert call["status"] == "tool_error" and call["error_type"] == "max_uses_exceeded"


def test_missing_orphan_duplicate_and_second_result() -> None:
    sink = read(
        {
            "messages": [
                assistant(use("a"), use("b")),
                user(result("a"), result("zz")),
                assistant(use("a")),
                user(result("a", "again"), result("a", "third")),
            ]
        }
    )
    first, missing, duplicate = sink.calls
    assert first["status"] == "ok" and first["anomalies"] == []
    assert missing["status"] == "missing" and missing["result"] is None
    assert duplicate["anomalies"] == ["duplicate_call_id"] and duplicate["result"] == "again"
    assert [(q[1], q[2].split(" ")[0]) for q in sink.quarantined] == [
        ("/messages/1/content/1", "tool_result"),
        ("/messages/3/content/1", "second"),
    ]


def test_transcript_lines_split_one_message_and_carry_times() -> None:
    sink = read(
        {"type": "assistant", "sessionId": "s", "timestamp": "2025-01-01T00:00:00Z",
         "message": assistant(use("a"), id="msg_1")},
        {"type": "assistant", "sessionId": "s", "timestamp": "2025-01-01T00:00:01Z",
         "message": assistant(use("b"), id="msg_1")},
        {"type": "user", "sessionId": "s", "timestamp": "2025-01-01T00:00:02Z",
         "message": user(result("a"))},
    )  # fmt: skip
    a, b = sorted(sink.calls, key=lambda c: c["seq"])
    assert (a["turn"], b["turn"], a["parallel_index"], b["parallel_index"]) == (0, 0, 0, 1)
    assert a["duration_ms"] == 2000.0 and a["source_pointer"] == "/message/content/0"
    assert b["status"] == "missing"
    assert sink.runs[0]["run_id"] == "s" and sink.runs[0]["session_id"] == "s"


def test_unit_that_is_no_message_is_rejected() -> None:
    with pytest.raises(BadRecord):
        read({"type": "summary", "summary": "x"})
