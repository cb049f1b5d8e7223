"""The OpenAI Responses reader's pairing and status rules, one case each."""

from __future__ import annotations

from typing import Any

import pytest

from tracemine.ingest.readers import READERS
from tracemine.ingest.readers.base import BadRecord, Sink
from tracemine.ingest.readers.openai_responses import OpenAIResponsesReader


def read(*units: Any) -> Sink:
    reader = OpenAIResponsesReader("traces/responses.jsonl")
    sink = Sink()
    for line, unit in enumerate(units, 1):
        reader.feed(unit, line, sink)
    reader.finish(sink)
    return sink


def call(call_id: str, name: str = "get_invoice", arguments: str = "{}", **extra: Any) -> dict:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments,
            **extra}  # fmt: skip


def output(call_id: str, value: Any = '{"ok": true}', **extra: Any) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": value, **extra}


def response(response_id: str, *items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": response_id, "object": "response", "output": list(items), **extra}


def detected(unit: Any) -> str | None:
    return next((cls.name for cls in READERS.values() if cls.sniff(unit)), None)


def test_sniff_recognises_each_shape_and_nothing_else() -> None:
    assert OpenAIResponsesReader.sniff(response("r", {"type": "message", "role": "assistant"}))
    assert OpenAIResponsesReader.sniff([call("c"), output("c")])
    assert OpenAIResponsesReader.sniff({"input": [{"role": "user"}, output("c")]})
    assert OpenAIResponsesReader.sniff(call("c"))
    assert not OpenAIResponsesReader.sniff({"input": [{"role": "user", "content": "hi"}]})
    assert not OpenAIResponsesReader.sniff({"messages": [{"role": "tool", "tool_call_id": "c"}]})
    assert not OpenAIResponsesReader.sniff({"tool": "f", "arguments": {}, "run_id": "r"})
    # a function_call line also looks like a flat call line: this reader must win
    assert detected(call("c")) == "openai_responses"
    assert detected(response("r")) == "openai_responses"


def test_outputs_in_a_later_request_pair_through_previous_response_id() -> None:
    sink = read(
        response("r1", {"type": "reasoning"}, call("a"), call("b", "get_customer"),
                 metadata={"task_id": "t1"}),
        {"previous_response_id": "r1", "input": [output("b", "[1]"), output("a")]},
        response("r2", call("c"), previous_response_id="r1"),
    )  # fmt: skip
    a, b, c = sorted(sink.calls, key=lambda r: r["seq"])
    assert {x["run_id"] for x in sink.calls} == {"r1"}
    assert (a["turn"], a["parallel_index"], b["parallel_index"], c["turn"]) == (0, 0, 1, 1)
    assert a["status"] == "ok" and a["result"] == {"ok": True}
    assert b["result"] == [1] and b["result_call_id"] == "b" and b["id_pairing"] == "exact"
    assert c["status"] == "missing" and c["result"] is None
    assert {r["task_id"] for r in sink.runs} == {"t1", None}


def test_incomplete_call_without_output_is_cancelled() -> None:
    sink = read(
        response("r1", call("a", arguments='{"to": "x'), call("b", status="incomplete"),
                 status="incomplete", incomplete_details={"reason": "max_output_tokens"}),
        {"previous_response_id": "r1", "input": [output("a")]},
    )  # fmt: skip
    a, b = sorted(sink.calls, key=lambda r: r["seq"])
    assert a["status"] == "ok" and a["arguments"] is None
    assert a["arguments_raw"] == '{"to": "x' and a["arguments_error"]
    assert b["status"] == "cancelled" and b["error_type"] == "incomplete"
    assert "max_output_tokens" in b["error_message"]


def test_incomplete_call_that_got_an_output_keeps_it() -> None:
    (record,) = read([call("a", status="incomplete"), output("a", "done")]).calls
    assert record["status"] == "ok" and record["result"] == "done"
    assert record["error_type"] is None and record["anomalies"] == ["call_incomplete"]


def test_output_parts_keep_raw_and_parse_their_text() -> None:
    parts = [{"type": "input_text", "text": '{"n": 1}'}, {"type": "input_image", "image_url": "u"}]
    (record,) = read([call("a"), output("a", parts)]).calls
    assert record["result"] == {"n": 1} and record["result_text"] == '{"n": 1}'
    assert '"input_image"' in record["result_raw"]


def test_orphan_second_output_and_duplicate_id() -> None:
    sink = read(
        {
            "input": [
                call("a"),
                output("a", "1"),
                output("zz"),
                {"role": "user", "content": "again"},
                call("a"),
                output("a", "2"),
                output("a", "3"),
            ]
        }
    )
    first, second = sink.calls
    assert second["anomalies"] == ["duplicate_call_id"] and second["result"] == 2
    assert (first["turn"], second["turn"]) == (0, 1)
    reasons = {q[1]: q[2] for q in sink.quarantined}
    assert "no call in this run used" in reasons["/input/2"]
    assert reasons["/input/6"].startswith("second function_call_output for call id 'a'")


def test_single_items_group_by_conversation_and_close_at_the_end() -> None:
    sink = read(
        {"conversation_id": "c1", **call("a")},
        {"conversation_id": "c2", **call("a", "other")},
        {"conversation_id": "c1", **output("a", "7")},
    )
    by_run = {c["run_id"]: c for c in sink.calls}
    assert by_run["c1"]["result"] == 7 and by_run["c1"]["source_pointer"] is None
    assert by_run["c2"]["status"] == "missing"


def test_unit_of_another_shape_is_rejected_whole() -> None:
    with pytest.raises(BadRecord):
        read({"hello": "world"})
    with pytest.raises(BadRecord):
        read(42)
