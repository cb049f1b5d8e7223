"""``tracemine mcp replay`` of a cassette from :mod:`tracemine.replay`, and the commands'
one-line refusals."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import tracemine.proxy
from conftest import PY, Raw, wrap

from helpers import heavy_imports, public_names

CASSETTE = [
    {"tracemine_cassette": 1, "ignore": {}},
    {"run_id": "r1", "seq": 0, "call_id": "c0", "tool": "get_order",
     "arguments": {"order_id": "#W1"}, "status": "ok", "result": {"order_id": "#W1", "total": 3}},
    {"run_id": "r1", "seq": 1, "call_id": "c1", "tool": "refund",
     "arguments": {"order_id": "#W1"}, "status": "tool_error", "error_message": "too late"},
]  # fmt: skip


def request(request_id: int, method: str, **params: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                       "params": params}).encode() + b"\n"  # fmt: skip


def test_replay_answers_from_a_cassette(raw: Callable[..., Raw], tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    cassette.write_text("".join(json.dumps(line) + "\n" for line in CASSETTE), "utf-8")
    client = raw([PY, "-m", "tracemine", "mcp", "replay", str(cassette)])
    answers = []
    for line in (
        request(1, "initialize", protocolVersion="2025-11-25", capabilities={},
                clientInfo={"name": "ci", "version": "0"}),
        request(2, "tools/list"),
        request(3, "tools/call", name="get_order", arguments={"order_id": "#W1"}),
        request(4, "tools/call", name="refund", arguments={"order_id": "#W1"}),
        request(5, "tools/call", name="get_order", arguments={"order_id": "#W2"}),
    ):  # fmt: skip
        client.send(line)
        answers.append(json.loads(client.receive()))
    code, err = client.close()
    assert code == 0, err
    assert answers[0]["result"]["protocolVersion"] == "2025-11-25"
    assert [t["name"] for t in answers[1]["result"]["tools"]] == ["get_order", "refund"]
    assert answers[2]["result"]["structuredContent"] == {"order_id": "#W1", "total": 3}
    assert answers[3]["result"]["isError"] is True
    assert answers[3]["result"]["content"] == [{"type": "text", "text": "too late"}]
    miss = answers[4]["error"]
    assert miss["code"] == tracemine.proxy.NOT_RECORDED
    assert "nearest recorded: get_order#" in miss["message"] and "(line 2)" in miss["message"]
    assert 'order_id: recorded "#W1", this call "#W2"' in miss["message"]


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    missing = subprocess.run([PY, "-m", "tracemine", "mcp", "replay", str(tmp_path / "no.jsonl")],
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'no.jsonl'}: no such recording"
    ]
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n{oops\n', "utf-8")
    bad = subprocess.run([PY, "-m", "tracemine", "mcp", "replay", str(broken)],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        f"error: {broken}:2: not JSON; expected one JSON-RPC message a line"]  # fmt: skip
    nothing = subprocess.run(wrap(server=["no-such-server-command"]), capture_output=True,
                             text=True, timeout=120)  # fmt: skip
    assert nothing.returncode == 2
    assert nothing.stderr.strip().splitlines() == [
        "error: cannot start the server 'no-such-server-command': No such file or directory"
    ]


def test_importing_the_proxy_loads_no_heavy_dependency() -> None:
    assert heavy_imports("tracemine.proxy") == []


def test_public_names() -> None:
    assert sorted(tracemine.proxy.__all__) == public_names(tracemine.proxy)
