"""OTLP JSON lines: what the OpenTelemetry file exporter writes, one export request a line::

    {"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "support-agent"}}]},
      "scopeSpans": [{"scope": {"name": "agent-sdk"}, "spans": [
        {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
         "parentSpanId": "eee19b7ec3c1b173", "name": "execute_tool get_order",
         "startTimeUnixNano": "1718000000000000000", "endTimeUnixNano": "1718000000150000000",
         "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                        {"key": "gen_ai.tool.name", "value": {"stringValue": "get_order"}}],
         "status": {"code": 2, "message": "..."}}]}]}]}

The OpenTelemetry SDK's ``ConsoleSpanExporter`` output (each span a pretty-printed JSON
object, ``{"name", "context": {"trace_id", "span_id"}, "parent_id", "start_time",
"attributes": {...}, "status": {"status_code"}, "resource"}``, one after another) is read
too, span by span.

Attribute values are typed (``stringValue``, ``intValue`` as a string, ``doubleValue``,
``boolValue``, ``arrayValue``, ``kvlistValue``); snake_case field names, as protobuf JSON
parsers accept, are read too.

Tool spans read:

- GenAI ``execute_tool`` spans (``gen_ai.operation.name``): ``gen_ai.tool.name``,
  ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``
  (semantic conventions 1.38 on). Before those existed, Pydantic AI's default (its
  instrumentation version 2) named the span ``running tool`` and used ``tool_arguments`` /
  ``tool_response``; both are read. The MCP conventions' ``tools/call`` spans are
  ``execute_tool`` spans too; a JSON-RPC error on them (``rpc.response.status_code``) is a
  protocol error.
- OpenInference ``TOOL`` spans: ``tool.name``, ``input.value`` (the arguments),
  ``output.value`` (the result), ``tool_call.id``. ``tool.parameters`` is the tool's JSON
  schema, not the arguments, and is not read.

- GenAI chat spans that carry the messages (``gen_ai.input.messages`` /
  ``gen_ai.output.messages``, as ``opentelemetry-instrumentation-openai-v2`` writes them
  with content capture on): their ``tool_call`` and ``tool_call_response`` parts, each call
  once, paired by id across the spans of its run (:mod:`._chat_spans`). A call an
  ``execute_tool`` span also gives is read from that span only.

Other spans are skipped. A span whose status is ERROR (or that has ``error.type``) is a tool
error, a timeout or a cancellation by ``error.type``. The run is the conversation
(``gen_ai.conversation.id``), else the session (``session.id``), else the
trace, looked up on the tool span and then on any span of its trace; run metadata holds the
resource attributes and those of root and agent spans, and names the key the run id came
from. The run's family, reward and outcome are read from those attributes too
(``tracemine.family``, ``tracemine.reward``, ``tracemine.run_outcome``, as tracemine's
simulator and fault injector write them, or the same names without the prefix), so runs
read from OTLP filter and group as the same runs read from any other format. Spans of a
trace arrive on many lines, so calls are kept until the end of the file.
"""

from __future__ import annotations

import contextlib
from datetime import UTC
from typing import Any

from tracemine.ingest.readers._chat_spans import ChatSpans
from tracemine.ingest.readers.base import (
    BadRecord,
    Reader,
    Sink,
    as_dict,
    as_float,
    as_int,
    as_small_int,
    as_str,
    loads,
    parse_arguments,
    parse_json_text,
    parse_result_text,
    parse_time,
)
from tracemine.model.result import CONTENT_NOT_CAPTURED

_VALUE_KEYS = {
    "string_value": "stringValue", "int_value": "intValue", "double_value": "doubleValue",
    "bool_value": "boolValue", "array_value": "arrayValue", "kvlist_value": "kvlistValue",
    "bytes_value": "bytesValue",
}  # fmt: skip
_RESOURCE_SPANS = ("resourceSpans", "resource_spans")
# instrumentationLibrarySpans: the name before OTLP 0.15
_SCOPE_SPANS = ("scopeSpans", "scope_spans", "instrumentationLibrarySpans")
_ERROR_CODES = {2, "2", "STATUS_CODE_ERROR", "ERROR"}
# not mcp.session.id: one MCP connection may serve many agent runs
_SESSION_KEYS = ("session.id",)
_TASK_KEYS = ("task_id", "task.id")
_RUN_KEYS = {name: (f"tracemine.{name}", name) for name in ("family", "reward", "run_outcome")}
_TRACE_KEYS = (("conversation", "gen_ai.conversation.id"), *((k, k) for k in _SESSION_KEYS))
_AGENT_OPERATIONS = {"invoke_agent", "create_agent"}
# prompt and message content is large and says nothing about the run as a whole
_CONTENT_PREFIXES = (
    "gen_ai.input.", "gen_ai.output.", "gen_ai.system_instructions", "gen_ai.tool.definitions",
    "gen_ai.prompt", "gen_ai.completion", "llm.", "input.", "output.", "events",
    "logfire.", "all_messages_events", "final_result",
    # what the root span is, not what the run is
    "gen_ai.operation.name", "openinference.span.kind",
)  # fmt: skip


def _value(raw: Any) -> Any:
    if not isinstance(raw, dict):
        return raw
    for key, value in raw.items():
        kind = _VALUE_KEYS.get(key, key)
        if kind == "stringValue" or kind == "bytesValue":
            return value
        if kind == "intValue":
            number = as_int(value)
            return number if number is not None else value
        if kind == "doubleValue":
            return as_float(value)
        if kind == "boolValue":
            return bool(value)
        if kind == "arrayValue":
            items = value.get("values") if isinstance(value, dict) else None
            return [_value(item) for item in items or []]
        if kind == "kvlistValue":
            return _attributes(value.get("values") if isinstance(value, dict) else None)
    return None


def _attributes(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):  # the console exporter's plain JSON object
        return raw
    found: dict[str, Any] = {}
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            found[item["key"]] = _value(item.get("value"))
    return found


def _first(attrs: dict[str, Any], *keys: str) -> Any:
    return next((attrs[k] for k in keys if attrs.get(k) is not None), None)


def _run_facts(attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes worth keeping on the run: small values, no message content."""
    facts: dict[str, Any] = {}
    for key, value in attrs.items():
        if key.startswith(_CONTENT_PREFIXES):
            continue
        if key == "metadata" and isinstance(value, str):  # OpenInference: a JSON object
            with contextlib.suppress(ValueError):
                value = loads(value)
        scalar = isinstance(value, str | int | float | bool)
        short_list = isinstance(value, list) and len(value) <= 20
        if (
            scalar
            or (key == "metadata" and value)
            or (short_list and all(isinstance(v, str | int | float | bool) for v in value))
        ):
            facts[key] = value
    return facts


def _tool_kind(span: dict[str, Any], attrs: dict[str, Any]) -> str | None:
    name = given if isinstance(given := span.get("name"), str) else ""
    if attrs.get("gen_ai.operation.name") == "execute_tool":
        return "genai"
    if "gen_ai.tool.name" in attrs and (name == "running tool" or name.startswith("execute_tool")):
        return "genai"
    if attrs.get("openinference.span.kind") == "TOOL":
        return "openinference"
    return None


class OtlpReader(Reader):
    name = "otlp"
    # 2: tool calls in chat spans' messages are read; runs carry family, reward, outcome
    version = "2"
    priority = 20
    orders_by_time = True
    looks_for = (
        "GenAI execute_tool spans, OpenInference TOOL spans, and tool_call / "
        "tool_call_response parts in chat spans' gen_ai.input.messages / "
        "gen_ai.output.messages (recorded only when message content capture is on)"
    )

    def __init__(self, source_file: str) -> None:
        super().__init__(source_file)
        self.calls: list[tuple[str, dict[str, Any]]] = []  # (trace id, call)
        self.traces: dict[str, dict[str, Any]] = {}  # trace id -> what its spans say
        self.chat = ChatSpans()

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        return isinstance(unit, dict) and (
            any(isinstance(unit.get(key), list) for key in _RESOURCE_SPANS)
            or _is_console_span(unit)
        )

    def feed(self, unit: Any, line: int, out: Sink) -> None:
        rs_key = next((k for k in _RESOURCE_SPANS if isinstance(unit, dict) and k in unit), None)
        if rs_key is None and _is_console_span(unit):
            resource = as_dict(unit.get("resource")).get("attributes")
            self._span(_from_console(unit), _attributes(resource), line, "", out)
            return
        if rs_key is None or not isinstance(unit[rs_key], list):
            raise BadRecord(
                "expected an OTLP export object with a 'resourceSpans' array, or a span "
                "as the SDK's ConsoleSpanExporter prints it"
            )
        for r, resource_spans in enumerate(unit[rs_key]):
            if not isinstance(resource_spans, dict):
                continue
            resource = resource_spans.get("resource")
            resource_attrs = _attributes(resource.get("attributes") if resource else None)
            ss_key = next((k for k in _SCOPE_SPANS if k in resource_spans), _SCOPE_SPANS[0])
            for s, scope_spans in enumerate(resource_spans.get(ss_key) or []):
                spans = scope_spans.get("spans") if isinstance(scope_spans, dict) else None
                for i, span in enumerate(spans or []):
                    pointer = f"/{rs_key}/{r}/{ss_key}/{s}/spans/{i}"
                    if isinstance(span, dict):
                        self._span(span, resource_attrs, line, pointer, out)
                    else:
                        out.quarantine(line, pointer, "span is not an object", span)

    def _span(
        self, span: dict[str, Any], resource: dict[str, Any], line: int, ptr: str, out: Sink
    ) -> None:
        attrs = _attributes(span.get("attributes"))
        trace_id = as_str(span.get("traceId", span.get("trace_id"))) or ""
        trace = self.traces.setdefault(trace_id, {"facts": {}})
        for key, attr in _TRACE_KEYS:
            if attrs.get(attr) is not None:
                trace.setdefault(key, as_str(attrs[attr]))
        for key, value in _run_facts(resource).items():
            trace["facts"].setdefault(key, value)
        parent = span.get("parentSpanId", span.get("parent_span_id"))
        if (
            not parent
            or attrs.get("gen_ai.operation.name") in _AGENT_OPERATIONS
            or attrs.get("openinference.span.kind") == "AGENT"
        ):
            for key, value in _run_facts(attrs).items():
                trace["facts"].setdefault(key, value)
        kind = _tool_kind(span, attrs)
        if kind is None:  # model calls, agent and chain spans: calls only in their messages
            self.chat.add(trace_id, span, attrs, line, ptr, out)
            return
        call = self._call(span, attrs, kind, line, ptr, out)
        if call is not None:
            self.calls.append((trace_id, call))

    def _call(
        self,
        span: dict[str, Any],
        attrs: dict[str, Any],
        kind: str,
        line: int,
        pointer: str,
        out: Sink,
    ) -> dict[str, Any] | None:
        anomalies: list[str] = []
        tool = as_str(_first(attrs, "gen_ai.tool.name", "tool.name"))
        span_name = given if isinstance(given := span.get("name"), str) else ""
        if tool is None and kind == "genai" and span_name.startswith("execute_tool "):
            # the conventions name the span "execute_tool {gen_ai.tool.name}"
            tool, anomalies = span_name.split(" ", 1)[1].strip() or None, ["tool_name_from_span"]
        if not tool:
            out.quarantine(line, pointer, f"{kind} tool span without a tool name", span)
            return None
        raw_args = _first(attrs, "gen_ai.tool.call.arguments", "tool_arguments", "input.value")
        arguments_raw: str | None
        if attrs.get("input.mime_type") == "text/plain" and isinstance(raw_args, str):
            arguments_raw, arguments, args_error = raw_args, parse_json_text(raw_args), None
        else:
            arguments_raw, arguments, args_error = parse_arguments(raw_args)
        result = _first(attrs, "gen_ai.tool.call.result", "tool_response", "output.value")
        status, error_type, error_message = _status(span, attrs)
        if raw_args is None or (result is None and status == "ok"):
            # content capture off (GenAI: opt-in; OpenInference: hidden inputs/outputs): the
            # call happened, what it said was not recorded, so nothing can be judged of it.
            # A failed call without a result is what it is: its status is still judged
            anomalies = [*anomalies, CONTENT_NOT_CAPTURED]
        result_text = result if isinstance(result, str) else None
        if result_text is not None:
            result = parse_result_text(result_text)
        start = as_int(span.get("startTimeUnixNano", span.get("start_time_unix_nano")))
        end = as_int(span.get("endTimeUnixNano", span.get("end_time_unix_nano")))
        # an MCP tools/call span without a model call id still has its JSON-RPC id
        call_id = as_str(_first(attrs, "gen_ai.tool.call.id", "tool_call.id", "jsonrpc.request.id"))
        return self.new_call(
            source_line=line,
            source_pointer=pointer or None,  # a console span is the unit itself
            run_id="",  # decided at the end of the file, when the whole trace is known
            session_id=as_str(_first(attrs, *_SESSION_KEYS)),
            call_id=call_id,
            result_call_id=call_id,
            id_pairing="inferred",  # the span holds both the call and its result
            tool=tool,
            server=as_str(attrs.get("server.address")) if "mcp.method.name" in attrs else None,
            arguments_raw=arguments_raw,
            arguments=arguments,
            arguments_error=args_error,
            result=result,
            result_text=result_text,
            status=status,
            error_type=error_type,
            error_message=error_message,
            started_at=parse_time(start) if start else None,
            ended_at=parse_time(end) if end else None,
            duration_ms=(end - start) / 1e6 if start and end else None,
            anomalies=anomalies,
            # the run lookup needs the span's own conversation id; removed in finish
            _conversation=as_str(attrs.get("gen_ai.conversation.id")),
        )

    def finish(self, out: Sink) -> None:
        runs: dict[str, dict[str, Any]] = {}
        described: set[tuple[str, str]] = set()  # (run, call id) of execute_tool calls
        for trace_id, call in self.calls:
            conversation, line = call.pop("_conversation"), call["source_line"]
            run_id, session, task_id = self._run(runs, trace_id, conversation,
                                                 call["session_id"], line)  # fmt: skip
            call.update(run_id=run_id, session_id=session, task_id=task_id)
            if call["call_id"] is not None:
                described.add((run_id, call["call_id"]))
            out.call(call)

        def run_of(trace_id: str, conversation: str | None, session: str | None,
                   line: int) -> dict[str, Any]:  # fmt: skip
            found = self._run(runs, trace_id, conversation, session, line)
            return dict(zip(("run_id", "session_id", "task_id"), found, strict=True))

        self.chat.calls(run_of, described, self.new_call, out)
        for run in runs.values():
            out.run(run)
        self.calls.clear()
        self.traces.clear()

    def _run(self, runs: dict[str, dict[str, Any]], trace_id: str, conversation: str | None,
             session: str | None, line: int) -> tuple[str, str | None, str | None]:  # fmt: skip
        """``(run id, session, task id)`` of a call in ``trace_id`` (its run recorded in
        ``runs``): its conversation, else its session, else the trace (the call's own
        view, then what the trace's spans say)."""
        trace = self.traces.get(trace_id, {"facts": {}})
        conversation = conversation or trace.get("conversation")
        session = session or next((trace[k] for k in _SESSION_KEYS if trace.get(k)), None)
        if conversation:
            run_id, source = conversation, "conversation_id"
        elif session:
            run_id, source = session, "session_id"
        else:
            run_id, source = trace_id or self.default_run_id(line), "trace_id"
        facts = trace["facts"]
        nested = as_dict(facts.get("metadata"))
        task_id = as_str(_first(facts, *_TASK_KEYS) or _first(nested, *_TASK_KEYS))
        run = runs.get(run_id)
        if run is None:
            run = runs[run_id] = self.new_run(
                run_id=run_id,
                session_id=session,
                task_id=task_id,
                trial=as_small_int(
                    _first(facts, "trial") if "trial" in facts else nested.get("trial")
                ),
                family=as_str(_first(facts, *_RUN_KEYS["family"])),
                reward=as_float(_first(facts, *_RUN_KEYS["reward"])),
                run_outcome=as_str(_first(facts, *_RUN_KEYS["run_outcome"])),
                metadata={"run_id_source": source, "trace_ids": []},
            )
        for key, value in facts.items():
            run["metadata"].setdefault(key, value)
        if trace_id and trace_id not in run["metadata"]["trace_ids"]:
            run["metadata"]["trace_ids"].append(trace_id)
        return run_id, session, task_id


def _is_console_span(unit: Any) -> bool:
    """A span as ``ConsoleSpanExporter`` prints it (``ReadableSpan.to_json``)."""
    context = unit.get("context") if isinstance(unit, dict) else None
    return isinstance(context, dict) and "span_id" in context and "name" in unit


def _console_ns(value: Any) -> str | None:
    """Nanoseconds since the epoch of the exporter's ISO 8601 times."""
    when = parse_time(value)
    if when is None:
        return None
    whole = int(when.replace(tzinfo=UTC).timestamp())
    return str(whole * 10**9 + when.microsecond * 1000)


def _hex(value: Any) -> str | None:
    return value.removeprefix("0x") if isinstance(value, str) else None


_CONSOLE_STATUS = {"ERROR": 2, "OK": 1, "UNSET": 0}


def _from_console(unit: dict[str, Any]) -> dict[str, Any]:
    """The console exporter's span in OTLP/JSON's field names (its attributes, already
    plain JSON, are read as they are)."""
    context, status = as_dict(unit.get("context")), as_dict(unit.get("status"))
    return {
        "traceId": _hex(context.get("trace_id")) or "",
        "spanId": _hex(context.get("span_id")),
        "parentSpanId": _hex(unit.get("parent_id")),
        "name": unit.get("name"),
        "startTimeUnixNano": _console_ns(unit.get("start_time")),
        "endTimeUnixNano": _console_ns(unit.get("end_time")),
        "attributes": as_dict(unit.get("attributes")),
        "status": {
            "code": _CONSOLE_STATUS.get(as_str(status.get("status_code")) or "", 0),
            "message": status.get("description"),
        },
        "events": [as_dict(e) for e in unit.get("events") or []],
    }


def _status(span: dict[str, Any], attrs: dict[str, Any]) -> tuple[str, str | None, str | None]:
    status = as_dict(span.get("status"))
    error_type = as_str(attrs.get("error.type"))
    if status.get("code") not in _ERROR_CODES and error_type is None:
        return "ok", None, None
    exception: dict[str, Any] = {}
    for event in span.get("events") or []:
        if isinstance(event, dict) and event.get("name") == "exception":
            exception = _attributes(event.get("attributes"))
            break
    error_type = error_type or as_str(exception.get("exception.type"))
    message = as_str(status.get("message")) or as_str(exception.get("exception.message"))
    lowered = (error_type or "").lower()
    rpc_code = as_str(attrs.get("rpc.response.status_code"))
    if "timeout" in lowered or "timedout" in lowered or "deadline" in lowered:
        return "timeout", error_type, message
    if "cancel" in lowered:
        return "cancelled", error_type, message
    if rpc_code is not None and rpc_code.upper() != "OK":
        return "protocol_error", error_type or rpc_code, message  # JSON-RPC error response
    return "tool_error", error_type, message
