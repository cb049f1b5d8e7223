"""The same proxy in front of a Streamable HTTP MCP server (MCP 2025-03-26 onwards,
"Transports: Streamable HTTP"): ``tracemine mcp wrap --http URL --listen HOST:PORT``.

Every request to the listening address goes to ``URL`` with its method, path below the
endpoint, headers and body; the answer comes back with its status and headers. A JSON
body (``application/json``) is checked whole; an event stream (``text/event-stream``) is
passed on event by event as it arrives, each event's ``data`` checked as a message. Only
a checked ``tools/call`` result is written anew (receipt in ``_meta``); everything else is
sent on byte for byte.

Sessions are told apart by the ``Mcp-Session-Id`` header: each has its own transcript
(named after it) and its own monitor run; a server that gives no session id has one
transcript for the proxy's lifetime.
"""

from __future__ import annotations

import http.client
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

from tracemine.monitor import Monitor
from tracemine.proxy._checker import PREFIX, Checker
from tracemine.proxy._stdio import ProxyError
from tracemine.proxy._transcript import RECV, SEND, Transcript
from tracemine.proxy._wire import messages, parse

SESSION_HEADER = "mcp-session-id"
# hop-by-hop headers (RFC 9110 7.6.1) are the connection's, not the message's
_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer",
        "upgrade", "host", "content-length"}  # fmt: skip


class HttpProxy:
    """A transparent proxy for a Streamable HTTP MCP server at ``upstream``, listening
    on ``listen`` (``host:port``); options as for :class:`~tracemine.proxy.Proxy`.

    >>> HttpProxy("http://127.0.0.1:8000/mcp", "127.0.0.1:9000").serve()  # doctest: +SKIP
    """

    def __init__(
        self,
        upstream: str,
        listen: str,
        *,
        monitor: Monitor | None = None,
        record: str | Path | None = None,
        task: str | None = None,
        task_key: str = "task_id",
        note: bool = False,
        advertise: dict[str, dict[str, Any]] | None = None,
        log: TextIO | None = None,
    ) -> None:
        target = urlsplit(upstream)
        if target.scheme not in ("http", "https") or not target.hostname:
            raise ProxyError(f"--http {upstream!r}: expected an http:// or https:// URL")
        host, _, port = listen.rpartition(":")
        if not host or not port.isdigit():
            raise ProxyError(f"--listen {listen!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
        self.target, self.address = target, (host, int(port))
        self.monitor, self.record, self.note = monitor, record, note
        self.task, self.task_key = task, task_key
        self.advertise = advertise
        self.log = log if log is not None else sys.stderr
        self.sessions: dict[str, tuple[Checker, Transcript | None]] = {}
        self._lock = threading.Lock()

    def session(self, name: str) -> tuple[Checker, Transcript | None]:
        """The checker and transcript of the session ``name`` (``""``: no session id)."""
        with self._lock:
            if name not in self.sessions:
                transcript = None
                if self.record is not None:
                    transcript = Transcript(self.record, task=self.task, task_key=self.task_key,
                                            session=name or None)  # fmt: skip
                run_id = transcript.session if transcript else name or None
                checker = Checker(self.monitor, run_id, note=self.note, log=self.log,
                                  task=self.task, task_key=self.task_key,
                                  advertise=self.advertise)  # fmt: skip
                self.sessions[name] = (checker, transcript)
            return self.sessions[name]

    def connect(self) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self.target.scheme == "https" else (
            http.client.HTTPConnection)  # fmt: skip
        return kind(self.target.hostname or "", self.target.port, timeout=300)

    def upstream_path(self, path: str) -> str:
        """The upstream path for a request path: the endpoint's own path, with any query."""
        query = urlsplit(path).query
        base = self.target.path or "/"
        return f"{base}?{query}" if query else base

    def serve(self) -> int:
        """Serve until SIGINT or SIGTERM; the exit code."""
        try:
            server = ThreadingHTTPServer(self.address, _handler(self))
        except OSError as exc:
            raise ProxyError(f"cannot listen on {self.address[0]}:{self.address[1]}: "
                             f"{exc.strerror or exc}") from None  # fmt: skip
        server.daemon_threads = True
        stop = threading.Event()

        def on_signal(signum: int, frame: Any) -> None:
            stop.set()
            threading.Thread(target=server.shutdown, daemon=True).start()

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            server.serve_forever(poll_interval=0.2)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            server.server_close()
            with self._lock:
                for _, transcript in self.sessions.values():
                    if transcript is not None:
                        transcript.close()
        return 0


def _handler(proxy: HttpProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the proxy disappears when nothing is wrong

        def do_POST(self) -> None:
            self._forward()

        def do_GET(self) -> None:
            self._forward()

        def do_DELETE(self) -> None:
            self._forward()

        def _forward(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            sent = parse(body) if body else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            connection = proxy.connect()
            try:
                connection.request(self.command, proxy.upstream_path(self.path), body, headers)
                answer = connection.getresponse()
            except OSError as exc:
                self.send_error(502, f"MCP server unreachable: {exc}")
                proxy.log.write(f"{PREFIX}cannot reach {proxy.target.geturl()}: {exc}\n")
                return
            try:
                name = self.headers.get(SESSION_HEADER) or answer.getheader(SESSION_HEADER) or ""
                checker, transcript = proxy.session(name)
                for message in messages(sent):
                    checker.request(message)
                if transcript is not None and body:
                    transcript.write(SEND, body, sent)
                self.send_response(answer.status, answer.reason)
                for key, value in answer.getheaders():
                    if key.lower() not in _HOP:
                        self.send_header(key, value)
                kind = (answer.getheader("content-type") or "").split(";")[0].strip().lower()
                if kind == "text/event-stream":
                    self._events(answer, checker, transcript)
                else:
                    self._whole(answer, checker, transcript, kind == "application/json")
            finally:
                connection.close()

        def _whole(self, answer: Any, checker: Checker, transcript: Transcript | None,
                   is_json: bool) -> None:  # fmt: skip
            data = answer.read()
            out = data
            if is_json and data:
                out = _checked(data, checker, transcript)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def _events(self, answer: Any, checker: Checker, transcript: Transcript | None) -> None:
            # no length is known: the body ends when the connection closes
            self.send_header("Connection", "close")
            self.close_connection = True
            self.end_headers()
            event: list[bytes] = []
            while line := answer.readline():
                event.append(line)
                if line.strip():
                    continue
                self.wfile.write(_event(event, checker, transcript))
                self.wfile.flush()
                event = []
            if event:
                self.wfile.write(b"".join(event))

    return Handler


def _checked(data: bytes, checker: Checker, transcript: Transcript | None) -> bytes:
    """A JSON body or event data as it goes on to the client, recorded on the way."""
    value = parse(data)
    out, receipts = data, dict[str, Any]()
    if value is not None and checker.waiting:
        try:
            out, receipts = checker.checked_line(data, value)
            out = out.rstrip(b"\n") if not data.endswith(b"\n") else out
        except Exception:  # advisory: a failed check never holds back the answer
            out, receipts = data, {}
    for message in messages(value):
        checker.answered(message)
    if transcript is not None:
        receipt = receipts.get("") if isinstance(value, dict) else receipts or None
        transcript.write(RECV, data, value, receipt)
    return out


def _event(lines: list[bytes], checker: Checker, transcript: Transcript | None) -> bytes:
    """One server-sent event, its ``data`` checked as a JSON-RPC message."""
    data = [line for line in lines if line.startswith(b"data:")]
    if not data:
        return b"".join(lines)
    payload = b"\n".join(line[5:].removeprefix(b" ").rstrip(b"\r\n") for line in data)
    out = _checked(payload, checker, transcript)
    if out is payload:
        return b"".join(lines)  # untouched: the event as it came
    rest = [line for line in lines if not line.startswith(b"data:") and line.strip()]
    return b"".join(rest) + b"data: " + out.rstrip(b"\n") + b"\n\n"
