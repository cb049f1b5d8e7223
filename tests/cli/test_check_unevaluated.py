"""What ``check`` cannot judge it says it did not judge: OpenTelemetry tool spans written
with content capture off (the GenAI util's default) are "not evaluated", never violations,
and ingest warns that their content is missing; a check in which no contract met a call
ends "nothing checked", not "ok"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.util.genai.handler import TelemetryHandler

from tracemine.gate import check
from tracemine.model.contract import Contract, ContractFile

CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
ORDER = {"order_id": "#W1", "total": 12, "items": [{"sku": "lamp"}]}


def _spans(path: Path, calls: int) -> None:
    """``calls`` get_order tool spans as the OpenTelemetry SDK's console exporter prints
    them, made through the GenAI util's handler, which records no content by default."""
    with path.open("w") as out:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out)))
        handler = TelemetryHandler(tracer_provider=provider)
        for n in range(calls):
            with handler.tool("get_order") as invocation:
                invocation.tool_call_id = f"call_{n}"
                invocation.arguments = {"order_id": "#W1"}
                invocation.tool_result = ORDER
        provider.shutdown()


def _contracts(path: Path, tool: str = "get_order") -> Path:
    contracts = [
        Contract(tool=tool, side="args", kind="not_null", paths=["args.order_id"],
                 status="accepted"),
        Contract(tool=tool, side="result", kind="non_negative", paths=["result.total"],
                 status="accepted"),
    ]  # fmt: skip
    path.write_text(ContractFile(contracts=contracts).model_dump_json(), "utf-8")
    return path


def _tracemine(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracemine", *args], cwd=cwd, text=True,
                          capture_output=True, env={**os.environ, "COLUMNS": "200"})  # fmt: skip


def test_spans_without_content_are_not_evaluated_and_ingest_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CAPTURE, raising=False)
    spans = tmp_path / "spans.json"
    _spans(spans, 4)
    assert "gen_ai.tool.call.result" not in spans.read_text()  # capture really was off
    contracts = _contracts(tmp_path / "contracts.json")

    report = check(spans, contracts)
    assert report.calls == 4 and report.violations == 0 and not report.failed
    (tool,) = report.tools
    assert tool.coverage == {"not evaluated": 4}
    assert all(c.not_evaluated == 4 and c.checked == 0 for c in report.contracts)
    assert any("4 calls were not evaluated" in n and "content capture" in n
               for n in report.notices)  # fmt: skip

    out = _tracemine(tmp_path, "check", spans.name, "-c", contracts.name)
    text = " ".join(out.stdout.split())
    assert out.returncode == 0, out.stdout + out.stderr
    assert "args expected not null" not in text and "0 violations" in text
    assert "4 calls were not evaluated" in text and "nothing checked" in text

    ingested = _tracemine(tmp_path, "ingest", spans.name, "--db", "t.duckdb")
    said = " ".join(ingested.stdout.split())
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    assert "4 of 4 calls have no captured arguments or result" in said
    assert CAPTURE in said


def test_spans_with_content_are_checked_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE, "SPAN_ONLY")
    spans = tmp_path / "spans.json"
    _spans(spans, 2)
    report = check(spans, _contracts(tmp_path / "contracts.json"))
    assert report.calls == 2 and report.tools[0].coverage.get("not evaluated", 0) == 0
    assert all(c.checked == 2 for c in report.contracts)
    assert not any("not evaluated" in n for n in report.notices)
    ingested = _tracemine(tmp_path, "ingest", spans.name, "--db", "t.duckdb")
    assert "no captured arguments" not in ingested.stdout


def test_a_check_that_met_no_contract_says_nothing_was_checked(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    call: dict[str, Any] = {"run_id": "r", "task_id": "t", "seq": 0, "call_id": "c0",
                            "tool": "search_flights", "arguments": {"q": "x"},
                            "result": {"flights": []}, "status": "ok"}  # fmt: skip
    traces.write_text(json.dumps(call) + "\n", "utf-8")
    contracts = _contracts(tmp_path / "contracts.json")
    report = check(traces, contracts)
    assert not report.failed and all(c.checked == 0 for c in report.contracts)
    assert any("no contract was checked on any call" in n for n in report.notices)
    out = _tracemine(tmp_path, "check", traces.name, "-c", contracts.name)
    last = out.stdout.strip().splitlines()[-1]
    assert out.returncode == 0 and "nothing checked" in last and " ok" not in last
