"""Recording and replaying an MCP client session's ``call_tool``, duck-typed (no MCP SDK).

What the cassette keeps of an answer: ``result`` is its JSON payload (``structuredContent``,
else the text content parsed when it is JSON) so that check and mine read it like any
trace; ``result_raw`` is the whole ``CallToolResult`` as JSON text, which replay gives
back. A ``CallToolResult`` with ``isError`` is a tool error and comes back as a result; an
exception raised by ``call_tool`` is a protocol error and is raised again.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from tracemine.monitor.hooks import mcp_payload
from tracemine.replay._errors import ReplayMiss, recorded_error
from tracemine.replay._step import Deck


class Payload(dict[str, Any]):
    """A replayed ``CallToolResult`` when the MCP SDK is not imported: a dict whose keys
    are also attributes (``result.isError``, ``result.content[0].text``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return json.loads(json.dumps(self))


def _attributes(value: Any) -> Any:
    if isinstance(value, dict):
        return Payload({k: _attributes(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_attributes(v) for v in value]
    return value


def dump_result(result: Any) -> str:
    """A ``CallToolResult`` (a pydantic model, a dict or an object) as JSON text."""
    if hasattr(result, "model_dump"):
        data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    elif isinstance(result, dict):
        data = result
    else:
        data = {name: _attribute(result, name) for name in ("content", "structuredContent",
                "isError") if _attribute(result, name) is not None}  # fmt: skip
    return json.dumps(data, ensure_ascii=False, default=str)


def _attribute(result: Any, name: str) -> Any:
    """``structuredContent`` / ``isError`` of an object: snake_case since mcp 2."""
    snake = {"structuredContent": "structured_content", "isError": "is_error"}.get(name, name)
    found = getattr(result, snake, None)
    return found if found is not None else getattr(result, name, None)


def load_result(record: dict[str, Any], factory: Callable[[Any], Any] | None) -> Any:
    """The ``CallToolResult`` a record stands for: built by ``factory``, else by the MCP
    SDK's own type when it is already imported, else as a :class:`Payload`."""
    if isinstance(record.get("result_raw"), str):
        data = json.loads(record["result_raw"])
    else:
        result = record.get("result")
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        data = {"content": [{"type": "text", "text": text}],
                "isError": record["status"] == "tool_error"}  # fmt: skip
        if isinstance(result, dict):
            data["structuredContent"] = result
    if factory is None:
        sdk = sys.modules.get("mcp.types")
        factory = getattr(getattr(sdk, "CallToolResult", None), "model_validate", None)
    return factory(data) if factory is not None else _attributes(data)


class RecordingSession:
    """An MCP client session whose ``call_tool`` goes through a Recorder (or Player)."""

    def __init__(self, deck: Deck, session: Any = None,
                 result_factory: Callable[[Any], Any] | None = None) -> None:  # fmt: skip
        self._deck, self._session, self._factory = deck, session, result_factory

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        deck = self._deck
        step = deck.begin(name, dict(arguments or {}))
        if step.recorded is not None:
            record, _ = deck.replayed(step)
            if record["status"] in ("ok", "tool_error"):
                return load_result(record, self._factory)
            raise recorded_error(record)
        if self._session is None:
            raise ReplayMiss(
                f"{name} is to be called live but no live session was given",
                tool=name, arguments=json.dumps(arguments), key="",
            )  # fmt: skip
        started = time.perf_counter()
        try:
            result = await self._session.call_tool(name, arguments, *args, **kwargs)
        except Exception as exc:
            deck.keep_live(step, started, error=exc, status="protocol_error")
            raise
        value, status = mcp_payload(result)
        deck.keep_live(step, started, value, status=status, raw=dump_result(result))
        return result

    def __getattr__(self, name: str) -> Any:
        if self._session is None:
            raise AttributeError(name)
        return getattr(self._session, name)
