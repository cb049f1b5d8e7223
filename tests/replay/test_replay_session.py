"""An MCP client session's ``call_tool`` recorded and replayed, duck-typed: a tool error
(``isError``) comes back as the same result, a protocol error as the same exception."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tracemine.replay import Player, Recorder, ReplayedProtocolError


class ProtocolFailure(Exception):
    """Shaped like the MCP SDK's ``McpError``: the JSON-RPC error on ``.error``."""

    def __init__(self, error: Any) -> None:
        super().__init__(error.message)
        self.error = error


class Error:
    def __init__(self, code: int, message: str) -> None:
        self.code, self.message = code, message


class FakeSession:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        self.calls.append(name)
        if name == "broken":
            raise ProtocolFailure(Error(-32602, "unknown tool: broken"))
        if name == "fail":
            return {"content": [{"type": "text", "text": "quota exceeded"}], "isError": True}
        return {
            "content": [{"type": "text", "text": json.dumps({"n": arguments})}],
            "structuredContent": {"n": arguments},
            "isError": False,
        }

    def server_name(self) -> str:
        return "fake"


async def session_run(session: Any) -> list[Any]:
    out: list[Any] = [await session.call_tool("ok", {"x": 1})]
    out.append(await session.call_tool("fail", {}))
    try:
        await session.call_tool("broken", {"y": [1, 2]})
    except Exception as exc:
        out.append((type(exc).__name__, str(exc), exc.error.code))
    return out


def _field(result: Any, name: str) -> Any:
    snake = {"structuredContent": "structured_content", "isError": "is_error"}[name]
    return getattr(result, snake) if hasattr(result, snake) else getattr(result, name)


def test_session_round_trip_with_tool_and_protocol_errors(tmp_path: Path) -> None:
    cassette = tmp_path / "mcp.jsonl"
    live = FakeSession()
    recorder = Recorder(cassette)
    wrapped = recorder.session(live)
    assert wrapped.server_name() == "fake"  # the session's own attributes pass through
    recorded = asyncio.run(session_run(wrapped))
    recorder.save()
    statuses = [json.loads(line)["status"] for line in cassette.read_text().splitlines()[1:]]
    assert statuses == ["ok", "tool_error", "protocol_error"]

    player = Player(cassette)
    replayed = asyncio.run(session_run(player.session()))  # no live session at all
    assert player.live_calls == 0
    # the SDK's own type when another test imported it (snake_case since mcp 2), else a
    # payload with the wire's names
    assert _field(replayed[0], "structuredContent") == {"n": {"x": 1}}
    assert replayed[0].content[0].text == recorded[0]["content"][0]["text"]
    assert _field(replayed[1], "isError") is True
    assert replayed[1].content[0].text == "quota exceeded"
    assert replayed[2] == recorded[2] == ("ProtocolFailure", "unknown tool: broken", -32602)


def test_a_protocol_error_whose_type_is_gone_keeps_its_code(tmp_path: Path) -> None:
    cassette = tmp_path / "mcp.jsonl"
    cassette.write_text(
        '{"tracemine_cassette": 1}\n'
        '{"run_id": "r", "tool": "t", "arguments": {}, "status": "protocol_error", '
        '"error_type": "gone.module.Failure", "error_message": "timeout", "error_code": -32001}\n'
    )
    session = Player(cassette).session()
    with pytest.raises(ReplayedProtocolError) as caught:
        asyncio.run(session.call_tool("t", {}))
    assert caught.value.error.code == -32001 and caught.value.error.message == "timeout"


def test_cut_point_sends_the_chosen_tool_to_the_live_session(tmp_path: Path) -> None:
    cassette = tmp_path / "mcp.jsonl"
    with Recorder(cassette) as recorder:
        asyncio.run(session_run(recorder.session(FakeSession())))
    live = FakeSession()
    with Player(cassette, live={"fail"}) as player:
        replayed = asyncio.run(session_run(player.session(live)))
    assert live.calls == ["fail"]
    assert replayed[1]["isError"] is True  # the live session's own answer, a dict here
    origins = [json.loads(line)["origin"] for line in
               (tmp_path / "mcp.live.jsonl").read_text().splitlines()[1:]]  # fmt: skip
    assert origins == ["replay", "live", "replay"]
