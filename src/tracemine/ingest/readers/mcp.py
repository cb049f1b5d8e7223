"""MCP JSON-RPC transcripts: the messages an MCP client and server exchanged.

One JSON-RPC message per JSONL line (a line may also hold a JSON-RPC batch array, and a file
may be one JSON array of messages)::

    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
     "params": {"name": "get_order", "arguments": {"order_id": "#W0000001"}}}
    {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "{...}"}],
     "structuredContent": {...}, "isError": false}}

Logged messages may be wrapped: ``{"timestamp": ..., "direction": "send"|"recv",
"session_id": ..., "server": ..., "message": {...}}``; the MCP Inspector's history entries
(``{"timestamp", "direction": "request", "message", "response", "duration"}``) carry the
paired response and its delay in milliseconds.

A ``tools/call`` request is paired with the response of the same id. ``structuredContent``
is the result when present, else the text content (JSON in a string is parsed); the content
blocks stay raw in ``result_raw``. ``isError: true`` is a tool error; a JSON-RPC ``error``
object is a protocol error. ``notifications/cancelled`` cancels the request it names;
progress and other notifications, and non-tool requests (initialize, tools/list, ping), are
understood and skipped. A request never answered is ``missing``; a response to no pending
request is quarantined. Task-augmented calls (``CreateTaskResult``) take their result from
the ``tasks/result`` response. Ids are compared as text (``3`` and ``"3"`` match): loggers
and the spec's own cancellation example do not keep the JSON type of an id.

Runs are sessions: the wrapper's session id, else the file (a new ``initialize`` after tool
calls starts the file's next run, as ids restart with a new stdio session).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypeGuard

from tracemine.ingest.readers.base import (
    BadRecord,
    Reader,
    Sink,
    as_dict,
    as_float,
    as_str,
    dumps,
    duration_ms,
    parse_arguments,
    parse_result_text,
    parse_time,
    text_of_parts,
)

_SESSION_KEYS = ("session_id", "sessionId", "mcp_session_id", "mcpSessionId", "Mcp-Session-Id")
_TIME_KEYS = ("timestamp", "ts", "time")
_SERVER_KEYS = ("server", "server_name", "serverName")
_WRAPPED_KEYS = ("message", "payload")
# which side sent a message, in the words loggers use; "request"/"response" (the Inspector)
# name a message kind, not a side, and are ignored
_SENT = {"send", "sent", "out", "outgoing", "outbound", "client_to_server", "client->server"}
_RECEIVED = {"recv", "received", "in", "incoming", "inbound", "server_to_client", "server->client"}

Key = tuple[str, str, str]  # (session, requester side, id)


def _is_message(value: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict) and (
        "method" in value or ("id" in value and ("result" in value or "error" in value))
    )


def _wrapped(unit: dict[str, Any]) -> dict[str, Any] | None:
    if "jsonrpc" in unit:
        return None
    return next((unit[k] for k in _WRAPPED_KEYS if _is_message(unit.get(k))), None)


def _side(direction: Any) -> str:
    text = direction.strip().lower() if isinstance(direction, str) else ""
    return "a" if text in _SENT else "b" if text in _RECEIVED else ""


def _other(side: str) -> str:
    return {"a": "b", "b": "a"}.get(side, "")


class McpReader(Reader):
    name = "mcp"
    priority = 25

    def __init__(self, source_file: str) -> None:
        super().__init__(source_file)
        self.base = source_file.rsplit("/", 1)[-1]
        self.pending: dict[Key, list[Any]] = {}  # call records, or the method of other requests
        self.cancelled: dict[Key, dict[str, Any]] = {}
        self.tasks: dict[str, dict[str, Any]] = {}  # task id -> call waiting for tasks/result
        self.implicit = 0  # number of the file's current session when none is named
        self.calls_in_implicit = 0
        self.seq: dict[str, int] = {}
        self.servers: dict[str, str] = {}
        self.runs_seen: set[str] = set()

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        if isinstance(unit, list) and unit:
            unit = unit[0]
        if not isinstance(unit, dict):
            return False
        message = _wrapped(unit) or unit
        return message.get("jsonrpc") == "2.0" and _is_message(message)

    # -- reading -----------------------------------------------------------------------
    def feed(self, unit: Any, line: int, out: Sink) -> None:
        if isinstance(unit, list):  # a JSON-RPC batch
            for position, item in enumerate(unit):
                self._entry(item, line, f"/{position}", out)
        elif isinstance(unit, dict):
            self._entry(unit, line, "", out)
        else:
            raise BadRecord(f"expected a JSON-RPC message object, got {type(unit).__name__}")

    def _entry(self, item: Any, line: int, pointer: str, out: Sink) -> None:
        message = _wrapped(item) if isinstance(item, dict) else None
        wrapper = item if message is not None else {}
        message = message if message is not None else item
        if not _is_message(message):
            if not pointer:
                raise BadRecord("not a JSON-RPC request, notification or response")
            out.quarantine(line, pointer, "not a JSON-RPC request, notification or response", item)
            return
        inner = (
            f"{pointer}/{next(k for k in _WRAPPED_KEYS if k in wrapper)}" if wrapper else pointer
        )
        explicit = next((as_str(wrapper[k]) for k in _SESSION_KEYS if wrapper.get(k)), None)
        headers = wrapper.get("headers")
        if explicit is None and isinstance(headers, dict):
            explicit = next(
                (as_str(v) for k, v in headers.items() if k.lower() == "mcp-session-id"), None
            )
        when = next((parse_time(wrapper[k]) for k in _TIME_KEYS if k in wrapper), None)
        if when is None:
            when = next((parse_time(message[k]) for k in _TIME_KEYS if k in message), None)
        ctx: dict[str, Any] = {
            "session": explicit,
            "side": _side(wrapper.get("direction")),
            "time": when,
            "server": next((as_str(wrapper[k]) for k in _SERVER_KEYS if wrapper.get(k)), None),
        }
        self._message(message, line, inner or None, ctx, out)
        response = wrapper.get("response")
        if _is_message(response):  # the Inspector's history: the answer beside its request
            delay = as_float(wrapper.get("duration"))
            ended = when + timedelta(milliseconds=delay) if when and delay is not None else None
            ctx = {**ctx, "side": _other(ctx["side"]), "time": ended}
            self._message(response, line, f"{pointer}/response", ctx, out)

    def _message(
        self, msg: dict[str, Any], line: int, pointer: str | None, ctx: dict[str, Any], out: Sink
    ) -> None:
        method = msg.get("method")
        if isinstance(method, str):
            if msg.get("id") is None:
                self._notification(method, msg.get("params"), ctx, out)
            else:
                self._request(method, msg, line, pointer, ctx, out)
        else:
            self._response(msg, line, pointer, ctx, out)

    # -- sessions and runs ---------------------------------------------------------------
    def _session(self, ctx: dict[str, Any]) -> str:
        return ctx["session"] if ctx["session"] is not None else f"#{self.implicit}"

    def _run(self, ctx: dict[str, Any], out: Sink) -> str:
        if ctx["session"] is not None:
            run_id, source = ctx["session"], "session"
        else:
            run_id = self.base if self.implicit == 0 else f"{self.base}#{self.implicit + 1}"
            source = "file"
        if run_id not in self.runs_seen:
            self.runs_seen.add(run_id)
            out.run(
                self.new_run(
                    run_id=run_id,
                    session_id=ctx["session"],
                    metadata={"run_id_source": source},
                )
            )
        return run_id

    # -- requests ------------------------------------------------------------------------
    def _request(
        self,
        method: str,
        msg: dict[str, Any],
        line: int,
        pointer: str | None,
        ctx: dict[str, Any],
        out: Sink,
    ) -> None:
        params = as_dict(msg.get("params"))
        if method == "initialize" and ctx["session"] is None and self.calls_in_implicit:
            self.implicit += 1
            self.calls_in_implicit = 0
        request_id = as_str(msg["id"]) or ""
        key = (self._session(ctx), ctx["side"], request_id)
        if method == "initialize":  # a session's opening says who talks: run metadata
            run_id = self._run(ctx, out)
            info = as_dict(params.get("clientInfo"))
            found = {"protocol_version": params.get("protocolVersion"), "client": info.get("name")}
            metadata = {k: v for k, v in found.items() if v is not None}
            out.run(self.new_run(run_id=run_id, metadata=metadata))
        entry: Any = method
        if method == "tools/call":
            tool = params.get("name")
            if not isinstance(tool, str) or not tool:
                out.quarantine(line, pointer, "tools/call request without a tool name", msg)
            else:
                run_id = self._run(ctx, out)
                entry = self._new_call(tool, params, key, run_id, line, pointer, ctx)
        elif method == "tasks/result":
            entry = self.tasks.pop(as_str(params.get("taskId")) or "", method)
        self.pending.setdefault(key, []).append(entry)

    def _new_call(
        self,
        tool: str,
        params: dict[str, Any],
        key: Key,
        run_id: str,
        line: int,
        pointer: str | None,
        ctx: dict[str, Any],
    ) -> dict[str, Any]:
        raw_args, arguments, args_error = parse_arguments(params.get("arguments"))
        seq = self.seq.get(run_id, 0)
        self.seq[run_id] = seq + 1
        if ctx["session"] is None:
            self.calls_in_implicit += 1
        return self.new_call(
            source_line=line,
            source_pointer=pointer,
            run_id=run_id,
            session_id=ctx["session"],
            seq=seq,
            call_id=key[2],
            tool=tool,
            server=ctx["server"] or self.servers.get(key[0]),
            arguments_raw=raw_args,
            arguments=arguments,
            arguments_error=args_error,
            status="missing",
            started_at=ctx["time"],
            # two requests in flight under one id: a response cannot say which it answers
            anomalies=["duplicate_call_id"] if self.pending.get(key) else [],
        )

    # -- notifications -------------------------------------------------------------------
    def _notification(self, method: str, params: Any, ctx: dict[str, Any], out: Sink) -> None:
        if method != "notifications/cancelled" or not isinstance(params, dict):
            return  # progress, logging, list_changed ...: understood, nothing to store
        # the requester cancels, so the cancelled request was sent from the same side
        key = (self._session(ctx), ctx["side"], as_str(params.get("requestId")) or "")
        found = self._take(key)
        if found is None or not isinstance(found[1], dict):
            return  # unknown or already answered: the spec lets receivers ignore it
        call = found[1]
        call.update(status="cancelled", error_message=as_str(params.get("reason")))
        self._set_end(call, ctx["time"])
        # kept until the end: a response may still arrive after the cancellation
        self.cancelled[found[0]] = call

    # -- responses -----------------------------------------------------------------------
    def _response(
        self, msg: dict[str, Any], line: int, pointer: str | None, ctx: dict[str, Any], out: Sink
    ) -> None:
        request_id = as_str(msg.get("id"))
        key = (self._session(ctx), _other(ctx["side"]), request_id or "")
        found = self._take(key) if request_id is not None else None
        if found is None:
            late = self._take(key, self.cancelled) if request_id is not None else None
            if late is None:
                reason = f"response id {request_id} matches no pending request"
                out.quarantine(line, pointer, reason, msg)
                return
            call = late[1]
            self._fill(call, msg, request_id or "")
            call.update(status="cancelled", anomalies=[*call["anomalies"], "result_after_cancel"])
            out.call(call)
            return
        entry = found[1]
        if isinstance(entry, str):  # answer to a non-tool request
            result = msg.get("result")
            if entry == "initialize" and isinstance(result, dict):
                info = as_dict(result.get("serverInfo"))
                if isinstance(info.get("name"), str):
                    self.servers[key[0]] = info["name"]
                    run_id = self._run(ctx, out)
                    out.run(self.new_run(run_id=run_id, metadata={"server": info["name"]}))
            return
        result = as_dict(msg.get("result"))
        task = result.get("task")
        if isinstance(task, dict) and "content" not in result and task.get("taskId") is not None:
            # CreateTaskResult: the call's result comes later, through tasks/result
            self.tasks[as_str(task["taskId"]) or ""] = entry
            return
        # a tasks/result answer has its own id; the call's own id is what it answers
        self._fill(entry, msg, entry["call_id"] if key[2] != entry["call_id"] else key[2])
        self._set_end(entry, ctx["time"])
        out.call(entry)

    def _take(self, key: Key, table: dict[Key, Any] | None = None) -> tuple[Key, Any] | None:
        """The oldest entry under ``key``; failing that, the only one with the same id
        (a logger may name the session or the side on one message and not the other)."""
        pending = self.pending if table is None else table
        if key not in pending:
            same_id = [k for k in pending if k[2] == key[2]]
            if len(same_id) != 1:
                return None
            key = same_id[0]
        if table is not None:
            return key, table.pop(key)
        queue = pending[key]
        entry = queue.pop(0)
        if not queue:
            del pending[key]
        return key, entry

    def _fill(self, call: dict[str, Any], msg: dict[str, Any], response_id: str) -> None:
        call.update(result_call_id=response_id, id_pairing="exact")
        error = msg.get("error")
        if "error" in msg:
            call.update(status="protocol_error", result_raw=dumps(error))
            if isinstance(error, dict):
                call.update(error_type=as_str(error.get("code")))
                call.update(error_message=as_str(error.get("message")))
            else:
                call.update(error_message=as_str(error))
            return
        result = msg.get("result")
        if not isinstance(result, dict):  # not a CallToolResult: keep it, say nothing more
            call.update(
                status="unknown", result=result, anomalies=[*call["anomalies"], "result_not_object"]
            )
            return
        content = result.get("content")
        blocks = content if isinstance(content, list) else []
        text = text_of_parts(b for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        if result.get("structuredContent") is not None:
            value = result["structuredContent"]
        elif text is not None:
            value = parse_result_text(text)
        else:
            value = blocks or None  # images, resources: the blocks are the result
        is_error = result.get("isError") is True
        call.update(
            result=value,
            result_text=text,
            result_raw=None if content is None else dumps(content),
            status="tool_error" if is_error else "ok",
            error_message=text if is_error else None,
        )

    def _set_end(self, call: dict[str, Any], ended: Any) -> None:
        call["ended_at"] = ended
        call["duration_ms"] = duration_ms(call["started_at"], ended)

    # -- end of file -----------------------------------------------------------------------
    def finish(self, out: Sink) -> None:
        for call in self.cancelled.values():
            out.call(call)
        waiting = [e for queue in self.pending.values() for e in queue if isinstance(e, dict)]
        for call in [*waiting, *self.tasks.values()]:
            call.update(result_call_id=None, id_pairing="none", status="missing")
            out.call(call)
        self.pending.clear()
        self.cancelled.clear()
        self.tasks.clear()
