"""The stdio proxy: the client talks to it as to the server, it talks to the server.

Two directions, each its own thread of work, so a check on a result never holds back what
the client sends: the client's lines go to the server as they come (a second thread), the
server's lines go to the client from the calling thread. Every line is forwarded as its
sender wrote it; only a checked ``tools/call`` result is written anew, with the receipt in
its ``_meta`` (:mod:`tracemine.proxy._receipts`).

Ending, as the stdio transport says (MCP 2026-07-28, "Transports: stdio / Shutdown"): when
the client closes its side, the server's stdin is closed, then it is sent SIGTERM after
``grace`` seconds and SIGKILL after as many again. A server that exits while the client is
still there, a client that goes away, and a signal to the proxy each end it with one line
on stderr saying what happened and where the transcript is.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from tracemine.errors import InputError
from tracemine.monitor import Monitor
from tracemine.proxy._checker import PREFIX, Checker
from tracemine.proxy._transcript import RECV, SEND, Transcript
from tracemine.proxy._wire import lines, messages, parse, write_all


class ProxyError(InputError):
    """The proxy could not start (no server command, or one that cannot be run)."""


class _Stopped(Exception):
    """The proxy was sent SIGTERM, SIGINT or SIGHUP."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Proxy:
    """A transparent stdio proxy in front of the MCP server started by ``command``.

    ``monitor`` checks each ``tools/call`` result of a tool it has contracts for;
    ``record`` is a directory for the session's transcript; ``task`` is the session's task
    id, ``task_key`` the ``params._meta`` key a call's own task id is read from.

    >>> Proxy(["python", "server.py"], record="sessions").run()  # doctest: +SKIP
    0
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        monitor: Monitor | None = None,
        record: str | Path | None = None,
        task: str | None = None,
        task_key: str = "task_id",
        note: bool = False,
        advertise: dict[str, dict[str, Any]] | None = None,
        grace: float = 2.0,
        client_in: int = 0,
        client_out: int = 1,
        log: TextIO | None = None,
    ) -> None:
        if not command:
            raise ProxyError("no server command: give it after --, e.g. -- python server.py")
        self.command = list(command)
        self.monitor, self.note, self.grace = monitor, note, grace
        self.task, self.task_key = task, task_key
        self.client_in, self.client_out = client_in, client_out
        self.log = log if log is not None else sys.stderr
        self.transcript = (
            Transcript(record, task=task, task_key=task_key) if record is not None else None
        )
        session = self.transcript.session if self.transcript else None
        self.checker = Checker(monitor, session, note=note, log=self.log, task=task,
                               task_key=task_key, advertise=advertise)  # fmt: skip
        self.client_closed = threading.Event()
        self.client_gone = False

    # -- running -----------------------------------------------------------------------
    def run(self) -> int:
        """Serve until the server's output ends; the exit code of the proxy."""
        parent = os.getppid()
        try:
            self.server = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
            )
        except OSError as exc:
            self._close_transcript()
            raise ProxyError(
                f"cannot start the server {self.command[0]!r}: {exc.strerror or exc}"
            ) from None
        assert self.server.stdin is not None and self.server.stdout is not None
        previous = {s: signal.signal(s, self._on_signal) for s in _SIGNALS}
        try:
            upstream = threading.Thread(target=self._client_to_server, daemon=True)
            upstream.start()
            try:
                self._server_to_client(self.server.stdout.fileno())
            except _Stopped as stop:
                self._stop_server()
                return self._finish(
                    f"stopped by signal {signal.Signals(stop.signum).name}", 128 + stop.signum
                )
            code = self.server.wait()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        if self.client_gone or (self.client_closed.is_set() and os.getppid() != parent):
            return self._finish("the client went away; the server was stopped", 1)
        if self.client_closed.is_set():
            if self.checker.unanswered:
                return self._finish("the client closed its side before every answer came", 0)
            if self.transcript is not None and self.transcript.error is not None:
                return self._finish("the client closed its side", 0)
            self._close_transcript()
            return 0 if code in (0, -signal.SIGTERM) else _exit_code(code)
        return self._finish(f"the server {_how(code)} while the client was connected", 1)

    def _on_signal(self, signum: int, frame: Any) -> None:
        raise _Stopped(signum)

    def _finish(self, what: str, code: int) -> int:
        left = len(self.checker.unanswered)
        waiting = f"; {left} request(s) unanswered" if left else ""
        where = f"; transcript: {self.transcript.path}" if self.transcript else ""
        if self.transcript is not None and self.transcript.error is not None:
            where += f" (recording stopped: {self.transcript.error})"
        self._close_transcript()
        self.log.write(f"{PREFIX}{what}{waiting}{where}\n")
        self.log.flush()
        return code

    def _close_transcript(self) -> None:
        if self.transcript is not None:
            self.transcript.close()

    def _stop_server(self) -> None:
        """Close the server's stdin, then SIGTERM, then SIGKILL, ``grace`` seconds apart."""
        server = self.server
        try:
            assert server.stdin is not None
            server.stdin.close()
        except OSError:
            pass
        for step in (server.terminate, server.kill):
            try:
                server.wait(self.grace)
                return
            except subprocess.TimeoutExpired:
                step()
        server.wait()

    # -- client -> server ----------------------------------------------------------------
    def _client_to_server(self) -> None:
        assert self.server.stdin is not None
        into = self.server.stdin.fileno()
        for line in lines(self.client_in):
            value = parse(line)
            try:
                for message in messages(value):
                    self.checker.request(message)
            except Exception:  # bookkeeping only: the line goes on whatever it holds
                pass
            if self.transcript is not None:
                self.transcript.write(SEND, line, value)
            try:
                write_all(into, line)
            except OSError:  # the server is gone: its side of the story ends the proxy
                return
        self.client_closed.set()
        self._stop_server()

    # -- server -> client ----------------------------------------------------------------
    def _server_to_client(self, fd: int) -> None:
        for line in lines(fd):
            value = parse(line)
            out, receipts = line, dict[str, Any]()
            if self.checker.waiting and value is not None:
                try:
                    out, receipts = self.checker.checked_line(line, value)
                except Exception:  # advisory: a failed check never holds back the answer
                    out, receipts = line, {}
            for message in messages(value):
                self.checker.answered(message)
            if self.transcript is not None:
                receipt = receipts.get("") if isinstance(value, dict) else receipts or None
                self.transcript.write(RECV, line, value, receipt)
            try:
                write_all(self.client_out, out)
            except OSError:  # broken pipe: nobody reads what the server says any more
                self.client_gone = True
                self._stop_server()
                return


_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _how(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _exit_code(code: int) -> int:
    return 128 - code if code < 0 else code
