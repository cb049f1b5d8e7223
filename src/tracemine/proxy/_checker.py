"""Which requests wait for an answer, and the check of each ``tools/call`` result: one
:class:`Checker` a session, whatever carries its messages (stdio lines, HTTP bodies, SSE
events)."""

from __future__ import annotations

from typing import Any, TextIO

from tracemine.monitor import Monitor
from tracemine.monitor.hooks import mcp_payload
from tracemine.proxy._receipts import annotated, receipt_meta
from tracemine.proxy._wire import dumps, id_text

PREFIX = "tracemine mcp: "


class Checker:
    """The bookkeeping of one session: request ids not yet answered, ``tools/call``
    requests of checked tools waiting for their result, and the monitor's run."""

    def __init__(
        self, monitor: Monitor | None, run_id: str | None, *, note: bool, log: TextIO
    ) -> None:
        self.monitor, self.note, self.log = monitor, note, log
        self.run_state = monitor.start_run(run_id) if monitor is not None else None
        self._checked = frozenset(monitor.tools) if monitor is not None else frozenset()
        self.pending: dict[str, tuple[str, Any]] = {}  # tools/call id -> (tool, arguments)
        self.unanswered: set[str] = set()  # every request id the client sent, until answered
        self.receipts = 0
        self.violations = 0

    def request(self, message: dict[str, Any]) -> None:
        """Note a message the client sent."""
        key = id_text(message.get("id"))
        method = message.get("method")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if method == "notifications/cancelled":
            # the client gave up on it: no answer is owed, and a late one is not checked
            cancelled = id_text(params.get("requestId")) or ""
            self.unanswered.discard(cancelled)
            self.pending.pop(cancelled, None)
        if key is None or not isinstance(method, str):
            return
        self.unanswered.add(key)
        # _checked is empty without a monitor: no call is pending then
        name = params.get("name")
        if method == "tools/call" and isinstance(name, str) and name in self._checked:
            self.pending[key] = (params["name"], params.get("arguments") or {})

    def answered(self, message: dict[str, Any]) -> None:
        """Note a message the server sent."""
        if "method" not in message:
            self.unanswered.discard(id_text(message.get("id")) or "")

    def checked_line(self, line: bytes, value: Any) -> tuple[bytes, dict[str, Any]]:
        """The line to send on and the receipts attached (keyed by batch position, ``""``
        for a single message)."""
        batch = isinstance(value, list)
        items = value if batch else [value]
        out: list[Any] = []
        receipts: dict[str, Any] = {}
        for position, item in enumerate(items):
            meta = self.check(item) if isinstance(item, dict) else None
            if meta is None:
                out.append(item)
                continue
            receipts[str(position) if batch else ""] = meta
            out.append(annotated(item, meta, self.note))
        if not receipts:
            return line, receipts
        try:
            return dumps(out if batch else out[0]), receipts
        except ValueError:  # NaN in the server's answer: sent on as it came
            return line, receipts

    def check(self, response: dict[str, Any]) -> dict[str, Any] | None:
        key = id_text(response.get("id"))
        if key is None or "method" in response:
            return None
        called = self.pending.pop(key, None)
        result = response.get("result")
        if called is None or not isinstance(result, dict):
            return None  # a JSON-RPC error is a protocol error: nothing to check
        if result.get("resultType", "complete") != "complete" or "content" not in result:
            return None  # input_required, a task handle: not the call's result yet
        tool, arguments = called
        value, status = mcp_payload(result)
        assert self.monitor is not None  # calls are pending only when there is one
        receipt = self.monitor.check(
            tool, arguments, value, call_id=key, run=self.run_state, status=status
        )
        if status != "ok":
            return None  # a tool error is recorded in the run, not judged as a result
        meta = receipt_meta(receipt)
        self.receipts += 1
        if receipt.violations:
            self.violations += 1
            self.log.write(f"{PREFIX}{tool} (id {key}): {meta['note']}\n")
            self.log.flush()
        return meta
