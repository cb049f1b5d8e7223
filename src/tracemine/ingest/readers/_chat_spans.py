"""Tool calls told of in the messages of GenAI chat spans (for :mod:`.otlp`; not a reader).

Instrumentations that record model calls only (``opentelemetry-instrumentation-openai-v2``
with message capture on, and others following the GenAI semantic conventions) put no
``execute_tool`` span in the trace: the calls are in the chat spans' messages. Each chat
span carries ``gen_ai.input.messages`` (what was sent: the whole history) and
``gen_ai.output.messages`` (what the model answered), JSON text of messages whose
``parts`` include::

    {"type": "tool_call", "id": "call_1", "name": "get_order", "arguments": {...}}
    {"type": "tool_call_response", "id": "call_1", "response": ...}

(the conventions' schema names the result ``response``; some instrumentations and
examples write ``result``: both are read). A call asked in one span's output is answered
in a later span's input, and every later span repeats both in its history: a call is read
once per run, at its first sighting, and paired with its response by id (id-less ones in
order, ``inferred``). It asked when the span that holds it ended, and was answered when
the span whose input first holds the response started. A call that an ``execute_tool``
span also describes (same run, same id) is left to that span; a response no call of its
run asked for is quarantined. A call never answered is ``missing``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tracemine.ingest.readers.base import (
    Sink,
    as_int,
    as_str,
    dumps,
    duration_ms,
    loads,
    parse_arguments,
    parse_result_text,
    parse_time,
)

INPUT, OUTPUT = "gen_ai.input.messages", "gen_ai.output.messages"


@dataclass(slots=True)
class Sighting:
    """A tool part where it was first seen: ``at`` (nanoseconds) orders sightings."""

    at: int
    line: int
    pointer: str
    part: dict[str, Any]
    index: int  # place among the message's tool calls


@dataclass(slots=True)
class ChatTrace:
    """What the chat spans of one trace tell of its calls."""

    conversation: str | None = None
    session: str | None = None
    calls: dict[str, Sighting] = field(default_factory=dict)
    responses: dict[str, Sighting] = field(default_factory=dict)


def _messages(value: Any, whole: bool = False) -> list[Any] | None:
    """The message list an attribute holds (JSON text, or an array already decoded);
    None for text without a tool part in it, unless ``whole`` (its length is needed)."""
    if isinstance(value, str):
        if not whole and "tool_call" not in value:  # most chat spans: nothing to parse
            return None
        parsed = loads(value)
        return parsed if isinstance(parsed, list) else None
    return value if isinstance(value, list) else None


def _keep_first(found: dict[str, Sighting], key: str, sighting: Sighting) -> None:
    known = found.get(key)
    if known is None or (sighting.at, sighting.line) < (known.at, known.line):
        found[key] = sighting


class ChatSpans:
    """Collects tool parts of chat spans per trace; :meth:`calls` pairs them per run."""

    def __init__(self) -> None:
        self.traces: dict[str, ChatTrace] = {}

    def add(self, trace_id: str, span: dict[str, Any], attrs: dict[str, Any], line: int,
            pointer: str, out: Sink) -> None:  # fmt: skip
        """Read the tool parts of one span's messages, if it has any."""
        if INPUT not in attrs and OUTPUT not in attrs:
            return
        answer = self._read(attrs, OUTPUT, False, line, pointer, out)
        # the answer's messages come after the whole history: its length is needed
        history = self._read(attrs, INPUT, bool(answer), line, pointer, out)
        if not history and not answer:
            return
        start = as_int(span.get("startTimeUnixNano", span.get("start_time_unix_nano"))) or 0
        end = as_int(span.get("endTimeUnixNano", span.get("end_time_unix_nano"))) or start
        trace = self.traces.setdefault(trace_id, ChatTrace())
        trace.conversation = trace.conversation or as_str(attrs.get("gen_ai.conversation.id"))
        trace.session = trace.session or as_str(attrs.get("session.id"))
        # a message's place in the conversation: the history, then the answer after it
        placed = [(i, INPUT, i, m, start) for i, m in enumerate(history)]
        placed += [(len(history) + j, OUTPUT, j, m, end) for j, m in enumerate(answer)]
        for position, name, index, message, at in placed:
            parts = message.get("parts") if isinstance(message, dict) else None
            calls = 0
            for k, part in enumerate(parts if isinstance(parts, list) else ()):
                kind = part.get("type") if isinstance(part, dict) else None
                if kind not in ("tool_call", "tool_call_response"):
                    continue
                where = f"{pointer}/{name}/{index}/parts/{k}"
                key = as_str(part.get("id")) or f"#{position}/{k}"
                if kind == "tool_call":
                    _keep_first(trace.calls, key, Sighting(at, line, where, part, calls))
                    calls += 1
                else:
                    _keep_first(trace.responses, key, Sighting(start, line, where, part, 0))

    @staticmethod
    def _read(attrs: dict[str, Any], name: str, whole: bool, line: int, pointer: str,
              out: Sink) -> list[Any]:  # fmt: skip
        try:
            return _messages(attrs.get(name), whole) or []
        except ValueError as exc:
            out.quarantine(line, f"{pointer}/{name}", f"{name} is not JSON: {exc}",
                           attrs.get(name))  # fmt: skip
            return []

    def calls(
        self,
        run_of: Callable[[str, str | None, str | None, int], dict[str, Any]],
        described: set[tuple[str, str]],
        new_call: Callable[..., dict[str, Any]],
        out: Sink,
    ) -> None:
        """Emit each run's calls, paired with their responses. ``run_of(trace id,
        conversation, session, line)`` gives the run a trace belongs to; ``described``
        holds the ``(run id, call id)`` of calls ``execute_tool`` spans already gave."""
        runs: dict[str, tuple[dict[str, Any], ChatTrace]] = {}
        for trace_id, trace in self.traces.items():
            sightings = [*trace.calls.values(), *trace.responses.values()]
            if not sightings:  # messages that only spoke of tool calls: no run from them
                continue
            first = min(s.line for s in sightings)
            run = run_of(trace_id, trace.conversation, trace.session, first)
            _, merged = runs.setdefault(run["run_id"], (run, ChatTrace()))
            for key, sighting in trace.calls.items():
                _keep_first(merged.calls, key, sighting)
            for key, sighting in trace.responses.items():
                _keep_first(merged.responses, key, sighting)
        for run, merged in runs.values():
            _pair(run, merged, described, new_call, out)
        self.traces.clear()


def _pair(run: dict[str, Any], chat: ChatTrace, described: set[tuple[str, str]],
          new_call: Callable[..., dict[str, Any]], out: Sink) -> None:  # fmt: skip
    run_id = run["run_id"]
    responses = chat.responses
    # id-less responses answer id-less calls in the order both came
    unnamed = sorted((k for k in responses if k.startswith("#")), key=lambda k: responses[k].at)
    for key, call in sorted(chat.calls.items(), key=lambda kv: (kv[1].at, kv[1].line)):
        call_id = None if key.startswith("#") else key
        if call_id is not None and (run_id, call_id) in described:
            continue  # an execute_tool span holds this call, with its own timing
        if not as_str(call.part.get("name")):  # its response, if any, is quarantined too
            out.quarantine(call.line, call.pointer, "tool_call part without a tool name",
                           call.part)  # fmt: skip
            continue
        if call_id is not None:
            response = responses.pop(call_id, None)
        else:
            found = next((k for k in unnamed if responses[k].at >= call.at), None)
            response = responses.pop(found) if found is not None else None
            if found is not None:
                unnamed.remove(found)
        out.call(_record(run, call, call_id, response, new_call))
    for key, response in responses.items():
        if (run_id, key) in described:
            continue  # the chat's view of a call an execute_tool span gave
        why = (
            "tool_call_response without an id, and no id-less tool call before it is open"
            if key.startswith("#")
            else f"tool_call_response for call id {key!r}, which no tool call of this run asked"
        )
        out.quarantine(response.line, response.pointer, why, response.part)


def _record(run: dict[str, Any], call: Sighting, call_id: str | None,
            response: Sighting | None,
            new_call: Callable[..., dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
    part = call.part
    raw, arguments, error = parse_arguments(part.get("arguments"))
    started = parse_time(call.at) if call.at else None
    record = new_call(
        source_line=call.line, source_pointer=call.pointer, run_id=run["run_id"],
        session_id=run["session_id"], task_id=run["task_id"], call_id=call_id,
        tool=as_str(part.get("name")), arguments_raw=raw, arguments=arguments,
        arguments_error=error, parallel_index=call.index, started_at=started,
        status="missing", anomalies=[],
    )  # fmt: skip
    if response is None:
        return record
    given = response.part.get("response", response.part.get("result"))
    ended = parse_time(response.at) if response.at else None
    record.update(status="ok", result_call_id=call_id, ended_at=ended,
                  duration_ms=duration_ms(started, ended),
                  id_pairing="exact" if call_id is not None else "inferred")  # fmt: skip
    if isinstance(given, str):
        record["result_text"], record["result"] = given, parse_result_text(given)
    elif isinstance(given, list):  # content parts: their text is the result
        record["result_raw"] = dumps(given)
        texts = [p.get("content", p.get("text")) for p in given
                 if isinstance(p, dict) and p.get("type") == "text"]  # fmt: skip
        text = "\n".join(t for t in texts if isinstance(t, str)) if texts else None
        record["result_text"] = text
        record["result"] = parse_result_text(text) if text is not None else given
    else:
        record["result"] = given
    return record
