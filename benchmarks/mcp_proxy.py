"""What ``tracemine mcp wrap`` adds to each tool call, over a direct stdio session.

    python benchmarks/mcp_proxy.py [--calls 1000] [--sdk]

Runs the same session three ways in one process, one after the other: the client talking
to the server directly, through the proxy without contracts (forwarding and recording
off), and through the proxy with six contracts on the tool (every result checked, its
receipt put in ``_meta``). Each call is one ``tools/call`` written and its answer read
back, timed on the client. Prints p50 and p99 milliseconds a call for each arm, the
overhead over direct at p50 and p99, and the ratio, all from the same run.

The server is a minimal stdlib MCP server (so the proxy's share is not hidden under the
server's), or, with ``--sdk``, the official SDK's server of ``tests/fixtures/mcp``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import Run, headline

from tracemine.model.contract import Contract, ContractFile

ROOT = Path(__file__).resolve().parents[1]
SDK_SERVER = ROOT / "tests" / "fixtures" / "mcp" / "shop_server.py"
MINIMAL_SERVER = r"""
import json, sys
ORDER = {"order_id": "#W1", "status": "open", "total": 12.5,
         "items": [{"sku": f"SKU-{i}", "qty": i + 1} for i in range(5)]}
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "bench", "version": "1"}}
    else:
        result = {"content": [{"type": "text", "text": json.dumps(ORDER)}],
                  "structuredContent": ORDER, "isError": False}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""


def contracts(path: Path) -> Path:
    found = [
        ("present", ["result.order_id"], {}),
        ("one_of", ["result.status"], {"values": ["open", "shipped", "delivered"]}),
        ("non_negative", ["result.total"], {}),
        ("type", ["result.total"], {"type": "number"}),
        ("non_empty", ["result.items"], {}),
        ("positive", ["result.items[*].qty"], {}),
    ]
    file = ContractFile(contracts=[
        Contract(tool="get_order", side="result", kind=kind, paths=paths, params=params,
                 status="accepted")
        for kind, paths, params in found
    ])  # fmt: skip
    path.write_text(file.model_dump_json(), "utf-8")
    return path


def session(command: list[str], calls: int, warmup: int) -> list[float]:
    """Milliseconds a call, for ``calls`` calls after ``warmup`` untimed ones."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               env={**os.environ, "PYTHONPATH": str(ROOT / "src")})  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    send, receive = process.stdin, process.stdout

    def exchange(message: dict[str, object]) -> None:
        send.write(json.dumps(message).encode() + b"\n")
        send.flush()
        receive.readline()

    exchange({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})  # fmt: skip
    send.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    times = []
    for n in range(1, warmup + calls + 1):
        call = {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "get_order", "arguments": {"order_id": "#W1"}}}  # fmt: skip
        started = time.perf_counter()
        exchange(call)
        if n > warmup:
            times.append((time.perf_counter() - started) * 1000)
    send.close()
    process.wait(30)
    receive.close()
    return times


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--sdk", action="store_true", help="the SDK's server, not the minimal one")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    options = parser.parse_args()
    results = Run("mcp_proxy")
    with tempfile.TemporaryDirectory() as tmp:
        if options.sdk:
            server = [sys.executable, str(SDK_SERVER)]
        else:
            script = Path(tmp) / "server.py"
            script.write_text(MINIMAL_SERVER, "utf-8")
            server = [sys.executable, str(script)]
        proxy = [sys.executable, "-m", "tracemine", "mcp", "wrap"]
        checked = ["--contracts", str(contracts(Path(tmp) / "contracts.json"))]
        arms = {
            "direct": server,
            "proxy": [*proxy, "--", *server],
            "proxy + contracts": [*proxy, *checked, "--", *server],
        }
        times = {name: session(command, options.calls, options.warmup)
                 for name, command in arms.items()}  # fmt: skip
    print(f"{options.calls} calls a session, {'SDK' if options.sdk else 'minimal'} server, "
          f"Python {platform.python_version()}, {os.cpu_count()} cores")  # fmt: skip
    base50, base99 = pct(times["direct"], 50), pct(times["direct"], 99)
    print(f"{'arm':<18} {'p50 ms':>8} {'p99 ms':>8} {'+p50 ms':>8} {'+p99 ms':>8} {'ratio':>6}")
    rows = []
    for name, values in times.items():
        p50, p99 = pct(values, 50), pct(values, 99)
        print(f"{name:<18} {p50:8.3f} {p99:8.3f} {p50 - base50:8.3f} {p99 - base99:8.3f} "
              f"{p50 / base50:6.2f}")  # fmt: skip
        rows.append({"arm": name, "p50_ms": round(p50, 3), "p99_ms": round(p99, 3),
                     "over_direct_p50_ms": round(p50 - base50, 3),
                     "over_direct_p99_ms": round(p99 - base99, 3),
                     "ratio_p50": round(p50 / base50, 2)})  # fmt: skip
    checked = rows[-1]
    server = "SDK" if options.sdk else "minimal"
    results.write(options.json, {f"{server} server": rows}, [
        headline("`tracemine mcp wrap` with contracts, p50 overhead a call", checked[
            "over_direct_p50_ms"], "ms", size=f"{options.calls:,} calls, {server} server",
            target="p50 overhead <= 1 ms", met=checked["over_direct_p50_ms"] <= 1,
            baseline=rows[0]["p50_ms"], baseline_what="direct stdio p50",
            ratio=checked["ratio_p50"]),
    ])  # fmt: skip


if __name__ == "__main__":
    main()
