"""Which requests wait for an answer, and the check of each ``tools/call`` result: one
:class:`Checker` a session, whatever carries its messages (stdio lines, HTTP bodies, SSE
events).

Runs are cut as ingest cuts them (:mod:`tracemine.ingest.readers.mcp`): a session with a
task of its own (``--task``) is one run; otherwise a call that names its task in
``params._meta`` (under ``task_key``) belongs to the run ``<session>/<task>``, and the
calls that name none to the session's run. So a session that served twenty tasks is
checked as the twenty runs it was mined as, and per-run contracts (call caps, orders)
count each task's calls, not the whole session's."""

from __future__ import annotations

from typing import Any, TextIO

from tracemine.monitor import Monitor, Run
from tracemine.monitor.hooks import mcp_payload
from tracemine.proxy._advertise import advertised_listing, structured
from tracemine.proxy._receipts import annotated, receipt_meta
from tracemine.proxy._wire import dumps, id_text

PREFIX = "tracemine mcp: "


class Checker:
    """The bookkeeping of one session: request ids not yet answered, ``tools/call``
    requests of checked tools waiting for their result, and the monitor's run."""

    def __init__(
        self,
        monitor: Monitor | None,
        run_id: str | None,
        *,
        note: bool,
        log: TextIO,
        task: str | None = None,
        task_key: str = "task_id",
        advertise: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.monitor, self.note, self.log = monitor, note, log
        self.advertise = advertise or {}
        self.listings: set[str] = set()  # tools/list ids, when there are schemas to add
        self.advertised: set[str] = set()  # tools given a schema in a tools/list answer
        self.structuring: set[str] = set()  # tools/call ids of those tools
        self.run_id, self.task, self.task_key = run_id, task, task_key
        self.run_state = monitor.start_run(run_id) if monitor is not None else None
        self.task_runs: dict[str, Run] = {}  # a task named in a call's _meta -> its run
        self._checked = frozenset(monitor.tools) if monitor is not None else frozenset()
        # tools/call id -> (tool, arguments, the task its _meta names)
        self.pending: dict[str, tuple[str, Any, str | None]] = {}
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
            self.listings.discard(cancelled)
            self.structuring.discard(cancelled)
        if key is None or not isinstance(method, str):
            return
        self.unanswered.add(key)
        # _checked is empty without a monitor: no call is pending then
        name = params.get("name")
        if method == "tools/list" and self.advertise:
            self.listings.add(key)
        if method == "tools/call" and name in self.advertised:
            self.structuring.add(key)
        if method == "tools/call" and isinstance(name, str) and name in self._checked:
            task = self._call_task(params) if self.task is None else None
            self.pending[key] = (params["name"], params.get("arguments") or {}, task)

    def _call_task(self, params: dict[str, Any]) -> str | None:
        """The task a call names in ``params._meta``, read as ingest reads it."""
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            return None
        value: Any = meta
        if self.task_key in meta:
            value = meta[self.task_key]
        else:  # a dotted key walks nested objects, as ``--task-key`` does at ingest
            for part in self.task_key.split("."):
                value = value.get(part) if isinstance(value, dict) else None
        if value is None or isinstance(value, dict | list | bool):
            return None
        return str(value)

    def run_of(self, task: str | None) -> Run | None:
        """The run a call of ``task`` is recorded in (the session's, when it names none)."""
        if task is None or self.monitor is None:
            return self.run_state
        if task not in self.task_runs:
            base = self.run_id if self.run_id is not None else ""
            self.task_runs[task] = self.monitor.start_run(f"{base}/{task}" if base else task)
        return self.task_runs[task]

    def answered(self, message: dict[str, Any]) -> None:
        """Note a message the server sent."""
        if "method" not in message:
            self.unanswered.discard(id_text(message.get("id")) or "")

    @property
    def waiting(self) -> bool:
        """Whether an answer the server sends may be written anew (a result to check, or a
        listing or result ``--advertise`` adds to)."""
        return bool(self.pending or self.listings or self.structuring)

    def checked_line(self, line: bytes, value: Any) -> tuple[bytes, dict[str, Any]]:
        """The line to send on and the receipts attached (keyed by batch position, ``""``
        for a single message)."""
        batch = isinstance(value, list)
        items = value if batch else [value]
        out: list[Any] = []
        receipts: dict[str, Any] = {}
        changed = False
        for position, item in enumerate(items):
            if isinstance(item, dict) and (self.listings or self.structuring):
                added = self.with_advertised(item)
                changed = changed or added is not item
                item = added
            meta = self.check(item) if isinstance(item, dict) else None
            if meta is None:
                out.append(item)
                continue
            receipts[str(position) if batch else ""] = meta
            out.append(annotated(item, meta, self.note))
        if not receipts and not changed:
            return line, receipts
        try:
            return dumps(out if batch else out[0]), receipts
        except ValueError:  # NaN in the server's answer: sent on as it came
            return line, receipts

    def with_advertised(self, response: dict[str, Any]) -> dict[str, Any]:
        """``response`` with what ``--advertise`` adds: the schemas in a ``tools/list``
        answer, ``structuredContent`` in a result of a tool given one (:mod:`tracemine.
        proxy._advertise`); ``response`` itself when nothing is added."""
        key = id_text(response.get("id"))
        if key is None or "method" in response:
            return response
        result = response.get("result")
        listing, calling = key in self.listings, key in self.structuring
        self.listings.discard(key)
        self.structuring.discard(key)
        if not isinstance(result, dict):
            return response  # a JSON-RPC error: nothing to add to
        added = None
        if listing:
            added, given = advertised_listing(result, self.advertise)
            self.advertised |= given
        elif calling:
            added = structured(result)
        return response if added is None else {**response, "result": added}

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
        tool, arguments, task = called
        value, status = mcp_payload(result)
        assert self.monitor is not None  # calls are pending only when there is one
        receipt = self.monitor.check(
            tool, arguments, value, call_id=key, run=self.run_of(task), status=status
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
