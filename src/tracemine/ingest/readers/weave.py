"""W&B Weave calls: the JSON lines of the calls stream query API (``POST
/calls/stream_query``), ``client.get_calls()`` saved as JSON (``[c.to_dict() for c in
calls]``, one a line or one JSON array), its dataframe (``calls.to_pandas()``) saved as
JSON lines or parquet, or a ``{"calls": [...]}`` page of the calls query API::

    {"id": "0195d4a1-...-0002", "project_id": "acme/support-agent",
     "op_name": "weave:///acme/support-agent/op/get_order:Wm9TqH1n...", "display_name": null,
     "trace_id": "0195d4a1-...-0001", "parent_id": "0195d4a1-...-0001",
     "thread_id": "ticket-7", "started_at": "2025-06-01T10:00:00.450000Z",
     "ended_at": "2025-06-01T10:00:00.600000Z", "inputs": {"order_id": "A-1"},
     "output": {"status": "delivered"}, "exception": null,
     "attributes": {"weave": {"kind": "tool", "client_version": "0.54.0", ...},
                    "task_id": "refund-1"},
     "summary": {"weave": {"status": "success", "latency_ms": 150, ...}}, ...}

The shape was read from Weave's Call schema reference and "Query and export calls"
(docs.wandb.ai, weave/guides/tracking), the service API's ``calls/stream_query``, the
``weave`` SDK 0.54.0 (``weave.trace.call.Call.to_dict``, ``weave.op``, its OpenAI Agents,
LangChain and Claude Agent SDK integrations) and the trace server's
``make_derived_summary_fields``. ``op_name`` is a ref to the op
(``weave:///<entity>/<project>/op/<name>:<digest>``) or a plain name; ``inputs`` are the
op's arguments by name (a method's ``self`` among them); ``output`` is what it returned;
``exception`` is the error it raised: in SDK 0.54 the JSON text ``{"type", "message",
"traceback"}``, in older SDKs and the TypeScript SDK the error's text. Times are ISO 8601
text (the API, ``to_dict`` dumped with ``default=str``) or epoch milliseconds (a dataframe's
``to_json``). A call still running has no ``ended_at`` (``summary.weave.status``
``running``).

Which calls are tool calls: a call whose op has kind ``tool`` — ``attributes.weave.kind``,
which ``weave.op(kind="tool")`` sets and the LangChain (a ``tool`` run), smolagents, DSPy
and AutoGen integrations set for the tools they trace, or ``attributes.kind`` as the Claude
Agent SDK integration sets it — and the OpenAI Agents SDK integration's function spans
(op ``openai_agent_function``, ``attributes.type`` ``function``: the tool is the
``display_name``, the result ``output.output``, a failure ``output.error``). Agent, LLM
and other calls are no calls here. The tool is the op's name (the ref's ``<name>``; the
LangChain integration's ``lc_name``; ``claude_agent_sdk.tool_use.<tool>``'s tool), the
arguments the ``inputs`` (``self`` left out), the result the ``output`` (JSON inside text
parsed; a LangChain ``ToolMessage`` read for its ``content``). An ``exception`` makes a
tool error with the exception's type and message (a timeout or a cancellation by its type).
Weave keeps no model tool call id: the call id is ``tool_call_id`` in the call's
attributes when the tracing code put one there (``weave.attributes``), or a
``ToolMessage``'s, else the Weave call id (paired as inferred).

The tracemine run is the Weave trace (``trace_id``, else the root found through
``parent_id``). Its task id is ``task_id`` (or ``task.id``) in the tool call's
``attributes`` (set with ``weave.attributes``, also under ``attributes.metadata``), else
in those of any call of its trace (the root first), else the Weave thread (``thread_id``:
``weave.thread`` groups the traces of one conversation); the run's metadata says which
(``task_id_from``). ``trial``, ``family``, ``reward`` and ``run_outcome`` (also with a
``tracemine.`` prefix) come from the same attributes. Calls come in any order (a query's
sort), so they are kept until the end of the file and ordered by time.
"""

from __future__ import annotations

from typing import Any

from tracemine.ingest.readers._common import (
    TASK_KEYS,
    TraceTree,
    first,
    platform_call,
    trace_run,
)
from tracemine.ingest.readers.base import (
    BadRecord,
    Reader,
    Sink,
    _message_of,
    as_dict,
    as_str,
    loads,
    parse_arguments,
    parse_result_text,
    parse_time,
    text_of_parts,
)
from tracemine.ingest.readers.langsmith import _error, _message

_CALL_SHAPE = (
    "a Weave call has id, op_name, trace_id, parent_id, started_at, ended_at, inputs, "
    "output, exception, attributes, summary"
)
_REF = "weave:///"
_AGENTS_FUNCTION = "openai_agent_function"  # the OpenAI Agents SDK integration's function span
_TOOL_PREFIXES = ("langchain.Tool.", "claude_agent_sdk.tool_use.")


def _is_call(unit: Any) -> bool:
    return (
        isinstance(unit, dict)
        and isinstance(unit.get("op_name"), str)
        and isinstance(unit.get("trace_id"), str)
        and "id" in unit
    )


def _object(value: Any) -> dict[str, Any]:
    """An object field, also when a dataframe saved it as JSON text."""
    if isinstance(value, str) and value.startswith("{"):
        try:
            value = loads(value)
        except ValueError:
            return {}
    return as_dict(value)


def op_name_of(op_name: str) -> str:
    """The op's name from its ref (``weave:///<entity>/<project>/op/<name>:<digest>``); a
    plain op name as it is."""
    if not op_name.startswith(_REF):
        return op_name
    parts = op_name[len(_REF) :].split("/")
    if len(parts) >= 4 and parts[2] == "op":
        return "/".join(parts[3:]).rsplit(":", 1)[0]
    return op_name


def _facts(attributes: dict[str, Any]) -> dict[str, Any]:
    """The attributes a task and a run are read from: the call's own, then those under
    ``metadata``; Weave's own ``weave`` object left out."""
    found = {k: v for k, v in attributes.items() if k != "weave"}
    for key, value in as_dict(attributes.get("metadata")).items():
        found.setdefault(key, value)
    return found


def _is_tool(op: str, attributes: dict[str, Any]) -> bool:
    kind = as_dict(attributes.get("weave")).get("kind") or attributes.get("kind")
    if isinstance(kind, str) and kind.lower() == "tool":
        return True
    return op == _AGENTS_FUNCTION and attributes.get("type") == "function"


def _tool_name(call: dict[str, Any], op: str, attributes: dict[str, Any]) -> str | None:
    if op == _AGENTS_FUNCTION:
        return as_str(call.get("display_name")) or as_str(_object(call.get("inputs")).get("name"))
    if op.startswith("langchain.") and as_str(attributes.get("lc_name")):
        return as_str(attributes.get("lc_name"))
    for prefix in _TOOL_PREFIXES:
        if op.startswith(prefix) and len(op) > len(prefix):
            return op[len(prefix) :]
    return op or None


def _classified(error_type: str | None, message: str) -> tuple[str, str | None, str]:
    lowered = (error_type or "").lower()
    if "timeout" in lowered or "timedout" in lowered or "deadline" in lowered:
        return "timeout", error_type, message
    if "cancel" in lowered:
        return "cancelled", error_type, message
    return "tool_error", error_type, message


def _exception(text: str) -> tuple[str, str | None, str]:
    """``(status, error type, message)`` of an ``exception``: the SDK's JSON
    ``{"type", "message", "traceback"}``, else the error's text (``Type: message``,
    ``Type('message')`` or a stack trace, read as the LangSmith reader reads them)."""
    if text.lstrip().startswith("{"):
        try:
            found = loads(text)
        except ValueError:
            found = None
        if isinstance(found, dict) and ("type" in found or "message" in found):
            message = as_str(found.get("message")) or ""
            return _classified(as_str(found.get("type")), message)
    return _error(text)


class WeaveReader(Reader):
    """W&B Weave calls, one a unit (or a page of them); calls are decided at the end of
    the file, when the calls of each trace are known."""

    name = "weave"
    version = "1"
    priority = 26
    orders_by_time = True
    looks_for = (
        "W&B Weave calls of tool ops (op_name, trace_id, inputs, output, exception, "
        "attributes.weave.kind 'tool')"
    )

    def __init__(self, source_file: str) -> None:
        super().__init__(source_file)
        self.calls: list[dict[str, Any]] = []
        # Weave call id -> (parent id, trace id, facts of its attributes, thread id)
        self.seen = TraceTree()

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        if isinstance(unit, dict) and isinstance(unit.get("calls"), list):
            return any(_is_call(call) for call in unit["calls"][:5])
        return _is_call(unit)

    @classmethod
    def near_miss(cls, unit: Any) -> str | None:
        if not isinstance(unit, dict) or cls.sniff(unit):
            return None
        if isinstance(unit.get("op_name"), str):
            lacks = [k for k in ("id", "trace_id") if not isinstance(unit.get(k), str)]
            return f"its first record has op_name and no {' or '.join(lacks)} ({_CALL_SHAPE})"
        if "trace_id" in unit and "inputs" in unit and ("output" in unit or "exception" in unit):
            return (
                f"its first record has trace_id, inputs and output and no op_name ({_CALL_SHAPE})"
            )
        return None

    def feed(self, unit: Any, line: int, out: Sink) -> None:
        if isinstance(unit, dict) and isinstance(unit.get("calls"), list) and not _is_call(unit):
            for index, call in enumerate(unit["calls"]):
                self._call(call, line, f"/calls/{index}", out)
            return
        if not _is_call(unit):
            raise BadRecord(f"expected a Weave call ({_CALL_SHAPE})")
        self._call(unit, line, "", out)

    def _call(self, call: Any, line: int, pointer: str, out: Sink) -> None:
        if not _is_call(call):
            out.quarantine(line, pointer or None, f"not a Weave call ({_CALL_SHAPE})", call)
            return
        call_id = as_str(call.get("id")) or f"{self.default_run_id(line)}{pointer}"
        if call_id in self.seen:
            # a query's pages overlapping, or two exports joined: read once
            reason = f"call {call_id} repeats a call read before; the first is kept"
            out.quarantine(line, pointer or None, reason, call)
            return
        attributes = _object(call.get("attributes"))
        facts = _facts(attributes)
        trace_id = as_str(call.get("trace_id"))
        thread = as_str(call.get("thread_id"))
        self.seen.add(call_id, as_str(call.get("parent_id")), trace_id, facts, thread)
        op = op_name_of(call["op_name"])
        if not _is_tool(op, attributes):
            return
        record = self._tool_call(call, call_id, op, attributes, line, pointer, out)
        if record is not None:
            # its own id is where its root is looked for: a call is a member of its trace
            record.update(_trace=trace_id, _parent=call_id, _metadata=facts, _thread=thread)
            self.calls.append(record)

    def _tool_call(
        self, call: dict[str, Any], call_id: str, op: str, attributes: dict[str, Any],
        line: int, pointer: str, out: Sink,
    ) -> dict[str, Any] | None:  # fmt: skip
        tool = _tool_name(call, op, attributes)
        if not tool:
            out.quarantine(line, pointer or None, "tool call without an op name", call)
            return None
        inputs = call.get("inputs")
        cut: str | None = None  # inputs a dataframe saved as JSON text that does not parse
        if isinstance(inputs, str) and inputs.startswith("{"):
            try:
                inputs = loads(inputs)
            except ValueError:
                cut, inputs = inputs, None
        if inputs is not None and not isinstance(inputs, dict):
            out.quarantine(line, f"{pointer}/inputs", "inputs are not an object", call)
            return None
        inputs = {k: v for k, v in (inputs or {}).items() if k != "self"}
        if cut is not None:  # kept as written, with why it is no object
            arguments_raw, arguments, args_error = parse_arguments(cut)
        elif op == _AGENTS_FUNCTION:  # the span's input is the arguments' JSON text, if kept
            arguments_raw, arguments, args_error = parse_arguments(inputs.get("input"))
        else:
            arguments_raw, arguments, args_error = parse_arguments(inputs)
        result, result_text, found_id, status, error_message = self._result(call, op)
        error_type: str | None = None
        exception = call.get("exception")
        ended = parse_time(call.get("ended_at"))
        if isinstance(exception, str) and exception.strip():
            status, error_type, error_message = _exception(exception)
        elif status == "ok" and result is None and ended is None:
            status = "missing"  # still running when exported: no result came back
        own_id = as_str(attributes.get("tool_call_id")) or found_id
        return platform_call(
            self,
            line=line,
            pointer=pointer,
            own_id=own_id,
            node_id=call_id,
            status=status,
            started_at=parse_time(call.get("started_at")),
            ended_at=ended,
            tool=tool,
            arguments_raw=arguments_raw,
            arguments=arguments,
            arguments_error=args_error,
            result=result,
            result_text=result_text,
            error_type=error_type,
            error_message=error_message,
        )

    @staticmethod
    def _result(
        call: dict[str, Any], op: str
    ) -> tuple[Any, str | None, str | None, str, str | None]:
        """``(result, result text, call id, status, error message)`` of a call's
        ``output``, as the op or its integration wrote it."""
        value = call.get("output")
        status, error_message, found_id = "ok", None, None
        if op == _AGENTS_FUNCTION and isinstance(value, dict):
            error = value.get("error")
            if error:
                status = "tool_error"
                error_message = as_str(as_dict(error).get("message") or error)
            value = value.get("output")
        elif op.startswith("langchain.") and isinstance(value, dict) and value.keys() == {"output"}:
            value = value["output"]
        message = _message(value)
        if message is not None:
            found_id = as_str(message.get("tool_call_id"))
            value = message.get("content")
            if isinstance(value, list) and all(isinstance(p, dict | str) for p in value):
                value = text_of_parts(value)
        result_text = value if isinstance(value, str) else None
        result = parse_result_text(value) if isinstance(value, str) else value
        if message is not None and message.get("status") == "error":
            status, error_message = "tool_error", _message_of(result)
        return result, result_text, found_id, status, error_message

    def finish(self, out: Sink) -> None:
        self.seen.emit(self.calls, out, self._record)

    def _record(self, trace: str, members: list[str]) -> dict[str, Any]:
        """The run record of a trace, from its calls' attributes (the root's first)."""
        facts, thread = self.seen.merged(members)
        task = as_str(first(facts, TASK_KEYS)), "attributes"
        if task[0] is None and thread is not None:
            task = thread, "thread_id"
        return trace_run(self, trace, facts, id_source="trace_id", task=task, session=thread)
