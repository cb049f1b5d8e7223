"""LangSmith runs: what ``Client().list_runs(...)`` gives, each run saved as JSON
(``run.json()`` / ``run.model_dump(mode="json")``), as JSON lines or one JSON array, or the
``{"runs": [...]}`` page of the runs query API::

    {"id": "01a24dbc-9929-7001-8cdb-4818e0d9dd11", "name": "get_order", "run_type": "tool",
     "start_time": "2026-12-06T23:42:15.337258Z", "end_time": "2026-12-06T23:42:15.337755Z",
     "inputs": {"order_id": "A-1"},
     "outputs": {"output": {"content": "{\\"total\\": 12.5}", "type": "tool",
                            "tool_call_id": "call_1", "status": "success", ...}},
     "error": null, "extra": {"tool_call_id": "call_1", "metadata": {"task_id": "t-1"}},
     "parent_run_id": "01a24dbc-9928-70d5-8bdd-b738cec81441",
     "trace_id": "01a24dbc-9928-70d5-8bdd-b738cec81441",
     "dotted_order": "20261206T234215336727Z01a24dbc-....20261206T234215337258Z01a24dbc-...",
     "reference_example_id": null, "tags": [], "status": "success", ...}

The shape was read from LangSmith's run data format (docs.langchain.com, "Run data
format") and the ``langsmith`` SDK 0.15.1 ``Run`` schema, and the runs written by
``langchain-core`` 1.8.3's tracer: a tool run's ``inputs`` are the tool's arguments
(``{"input": text}`` when the tool was given text), its ``outputs`` are ``{"output": x}``
where ``x`` is what the tool returned, or the ``ToolMessage`` it made when it ran for a
model's tool call (``content``, ``tool_call_id``, ``status``; also in LangChain's
``{"lc": 1, "type": "constructor", "kwargs": {...}}`` form); a run made with
``@traceable(run_type="tool")`` that returned an object has that object as ``outputs``.
``error`` is the exception with its stack trace (``ValueError('no such order')Traceback
... ValueError: no such order``); a tool that handled its error returns a ``ToolMessage``
with ``status: "error"``. Times are ISO 8601 text, or epoch milliseconds (the JS SDK).

A ``run_type: tool`` run is one call: ``name`` is the tool, ``extra.tool_call_id`` (or the
message's ``tool_call_id``) the call id, else the LangSmith run id (paired as inferred).
Chain, LLM and other runs are no calls. A run still open (no end time, no outputs, no
error) is a call whose result is missing. Child runs nested in ``child_runs`` are read
too.

The tracemine run is the LangSmith trace (``trace_id``, else the root of ``dotted_order``,
else the root found through ``parent_run_id``). Its task id is ``task_id`` (or
``task.id``) in the ``extra.metadata`` of the tool run, else of any run of its trace (the
root first), else the trace's ``reference_example_id`` (the dataset example an evaluation
ran), else the thread (``session_id``, ``thread_id`` or ``conversation_id`` in metadata,
which LangSmith groups as one conversation); the run's metadata says which
(``task_id_from``). ``trial``, ``family``, ``reward`` and ``run_outcome`` (also with a
``tracemine.`` prefix) come from the root run's metadata. Runs of a trace may come in any
order, so calls are kept until the end of the file and ordered by time.
"""

from __future__ import annotations

import re
from typing import Any

from tracemine.ingest.readers._common import (
    TASK_KEYS,
    THREAD_KEYS,
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
    parse_arguments,
    parse_result_text,
    parse_time,
    text_of_parts,
)

_RUN_SHAPE = (
    "a LangSmith run has id, name, run_type, inputs, outputs, error, start_time, "
    "end_time, extra, parent_run_id, trace_id"
)
_TRACEBACK = "Traceback (most recent call last):"
_CALLED = re.compile(r"([A-Za-z_][\w.]*)\((.*)\)\s*$", re.DOTALL)  # ValueError('…')
_NAMED = re.compile(  # KeyError: …, but not "Note: …"
    r"([A-Za-z_][\w.]*(?:Error|Exception|Timeout|Exit|Interrupt|Warning)):\s*(.*)$", re.DOTALL
)


def _is_run(unit: Any) -> bool:
    return (
        isinstance(unit, dict)
        and isinstance(unit.get("run_type"), str)
        and ("inputs" in unit or "outputs" in unit)
        and "id" in unit
    )


def _trace_of_dotted(dotted: Any) -> str | None:
    """The root run's id from a dotted order (``<time>Z<run id>.<time>Z<run id>…``)."""
    if not isinstance(dotted, str) or "Z" not in dotted:
        return None
    head = dotted.split(".", 1)[0]
    return head.split("Z", 1)[1] or None


def _error(text: str) -> tuple[str, str | None, str]:
    """``(status, error type, message)`` of a run's ``error``: the exception's last line
    when a stack trace follows, else its ``Type('message')`` or ``Type: message`` head."""
    head, _, trace = text.partition(_TRACEBACK)
    error_type: str | None = None
    message = head.strip() or text.strip()
    last = next((ln.strip() for ln in reversed(trace.splitlines()) if ln.strip()), "")
    if (found := _NAMED.match(last)) is not None:
        error_type, message = found.group(1), found.group(2).strip() or message
    elif (called := _CALLED.match(head.strip())) is not None:
        error_type, inner = called.group(1), called.group(2).strip()
        message = inner[1:-1] if len(inner) >= 2 and inner[0] == inner[-1] in "'\"" else inner
    elif (named := _NAMED.match(head.strip())) is not None:
        error_type, message = named.group(1), named.group(2).strip()
    lowered = (error_type or "").lower()
    if "timeout" in lowered or "timedout" in lowered or "deadline" in lowered:
        return "timeout", error_type, message
    if "cancel" in lowered:
        return "cancelled", error_type, message
    return "tool_error", error_type, message


def _message(value: Any) -> dict[str, Any] | None:
    """The fields of a serialized ``ToolMessage``, in either form LangChain writes it."""
    if not isinstance(value, dict):
        return None
    if value.get("lc") == 1 and value.get("type") == "constructor":
        ids = value.get("id")
        if isinstance(ids, list) and ids and ids[-1] == "ToolMessage":
            return as_dict(value.get("kwargs"))
        return None
    if value.get("type") == "tool" and "content" in value:
        return value
    return None


class LangSmithReader(Reader):
    """LangSmith runs, one a unit (or a page of them); calls are decided at the end of the
    file, when the runs of each trace are known."""

    name = "langsmith"
    version = "1"
    priority = 24
    orders_by_time = True
    looks_for = "LangSmith runs with run_type 'tool' (id, name, inputs, outputs, trace_id)"

    def __init__(self, source_file: str) -> None:
        super().__init__(source_file)
        self.calls: list[dict[str, Any]] = []
        # LangSmith runs by id, each with its reference example id
        self.runs = TraceTree()

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        if isinstance(unit, dict) and isinstance(unit.get("runs"), list):
            return any(_is_run(run) for run in unit["runs"][:5])
        return _is_run(unit)

    @classmethod
    def near_miss(cls, unit: Any) -> str | None:
        if not isinstance(unit, dict) or cls.sniff(unit):
            return None
        if isinstance(unit.get("run_type"), str):
            lacks = [k for k in ("id", "inputs", "outputs") if k not in unit]
            return f"its first record has run_type and no {' or '.join(lacks)} ({_RUN_SHAPE})"
        if "inputs" in unit and "outputs" in unit and "parent_run_id" in unit:
            return (
                "its first record has inputs, outputs and parent_run_id and no run_type "
                f"({_RUN_SHAPE})"
            )
        return None

    def feed(self, unit: Any, line: int, out: Sink) -> None:
        if isinstance(unit, dict) and isinstance(unit.get("runs"), list) and not _is_run(unit):
            for index, run in enumerate(unit["runs"]):
                self._run(run, None, line, f"/runs/{index}", out)
            return
        if not _is_run(unit):
            raise BadRecord(f"expected a LangSmith run ({_RUN_SHAPE})")
        self._run(unit, None, line, "", out)

    def _run(self, run: Any, parent: str | None, line: int, pointer: str, out: Sink) -> None:
        if not _is_run(run):
            out.quarantine(line, pointer or None, f"not a LangSmith run ({_RUN_SHAPE})", run)
            return
        run_id = as_str(run.get("id")) or f"{self.default_run_id(line)}{pointer}"
        if run_id in self.runs:
            # an export with child runs loaded also lists them on their own: read once
            reason = f"run {run_id} repeats a run read before; the first is kept"
            out.quarantine(line, pointer or None, reason, run)
            return
        parent = as_str(run.get("parent_run_id")) or parent
        trace_id = as_str(run.get("trace_id")) or _trace_of_dotted(run.get("dotted_order"))
        metadata = as_dict(as_dict(run.get("extra")).get("metadata"))
        self.runs.add(run_id, parent, trace_id, metadata, as_str(run.get("reference_example_id")))
        if run["run_type"].lower() == "tool":
            call = self._call(run, run_id, line, pointer, out)
            if call is not None:
                thread = as_str(first(metadata, THREAD_KEYS))
                call.update(_trace=trace_id, _parent=parent, _metadata=metadata, _thread=thread)
                self.calls.append(call)
        children = run.get("child_runs")
        for index, child in enumerate(children if isinstance(children, list) else []):
            self._run(child, run_id, line, f"{pointer}/child_runs/{index}", out)

    def _call(
        self, run: dict[str, Any], run_id: str, line: int, pointer: str, out: Sink
    ) -> dict[str, Any] | None:
        tool = as_str(run.get("name"))
        if not tool:
            out.quarantine(line, pointer or None, "tool run without a name", run)
            return None
        inputs = run.get("inputs")
        if inputs is not None and not isinstance(inputs, dict | str):
            out.quarantine(line, f"{pointer}/inputs", "inputs are not an object", run)
            return None
        arguments_raw, arguments, args_error = parse_arguments(inputs)
        outputs = run.get("outputs")
        extra = as_dict(run.get("extra"))
        call_id = as_str(extra.get("tool_call_id"))
        status, error_type, error_message = "ok", None, None
        result: Any = None
        result_text: str | None = None
        if isinstance(outputs, dict) and outputs:
            value = outputs["output"] if outputs.keys() == {"output"} else outputs
            message = _message(value)
            if message is not None:
                call_id = call_id or as_str(message.get("tool_call_id"))
                value = message.get("content")
                if isinstance(value, list):
                    value = text_of_parts(value) if all(
                        isinstance(p, dict | str) for p in value) else value  # fmt: skip
            if isinstance(value, str):
                result_text, result = value, parse_result_text(value)
            else:
                result = value
            if message is not None and message.get("status") == "error":
                # a tool that handled its error (handle_tool_error): the message says it
                status, error_message = "tool_error", _message_of(result)
        error = run.get("error")
        if isinstance(error, str) and error.strip():
            status, error_type, error_message = _error(error)
        elif run.get("status") == "error" and status == "ok":
            status = "tool_error"
        elif not (isinstance(outputs, dict) and outputs) and status == "ok":
            status = "missing"  # open, or ended with nothing: no result came back
        return platform_call(
            self,
            line=line,
            pointer=pointer,
            own_id=call_id,
            node_id=run_id,
            status=status,
            started_at=parse_time(run.get("start_time")),
            ended_at=parse_time(run.get("end_time")),
            tool=tool,
            arguments_raw=arguments_raw,
            arguments=arguments,
            arguments_error=args_error,
            result=result,
            result_text=result_text,
            error_type=error_type,
            error_message=error_message,
        )

    def finish(self, out: Sink) -> None:
        self.runs.emit(self.calls, out, self._record)

    def _record(self, trace: str, members: list[str]) -> dict[str, Any]:
        """The run record of a trace, from its runs' metadata (the root's first)."""
        metadata, example = self.runs.merged(members)
        task = as_str(first(metadata, TASK_KEYS)), "metadata"
        if task[0] is None and example is not None:
            task = example, "reference_example_id"
        thread = as_str(first(metadata, THREAD_KEYS))
        if task[0] is None and thread is not None:
            task = thread, "thread"
        extra = {"reference_example_id": example} if example is not None else {}
        return trace_run(self, trace, metadata, id_source="trace_id", task=task,
                         session=thread, extra=extra)  # fmt: skip
