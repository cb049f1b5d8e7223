"""``tracemine mcp wrap --http``: the SDK's Streamable HTTP server behind the proxy,
driven by the SDK's Streamable HTTP client, on both handshakes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import PY, SERVER, refund_contracts
from tracemine.ingest import ingest


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listens on {port}")


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[bytes]]]:
    """The shop over HTTP and the proxy before it: (proxy URL, record folder, proxy)."""
    server_port, proxy_port = _free_port(), _free_port()
    contracts = refund_contracts(tmp_path / "contracts.json")
    server = subprocess.Popen([PY, str(SERVER), "--http", str(server_port)],
                              stderr=subprocess.DEVNULL)  # fmt: skip
    proxy = subprocess.Popen([PY, "-m", "tracemine", "mcp", "wrap", "--contracts", str(contracts),
                              "--record", str(tmp_path / "sessions"),
                              "--http", f"http://127.0.0.1:{server_port}/mcp",
                              "--listen", f"127.0.0.1:{proxy_port}"],
                             stderr=subprocess.PIPE)  # fmt: skip
    try:
        _wait_for(server_port, server)
        _wait_for(proxy_port, proxy)
        yield f"http://127.0.0.1:{proxy_port}/mcp", tmp_path / "sessions", proxy
    finally:
        for process in (proxy, server):
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
            process.wait()
        assert proxy.stderr is not None
        proxy.stderr.close()


def _session(url: str, modern: bool) -> Any:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def run() -> Any:
        async with (
            streamable_http_client(url) as (read, write, *_),
            ClientSession(read, write) as client,
        ):
            await (client.discover() if modern else client.initialize())
            await client.list_tools()
            kept = await client.call_tool("refund", {"order_id": "#W1"}, meta={"task_id": "a"})
            broken = await client.call_tool("refund", {"order_id": "#W9"}, meta={"task_id": "b"})
            return kept, broken

    return anyio.run(run)


def test_http_results_carry_receipts_and_sessions_are_recorded(proxied: Any) -> None:
    url, sessions, proxy = proxied
    for modern in (False, True):
        kept, broken = _session(url, modern)
        assert broken.structured_content == {"order_id": "#W9", "amount": -3.0}
        assert broken.meta["tracemine/receipt"]["ok"] is False
        assert kept.meta["tracemine/receipt"]["ok"] is True
    os.kill(proxy.pid, signal.SIGTERM)
    assert proxy.wait(60) == 0
    report = ingest(sorted(sessions.iterdir()), db=sessions.parent / "store.duckdb")
    assert sum(f.units_quarantined + f.items_quarantined for f in report.files) == 0
    assert sum(f.calls for f in report.files) == 4
    assert sum(f.runs_without_task for f in report.files) == 0
