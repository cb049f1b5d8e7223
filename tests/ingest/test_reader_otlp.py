"""The OTLP reader: attribute decoding, tool span recognition, run grouping, status."""

from __future__ import annotations

import json
from typing import Any

from tracemine.ingest.readers.base import Sink
from tracemine.ingest.readers.otlp import OtlpReader, _attributes

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def span(span_id: str, parent: str = "p", trace: str = TRACE, **attrs: Any) -> dict[str, Any]:
    status = attrs.pop("status", {})
    return {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": attrs.pop("name", "span"),
        "startTimeUnixNano": attrs.pop("start", "1748772000000000000"),
        "endTimeUnixNano": attrs.pop("end", "1748772000250000000"),
        "attributes": [attr(k.replace("__", "."), v) for k, v in attrs.items()],
        "status": status,
    }


def export(*spans: dict[str, Any], **resource: Any) -> dict[str, Any]:
    res = {"attributes": [attr(k.replace("__", "."), v) for k, v in resource.items()]}
    return {"resourceSpans": [{"resource": res, "scopeSpans": [{"spans": list(spans)}]}]}


def tool(span_id: str, name: str = "get_order", **attrs: Any) -> dict[str, Any]:
    return span(span_id, gen_ai__operation__name="execute_tool", gen_ai__tool__name=name, **attrs)


def read(*units: Any) -> Sink:
    reader = OtlpReader("traces/spans.jsonl")
    sink = Sink()
    for line, unit in enumerate(units, 1):
        reader.feed(unit, line, sink)
    reader.finish(sink)
    return sink


def test_sniff() -> None:
    assert OtlpReader.sniff(export())
    assert OtlpReader.sniff({"resource_spans": []})
    assert not OtlpReader.sniff({"jsonrpc": "2.0", "id": 1, "method": "tools/call"})
    assert not OtlpReader.sniff({"resourceLogs": []})


def test_attribute_values_are_decoded() -> None:
    raw = [
        {"key": "i", "value": {"intValue": "42"}},
        {"key": "d", "value": {"doubleValue": 0.5}},
        {"key": "b", "value": {"bool_value": True}},
        {"key": "a", "value": {"arrayValue": {"values": [{"stringValue": "x"}]}}},
        {"key": "k", "value": {"kvlistValue": {"values": [attr("n", 1)]}}},
        {"key": "e", "value": {}},
    ]
    assert _attributes(raw) == {"i": 42, "d": 0.5, "b": True, "a": ["x"], "k": {"n": 1}, "e": None}


def test_genai_tool_span() -> None:
    sink = read(
        export(
            tool(
                "s1",
                gen_ai__tool__call__id="call_1",
                gen_ai__tool__call__arguments='{"order_id": "#W1"}',
                gen_ai__tool__call__result='{"total": 3}',
            )
        )
    )
    (got,) = sink.calls
    assert (got["tool"], got["call_id"], got["result_call_id"]) == ("get_order", "call_1", "call_1")
    assert (got["arguments"], got["result"], got["status"]) == (
        {"order_id": "#W1"},
        {"total": 3},
        "ok",
    )
    assert got["duration_ms"] == 250.0
    assert got["source_pointer"] == "/resourceSpans/0/scopeSpans/0/spans/0"
    assert "_conversation" not in got


def test_openinference_reads_input_not_the_schema() -> None:
    oi = span(
        "s1",
        openinference__span__kind="TOOL",
        tool__name="search",
        tool__parameters='{"type": "object", "properties": {"q": {"type": "string"}}}',
        input__value='{"q": "reset"}',
        output__value="3 hits",
    )
    (got,) = read(export(oi)).calls
    assert got["arguments"] == {"q": "reset"}
    assert got["result"] == "3 hits"


def test_other_spans_are_skipped_and_nameless_tools_quarantined() -> None:
    chat = span("c", gen_ai__operation__name="chat")
    oi_nameless = span("t", openinference__span__kind="TOOL", input__value="{}")
    sink = read(export(chat, oi_nameless))
    assert sink.calls == []
    ((line, pointer, reason, _),) = sink.quarantined
    assert (line, pointer) == (1, "/resourceSpans/0/scopeSpans/0/spans/1")
    assert "without a tool name" in reason


def test_conversation_id_from_a_later_agent_span_names_the_run() -> None:
    agent = span(
        "root",
        parent="",
        gen_ai__operation__name="invoke_agent",
        gen_ai__conversation__id="conv_1",
        task_id="t-9",
    )
    sink = read(export(tool("s1")), export(agent, service__name="agent"))
    assert sink.calls[0]["run_id"] == "conv_1"
    (run,) = sink.runs
    assert run["task_id"] == "t-9"
    assert run["metadata"]["run_id_source"] == "conversation_id"
    assert run["metadata"]["service.name"] == "agent"
    assert run["metadata"]["trace_ids"] == [TRACE]


def test_run_falls_back_to_session_then_trace() -> None:
    other = "0af7651916cd43dd8448eb211c80319c"
    session_tool = tool("s1", session__id="sess-1")
    sink = read(export(session_tool), export({**tool("s2"), "traceId": other}))
    runs = {r["run_id"]: r["metadata"]["run_id_source"] for r in sink.runs}
    assert runs == {"sess-1": "session_id", other: "trace_id"}


def test_error_status_mapping() -> None:
    def status_of(**attrs: Any) -> tuple[str, str | None, str | None]:
        (got,) = read(export(tool("s", **attrs))).calls
        return got["status"], got["error_type"], got["error_message"]

    error = {"code": 2, "message": "boom"}
    assert status_of(status=error) == ("tool_error", None, "boom")
    assert status_of(status={"code": 1}) == ("ok", None, None)
    assert status_of(error__type="ValueError") == ("tool_error", "ValueError", None)
    assert status_of(status=error, error__type="TimeoutError")[0] == "timeout"
    assert status_of(status=error, error__type="asyncio.CancelledError")[0] == "cancelled"
    rpc = status_of(status=error, error__type="-32602", rpc__response__status_code="-32602")
    assert rpc == ("protocol_error", "-32602", "boom")
    assert status_of(status=error, rpc__response__status_code="OK")[0] == "tool_error"


def test_legacy_pydantic_names() -> None:
    legacy = span(
        "s1",
        name="running tool",
        gen_ai__tool__name="get_forecast",
        tool_arguments='{"city": "Lyon"}',
        tool_response="sunny",
    )
    (got,) = read(export(legacy)).calls
    assert (got["tool"], got["arguments"], got["result"]) == (
        "get_forecast",
        {"city": "Lyon"},
        "sunny",
    )


def test_tool_name_from_span_name() -> None:
    named = span("s1", name="execute_tool lookup", gen_ai__operation__name="execute_tool")
    (got,) = read(export(named)).calls
    # no arguments or result on the span: named from the span, and marked as not captured
    assert (got["tool"], got["anomalies"]) == (
        "lookup",
        ["tool_name_from_span", "content_not_captured"],
    )


def chat(span_id: str, history: list[Any], answer: list[Any], start: int, **attrs: Any) -> dict:
    """A chat span as GenAI instrumentations of model calls write it: messages as JSON."""
    return span(span_id, gen_ai__operation__name="chat", name="chat gpt-4o-mini",
                gen_ai__input__messages=json.dumps(history),
                gen_ai__output__messages=json.dumps(answer),
                start=str(1748772000000000000 + start * 10**9),
                end=str(1748772000500000000 + start * 10**9), **attrs)  # fmt: skip


def asks(*calls: tuple[str | None, str, Any]) -> dict[str, Any]:
    parts = [{"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in calls]
    return {"role": "assistant", "parts": parts, "finish_reason": "tool_calls"}


def answers(call_id: str | None, response: Any, key: str = "response") -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, key: response}]}


USER = {"role": "user", "parts": [{"type": "text", "content": "where is my order?"}]}


def test_chat_span_messages_carry_each_call_once_paired_by_id() -> None:
    first = asks(("c1", "get_order", {"order_id": "#W1"}))
    second = asks(("c2", "search", '{"q": "x"}'), ("c3", "get_order", {"order_id": "#W2"}))
    done = {"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}
    sink = read(
        # the later span first: the history it repeats is read where it was first seen
        export(chat("s2", [USER, first, answers("c1", '{"total": 3}')], [second], 2)),
        export(chat("s1", [USER], [first], 1)),
        export(
            chat(
                "s3",
                [
                    USER,
                    first,
                    answers("c1", '{"total": 3}'),
                    second,
                    answers("c2", [{"type": "text", "content": "[1, 2]"}], key="result"),
                    answers("c3", {"status": "pending"}),
                ],
                [done],
                3,
            )
        ),
    )
    calls = sorted(sink.calls, key=lambda c: (c["started_at"], c["parallel_index"]))
    assert [(c["call_id"], c["tool"], c["status"], c["id_pairing"]) for c in calls] == [
        ("c1", "get_order", "ok", "exact"), ("c2", "search", "ok", "exact"),
        ("c3", "get_order", "ok", "exact"),
    ]  # fmt: skip
    assert [c["arguments"] for c in calls] == [{"order_id": "#W1"}, {"q": "x"}, {"order_id": "#W2"}]
    assert [c["result"] for c in calls] == [{"total": 3}, [1, 2], {"status": "pending"}]
    assert calls[0]["source_line"] == 2  # the first span's answer, not the history after it
    assert calls[0]["source_pointer"].endswith("/gen_ai.output.messages/0/parts/0")
    assert calls[0]["started_at"] < calls[0]["ended_at"] <= calls[1]["started_at"]
    assert {c["run_id"] for c in calls} == {TRACE} and not sink.quarantined


def test_an_execute_tool_span_is_kept_over_the_chat_view_of_its_call() -> None:
    ask = asks(("c1", "get_order", {"order_id": "#W1"}), (None, "ping", {}))
    sink = read(
        export(
            chat("s1", [USER], [ask], 1),
            tool("t1", gen_ai__tool__call__id="c1", gen_ai__tool__call__result='{"total": 3}'),
            chat(
                "s2",
                [USER, ask, answers("c1", "{}"), answers(None, "pong"), answers("c9", "stale")],
                [],
                2,
            ),
        )
    )
    assert [(c["call_id"], c["tool"], c["source_pointer"][-7:]) for c in sink.calls] == [
        ("c1", "get_order", "spans/1"), (None, "ping", "parts/1")
    ]  # fmt: skip
    assert sink.calls[1]["result"] == "pong" and sink.calls[1]["id_pairing"] == "inferred"
    (orphan,) = sink.quarantined
    assert "'c9', which no tool call of this run asked" in orphan[2]


def test_a_call_never_answered_is_missing_and_bad_message_json_is_quarantined() -> None:
    broken = span("s0", gen_ai__operation__name="chat", gen_ai__input__messages='[{"tool_call"')
    sink = read(export(broken, chat("s1", [USER], [asks(("c1", "cancel", {}))], 1)))
    ((call,), (bad,)) = sink.calls, sink.quarantined
    assert (call["tool"], call["status"], call["result"]) == ("cancel", "missing", None)
    assert bad[1].endswith("/spans/0/gen_ai.input.messages") and "not JSON" in bad[2]
