"""``tracemine mcp replay``: a recorded session served as a stdio MCP server.

The recording is a transcript (what ``tracemine mcp wrap --record`` writes, or any JSONL
the ``mcp`` reader reads) or a cassette of :mod:`tracemine.replay`. The server answers
both handshakes (``initialize``, and ``server/discover`` of MCP 2026-07-28) and
``tools/list`` as recorded, ``ping`` with an empty result, and each ``tools/call`` with the
recorded response of the same tool and canonical arguments
(:func:`tracemine.replay.canonical_text`), in recorded order. A call not recorded gets a
JSON-RPC error (code :data:`NOT_RECORDED`) whose message names the nearest recorded call
and the arguments that differ; ``data`` has the keys. A receipt or note the proxy attached
is not replayed: the answers are what the server sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracemine.errors import InputError
from tracemine.proxy._receipts import RECEIPT_KEY, is_note_block
from tracemine.proxy._wire import dumps, id_text, lines, messages, parse, write_all
from tracemine.replay import Cassette, Player, ReplayMiss
from tracemine.replay._cassette import HEADER_KEY

NOT_RECORDED = -32002
"""The JSON-RPC error code of a call the recording cannot answer (server-defined range)."""
METHOD_NOT_FOUND = -32601
_LEGACY_VERSION = "2025-11-25"


@dataclass
class Recording:
    """What a replay server answers with: the handshake results, ``tools/list``, and one
    JSON-RPC response body (``{"result": ...}`` or ``{"error": ...}``) per recorded call."""

    path: Path
    initialize: dict[str, Any] | None = None
    discover: dict[str, Any] | None = None
    tools: dict[str, Any] | None = None
    calls: list[tuple[str, dict[str, Any], dict[str, Any], int]] = field(default_factory=list)

    @classmethod
    def load(cls, path: str | Path) -> Recording:
        """Read a transcript or a cassette; :class:`InputError` names the line at fault."""
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(f"{file}: no such recording") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{file}: cannot read the recording: {exc}") from None
        first = next((parse(line.encode()) for line in text.split("\n") if line.strip()), None)
        if isinstance(first, dict) and (HEADER_KEY in first or "tool" in first):
            return cls._from_cassette(file)
        return cls._from_transcript(file, text)

    @classmethod
    def _from_cassette(cls, file: Path) -> Recording:
        recording = cls(path=file)
        cassette = Cassette.load(file)
        for record, line in zip(cassette.records, cassette.lines, strict=True):
            recording.calls.append((record["tool"], record["arguments"], _body(record), line))
        return recording

    @classmethod
    def _from_transcript(cls, file: Path, text: str) -> Recording:
        recording = cls(path=file)
        asked: dict[str, tuple[str, dict[str, Any], int]] = {}
        for number, raw in enumerate(text.split("\n"), start=1):
            if not raw.strip():
                continue
            value = parse(raw.encode())
            if value is None:
                raise InputError(f"{file}:{number}: not JSON; expected one JSON-RPC message a line")
            if isinstance(value, dict) and "jsonrpc" not in value:
                value = value.get("message", value.get("payload"))
            for message in messages(value):
                key = id_text(message.get("id"))
                method = message.get("method")
                if key is None:
                    continue
                if isinstance(method, str):
                    params = message.get("params")
                    asked[key] = (method, params if isinstance(params, dict) else {}, number)
                elif key in asked:
                    recording._answer(*asked.pop(key), message)
        return recording

    def _answer(self, method: str, params: dict[str, Any], line: int, msg: dict[str, Any]) -> None:
        result = msg.get("result")
        if method == "tools/call" and isinstance(params.get("name"), str):
            arguments = params.get("arguments")
            body = {"error": msg["error"]} if "error" in msg else {"result": _as_sent(result)}
            self.calls.append(
                (params["name"], arguments if isinstance(arguments, dict) else {}, body, line)
            )
        elif isinstance(result, dict):
            # the first of each: a client that lists again gets the listing it first got
            if method == "initialize" and self.initialize is None:
                self.initialize = result
            elif method == "server/discover" and self.discover is None:
                self.discover = result
            elif method == "tools/list" and self.tools is None:
                self.tools = result


def _as_sent(result: Any) -> Any:
    """A recorded result as the server sent it: without a receipt or a note block."""
    if not isinstance(result, dict):
        return result
    out = dict(result)
    meta = out.get("_meta")
    if isinstance(meta, dict) and RECEIPT_KEY in meta:
        rest = {k: v for k, v in meta.items() if k != RECEIPT_KEY}
        out.pop("_meta")
        if rest:
            out["_meta"] = rest
        if isinstance(out.get("content"), list):
            out["content"] = [b for b in out["content"] if not is_note_block(b)]
    return out


def _body(record: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC answer a cassette record stands for."""
    status = record["status"]
    if status == "protocol_error":
        code = record.get("error_code")
        return {
            "error": {
                "code": code if code is not None else -32603,
                "message": record.get("error_message") or "recorded protocol error",
            }
        }
    raw = parse(record["result_raw"].encode()) if record.get("result_raw") else None
    if isinstance(raw, dict) and "content" in raw:
        return {"result": raw}
    if status == "ok":
        value = record.get("result")
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
        if not isinstance(value, str):
            result["structuredContent"] = value
        return {"result": result}
    message = record.get("error_message") or record.get("error_type") or status
    return {"result": {"content": [{"type": "text", "text": message}], "isError": True}}


class ReplayServer:
    """Answers MCP requests from a :class:`Recording`.

    >>> ReplayServer(Recording.load("sessions/mcp-….jsonl")).serve()  # doctest: +SKIP
    """

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        records = [
            {
                "run_id": "replay",
                "seq": i,
                "tool": tool,
                "arguments": arguments,
                "status": "ok",
                "result": None,
            }
            for i, (tool, arguments, _, _) in enumerate(recording.calls)
        ]
        lines_of = [line for *_, line in recording.calls]
        self.player = Player(Cassette(path=recording.path, records=records, lines=lines_of))

    def serve(self, client_in: int = 0, client_out: int = 1) -> None:
        """Answer every request read from ``client_in`` until it ends."""
        for line in lines(client_in):
            value = parse(line)
            answers = [a for m in messages(value) if (a := self.answer(m)) is not None]
            if not answers:
                continue
            try:
                write_all(client_out, dumps(answers if isinstance(value, list) else answers[0]))
            except OSError:  # the client is gone
                return

    def answer(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The response to one message; None for notifications and responses."""
        method = message.get("method")
        if not isinstance(method, str) or "id" not in message:
            return None
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        body = self._body(method, params)
        return {"jsonrpc": "2.0", "id": message["id"], **body}

    def _body(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        recording = self.recording
        if method == "initialize":
            return {"result": recording.initialize or _initialize(params)}
        if method == "server/discover":
            return {"result": recording.discover or _discover(params)}
        if method == "tools/list":
            return {"result": recording.tools or _tools(recording)}
        if method == "ping":
            return {"result": {}}
        if method == "tools/call":
            return self._call(params)
        return {
            "error": {
                "code": METHOD_NOT_FOUND,
                "message": f"{method} was not recorded; this replay answers "
                "initialize, server/discover, tools/list, tools/call and ping",
            }
        }

    def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        tool = params.get("name")
        arguments = params.get("arguments")
        if not isinstance(tool, str):
            return {"error": {"code": -32602, "message": "tools/call needs params.name"}}
        try:
            step = self.player.begin(tool, arguments if isinstance(arguments, dict) else {})
        except ReplayMiss as miss:
            data = {"key": miss.key, "nearest": miss.nearest, "arguments": miss.arguments}
            return {"error": {"code": NOT_RECORDED, "message": str(miss), "data": data}}
        assert step.recorded is not None
        return json.loads(json.dumps(self.recording.calls[step.recorded][2]))  # a fresh copy


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    version = params.get("protocolVersion")
    return {
        "protocolVersion": version if isinstance(version, str) else _LEGACY_VERSION,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "tracemine-replay", "version": "1"},
    }


def _discover(params: dict[str, Any]) -> dict[str, Any]:
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    assert isinstance(meta, dict)
    version = meta.get("io.modelcontextprotocol/protocolVersion", "2026-07-28")
    return {
        "supportedVersions": [version],
        "capabilities": {"tools": {}},
        "resultType": "complete",
        "_meta": {
            "io.modelcontextprotocol/serverInfo": {"name": "tracemine-replay", "version": "1"}
        },
    }


def _tools(recording: Recording) -> dict[str, Any]:
    names = dict.fromkeys(tool for tool, *_ in recording.calls)
    return {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}
