"""Langfuse traces and observations: a trace as ``GET /api/public/traces/{traceId}``
returns it (``TraceWithFullDetails``, its observations nested whole), observations as
``GET /api/public/observations`` pages them (``{"data": [...], "meta": {...}}``), or one
observation a line, as JSON lines or one JSON array (also the rows of the blob storage
export, whose columns are snake_case: ``trace_id``, ``start_time`` …)::

    {"id": "9f2b6c1e-…", "timestamp": "2025-06-01T10:00:00.000Z", "name": "refund-agent",
     "sessionId": "ticket-7", "metadata": {"task_id": "refund-1", "trial": 0},
     "input": "Refund order A-1", "output": "Refunded.", "htmlPath": "/project/…",
     "observations": [
       {"id": "3c1d…", "traceId": "9f2b6c1e-…", "type": "TOOL", "name": "get_order",
        "startTime": "2025-06-01T10:00:00.150Z", "endTime": "2025-06-01T10:00:00.300Z",
        "input": {"order_id": "A-1"}, "output": {"status": "delivered"},
        "metadata": {"tool_call_id": "call_1"}, "level": "DEFAULT", "statusMessage": null,
        "parentObservationId": "a7e0…", ...}],
     "scores": [{"name": "reward", "value": 1.0, ...}], ...}

The shape was read from Langfuse's public API definition as the Python SDK 3.15.0 ships
it (``langfuse.api``: ``TraceWithFullDetails``, ``ObservationsView``, ``ObservationsViews``
with ``MetaResponse``), the docs' data model and observation types (``SPAN``,
``GENERATION``, ``EVENT``, and since August 2025 ``AGENT``, ``TOOL``, ``CHAIN``,
``RETRIEVER``, ``EVALUATOR``, ``EMBEDDING``, ``GUARDRAIL``), the blob storage export field
reference (langfuse.com, 2026: JSON/JSONL rows, times as ``YYYY-MM-DD HH:MM:SS.ffffff``
UTC, ``input``/``output`` as text, empty strings for unset fields), the server's
OpenTelemetry type mapping (``ObservationTypeMapper``: ``openinference.span.kind`` TOOL,
``gen_ai.operation.name`` execute_tool and ``gen_ai.tool.name`` make a ``TOOL``) and what
the SDK 3.15.0 records: ``@observe(as_type="tool")`` gives a function's arguments as
``{"args": [...], "kwargs": {...}}`` and, when it raises, ``level: ERROR`` with
``statusMessage`` the exception's text; the LangChain ``CallbackHandler`` makes a
``TOOL`` observation whose ``input`` is LangChain's ``str()`` of the arguments (a Python
literal, the arguments themselves in ``metadata.inputs``), whose ``metadata`` holds the
model's ``tool_call_id``, whose ``output`` is the ``ToolMessage`` the tool made, and an
error as ``level: ERROR`` and ``statusMessage``.

A ``TOOL`` observation is one call: ``name`` is the tool, ``input`` the arguments,
``output`` the result (text is parsed as JSON where it is JSON), ``metadata.tool_call_id``
(or the ``ToolMessage``'s) the call id, else the Langfuse observation id (paired as
inferred). A ``SPAN`` is a call only when it is marked as a tool the way the server's
type mapping reads it (those keys in its ``metadata`` or ``metadata.attributes``, as
servers before the ``TOOL`` type stored OpenTelemetry tool spans); other spans, the
generations that announce tool calls, agents and chains are no calls. ``level: ERROR``
is a tool error with ``statusMessage`` as its message (``Type: message`` names its type;
a timeout or a cancellation by that type); a ``ToolMessage`` with ``status: "error"`` is
one too. A call with no output and no error is a call whose result is missing.

The tracemine run is the Langfuse trace (``traceId``). Its task id is ``task_id`` (or
``task.id``, ``tracemine.task_id``) in the metadata of the tool observation, else of its
trace, else of any observation of its trace (the roots first), else the trace's
``sessionId`` (a Langfuse session groups the traces of one conversation); the run's
metadata says which (``task_id_from``). ``trial``, ``family``, ``reward`` and
``run_outcome`` (also with a ``tracemine.`` prefix) come from the same metadata, the
reward else from a trace score named ``reward``. Observations of a trace may come in any
order, and apart from their trace, so calls are kept until the end of the file and
ordered by time.
"""

from __future__ import annotations

import ast
import contextlib
from typing import Any

from tracemine.ingest.readers._common import (
    RUN_KEYS,
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
    as_float,
    as_str,
    dumps,
    loads,
    parse_arguments,
    parse_result_text,
    parse_time,
    text_of_parts,
)
from tracemine.ingest.readers.langsmith import _error, _message

TYPES = frozenset(
    ("SPAN", "GENERATION", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER", "EVALUATOR",
     "EMBEDDING", "GUARDRAIL")
)  # fmt: skip
_CALL_ID_KEYS = ("tool_call_id", "toolCallId", "gen_ai.tool.call.id", "tool_call.id")
_OBSERVATION_SHAPE = (
    "a Langfuse observation has id, traceId, type, name, startTime, endTime, input, "
    "output, level, statusMessage, parentObservationId"
)
_TRACE_SHAPE = "a Langfuse trace has id, timestamp, name, sessionId, metadata, observations"
_IDS_ONLY = (
    "lists its observations by id only (GET /api/public/traces); GET "
    "/api/public/traces/{traceId} or an observations export gives them whole"
)
_LITERAL_CHARS = 100_000  # a Python literal longer than this is not parsed


def _trace_of(record: dict[str, Any]) -> str | None:
    return as_str(first(record, ("traceId", "trace_id"))) or None


def _object(value: Any) -> dict[str, Any]:
    """An object field (metadata), also given as JSON text (the text exports)."""
    if isinstance(value, str) and value.strip().startswith("{"):
        with contextlib.suppress(ValueError):
            value = loads(value)
    return as_dict(value)


def _is_observation(unit: Any) -> bool:
    return (
        isinstance(unit, dict)
        and "id" in unit
        and isinstance(unit.get("type"), str)
        and unit["type"].upper() in TYPES
        and ("traceId" in unit or "trace_id" in unit)
        and ("startTime" in unit or "start_time" in unit)
    )


def _is_nested(item: Any) -> bool:
    """An observation nested in its trace (which names the trace)."""
    return (
        isinstance(item, dict)
        and "id" in item
        and isinstance(item.get("type"), str)
        and item["type"].upper() in TYPES
    )


def _is_trace(unit: Any) -> bool:
    """A trace with its observations whole (or with none)."""
    if not isinstance(unit, dict) or "id" not in unit or "timestamp" not in unit:
        return False
    observations = unit.get("observations")
    return isinstance(observations, list) and all(isinstance(o, dict) for o in observations[:5])


def _is_trace_row(unit: Any) -> bool:
    """A trace without observations: the blob storage export's ``traces/`` row."""
    return (
        isinstance(unit, dict)
        and "id" in unit
        and "timestamp" in unit
        and "type" not in unit
        and "observations" not in unit
    )


def _is_page(unit: Any) -> bool:
    return isinstance(unit, dict) and isinstance(unit.get("data"), list) and "meta" in unit


def _marked_tool(metadata: dict[str, Any]) -> bool:
    """Whether a span's metadata marks it as a tool, as the server's type mapping reads
    OpenTelemetry attributes."""
    for found in (metadata, as_dict(metadata.get("attributes"))):
        kind = found.get("openinference.span.kind", found.get("langfuse.observation.type"))
        if isinstance(kind, str) and kind.upper() == "TOOL":
            return True
        if found.get("gen_ai.operation.name") == "execute_tool" or found.get("gen_ai.tool.name"):
            return True
    return False


def _literal(text: str) -> Any:
    """A Python literal (what ``str()`` of a dict gives), or None."""
    if len(text) > _LITERAL_CHARS or not text.lstrip().startswith("{"):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _arguments(value: Any, metadata: dict[str, Any]) -> tuple[str | None, Any, str | None]:
    """``(arguments_raw, arguments, arguments_error)`` of an observation's input."""
    if value == "":
        value = None  # the blob storage export's unset field
    if isinstance(value, dict) and value.keys() == {"args", "kwargs"}:
        args, kwargs = value["args"], value["kwargs"]
        if isinstance(args, list) and not args and isinstance(kwargs, dict):
            value = kwargs  # @observe: called with keyword arguments only
    raw, arguments, error = parse_arguments(value)
    if error is not None and isinstance(value, str):
        inputs = metadata.get("inputs")  # the LangChain handler: str() of the arguments
        literal = inputs if isinstance(inputs, dict) else _literal(value)
        if isinstance(literal, dict):
            try:
                dumps(literal)
            except ValueError:
                return raw, arguments, error
            return raw, literal, None
    return raw, arguments, error


def _result(value: Any) -> tuple[bool, Any, str | None, str | None, bool]:
    """``(answered, result, result text, call id, handled error)`` of an output."""
    if value is None or value == "":
        return False, None, None, None, False
    message = _message(value)
    call_id: str | None = None
    if message is not None:
        call_id = as_str(message.get("tool_call_id"))
        value = message.get("content")
        if isinstance(value, list) and all(isinstance(p, dict | str) for p in value):
            value = text_of_parts(value)
    if isinstance(value, str):
        return True, parse_result_text(value), value, call_id, _handled(message)
    return True, value, None, call_id, _handled(message)


def _handled(message: dict[str, Any] | None) -> bool:
    return message is not None and message.get("status") == "error"


class LangfuseReader(Reader):
    """Langfuse traces with their observations, observation pages and observation rows;
    calls are decided at the end of the file, when each trace's observations are known."""

    name = "langfuse"
    version = "1"
    priority = 23
    orders_by_time = True
    looks_for = (
        "Langfuse observations of type TOOL (id, traceId, type, name, startTime, input, "
        "output, level, statusMessage), alone or nested in traces"
    )

    def __init__(self, source_file: str) -> None:
        super().__init__(source_file)
        self.calls: list[dict[str, Any]] = []
        # Langfuse observation id -> (parent id, trace id, metadata, session id)
        self.observations = TraceTree(orphans_are_roots=True)
        # trace id -> (metadata, session id, reward score, name)
        self.traces: dict[str, tuple[dict[str, Any], str | None, float | None, str | None]] = {}

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        if _is_page(unit):
            return any(_is_observation(u) or _is_trace(u) for u in unit["data"][:5])
        return _is_observation(unit) or _is_trace(unit)

    @classmethod
    def near_miss(cls, unit: Any) -> str | None:
        if not isinstance(unit, dict) or cls.sniff(unit):
            return None
        if _is_page(unit) and unit["data"] and isinstance(unit["data"][0], dict):
            said = cls.near_miss(unit["data"][0])
            return f"in its data page, {said}" if said else None
        kind = unit.get("type")
        if isinstance(kind, str) and kind.upper() in TYPES and "id" in unit:
            timed = "startTime" in unit or "start_time" in unit
            parented = "parentObservationId" in unit or "parent_observation_id" in unit
            if timed or parented:
                lacks = [k for k, there in (("traceId", "traceId" in unit or "trace_id" in unit),
                         ("startTime", timed)) if not there]  # fmt: skip
                return (
                    f"its first record has type {kind} and no {' or '.join(lacks)} "
                    f"({_OBSERVATION_SHAPE})"
                )
        observations = unit.get("observations")
        if isinstance(observations, list) and "id" in unit:
            if "timestamp" not in unit:
                return f"its first record has id and observations and no timestamp ({_TRACE_SHAPE})"
            return f"its first record is a trace that {_IDS_ONLY}"
        return None

    def feed(self, unit: Any, line: int, out: Sink) -> None:
        if _is_page(unit) and not _is_observation(unit):
            for index, item in enumerate(unit["data"]):
                self._unit(item, None, line, f"/data/{index}", out)
            return
        if not isinstance(unit, dict) or not (
            _is_observation(unit) or _is_trace_row(unit) or "observations" in unit
        ):
            raise BadRecord(f"expected a Langfuse observation or trace ({_OBSERVATION_SHAPE})")
        self._unit(unit, None, line, "", out)

    def _unit(self, item: Any, trace: str | None, line: int, pointer: str, out: Sink) -> None:
        at = pointer or None
        if _is_observation(item):
            self._observation(item, trace, line, pointer, out)
        elif (
            isinstance(item, dict)
            and "id" in item
            and "type" not in item
            and ("timestamp" in item or "observations" in item)
        ):
            self._trace(item, line, pointer, out)
        else:
            out.quarantine(line, at, f"not a Langfuse observation or trace ({_OBSERVATION_SHAPE})",
                           item)  # fmt: skip

    def _trace(self, trace: dict[str, Any], line: int, pointer: str, out: Sink) -> None:
        trace_id = as_str(trace.get("id")) or f"{self.default_run_id(line)}{pointer}"
        if trace_id in self.traces:
            reason = f"trace {trace_id} repeats a trace read before; the first is kept"
            out.quarantine(line, pointer or None, reason, trace)
            return
        scores = trace.get("scores")
        reward = next(
            (as_float(s.get("value")) for s in (scores if isinstance(scores, list) else [])
             if isinstance(s, dict) and s.get("name") in RUN_KEYS["reward"]),
            None,
        )  # fmt: skip
        session = as_str(first(trace, ("sessionId", "session_id"))) or None
        self.traces[trace_id] = (_object(trace.get("metadata")), session, reward,
                                 as_str(trace.get("name")))  # fmt: skip
        observations = trace.get("observations")
        if observations is None:
            return
        if not isinstance(observations, list):
            reason = f"trace {trace_id}: observations is not a list ({_TRACE_SHAPE})"
            out.quarantine(line, f"{pointer}/observations", reason, trace)
            return
        if any(isinstance(o, str) for o in observations):
            out.quarantine(line, f"{pointer}/observations", f"trace {trace_id} {_IDS_ONLY}",
                           observations)  # fmt: skip
        for index, item in enumerate(observations):
            if isinstance(item, str):
                continue
            where = f"{pointer}/observations/{index}"
            if _is_nested(item):
                self._observation(item, trace_id, line, where, out)
            else:
                out.quarantine(line, where, f"not a Langfuse observation ({_OBSERVATION_SHAPE})",
                               item)  # fmt: skip

    def _observation(
        self, obs: dict[str, Any], trace: str | None, line: int, pointer: str, out: Sink
    ) -> None:
        obs_id = as_str(obs.get("id")) or f"{self.default_run_id(line)}{pointer}"
        if obs_id in self.observations:
            # a trace fetched whole and its observations exported too: read once
            reason = f"observation {obs_id} repeats an observation read before; the first is kept"
            out.quarantine(line, pointer or None, reason, obs)
            return
        parent = as_str(first(obs, ("parentObservationId", "parent_observation_id"))) or None
        trace_id = _trace_of(obs) or trace
        metadata = _object(obs.get("metadata"))
        session = as_str(first(obs, ("sessionId", "session_id"))) or None
        self.observations.add(obs_id, parent, trace_id, metadata, session)
        kind = obs["type"].upper()
        if kind == "TOOL" or (kind == "SPAN" and _marked_tool(metadata)):
            call = self._call(obs, obs_id, metadata, line, pointer, out)
            if call is not None:
                call.update(_trace=trace_id, _parent=parent, _metadata=metadata, _thread=None)
                self.calls.append(call)

    def _call(
        self,
        obs: dict[str, Any],
        obs_id: str,
        metadata: dict[str, Any],
        line: int,
        pointer: str,
        out: Sink,
    ) -> dict[str, Any] | None:
        attributes = as_dict(metadata.get("attributes"))
        tool = as_str(obs.get("name")) or as_str(attributes.get("gen_ai.tool.name"))
        if not tool:
            out.quarantine(line, pointer or None, "tool observation without a name", obs)
            return None
        arguments_raw, arguments, args_error = _arguments(obs.get("input"), metadata)
        answered, result, result_text, message_id, handled = _result(obs.get("output"))
        call_id = as_str(first(metadata, _CALL_ID_KEYS) or first(attributes, _CALL_ID_KEYS))
        call_id = call_id or message_id
        status, error_type, error_message = "ok", None, None
        if handled:  # a tool that handled its error returned a ToolMessage saying so
            status, error_message = "tool_error", _message_of(result)
        level = as_str(obs.get("level")) or ""
        said = as_str(first(obs, ("statusMessage", "status_message"))) or ""
        if level.upper() == "ERROR":
            if said.strip():
                status, error_type, error_message = _error(said)
            elif status == "ok":
                status, error_message = "tool_error", _message_of(result) if answered else None
        elif not answered and status == "ok":
            status = "missing"  # open, or ended with nothing: no result came back
        return platform_call(
            self,
            line=line,
            pointer=pointer,
            own_id=call_id,
            node_id=obs_id,
            status=status,
            started_at=parse_time(first(obs, ("startTime", "start_time"))),
            ended_at=parse_time(first(obs, ("endTime", "end_time"))),
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
        self.observations.emit(self.calls, out, self._record)
        self.traces.clear()

    def _record(self, trace: str, members: list[str]) -> dict[str, Any]:
        """The run record of a trace, from its metadata, then its observations' (the
        roots first)."""
        metadata, session, score, name = self.traces.get(trace, ({}, None, None, None))
        metadata, observed = self.observations.merged(members, into=metadata)
        session = session or observed
        task = as_str(first(metadata, TASK_KEYS)), "metadata"
        if task[0] is None and session is not None:
            task = session, "sessionId"
        return trace_run(
            self, trace, metadata, id_source="traceId", task=task, session=session,
            extra={"trace_name": name} if name is not None else {}, reward=score,
            own_keys=_CALL_ID_KEYS,  # a call's own, not its run's
        )  # fmt: skip
