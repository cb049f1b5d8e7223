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

Runs are sessions: the wrapper's session id, else the file (a new ``initialize`` or
``server/discover`` after tool calls starts the file's next run, as ids restart with a new
stdio session). A session's task id is the wrapper's ``task_id`` (``tracemine mcp wrap
--task``), and ``trial``, ``reward``, ``run_outcome`` and ``family`` on the wrapper are
the run's too (an evaluation harness's additions); failing a task id, a call that names
its task in ``params._meta`` (under the wrapper's ``task_key``, else the field of
ingest's ``--task-key``, else ``task_id``) is in the run ``<session>/<task>`` of that
task, so one session that served several tasks is mined as several runs.

The protocol as of MCP 2026-07-28 (modelcontextprotocol.io/specification/2026-07-28), and
the handshake of 2025-11-25 and before:

- both openings: ``initialize`` (``protocolVersion``, ``clientInfo``; ``serverInfo`` in
  the answer) and ``server/discover`` (the version and client in ``params._meta``
  under ``io.modelcontextprotocol/protocolVersion`` and ``…/clientInfo``, the server in
  the answer's ``_meta``), or none at all (the version read from a call's ``_meta``);
- ``structuredContent`` of any JSON type (2026-07-28 allows more than objects);
- ``resultType``: ``complete`` is a result; ``input_required`` is not the call's result
  yet (the call is kept as ``unknown`` with the anomaly ``input_required``; the client's
  retry is a call of its own);
- ``resource_link`` and embedded ``resource`` blocks are the result when no text or
  structured content is given;
- tool ``annotations`` (``readOnlyHint``, ``destructiveHint`` …) from ``tools/list`` are
  kept in the run's metadata under ``tool_annotations``.

What ``tracemine mcp wrap`` adds is not evidence and is dropped when read: the receipt in
``result._meta["tracemine/receipt"]`` is never read, and a ``--note`` text block (one that
starts with ``[tracemine] ``) is left out of the content.
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
    as_small_int,
    as_str,
    dumps,
    duration_ms,
    parse_arguments,
    parse_result_text,
    parse_time,
    text_of_parts,
)
from tracemine.ingest.taskkey import lookup
from tracemine.proxy import is_note_block

_SESSION_KEYS = ("session_id", "sessionId", "mcp_session_id", "mcpSessionId", "Mcp-Session-Id")
_TIME_KEYS = ("timestamp", "ts", "time")
_SERVER_KEYS = ("server", "server_name", "serverName")
_WRAPPED_KEYS = ("message", "payload")
# which side sent a message, in the words loggers use; "request"/"response" (the Inspector)
# name a message kind, not a side, and are ignored
_SENT = {"send", "sent", "out", "outgoing", "outbound", "client_to_server", "client->server"}
_RECEIVED = {"recv", "received", "in", "incoming", "inbound", "server_to_client", "server->client"}

Key = tuple[str, str, str]  # (session, requester side, id)
_OPENINGS = ("initialize", "server/discover")
# where the 2026-07-28 protocol puts what initialize used to carry
_VERSION_META = "io.modelcontextprotocol/protocolVersion"
_CLIENT_META = "io.modelcontextprotocol/clientInfo"
_SERVER_META = "io.modelcontextprotocol/serverInfo"


def _run_fields(wrapper: dict[str, Any]) -> dict[str, Any]:
    """What a logging wrapper says of its session's run besides the task: ``trial``,
    ``reward``, ``run_outcome`` and ``family``, where an evaluation harness adds them."""
    found = {
        "trial": as_small_int(wrapper.get("trial")),
        "reward": as_float(wrapper.get("reward")),
        "run_outcome": as_str(wrapper.get("run_outcome")),
        "family": as_str(wrapper.get("family")),
    }
    return {k: v for k, v in found.items() if v is not None}


def _is_message(value: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict) and (
        "method" in value or ("id" in value and ("result" in value or "error" in value))
    )


def _wrapped(unit: dict[str, Any]) -> Any:
    """The message (or batch array) a logged entry wraps, or None."""
    if "jsonrpc" in unit:
        return None
    return next((unit[k] for k in _WRAPPED_KEYS if _is_message_or_batch(unit.get(k))), None)


def _is_message_or_batch(value: Any) -> bool:
    return _is_message(value) or (isinstance(value, list) and bool(value) and _is_message(value[0]))


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
        self.said: dict[str, list[dict[str, Any]]] = {}  # session run -> its run records
        self.splits: dict[str, list[str]] = {}  # session run -> runs of the tasks it served
        self.holding_calls: set[str] = set()  # session runs with a call of their own

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        if isinstance(unit, list) and unit:
            unit = unit[0]
        if not isinstance(unit, dict):
            return False
        message = _wrapped(unit) or unit
        if isinstance(message, list):
            message = message[0]
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
        if not _is_message(message) and not (wrapper and isinstance(message, list)):
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
        if when is None and isinstance(message, dict):
            when = next((parse_time(message[k]) for k in _TIME_KEYS if k in message), None)
        ctx: dict[str, Any] = {
            "session": explicit,
            "side": _side(wrapper.get("direction")),
            "time": when,
            "server": next((as_str(wrapper[k]) for k in _SERVER_KEYS if wrapper.get(k)), None),
            "task": as_str(wrapper.get("task_id")) if wrapper.get("task_id") else None,
            "task_key": as_str(wrapper.get("task_key")) if wrapper.get("task_key") else None,
            "run": _run_fields(wrapper),
        }
        if isinstance(message, list):  # a batch, logged as one entry
            for position, part in enumerate(message):
                if _is_message(part):
                    self._message(part, line, f"{inner}/{position}", ctx, out)
                else:
                    reason = "not a JSON-RPC request, notification or response"
                    out.quarantine(line, f"{inner}/{position}", reason, part)
            return
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

    def _run(self, ctx: dict[str, Any], out: Sink, task: str | None = None) -> str:
        """The run of this session (or of its ``task``, when a call names one)."""
        if ctx["session"] is not None:
            base, source = ctx["session"], "session"
        else:
            base = self.base if self.implicit == 0 else f"{self.base}#{self.implicit + 1}"
            source = "file"
        run_id = base if task is None else f"{base}/{task}"
        if run_id not in self.runs_seen:
            self.runs_seen.add(run_id)
            metadata: dict[str, Any] = {"run_id_source": source}
            if task is not None:
                metadata["task_id_from"] = f"params._meta.{self._task_field(ctx)}"
            record = self.new_run(
                run_id=run_id,
                session_id=ctx["session"],
                task_id=task if task is not None else ctx["task"],
                metadata=metadata,
                **ctx["run"],
            )
            if task is None:
                self.said.setdefault(base, [])
                self._say(base, record, out)
            else:
                out.run(record)
                self.splits.setdefault(base, []).append(run_id)
                for said in self.said.get(base, ()):  # what the session said is the task's too
                    out.run(
                        {
                            **said,
                            "run_id": run_id,
                            "task_id": task,
                            "metadata": {
                                k: v for k, v in said["metadata"].items() if k != "run_id_source"
                            },
                        }
                    )
        return run_id

    def _say(self, base: str, record: dict[str, Any], out: Sink) -> None:
        """Something about a session's run: stored with it once it holds a call (or at the
        end, when none of its calls went to runs of their own), and said of its tasks' runs."""
        self.said.setdefault(base, []).append(record)
        if base in self.holding_calls:
            out.run(record)
        for split in self.splits.get(base, ()):
            metadata = {k: v for k, v in record["metadata"].items() if k != "run_id_source"}
            out.run({**record, "run_id": split, "task_id": None, "metadata": metadata})

    def _session_run(self, ctx: dict[str, Any], out: Sink, **fields: Any) -> None:
        run_id = self._run(ctx, out)
        self._say(run_id, self.new_run(run_id=run_id, **fields), out)

    def _task_field(self, ctx: dict[str, Any]) -> str:
        key = self.task_key
        field = getattr(key, "field", None)
        return ctx["task_key"] or (field if isinstance(field, str) else "task_id")

    def _call_task(self, params: dict[str, Any], ctx: dict[str, Any]) -> str | None:
        """The task a call names in its ``_meta``, when the session has none of its own."""
        meta = params.get("_meta")
        if ctx["task"] is not None or not isinstance(meta, dict):
            return None
        value = lookup(meta, self._task_field(ctx))
        if value is None or isinstance(value, dict | list | bool):
            return None
        return str(value)

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
        if method in _OPENINGS and ctx["session"] is None and self.calls_in_implicit:
            self.implicit += 1
            self.calls_in_implicit = 0
        request_id = as_str(msg["id"]) or ""
        key = (self._session(ctx), ctx["side"], request_id)
        meta = as_dict(params.get("_meta"))
        if method in _OPENINGS:  # a session's opening says who talks: run metadata
            run_id = self._run(ctx, out)
            legacy = method == "initialize"
            info = as_dict(params.get("clientInfo") if legacy else meta.get(_CLIENT_META))
            version = params.get("protocolVersion") if legacy else meta.get(_VERSION_META)
            found = {"protocol_version": version, "client": info.get("name"), "handshake": method}
            metadata = {k: v for k, v in found.items() if v is not None}
            self._say(run_id, self.new_run(run_id=run_id, metadata=metadata), out)
        entry: Any = method
        if method == "tools/call":
            tool = params.get("name")
            if not isinstance(tool, str) or not tool:
                out.quarantine(line, pointer, "tools/call request without a tool name", msg)
            else:
                task = self._call_task(params, ctx)
                run_id = self._run(ctx, out, task)
                if task is None and run_id not in self.holding_calls:
                    self.holding_calls.add(run_id)
                    for record in self.said.get(run_id, ()):
                        out.run(record)
                if isinstance(meta.get(_VERSION_META), str):  # no handshake: each call says
                    out.run(
                        self.new_run(
                            run_id=run_id, metadata={"protocol_version": meta[_VERSION_META]}
                        )
                    )
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
            self._answered(entry, msg.get("result"), ctx, out)
            return
        result = as_dict(msg.get("result"))
        if result.get("resultType") == "input_required":
            # the server asks the client first; the client's retry is a call of its own
            entry.update(
                status="unknown",
                result_raw=dumps(result),
                anomalies=[*entry["anomalies"], "input_required"],
            )
            self._set_end(entry, ctx["time"])
            out.call(entry)
            return
        task = result.get("task")
        if isinstance(task, dict) and "content" not in result and task.get("taskId") is not None:
            # CreateTaskResult: the call's result comes later, through tasks/result
            self.tasks[as_str(task["taskId"]) or ""] = entry
            return
        # a tasks/result answer has its own id; the call's own id is what it answers
        self._fill(entry, msg, entry["call_id"] if key[2] != entry["call_id"] else key[2])
        self._set_end(entry, ctx["time"])
        out.call(entry)

    def _answered(self, method: str, result: Any, ctx: dict[str, Any], out: Sink) -> None:
        """What the answer to an opening or to ``tools/list`` says about the run."""
        if not isinstance(result, dict):
            return
        if method in _OPENINGS:
            legacy = method == "initialize"
            info = as_dict(
                result.get("serverInfo")
                if legacy
                else as_dict(result.get("_meta")).get(_SERVER_META)
            )
            if isinstance(info.get("name"), str):
                self.servers[self._session(ctx)] = info["name"]
                self._session_run(ctx, out, metadata={"server": info["name"]})
        elif method == "tools/list" and isinstance(result.get("tools"), list):
            annotations = {
                tool["name"]: tool["annotations"]
                for tool in result["tools"]
                if isinstance(tool, dict) and isinstance(tool.get("name"), str)
                and isinstance(tool.get("annotations"), dict) and tool["annotations"]
            }  # fmt: skip
            if annotations:
                self._session_run(ctx, out, metadata={"tool_annotations": annotations})

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
        if isinstance(content, list) and any(is_note_block(b) for b in content):
            content = [b for b in content if not is_note_block(b)]  # the proxy's, not the tool's
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
        for base, records in self.said.items():
            # a session that served tasks is their runs; one with no call is still a run
            if base not in self.holding_calls and base not in self.splits:
                for record in records:
                    out.run(record)
        for call in self.cancelled.values():
            out.call(call)
        waiting = [e for queue in self.pending.values() for e in queue if isinstance(e, dict)]
        for call in [*waiting, *self.tasks.values()]:
            call.update(result_call_id=None, id_pairing="none", status="missing")
            out.call(call)
        self.pending.clear()
        self.cancelled.clear()
        self.tasks.clear()
