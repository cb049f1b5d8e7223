"""What goes through the proxy: byte for byte what was sent, both ways; and how it ends
when the server or the client dies (one line saying so, the transcript complete)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import PY, SERVER, Raw, refund_contracts, wrap
from tracemine.ingest import ingest

INITIALIZE = (
    b'{ "jsonrpc" : "2.0", "id" : 1, "method" : "initialize", "params" : {"protocolVersion":'
    b' "2025-11-25", "capabilities": {}, "clientInfo": {"name": "r\\u00e5", "version": "0"}}}\n'
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def call(request_id: Any, tool: str, **arguments: Any) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
               "params": {"name": tool, "arguments": arguments}}  # fmt: skip
    return json.dumps(message, indent=None, separators=(", ", ": ")).encode() + b"\n"


def test_what_the_proxy_does_not_touch_passes_byte_for_byte(
    raw: Callable[..., Raw], tmp_path: Path
) -> None:
    sent, got = tmp_path / "server_in.log", tmp_path / "server_out.log"
    # the server's own pipes, logged between the proxy and the SDK server
    teed = f"tee {shlex.quote(str(sent))} | {shlex.quote(PY)} {shlex.quote(str(SERVER))} " \
        f"| tee {shlex.quote(str(got))}"  # fmt: skip
    contracts = refund_contracts(tmp_path / "contracts.json")
    client = raw(wrap("--contracts", str(contracts), "--record", str(tmp_path / "sessions"),
                      "--task-key", "job",
                      server=["sh", "-c", teed]))  # fmt: skip
    requests = [INITIALIZE, INITIALIZED, b'{"jsonrpc":"2.0","id":"two","method":"tools/list"}\n',
                call(3, "get_order", order_id="#W\u00e9 1"), call(4, "refund", order_id="#W9"),
                b'{"jsonrpc": "2.0", "id": 5, "method": "ping"}\n',
                b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}\n',
                b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":{"no":1}}}\n',
                b'[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]\n',
                b"this is not JSON\n"]  # fmt: skip
    answers = []
    for line in requests:
        client.send(line)
        if b'"id"' in line and not line.startswith((b"[", b"this")):
            answers.append(client.receive())
    code, err = client.close()
    answers += client.rest()
    assert code == 0, err
    assert sent.read_bytes() == b"".join(requests)
    from_server = got.read_bytes().splitlines(keepends=True)
    assert len(from_server) == len(answers)
    for theirs, ours in zip(from_server, answers, strict=True):
        if b'"structuredContent":{"order_id":"#W9","amount"' in theirs:
            # the checked refund: its receipt, in a _meta of its own, is all that was added
            mine = json.loads(ours)
            assert mine_receipt(mine) and mine["result"].pop("_meta").keys() == {
                "tracemine/receipt"
            }
            assert mine == json.loads(theirs)
        else:
            assert ours == theirs
    # the transcript holds every line, the one that was not JSON as text
    entries = _entries(tmp_path / "sessions")
    assert len(entries) == len(requests) + len(answers)
    assert [e["raw"] for e in entries if "raw" in e] == ["this is not JSON"]
    assert {e.get("task_key") for e in entries if e.get("message", {}) and
            "tools/call" in json.dumps(e["message"])} == {"job"}  # fmt: skip
    (file,) = ingest([tmp_path / "sessions"], db=tmp_path / "store.duckdb").files
    assert file.units_read == file.units_stored + file.units_quarantined == len(entries)
    assert file.calls == 2  # the call without a tool name is quarantined, with why


def mine_receipt(message: dict[str, Any]) -> dict[str, Any]:
    receipt = message["result"]["_meta"]["tracemine/receipt"]
    assert receipt["ok"] is False
    return receipt


def _entries(folder: Path) -> list[dict[str, Any]]:
    (transcript,) = folder.iterdir()
    return [json.loads(line) for line in transcript.read_text("utf-8").splitlines()]


def test_a_killed_server_ends_the_proxy_with_one_line_and_the_transcript_so_far(
    raw: Callable[..., Raw], tmp_path: Path
) -> None:
    client = raw(wrap("--record", str(tmp_path / "sessions"), "--task", "refund-9"))
    for line in (INITIALIZE, INITIALIZED):
        client.send(line)
    client.receive()
    client.send(call(2, "server_pid"))
    pid = json.loads(client.receive())["result"]["structuredContent"]["result"]
    os.kill(pid, signal.SIGKILL)
    assert client.rest() == []
    code, err = client.close()
    assert code == 1
    (message,) = err.strip().splitlines()
    assert message.startswith("tracemine mcp: the server was killed by SIGKILL while the "
                              "client was connected; transcript: ")  # fmt: skip
    entries = _entries(tmp_path / "sessions")
    assert {e["task_id"] for e in entries} == {"refund-9"}
    assert [(e["direction"], e["message"].get("id")) for e in entries] == [
        ("send", 1), ("send", None), ("recv", 1), ("send", 2), ("recv", 2)
    ] or [(e["direction"], e["message"].get("id")) for e in entries] == [
        ("send", 1), ("recv", 1), ("send", None), ("send", 2), ("recv", 2)
    ]  # fmt: skip


_CLIENT = """
import subprocess, sys, time
proxy = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=open(sys.argv[1], "wb"))
proxy.stdin.write({initialize!r}); proxy.stdin.flush()
proxy.stdout.readline()
print(proxy.pid, flush=True)
time.sleep(600)
"""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (FileNotFoundError, IndexError):
        return True
    return state == "Z"


def test_a_killed_client_ends_the_proxy_and_stops_the_server(tmp_path: Path) -> None:
    log = tmp_path / "proxy.err"
    script = _CLIENT.format(initialize=INITIALIZE)
    command = [sys.executable, "-c", script, str(log), *wrap("--record", str(tmp_path / "s"))]
    with subprocess.Popen(command, stdout=subprocess.PIPE) as client:
        assert client.stdout is not None
        pid = int(client.stdout.readline())
        client.kill()
    deadline = time.monotonic() + 60
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(pid)
    (message,) = log.read_text().strip().splitlines()
    assert message.startswith("tracemine mcp: the client went away; the server was stopped; "
                              "transcript: ")  # fmt: skip
    entries = _entries(tmp_path / "s")
    assert [(e["direction"], e["message"]["id"]) for e in entries] == [("send", 1), ("recv", 1)]
