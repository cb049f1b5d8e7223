"""The span processor on spans the real SDK, opentelemetry-util-genai and OpenInference
make: each tool span gets a ``tracemine.receipt`` child saying what ``Monitor.check`` says."""

from __future__ import annotations

import json
from typing import Any

import pytest
from integration_calls import ARGS, BAD, GOOD
from openinference.instrumentation import OITracer, TraceConfig
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode
from opentelemetry.util.genai.handler import TelemetryHandler

from tracemine.integrations.otel import RECEIPT_SPAN, MonitorSpanProcessor, receipt_attributes
from tracemine.monitor import Monitor

CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def pipeline(monitor: Monitor, **options: Any) -> tuple[TracerProvider, InMemorySpanExporter,
                                                          MonitorSpanProcessor]:  # fmt: skip
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    processor = MonitorSpanProcessor(monitor, tracer_provider=provider, **options)
    provider.add_span_processor(processor)
    return provider, exporter, processor


def receipts(exporter: InMemorySpanExporter) -> list[tuple[ReadableSpan, ReadableSpan]]:
    """(tool span, its receipt span) pairs, matched by the receipt's parent."""
    spans = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    return [(by_id[s.parent.span_id], s) for s in spans if s.name == RECEIPT_SPAN and s.parent]


def genai_call(provider: TracerProvider, arguments: Any, result: Any) -> None:
    with TelemetryHandler(tracer_provider=provider).tool("get_order") as invocation:
        invocation.tool_call_id = "call_1"
        invocation.arguments = arguments
        invocation.tool_result = result


@pytest.mark.parametrize("result", [BAD, GOOD])
def test_a_genai_tool_span_gets_the_verdict_monitor_check_gives(
    monitor: Monitor, result: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE, "SPAN_ONLY")
    provider, exporter, processor = pipeline(monitor)
    genai_call(provider, ARGS, result)
    ((tool_span, receipt),) = receipts(exporter)
    assert tool_span.attributes["gen_ai.operation.name"] == "execute_tool"
    assert receipt.context.trace_id == tool_span.context.trace_id
    expected = monitor.check("get_order", ARGS, json.dumps(result), call_id="call_1")
    assert dict(receipt.attributes) == {"tracemine.tool": "get_order",
                                        **receipt_attributes(expected)}  # fmt: skip
    assert receipt.attributes["tracemine.ok"] is (result is GOOD)
    assert processor.counts == {"tool_spans": 1, "evaluated": 1, "not_evaluated": 0,
                                "no_contracts": 0, "violated": int(result is BAD),
                                "errors": 0}  # fmt: skip


def test_the_receipt_names_the_violated_contracts_and_the_note(monitor: Monitor,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv(CAPTURE, "SPAN_ONLY")
    provider, exporter, _ = pipeline(monitor)
    genai_call(provider, ARGS, BAD)
    ((_, receipt),) = receipts(exporter)
    attributes = receipt.attributes
    assert attributes["tracemine.violations"] == 2
    assert attributes["tracemine.kinds"] == ("non_empty", "equals")
    assert attributes["tracemine.paths"] == ("result.items", "result.order_id")
    assert len(attributes["tracemine.contract_ids"]) == 2
    assert attributes["tracemine.note"].startswith("[tracemine] This get_order result")


@pytest.mark.parametrize("result", [BAD, GOOD])
def test_an_openinference_tool_span_gets_the_same_verdict(monitor: Monitor,
                                                          result: dict[str, Any]) -> None:  # fmt: skip
    provider, exporter, _ = pipeline(monitor)
    tracer = OITracer(provider.get_tracer(__name__), config=TraceConfig())

    @tracer.tool
    def get_order(order_id: str) -> dict[str, Any]:
        return result

    get_order(ARGS["order_id"])
    ((tool_span, receipt),) = receipts(exporter)
    assert tool_span.attributes["openinference.span.kind"] == "TOOL"
    expected = monitor.check("get_order", ARGS, result)
    assert dict(receipt.attributes) == {"tracemine.tool": "get_order",
                                        **receipt_attributes(expected)}  # fmt: skip


def test_a_span_without_captured_content_is_not_evaluated_not_passed(
    monitor: Monitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CAPTURE, raising=False)  # the util's default: no content on spans
    provider, exporter, processor = pipeline(monitor)
    genai_call(provider, ARGS, BAD)
    ((tool_span, receipt),) = receipts(exporter)
    assert "gen_ai.tool.call.result" not in tool_span.attributes
    assert receipt.attributes["tracemine.evaluated"] is False
    assert "tracemine.ok" not in receipt.attributes
    assert receipt.attributes["tracemine.reason"] == "arguments and result not captured on the span"
    assert processor.counts["not_evaluated"] == 1 and processor.counts["evaluated"] == 0


def test_openinference_hidden_outputs_are_not_evaluated(monitor: Monitor) -> None:
    provider, exporter, processor = pipeline(monitor)
    tracer = OITracer(provider.get_tracer(__name__), config=TraceConfig(hide_outputs=True))

    @tracer.tool
    def get_order(order_id: str) -> dict[str, Any]:
        return BAD

    get_order(ARGS["order_id"])
    ((_, receipt),) = receipts(exporter)
    assert receipt.attributes["tracemine.reason"] == "result not captured on the span"
    assert processor.counts["not_evaluated"] == 1


def test_a_failed_tool_span_is_checked_as_a_tool_error(monitor: Monitor) -> None:
    provider, exporter, _ = pipeline(monitor)
    with provider.get_tracer(__name__).start_as_current_span("execute_tool get_order") as span:
        span.set_attributes({"gen_ai.operation.name": "execute_tool",
                             "gen_ai.tool.name": "get_order",
                             "gen_ai.tool.call.arguments": json.dumps(ARGS),
                             "gen_ai.tool.call.result": "upstream timed out"})  # fmt: skip
        span.set_status(Status(StatusCode.ERROR))
    ((_, receipt),) = receipts(exporter)
    expected = monitor.check("get_order", ARGS, "upstream timed out", status="tool_error")
    assert expected.coverage == "partial"  # result contracts are not judged on an error
    assert dict(receipt.attributes) == {"tracemine.tool": "get_order",
                                        **receipt_attributes(expected)}  # fmt: skip


def test_other_spans_pass_untouched_and_nothing_is_dropped(monitor: Monitor) -> None:
    provider, exporter, processor = pipeline(monitor)
    with provider.get_tracer(__name__).start_as_current_span("chat gpt-x") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
    assert [s.name for s in exporter.get_finished_spans()] == ["chat gpt-x"]
    assert processor.counts["tool_spans"] == 0


def test_a_failure_inside_the_processor_never_reaches_the_pipeline(
    monitor: Monitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE, "SPAN_ONLY")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # a wrong object given as the provider: the receipt cannot be made, the span still goes
    processor = MonitorSpanProcessor(monitor, tracer_provider=object())
    provider.add_span_processor(processor)
    genai_call(provider, ARGS, BAD)
    assert [s.name for s in exporter.get_finished_spans()] == ["execute_tool get_order"]
    assert processor.counts["errors"] == 1


def test_a_tool_with_no_contracts_is_counted_apart_not_as_evaluated(
    monitor: Monitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE, "SPAN_ONLY")
    provider, exporter, processor = pipeline(monitor)
    with TelemetryHandler(tracer_provider=provider).tool("send_email") as invocation:
        invocation.arguments = {"to": "a@example.com"}
        invocation.tool_result = {"sent": True}
    ((_, receipt),) = receipts(exporter)
    assert receipt.attributes["tracemine.evaluated"] is False
    assert "none for this tool" in receipt.attributes["tracemine.reason"]
    assert "tracemine.ok" not in receipt.attributes  # neither passed nor failed
    assert (processor.counts["no_contracts"], processor.counts["evaluated"]) == (1, 0)


def test_register_makes_the_receipts_on_the_provider_it_adds_the_processor_to(
    monitor: Monitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE, "SPAN_ONLY")
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    processor = MonitorSpanProcessor.register(monitor, provider)
    genai_call(provider, ARGS, BAD)
    ((_, receipt),) = receipts(exporter)  # on this provider, not on the global one
    assert receipt.attributes["tracemine.ok"] is False and processor.counts["violated"] == 1
