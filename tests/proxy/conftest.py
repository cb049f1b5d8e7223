"""The proxy tests run the real thing: the SDK's stdio server (``tests/fixtures/mcp/
shop_server.py``) behind ``python -m tracemine mcp wrap``, driven by the SDK's stdio
client or by raw JSON-RPC lines."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tracemine.model.contract import Contract, ContractFile

pytest.importorskip("mcp")

SERVER = Path(__file__).parents[1] / "fixtures" / "mcp" / "shop_server.py"
PY = sys.executable


def wrap(*options: str, server: list[str] | None = None, fast: bool = False) -> list[str]:
    """``python -m tracemine mcp wrap OPTIONS -- <the shop server>`` (``fast``: the
    standard-library entry point, ``python -m tracemine.proxy wrap``)."""
    entry = ["tracemine.proxy", "wrap"] if fast else ["tracemine", "mcp", "wrap"]
    return [PY, "-m", *entry, *options, "--", *(server or [PY, str(SERVER)])]


def sdk_session(command: list[str], calls: list[tuple[str, dict[str, Any], Any]], *,
                modern: bool, then: Any = None) -> list[Any]:  # fmt: skip
    """Run ``calls`` (tool, arguments, ``_meta`` or None) through the SDK's stdio client
    against ``command``, opening with ``server/discover`` (``modern``) or ``initialize``;
    the results as the client got them. ``then`` is awaited with the session last."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def session() -> list[Any]:
        params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await (client.discover() if modern else client.initialize())
            await client.list_tools()
            results = [await client.call_tool(tool, arguments, meta=meta)
                       for tool, arguments, meta in calls]  # fmt: skip
            if then is not None:
                await then(client)
            return results

    return anyio.run(session)


class Raw:
    """A client that writes JSON-RPC lines to a process and reads its lines back."""

    def __init__(self, command: list[str], **popen: Any) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, **popen)  # fmt: skip
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in iter(self.process.stdout.readline, b""):
            self.lines.put(line)
        self.lines.put(b"")  # end of output

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line)
        self.process.stdin.flush()

    def receive(self, timeout: float = 60) -> bytes:
        return self.lines.get(timeout=timeout)

    def rest(self, timeout: float = 60) -> list[bytes]:
        """Every line still to come, up to the end of the output."""
        out = []
        while line := self.receive(timeout):
            out.append(line)
        return out

    def close(self, timeout: float = 60) -> tuple[int, str]:
        """Close stdin and wait for the end; the exit code and stderr."""
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        code = self.process.wait(timeout)
        return code, self.process.stderr.read().decode()


@pytest.fixture
def raw() -> Iterator[Callable[..., Raw]]:
    started: list[Raw] = []

    def start(command: list[str], **popen: Any) -> Raw:
        started.append(Raw(command, **popen))
        return started[-1]

    yield start
    for client in started:
        if client.process.poll() is None:
            client.process.kill()
            client.process.wait()
        client.reader.join(10)
        for pipe in (client.process.stdin, client.process.stdout, client.process.stderr):
            if pipe is not None:
                pipe.close()


def refund_contracts(path: Path) -> Path:
    """An accepted contract the shop's refund of ``#W9`` breaks: the amount is never negative."""
    contract = Contract(tool="refund", side="result", kind="non_negative",
                        paths=["result.amount"], status="accepted")  # fmt: skip
    path.write_text(ContractFile(contracts=[contract]).model_dump_json(), "utf-8")
    return path
