"""An OpenTelemetry span processor that checks tool spans with a :class:`Monitor`.

Register it on the tracer provider whose spans go to your backend (Phoenix, Langfuse,
Jaeger, Tempo …)::

    provider.add_span_processor(MonitorSpanProcessor(monitor, tracer_provider=provider))

When a tool span ends — a GenAI ``execute_tool`` span (``gen_ai.tool.name``,
``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``) or an OpenInference ``TOOL``
span (``tool.name``, ``input.value``, ``output.value``) — its tool name, arguments and
result are checked and the verdict goes on the trace as a span ``tracemine.receipt``, a
child of the tool span, carrying ``tracemine.ok``, ``tracemine.violations`` and the
violated contracts' ids, kinds and paths and the note, for a backend to filter on.

Why a child span and not an event on the tool span: a processor sees a span only once it
has ended (``on_end`` gets an immutable ``ReadableSpan``; the SDK's ``_on_ending`` hook is
private and runs after the end time is set, when ``add_event`` is refused), so the SDK
lets no processor add an event before export.

A span whose arguments or result were not captured (content capture is opt-in in both
conventions, and OpenInference may redact it) is counted as not evaluated, and its receipt
says ``tracemine.evaluated = false`` rather than passing. The processor never raises into
the pipeline and never drops or changes a span: the tool span is exported as it was.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from tracemine.integrations._common import missing, parse_arguments
from tracemine.monitor import Monitor, Receipt

try:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
    from opentelemetry.trace import NonRecordingSpan, StatusCode
except ImportError:
    raise missing(__name__, "otel", "opentelemetry-sdk") from None

__all__ = ["RECEIPT_SPAN", "MonitorSpanProcessor", "receipt_attributes", "tool_call"]

RECEIPT_SPAN = "tracemine.receipt"
REDACTED = "__REDACTED__"  # what OpenInference writes for hidden inputs and outputs
_SCOPE = "tracemine.integrations.otel"
_SHOWN = 10  # violations listed per receipt; tracemine.violations has the count


def tool_call(attributes: Mapping[str, Any]) -> tuple[str, Any, Any, Any] | None:
    """``(tool, arguments, result, call_id)`` of a tool span's attributes, ``None`` for a
    span that is no tool call. Arguments or result not captured are ``None``."""
    if attributes.get("gen_ai.operation.name") == "execute_tool":
        tool = attributes.get("gen_ai.tool.name")
        arguments = attributes.get("gen_ai.tool.call.arguments")
        result = attributes.get("gen_ai.tool.call.result")
        call_id = attributes.get("gen_ai.tool.call.id")
    elif attributes.get("openinference.span.kind") == "TOOL":
        tool = attributes.get("tool.name")
        arguments = attributes.get("input.value")
        result = attributes.get("output.value")
        call_id = attributes.get("tool.id")
    else:
        return None
    if arguments == REDACTED:
        arguments = None
    if result == REDACTED:
        result = None
    return (tool if isinstance(tool, str) else "", arguments, result, call_id)


class MonitorSpanProcessor(SpanProcessor):
    """Checks every tool span that ends and adds a ``tracemine.receipt`` child span.

    ``tracer_provider``: where the receipt spans are made — the provider this processor is
    registered on (the global one when not given, as OpenTelemetry instrumentations do).
    ``counts`` says how many tool spans were seen, evaluated, not evaluated (arguments or
    result not captured), of tools the contracts say nothing about (``no_contracts``:
    neither evaluated nor passed), violated, and how many could not be handled
    (``errors``).

    Without ``tracer_provider`` the receipts go to the global provider, which is not the
    one the processor is added to when an application keeps its own: use :meth:`register`.

    >>> processor = MonitorSpanProcessor.register(monitor, provider)  # doctest: +SKIP
    """

    def __init__(self, monitor: Monitor, *, tracer_provider: Any = None) -> None:
        self.monitor = monitor
        self._provider = tracer_provider
        self._tracer: Any = None
        self._lock = threading.Lock()
        self.counts = {"tool_spans": 0, "evaluated": 0, "not_evaluated": 0, "no_contracts": 0,
                       "violated": 0, "errors": 0}  # fmt: skip

    @classmethod
    def register(cls, monitor: Monitor, tracer_provider: Any) -> MonitorSpanProcessor:
        """A processor added to ``tracer_provider`` that makes its receipts there too: the
        one call that cannot send them to another provider (a processor does not know the
        provider it is added to, so ``tracer_provider=`` is otherwise the global one).

        >>> processor = MonitorSpanProcessor.register(monitor, provider)  # doctest: +SKIP
        """
        processor = cls(monitor, tracer_provider=tracer_provider)
        tracer_provider.add_span_processor(processor)
        return processor

    def on_end(self, span: ReadableSpan) -> None:
        """Check ``span`` if it is a tool span. Never raises."""
        try:
            if span.name == RECEIPT_SPAN:
                return
            call = tool_call(span.attributes or {})
            if call is None:
                return
            self._count("tool_spans")
            self._receipt(span, *call)
        except Exception:  # a processor must not break the export of the spans
            self._count("errors")

    def _receipt(self, span: ReadableSpan, tool: str, args: Any, result: Any, cid: Any) -> None:
        attributes: dict[str, Any] = {"tracemine.tool": tool}
        if args is None or result is None:
            self._count("not_evaluated")
            what = "arguments" if args is None else "result"
            if args is None and result is None:
                what = "arguments and result"
            attributes["tracemine.evaluated"] = False
            attributes["tracemine.reason"] = f"{what} not captured on the span"
        else:
            error = span.status.status_code is StatusCode.ERROR
            receipt = self.monitor.check(tool, parse_arguments(args), result,
                                         call_id=None if cid is None else str(cid),
                                         status="tool_error" if error else "ok")  # fmt: skip
            if receipt.coverage == "unknown":  # no contract for this tool: nothing judged
                self._count("no_contracts")
                attributes["tracemine.evaluated"] = False
                attributes["tracemine.reason"] = "the contracts hold none for this tool"
                self._emit(span, attributes)
                return
            self._count("evaluated")
            if receipt.violations:
                self._count("violated")
            attributes.update(receipt_attributes(receipt))
        self._emit(span, attributes)

    def _emit(self, span: ReadableSpan, attributes: dict[str, Any]) -> None:
        if self._tracer is None:
            provider = self._provider or trace.get_tracer_provider()
            self._tracer = provider.get_tracer(_SCOPE)
        if span.context is None:
            return
        parent = trace.set_span_in_context(NonRecordingSpan(span.context))
        at = span.end_time
        receipt = self._tracer.start_span(RECEIPT_SPAN, context=parent, start_time=at,
                                          attributes=attributes)  # fmt: skip
        receipt.end(end_time=at)

    def _count(self, name: str) -> None:
        with self._lock:
            self.counts[name] += 1


def receipt_attributes(receipt: Receipt) -> dict[str, Any]:
    """The span attributes of a receipt: what a backend filters on."""
    shown = receipt.violations[:_SHOWN]
    attributes: dict[str, Any] = {
        "tracemine.evaluated": True,
        "tracemine.ok": receipt.ok,
        "tracemine.violations": len(receipt.violations),
        "tracemine.coverage": receipt.coverage,
        "tracemine.contracts": receipt.contracts,
    }
    if receipt.call_id is not None:
        attributes["tracemine.call_id"] = receipt.call_id
    if shown:
        attributes["tracemine.contract_ids"] = tuple(v.contract_id for v in shown)
        attributes["tracemine.kinds"] = tuple(v.kind for v in shown)
        attributes["tracemine.paths"] = tuple(v.path for v in shown)
        attributes["tracemine.note"] = receipt.note()
    if receipt.not_evaluated:
        attributes["tracemine.not_evaluated"] = len(receipt.not_evaluated)
    return attributes
