"""The ``openai`` agent end to end against a fake OpenAI-compatible server on 127.0.0.1
whose scripted replies call tools (once with malformed JSON arguments), read the receipts
and answer. Everything is judged from the files the command wrote."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.ingest import read_traces

ORDER = {"order_id": "#W1234567", "status": "delivered", "total_cents": 4200, "currency": "EUR"}
CASES = {
    "cases": [
        {
            "id": "total-1",
            "request": "What is the total of order #W1234567?",
            "tools": [
                {
                    "name": "get_order",
                    "description": "Look up an order.",
                    "parameters": {
                        "type": "object",
                        "properties": {"order_id": {"type": "string"}},
                        "required": ["order_id"],
                    },
                }
            ],
            "fixtures": [
                {"tool": "get_order", "arguments": {"order_id": "#W1234567"}, "result": ORDER}
            ],
            "expected_calls": [{"tool": "get_order", "arguments": {"order_id": "#W1234567"}}],
            "accepted_claims": ["total is 4200 cents"],
        }
    ]
}
CONTRACTS = {
    "schema_version": "1",
    "contracts": [
        {
            "id": "c_total_nonneg",
            "tool": "get_order",
            "side": "result",
            "kind": "non_negative",
            "paths": ["result.total_cents"],
            "params": {},
            "status": "accepted",
        }
    ],
}


def scripted_reply(body: dict[str, Any]) -> dict[str, Any]:
    """What the fake model says next, from the conversation alone."""
    messages = body["messages"]
    tools = [m for m in messages if m["role"] == "tool"]
    asked = sum(1 for m in messages if m["role"] == "assistant" and m.get("tool_calls"))

    def call(name: str, arguments: str) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{asked}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            ],
        }

    good = json.dumps({"order_id": "#W1234567"})
    if asked == 0:
        return call("get_order", '{"order_id": "#W1234567"')  # malformed: no closing brace
    if asked == 1:
        return call("get_order", good)
    last = tools[-1]["content"]
    if "[tracemine]" in last:
        if "Consider calling: refresh_get_order" in last:
            return call("refresh_get_order", good)
        return {"role": "assistant", "content": "I could not complete this task safely."}
    if (
        messages[-2].get("tool_calls", [{}])[0].get("function", {}).get("name")
        == "refresh_get_order"
    ):
        return call("get_order", good)
    total = json.loads(last.split("\n\n[tracemine]")[0])["total_cents"]
    return {"role": "assistant", "content": f"The order total is {total} cents."}


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        assert self.path == "/v1/chat/completions"
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body["_auth"] = self.headers.get("Authorization")
        self.seen.append(body)
        answer = {
            "id": "x",
            "object": "chat.completion",
            "model": "fake-1",
            "system_fingerprint": "fp_test",
            "choices": [{"index": 0, "message": scripted_reply(body), "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:  # keep the test output clean
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.seen = []
    httpd = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_openai_agent_end_to_end(tmp_path: Path, server: str, monkeypatch: Any) -> None:
    monkeypatch.setenv("ARMS_TEST_KEY", "sk-test")
    cases, contracts = tmp_path / "cases.json", tmp_path / "contracts.json"
    cases.write_text(json.dumps(CASES))
    contracts.write_text(json.dumps(CONTRACTS))
    out = tmp_path / "arms"
    result = CliRunner().invoke(
        app,
        [
            "arms",
            "--cases",
            str(cases),
            "--contracts",
            str(contracts),
            "--agent",
            "openai",
            "--base-url",
            server,
            "--model",
            "fake-1",
            "--api-key-env",
            "ARMS_TEST_KEY",
            "--faults",
            "negative_quantity",
            "--fault-rate",
            "1",
            "--temperature",
            "0.2",
            "--out",
            str(out),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    labels = {
        arm: next(k for k, v in entry["labels"].items() if v)
        for arm, entry in report["arms"].items()
    }
    # the fault (a negated total) is passed off as the answer without a receipt, recovered
    # with the named recovery tool, and stopped on safely when the receipt names none
    assert labels == {
        "status-only": "complete-wrong",
        "guarded": "complete-correct",
        "guarded-no-recovery": "safe-incomplete",
    }
    assert report["arms"]["guarded"]["recovery_attempts"]["total"] == 2  # refresh, repeat
    # the tools went out as function definitions, with the recovery tool; the settings too
    first = _Handler.seen[0]
    names = [t["function"]["name"] for t in first["tools"] if t["type"] == "function"]
    assert names == ["get_order", "refresh_get_order"]
    assert first["model"] == "fake-1" and first["temperature"] == 0.2
    assert isinstance(first["seed"], int) and first["_auth"] == "Bearer sk-test"
    for arm in labels:
        traces = read_traces(out / "traces" / f"{arm}.jsonl")
        (run,) = traces.runs
        meta = run["metadata"]
        assert meta["model"] == "fake-1" and meta["endpoint"]["system_fingerprint"] == "fp_test"
        assert meta["temperature"] == 0.2 and meta["seed"] == first["seed"]
        line = json.loads((out / "traces" / f"{arm}.jsonl").read_text())
        assert meta["tokens"] == 15 * sum(m["role"] == "assistant" for m in line["messages"])
        assert meta["fault_class"] == "negative_quantity"
        malformed = traces.calls[0]
        assert malformed["arguments_error"] and malformed["status"] == "tool_error"
        assert malformed["arguments_raw"] == '{"order_id": "#W1234567"'
        assert "not valid JSON" in json.dumps(malformed["result"])


def test_openai_agent_needs_an_endpoint(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["arms", "--agent", "openai", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "--base-url" in result.output
