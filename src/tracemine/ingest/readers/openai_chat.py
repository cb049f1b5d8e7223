"""OpenAI Chat Completions message lists.

A unit is one conversation, in any of these shapes::

    {"messages": [...], "task_id": "t1", "trial": 0, "reward": 1.0, "metadata": {...}}
    {"task_id": 3, "trial": 0, "reward": 0.0, "traj": [...]}        # result-file record
    [{"role": "system", ...}, {"role": "user", ...}, ...]            # a bare message list

or a single message per unit (one message a line), read as one run per file unless the
message names its ``run_id`` / ``conversation_id`` / ``session_id``.

An assistant message asks for calls in ``tool_calls``::

    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function",
       "function": {"name": "get_order", "arguments": "{\\"order_id\\": \\"#W1\\"}"}}]}

and each is answered by a tool message with the same id; its content is a string or a list
of content parts (``{"type": "text", "text": ...}``)::

    {"role": "tool", "tool_call_id": "call_1", "content": "{\\"status\\": \\"pending\\"}"}

The legacy shape (assistant ``function_call`` answered by a ``role: "function"`` message)
has no ids: results pair with the oldest open id-less call (``id_pairing`` "inferred"), as
does a tool message without ``tool_call_id`` with the oldest open call. A result whose
``name`` differs from its call's tool gets the anomaly ``result_name_mismatch``.

The format has no error flag, so every answered call is read as ``ok``; the readers' sink
then marks one whose result is an error payload as ``tool_error``
(:class:`tracemine.model.result.ErrorRule`; free text only with ``--error-pattern``).
``turn`` counts assistant messages in the run and ``parallel_index`` is the position in
``tool_calls``. Pairing, duplicate ids and second results follow
:mod:`tracemine.ingest.readers._messages`: a second tool message for an answered id is
quarantined and the call keeps its first result.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tracemine.ingest.readers._messages import (
    ConversationReader,
    RunCalls,
    set_result,
    unwrap_conversation,
)
from tracemine.ingest.readers.base import Sink, as_dict, as_str


def _is_tool_message(message: Any) -> bool:
    """A message only the chat format has: tool calls, tool results, legacy functions."""
    if not isinstance(message, dict):
        return False
    role = message.get("role")
    if role == "assistant":
        calls = message.get("tool_calls")
        return (
            isinstance(calls, list)
            and any(isinstance(c, dict) and isinstance(c.get("function"), dict) for c in calls)
        ) or isinstance(message.get("function_call"), dict)
    if role == "tool":
        return "tool_call_id" in message
    return role == "function" and isinstance(message.get("name"), str)


class OpenAIChatReader(ConversationReader):
    name = "openai_chat"
    priority = 30

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        if isinstance(unit, dict) and ("jsonrpc" in unit or "role" in unit):
            return "jsonrpc" not in unit and _is_tool_message(unit)
        conversation = unwrap_conversation(unit)
        return conversation is not None and any(map(_is_tool_message, conversation[0]))

    def message(
        self,
        calls: RunCalls,
        message: dict[str, Any],
        line: int,
        pointer: str | None,
        at: datetime | None,
        out: Sink,
    ) -> None:
        base = pointer or ""
        role = message.get("role")
        if role == "assistant":
            turn = calls.turns
            calls.turns += 1
            tool_calls = message.get("tool_calls")
            if isinstance(tool_calls, list):
                for position, item in enumerate(tool_calls):
                    where = f"{base}/tool_calls/{position}"
                    self._call(calls, item, turn, position, at, line, where, out)
            elif tool_calls is not None:
                out.quarantine(line, f"{base}/tool_calls", "tool_calls is not a list", tool_calls)
            legacy = message.get("function_call")
            if legacy is not None:
                where = f"{base}/function_call"
                self._call(calls, {"function": legacy}, turn, 0, at, line, where, out)
        elif role == "tool":
            call_id = as_str(message.get("tool_call_id"))
            # a tool message that names no call can only be paired by position
            record = calls.answer(call_id) if call_id is not None else calls.answer_oldest()
            self._result(calls, record, message, call_id, "tool result", at, line, pointer, out)
        elif role == "function":
            record = calls.answer(None)
            self._result(calls, record, message, None, "function result", at, line, pointer, out)

    def _call(
        self,
        calls: RunCalls,
        item: Any,
        turn: int,
        position: int,
        at: datetime | None,
        line: int,
        pointer: str,
        out: Sink,
    ) -> None:
        call = as_dict(item)
        function = as_dict(call.get("function"))
        call_id = as_str(call.get("id"))
        self.open_call(
            calls, function.get("name"), call_id, function.get("arguments"),
            line=line, pointer=pointer, out=out,
            unnamed=("tool call without a function name", item),
            turn=turn, parallel_index=position, started_at=at,
        )  # fmt: skip

    def _result(
        self,
        calls: RunCalls,
        record: dict[str, Any] | None,
        message: dict[str, Any],
        call_id: str | None,
        kind: str,
        at: datetime | None,
        line: int,
        pointer: str | None,
        out: Sink,
    ) -> None:
        if record is None:
            out.quarantine(line, pointer, calls.unmatched_reason(call_id, kind), message)
            return
        set_result(
            record,
            message.get("content"),
            result_call_id=call_id,
            pairing="exact" if call_id is not None else "inferred",
            ended_at=at,
        )
        name = message.get("name")
        if isinstance(name, str) and name != record["tool"]:
            record["anomalies"] = [*record["anomalies"], "result_name_mismatch"]
