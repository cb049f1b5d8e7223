"""Between an MCP client and a stdio MCP server: record the session, check each tool
result against mined contracts, and serve a recorded session back.

Standard library only, like the monitor: the proxy runs beside agents, in their client's
configuration, where installing tracemine's mining stack is not wanted.

- :class:`Proxy` starts the server and forwards every JSON-RPC line both ways unchanged
  (``tracemine mcp wrap``); with ``record``, it writes the session as a transcript the
  ``mcp`` reader reads (:mod:`tracemine.proxy._transcript`); with ``monitor``, a checked
  result carries its receipt in ``result._meta["tracemine/receipt"]``.
- :class:`HttpProxy` does the same in front of a Streamable HTTP server (``--http URL
  --listen HOST:PORT``), one transcript and monitor run per ``Mcp-Session-Id``.
- :class:`ReplayServer` answers a client from a :class:`Recording` (``tracemine mcp
  replay``): a transcript or a cassette of :mod:`tracemine.replay`.

:func:`wrap` and :func:`replay` are the two commands (``tracemine mcp wrap|replay``, or
``python -m tracemine.proxy wrap|replay``, which starts faster: standard library only).

>>> from tracemine.proxy import Proxy
>>> Proxy(["python", "server.py"], record="sessions", monitor=monitor).run()  # doctest: +SKIP
"""

from __future__ import annotations

from tracemine.proxy._http import HttpProxy
from tracemine.proxy._main import replay, wrap
from tracemine.proxy._receipts import RECEIPT_KEY, is_note_block, receipt_meta
from tracemine.proxy._replay import NOT_RECORDED, Recording, ReplayServer
from tracemine.proxy._stdio import Proxy, ProxyError
from tracemine.proxy._transcript import Transcript

__all__ = [
    "NOT_RECORDED",
    "RECEIPT_KEY",
    "HttpProxy",
    "Proxy",
    "ProxyError",
    "Recording",
    "ReplayServer",
    "Transcript",
    "is_note_block",
    "receipt_meta",
    "replay",
    "wrap",
]
