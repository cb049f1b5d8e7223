"""The session transcript the proxy writes: the ``mcp`` reader's wrapped form, one JSON
object a line, flushed per message so a killed proxy loses at most the message in flight::

    {"timestamp": "2026-12-01T23:45:01.123456+00:00", "direction": "send",
     "session_id": "mcp-20261201T234501Z-4242", "task_id": "refund-17",
     "message": {"jsonrpc": "2.0", "id": 3, "method": "tools/call", ...}}

``direction`` is ``send`` for what the client sent, ``recv`` for what the server sent.
``message`` is the message as its sender wrote it (a batch stays an array), never the
proxy's annotated copy; a receipt the proxy attached is beside it under ``receipt``. A line
that was not JSON is kept as text under ``raw`` (the reader quarantines it, with why).
``task_id`` is the session's ``--task``; ``task_key`` names the ``_meta`` key a call's
task id is read from when it is not ``task_id``.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SEND, RECV = "send", "recv"


def session_name() -> str:
    """A file stem that sorts by time and does not collide between proxies."""
    return f"mcp-{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}-{os.getpid()}"


class Transcript:
    """One session's transcript file in ``directory``; safe to write from both pipe threads."""

    def __init__(
        self,
        directory: str | Path,
        *,
        task: str | None = None,
        task_key: str = "task_id",
        session: str | None = None,
    ) -> None:
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        # a server's session id names the file, made safe for a file name
        self.session = (
            "".join(c if c.isalnum() or c in "-_." else "_" for c in session)[:120]
            if session
            else session_name()
        )
        self.path = folder / f"{self.session}.jsonl"
        self._base: dict[str, Any] = {"session_id": self.session}
        if task is not None:
            self._base["task_id"] = task
        self._task_key = None if task_key == "task_id" else task_key
        self._lock = threading.Lock()
        self._file = self.path.open("x", encoding="utf-8")
        self.messages = 0
        self.error: str | None = None  # why recording stopped, if it did

    def write(
        self, direction: str, line: bytes, value: Any, receipt: dict[str, Any] | None = None
    ) -> None:
        """Record one line as ``direction`` sent it (``value`` is its parsed copy)."""
        if not line.strip():
            return
        entry: dict[str, Any] = {
            "timestamp": datetime.now(UTC).isoformat(),
            "direction": direction,
            **self._base,
        }
        if value is None:
            entry["raw"] = line.decode("utf-8", "replace").rstrip("\r\n")
        else:
            entry["message"] = value
            if self._task_key is not None and b'"tools/call"' in line:
                entry["task_key"] = self._task_key
        if receipt is not None:
            entry["receipt"] = receipt
        with self._lock:
            if self._file.closed or self.error is not None:
                return
            try:
                self._file.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
                self._file.flush()  # the OS has it: a killed proxy loses nothing written
            except (OSError, ValueError) as exc:  # a full disk stops the record, not the session
                self.error = f"{type(exc).__name__}: {exc}"
                return
            self.messages += 1

    def close(self) -> None:
        with self._lock:
            self._file.close()
