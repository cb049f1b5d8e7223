"""The OpenAI chat reader's pairing and status rules, one case each."""

from __future__ import annotations

from typing import Any

import pytest

from tracemine.ingest.readers import READERS
from tracemine.ingest.readers.base import BadRecord, Sink
from tracemine.ingest.readers.openai_chat import OpenAIChatReader


def read(*units: Any) -> Sink:
    reader = OpenAIChatReader("traces/chat.jsonl")
    sink = Sink()
    for line, unit in enumerate(units, 1):
        reader.feed(unit, line, sink)
    reader.finish(sink)
    return sink


def asks(*calls: tuple[str, str, str]) -> dict[str, Any]:
    """An assistant message asking for ``(id, name, arguments)`` calls."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ],
    }


def answers(call_id: str | None, content: Any, **extra: Any) -> dict[str, Any]:
    message = {"role": "tool", "content": content, **extra}
    if call_id is not None:
        message["tool_call_id"] = call_id
    return message


def detected(unit: Any) -> str | None:
    return next((cls.name for cls in READERS.values() if cls.sniff(unit)), None)


def test_sniff_recognises_each_shape_and_nothing_else() -> None:
    conversation = [asks(("c1", "f", "{}")), answers("c1", "x")]
    assert OpenAIChatReader.sniff({"messages": conversation})
    assert OpenAIChatReader.sniff({"task_id": 1, "reward": 1.0, "traj": conversation})
    assert OpenAIChatReader.sniff(conversation)
    assert OpenAIChatReader.sniff(answers("c1", "x"))
    assert OpenAIChatReader.sniff({"messages": [{"role": "function", "name": "f"}]})
    # no call anywhere: nothing tells this format from another
    assert not OpenAIChatReader.sniff({"messages": [{"role": "user", "content": "hi"}]})
    anthropic = {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f"}]}
    assert not OpenAIChatReader.sniff({"messages": [anthropic]})
    assert not OpenAIChatReader.sniff({"type": "function_call", "call_id": "c", "name": "f"})
    assert not OpenAIChatReader.sniff({"tool": "f", "arguments": {}, "run_id": "r"})
    assert not OpenAIChatReader.sniff({"calls": [{"name": "f"}]})
    assert not OpenAIChatReader.sniff({"jsonrpc": "2.0", "role": "tool", "tool_call_id": "c"})
    assert detected({"messages": conversation}) == "openai_chat"


def test_parallel_calls_pair_by_id_with_turn_and_position() -> None:
    sink = read(
        {
            "messages": [
                {"role": "user", "content": "orders?"},
                asks(("a", "get_order", '{"id": 1}'), ("b", "get_order", '{"id": 2}')),
                answers("b", '{"id": 2, "status": "pending"}'),
                answers("a", "[1, 2]"),
                {"role": "assistant", "content": "ok"},
                asks(("c", "cancel", '{"id": 2}')),
                answers("c", "done"),
            ]
        }
    )
    a, b, c = sink.calls
    assert (a["seq"], a["turn"], a["parallel_index"]) == (0, 0, 0)
    assert (b["seq"], b["turn"], b["parallel_index"]) == (1, 0, 1)
    assert (c["seq"], c["turn"], c["parallel_index"]) == (2, 2, 0)
    assert b["result"] == {"id": 2, "status": "pending"}
    assert b["result_text"] == '{"id": 2, "status": "pending"}'
    assert a["result"] == [1, 2] and c["result"] == "done"
    assert all(x["status"] == "ok" and x["id_pairing"] == "exact" for x in sink.calls)
    assert [x["result_call_id"] for x in sink.calls] == ["a", "b", "c"]
    assert b["source_pointer"] == "/messages/1/tool_calls/1"
    assert sink.quarantined == []


def test_arguments_are_kept_raw_and_parse_errors_recorded() -> None:
    (call,) = read([asks(("a", "f", '{"q": "x"')), answers("a", "r")]).calls
    assert call["arguments_raw"] == '{"q": "x"'
    assert call["arguments"] is None
    assert call["arguments_error"].startswith("arguments are not valid JSON")
    assert call["status"] == "ok"  # the call was answered all the same


def test_error_text_is_not_guessed_into_a_status() -> None:
    (call,) = read([asks(("a", "f", "{}")), answers("a", "Error: not found")]).calls
    assert call["status"] == "ok" and call["error_message"] is None


def test_content_parts_keep_raw_and_parse_their_text() -> None:
    parts = [{"type": "text", "text": '{"n": 3}'}]
    (call,) = read([asks(("a", "f", "{}")), answers("a", parts)]).calls
    assert call["result"] == {"n": 3}
    assert call["result_text"] == '{"n": 3}'
    assert call["result_raw"] == '[{"type":"text","text":"{\\"n\\": 3}"}]'


def test_call_without_tool_message_is_missing() -> None:
    (call,) = read([asks(("a", "f", "{}"))]).calls
    assert call["status"] == "missing"
    assert call["result"] is None and call["result_call_id"] is None
    assert call["id_pairing"] == "none"


def test_orphan_tool_message_is_quarantined_with_pointer() -> None:
    sink = read({"messages": [asks(("a", "f", "{}")), answers("a", "1"), answers("zz", "2")]})
    assert len(sink.calls) == 1
    ((line, pointer, reason, excerpt),) = sink.quarantined
    assert (line, pointer) == (1, "/messages/2")
    assert "'zz'" in reason and "no call" in reason
    assert '"zz"' in excerpt


def test_duplicate_ids_are_stored_and_a_second_result_is_quarantined() -> None:
    sink = read(
        {
            "messages": [
                asks(("a", "f", '{"n": 1}')),
                answers("a", "first"),
                asks(("a", "f", '{"n": 2}')),
                answers("a", "second"),
                answers("a", "third"),
            ]
        }
    )
    first, second = sink.calls
    assert first["anomalies"] == [] and first["result"] == "first"
    assert second["anomalies"] == ["duplicate_call_id"] and second["result"] == "second"
    ((_, pointer, reason, _),) = sink.quarantined
    assert pointer == "/messages/4" and reason.startswith("second tool result for call id 'a'")


def test_call_without_name_is_quarantined_and_so_is_its_result() -> None:
    bad = {"role": "assistant", "tool_calls": [{"id": "a", "function": {"arguments": "{}"}}]}
    sink = read([bad, answers("a", "x")])
    assert sink.calls == []
    reasons = [q[2] for q in sink.quarantined]
    assert reasons == [
        "tool call without a function name",
        "tool result for call id 'a', whose call was quarantined",
    ]


def test_tool_message_without_id_pairs_with_the_oldest_open_call() -> None:
    sink = read([asks(("a", "f", "{}"), ("b", "g", "{}")), answers(None, "1")])
    first, second = sink.calls
    assert first["id_pairing"] == "inferred" and first["result"] == 1
    assert first["result_call_id"] is None
    assert second["status"] == "missing"


def test_legacy_function_call_pairs_by_order() -> None:
    sink = read(
        [
            {"role": "assistant", "function_call": {"name": "w", "arguments": '{"c": "B"}'}},
            {"role": "function", "name": "w", "content": "22"},
            {"role": "assistant", "function_call": {"name": "f", "arguments": "{}"}},
            {"role": "function", "name": "other", "content": "x"},
            {"role": "function", "name": "f", "content": "extra"},
        ]
    )
    first, second = sink.calls
    assert first["id_pairing"] == "inferred" and first["result"] == 22 and first["turn"] == 0
    assert second["anomalies"] == ["result_name_mismatch"] and second["turn"] == 1
    ((_, pointer, reason, _),) = sink.quarantined
    assert pointer == "/4" and "no call is waiting" in reason


def test_result_file_record_gives_run_fields() -> None:
    sink = read({"task_id": 7, "trial": 1, "reward": 0.0, "traj": [asks(("a", "f", "{}"))]})
    (run,) = sink.runs
    assert (run["run_id"], run["task_id"], run["trial"], run["reward"]) == (
        "chat.jsonl:1",
        "7",
        1,
        0.0,
    )
    assert sink.calls[0]["task_id"] == "7"
    assert sink.calls[0]["source_pointer"] == "/traj/0/tool_calls/0"


def test_one_message_per_unit_pairs_across_units() -> None:
    sink = read(
        {"conversation_id": "c1", **asks(("a", "f", "{}"))},
        {"conversation_id": "c2", **asks(("a", "g", "{}"))},
        {"conversation_id": "c1", **answers("a", "1")},
    )
    by_run = {c["run_id"]: c for c in sink.calls}
    assert by_run["c1"]["status"] == "ok" and by_run["c1"]["source_line"] == 1
    assert by_run["c2"]["status"] == "missing"
    assert sorted(r["run_id"] for r in sink.runs) == ["c1", "c2"]


def test_unit_of_another_shape_is_rejected_whole() -> None:
    with pytest.raises(BadRecord):
        read({"messages": "not a list"})
