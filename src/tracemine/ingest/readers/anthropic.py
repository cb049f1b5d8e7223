"""Anthropic Messages conversations.

A unit is one conversation (a message list, ``{"messages": [...]}`` possibly with
``task_id`` / ``trial`` / ``reward`` / ``metadata``, or a result-file record keeping the
list under ``traj``), or a single message per unit: a Messages API response object
(``{"type": "message", "role": "assistant", "content": [...]}``), a request-side message,
or a transcript line wrapping one (``{"type": "assistant", "message": {...},
"sessionId": ..., "timestamp": ...}``). Single messages make one run per file unless they
name their run (``run_id``, ``conversation_id``, ``session_id``, ``sessionId``).

An assistant message asks for calls with ``tool_use`` blocks, and a later user message
answers them with ``tool_result`` blocks of the same id::

    {"role": "assistant", "content": [
      {"type": "text", "text": "Let me look that up."},
      {"type": "tool_use", "id": "toolu_01", "name": "get_weather",
       "input": {"location": "Paris"}}]}
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_01", "content": "18 degrees",
       "is_error": false}]}

``content`` of a result is a string or a list of blocks (text, image, document...); the
blocks are kept in ``result_raw`` and their text is the result. ``is_error: true`` makes a
``tool_error`` whose message is that text. Server-side tools are read the same way:
``server_tool_use`` / ``mcp_tool_use`` blocks are calls (``server_name`` is the server) and
any ``*_tool_result`` block with a ``tool_use_id`` is a result; a result whose content is
an ``*_error`` object (``{"type": "web_search_tool_result_error", "error_code": ...}``) is a
tool error. ``input`` is an object, so ``arguments_raw`` is its JSON. ``turn`` counts
assistant messages; ``parallel_index`` is the position among the message's calls. Pairing,
duplicate ids and second results follow :mod:`tracemine.ingest.readers._messages`.
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
from tracemine.ingest.readers.base import Sink, as_str, dumps

_CALL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


def _is_call_block(block: dict[str, Any]) -> bool:
    kind = block.get("type")
    return isinstance(kind, str) and kind in _CALL_BLOCKS


def _is_result_block(block: dict[str, Any]) -> bool:
    kind = block.get("type")
    return isinstance(kind, str) and kind.endswith("tool_result") and "tool_use_id" in block


def _has_tool_blocks(message: Any) -> bool:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return False
    return any(
        isinstance(block, dict) and (_is_call_block(block) or _is_result_block(block))
        for block in message["content"]
    )


def _wrapped(unit: dict[str, Any]) -> dict[str, Any] | None:
    """The message inside a transcript line (``{"type": ..., "message": {...}}``)."""
    inner = unit.get("message")
    return inner if isinstance(inner, dict) and isinstance(inner.get("role"), str) else None


class AnthropicReader(ConversationReader):
    name = "anthropic"
    priority = 30
    stream_id_keys = ("run_id", "conversation_id", "session_id", "sessionId")

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        if isinstance(unit, dict) and "jsonrpc" in unit:
            return False
        if isinstance(unit, dict) and "role" in unit:
            return _has_tool_blocks(unit)
        if isinstance(unit, dict) and _wrapped(unit) is not None:
            return _has_tool_blocks(_wrapped(unit))
        conversation = unwrap_conversation(unit)
        return conversation is not None and any(map(_has_tool_blocks, conversation[0]))

    def single_message(self, unit: Any) -> tuple[dict[str, Any], str | None] | None:
        inner = _wrapped(unit) if isinstance(unit, dict) and "role" not in unit else None
        return (inner, "/message") if inner is not None else super().single_message(unit)

    def message(
        self,
        calls: RunCalls,
        message: dict[str, Any],
        line: int,
        pointer: str | None,
        at: datetime | None,
        out: Sink,
    ) -> None:
        turn, position = None, 0
        if message.get("role") == "assistant":
            message_id = as_str(message.get("id"))
            if message_id is not None and message_id == calls.last_turn_id:
                # the same API message split over several records: one turn
                turn, position = calls.turns - 1, calls.turn_calls
            else:
                turn = calls.turns
                calls.turns += 1
                calls.last_turn_id = message_id
        content = message.get("content")
        if not isinstance(content, list):
            return  # plain text: no calls, no results
        base = f"{pointer or ''}/content"
        for index, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            where = f"{base}/{index}"
            if _is_call_block(block):
                self._call(calls, block, turn, position, at, line, where, out)
                position += 1
            elif _is_result_block(block):
                self._result(calls, block, at, line, where, out)
        if turn is not None:
            calls.turn_calls = position

    def _call(
        self,
        calls: RunCalls,
        block: dict[str, Any],
        turn: int | None,
        position: int,
        at: datetime | None,
        line: int,
        pointer: str,
        out: Sink,
    ) -> None:
        self.open_call(
            calls, block.get("name"), as_str(block.get("id")), block.get("input"),
            line=line, pointer=pointer, out=out,
            unnamed=(f"{block.get('type')} block without a name", block),
            turn=turn, parallel_index=position, started_at=at,
            server=as_str(block.get("server_name")),
        )  # fmt: skip

    def _result(
        self,
        calls: RunCalls,
        block: dict[str, Any],
        at: datetime | None,
        line: int,
        pointer: str,
        out: Sink,
    ) -> None:
        call_id = as_str(block.get("tool_use_id"))
        record = calls.answer(call_id)
        if record is None:
            out.quarantine(line, pointer, calls.unmatched_reason(call_id, "tool_result"), block)
            return
        content = block.get("content")
        error_type = None
        failed = block.get("is_error") is True
        if isinstance(content, dict) and str(content.get("type", "")).endswith("_error"):
            failed = True
            error_type = as_str(content.get("error_code")) or as_str(content.get("type"))
        set_result(
            record,
            content,
            result_call_id=call_id,
            pairing="exact",
            status="tool_error" if failed else "ok",
            ended_at=at,
        )
        if failed:
            record["error_type"] = error_type
            text = record["result_text"]
            record["error_message"] = text if text is not None else _message_of(content)


def _message_of(content: Any) -> str | None:
    if content is None:
        return None
    if isinstance(content, dict) and isinstance(content.get("error_code"), str):
        return content["error_code"]
    return dumps(content)
