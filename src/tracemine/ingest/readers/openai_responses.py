"""OpenAI Responses API items.

The model asks for a call with a ``function_call`` item and the client answers with a
``function_call_output`` item of the same ``call_id``::

    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
     "arguments": "{\\"city\\": \\"Paris\\"}", "status": "completed"}
    {"type": "function_call_output", "call_id": "call_1", "output": "{\\"temp\\": 18}"}

``arguments`` is the raw string the model wrote; ``output`` is a string or a list of
``input_text`` / ``input_image`` / ``input_file`` parts. A unit is any of:

- a response object ``{"object": "response", "id": "resp_1", "output": [...]}``;
- an item list (a conversation's ``input``), or an object holding one under ``input``,
  ``items`` or ``data`` (and possibly ``output``: a request logged with its response);
- a single item (one item a line).

Outputs usually arrive after the response that asked for them (in the next request's
``input``), so calls stay open across units and are paired per run; those still open at
the end of the file are missing. A unit's run is its ``conversation`` id, else its
``run_id`` / ``conversation_id`` / ``session_id``, else the run of the response named by
``previous_response_id``, else its own ``id`` (one per line for an anonymous list, one
per file for single items).

``turn`` counts the model's stretches of output (a response object is one turn; in an
item list a turn is a run of model items — calls, reasoning, assistant messages — between
user messages and call outputs); ``parallel_index`` is the position among its calls.
Statuses: an answered call is ``ok`` (the format has no error flag); a call the model did
not finish (``status: "incomplete"``) that got no output never ran and is ``cancelled``;
one that got an output anyway keeps it, with the anomaly ``call_incomplete``; any other
unanswered call is ``missing``. Pairing, duplicate ids and second outputs follow
:mod:`tracemine.ingest.readers._messages`.
"""

from __future__ import annotations

from typing import Any

from tracemine.ingest.readers._common import run_fields
from tracemine.ingest.readers._messages import RunCalls, set_result
from tracemine.ingest.readers.base import BadRecord, Reader, Sink, as_str, parse_arguments

_PAIRED = frozenset({"function_call", "function_call_output"})
#: item types the model produces; a run of them is one turn
_MODEL_ITEMS = frozenset({"function_call", "reasoning", "custom_tool_call", "web_search_call"})
_ARRAYS = ("input", "items", "data", "output")
_RUN_ID_KEYS = ("run_id", "conversation_id", "session_id")


def _type_of(item: dict[str, Any]) -> str | None:
    kind = item.get("type")
    return kind if isinstance(kind, str) else None


def _is_paired_item(item: Any) -> bool:
    return isinstance(item, dict) and _type_of(item) in _PAIRED and "call_id" in item


def _arrays(unit: dict[str, Any]) -> list[tuple[str, list[Any]]]:
    return [(key, unit[key]) for key in _ARRAYS if isinstance(unit.get(key), list)]


class OpenAIResponsesReader(Reader):
    name = "openai_responses"
    priority = 30

    def __init__(self, source_file: str) -> None:
        super().__init__(source_file)
        self.runs: dict[str, RunCalls] = {}
        #: response id -> run id, to follow ``previous_response_id`` chains
        self.chain: dict[str, str] = {}

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        if isinstance(unit, list):
            return any(map(_is_paired_item, unit))
        if not isinstance(unit, dict) or "jsonrpc" in unit:
            return False
        if unit.get("object") == "response" and isinstance(unit.get("output"), list):
            return True
        return _is_paired_item(unit) or any(
            any(map(_is_paired_item, items)) for _, items in _arrays(unit)
        )

    def feed(self, unit: Any, line: int, out: Sink) -> None:
        if isinstance(unit, list):
            calls = self._run(self.default_run_id(line), {}, out)
            self._items(calls, unit, "", line, out)
            self._close(calls, out)  # an anonymous list is a whole conversation
            return
        if not isinstance(unit, dict):
            raise BadRecord(
                f"expected an item, an item list or a response, got {type(unit).__name__}"
            )
        arrays = _arrays(unit)
        if not arrays:
            if not isinstance(unit.get("type"), str):
                raise BadRecord("expected a Responses item (with 'type') or an object with items")
            run_id = self._run_id(unit) or self.source_file.rsplit("/", 1)[-1]
            calls = self._run(run_id, {}, out)
            self._item(calls, unit, None, line, out, None)
            calls.flush(out, final=False)
            return
        is_response = unit.get("object") == "response"
        named = self._run_id(unit)
        run_id = named or as_str(unit.get("id")) or self.default_run_id(line)
        if is_response and isinstance(unit.get("id"), str):
            self.chain[unit["id"]] = run_id
        # a response's own scalars (status, model...) describe the response, not the run;
        # nor does the link to the previous response
        if is_response:
            wrapper = {"metadata": unit.get("metadata")}
        else:
            wrapper = {k: v for k, v in unit.items() if k != "previous_response_id"}
        calls = self._run(run_id, run_fields(wrapper), out)
        for key, items in arrays:
            if key == "output":
                calls.in_turn = False  # a response's output is one turn of its own
            self._items(calls, items, f"/{key}", line, out, unit if key == "output" else None)
        if named is None and not is_response and unit.get("id") is None:
            self._close(calls, out)
        else:
            calls.flush(out, final=False)

    def finish(self, out: Sink) -> None:
        for calls in self.runs.values():
            calls.flush(out, final=True)
        self.runs.clear()
        self.chain.clear()

    # -- runs -----------------------------------------------------------------------------
    def _run_id(self, unit: dict[str, Any]) -> str | None:
        conversation = unit.get("conversation")
        if isinstance(conversation, dict):
            conversation = conversation.get("id")
        if isinstance(conversation, str) and conversation:
            return conversation
        for key in _RUN_ID_KEYS:
            if unit.get(key) not in (None, ""):
                return as_str(unit[key])
        previous = unit.get("previous_response_id")
        return self.chain.get(previous) if isinstance(previous, str) else None

    def _run(self, run_id: str, fields: dict[str, Any], out: Sink) -> RunCalls:
        calls = self.runs.get(run_id)
        if calls is None:
            calls = self.runs[run_id] = RunCalls(run_id, fields)
        out.run(self.new_run(run_id=run_id, **{"metadata": {}, **fields}))
        return calls

    def _close(self, calls: RunCalls, out: Sink) -> None:
        calls.flush(out, final=True)
        del self.runs[calls.run_id]

    # -- items ----------------------------------------------------------------------------
    def _items(
        self,
        calls: RunCalls,
        items: list[Any],
        prefix: str,
        line: int,
        out: Sink,
        response: dict[str, Any] | None = None,
    ) -> None:
        for index, item in enumerate(items):
            pointer = f"{prefix}/{index}"
            if not isinstance(item, dict):
                out.quarantine(line, pointer, "item is not an object", item)
                continue
            self._item(calls, item, pointer, line, out, response)

    def _item(
        self,
        calls: RunCalls,
        item: dict[str, Any],
        pointer: str | None,
        line: int,
        out: Sink,
        response: dict[str, Any] | None,
    ) -> None:
        kind = _type_of(item)
        role = item.get("role")
        if kind in _MODEL_ITEMS or (kind in ("message", None) and role == "assistant"):
            if not calls.in_turn:
                calls.turns += 1
                calls.turn_calls = 0
                calls.in_turn = True
        else:
            calls.in_turn = False
        if kind == "function_call":
            self._call(calls, item, pointer, line, out, response)
        elif kind == "function_call_output":
            call_id = as_str(item.get("call_id"))
            record = calls.answer(call_id)
            if record is None:
                reason = calls.unmatched_reason(call_id, "function_call_output")
                out.quarantine(line, pointer, reason, item)
                return
            if record["status"] == "cancelled":
                record.update(error_type=None, error_message=None)
                record["anomalies"] = [*record["anomalies"], "call_incomplete"]
            set_result(record, item.get("output"), result_call_id=call_id, pairing="exact")
            if item.get("status") == "incomplete":
                record["anomalies"] = [*record["anomalies"], "result_incomplete"]

    def _call(
        self,
        calls: RunCalls,
        item: dict[str, Any],
        pointer: str | None,
        line: int,
        out: Sink,
        response: dict[str, Any] | None,
    ) -> None:
        name = item.get("name")
        call_id = as_str(item.get("call_id"))
        if not isinstance(name, str) or not name:
            calls.reject(call_id)
            out.quarantine(line, pointer, "function_call without a name", item)
            return
        raw, arguments, error = parse_arguments(item.get("arguments"))
        record = self.new_call(
            source_line=line,
            source_pointer=pointer,
            turn=calls.turns - 1,
            parallel_index=calls.turn_calls,
            call_id=call_id,
            tool=name,
            arguments_raw=raw,
            arguments=arguments,
            arguments_error=error,
        )
        calls.turn_calls += 1
        calls.add(record)
        if item.get("status") == "incomplete":
            details = (response or {}).get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            record.update(
                status="cancelled",
                error_type="incomplete",
                error_message=f"the model did not finish this call ({reason or 'no reason given'})",
            )
