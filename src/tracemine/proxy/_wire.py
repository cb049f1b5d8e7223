"""Newline-delimited JSON-RPC on pipes, as the MCP stdio transport frames it: one message
a line, UTF-8, no embedded newlines (MCP 2025-11-25 and 2026-07-28, "Transports: stdio").

Reads go straight to the file descriptor (``os.read``): a thread blocked on a buffered
``sys.stdin`` would hold its lock at interpreter exit, and the proxy exits while the client
side may still be blocked on a read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

_CHUNK = 1 << 16


def lines(fd: int) -> Iterator[bytes]:
    """The lines read from ``fd``, each with its ``\\n`` (a last line without one is
    yielded as it is); ends at end of file or when the descriptor fails."""
    pending = b""
    while True:
        try:
            chunk = os.read(fd, _CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            if pending:
                yield pending
            return
        pending += chunk
        start = 0
        while (end := pending.find(b"\n", start)) >= 0:
            yield pending[start : end + 1]
            start = end + 1
        pending = pending[start:]


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` (a pipe may take part of it); OSError when the reader
    has gone (broken pipe)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def parse(line: bytes) -> Any:
    """The JSON value of one line, or None when it is blank or not JSON (forwarded and
    recorded all the same)."""
    try:
        return json.loads(line)
    except ValueError:  # includes UnicodeDecodeError
        return None


def dumps(message: Any) -> bytes:
    """One compact JSON-RPC line; ValueError for values JSON cannot carry (NaN)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8") + b"\n"


def messages(value: Any) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a line: one object, or the objects of a batch array."""
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, dict)]
    return []


def id_text(value: Any) -> str | None:
    """A request id as text (``3`` and ``"3"`` are one id, as the mcp reader says)."""
    if value is None or isinstance(value, dict | list | bool):
        return None
    return str(value)
