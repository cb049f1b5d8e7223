"""Tool errors in formats without an error flag: an error payload read as ``ok`` is marked
``tool_error`` at ingest (``error_type`` names the rule), its result kept; ``--error-pattern``
marks matching text results too; ``tracemine stats`` counts what was marked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.errors import InputError
from tracemine.gate import check
from tracemine.ingest import read_traces
from tracemine.model.contract import ContractFile

ERROR = {"error": {"code": "not_found", "message": "no order #W9"}}
ORDER = {"order_id": "#W1", "items": [{"sku": "a"}]}


def conversation(*results: Any) -> dict[str, Any]:
    """One chat conversation whose calls of get_order answered ``results`` (as text)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Where are my orders?"}]
    for number, result in enumerate(results):
        call = {"id": f"c{number}", "type": "function",
                "function": {"name": "get_order", "arguments": '{"order_id": "#W1"}'}}  # fmt: skip
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        text = result if isinstance(result, str) else json.dumps(result)
        messages.append({"role": "tool", "tool_call_id": f"c{number}", "content": text})
    messages.append({"role": "assistant", "content": "Done."})
    return {"run_id": "r1", "task_id": "t1", "messages": messages}


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    path = tmp_path / "chat.jsonl"
    lines = [conversation(ORDER, ERROR, "Error: order service down", {"error": None, **ORDER})]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return path


def cli(*args: Any) -> Any:
    """``tracemine ARGS``, in this process (so on the code under test)."""
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_an_error_payload_read_as_ok_is_a_tool_error_and_keeps_its_result(chat: Path) -> None:
    calls = read_traces(chat).calls
    assert [c["status"] for c in calls] == ["ok", "tool_error", "ok", "ok"]
    marked = calls[1]
    assert marked["error_type"] == "error_payload" and marked["error_message"] == "no order #W9"
    assert marked["result"] == ERROR and marked["result_text"] == json.dumps(ERROR)


def test_an_error_pattern_marks_matching_text(chat: Path) -> None:
    calls = read_traces(chat, error_pattern=r"^Error:").calls
    assert [c["status"] for c in calls] == ["ok", "tool_error", "tool_error", "ok"]
    assert calls[2]["error_type"] == "error_pattern"
    assert calls[2]["result"] == "Error: order service down"
    with pytest.raises(InputError, match="--error-pattern"):
        read_traces(chat, error_pattern="(")


def test_ingest_marks_and_stats_counts(chat: Path, tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    out = cli("ingest", chat, "--db", db, "--error-pattern", "^Error:")
    assert out.exit_code == 0, out.output
    stats = json.loads(cli("stats", "--db", db, "--json").stdout)
    assert stats["statuses"] == {"ok": 2, "tool_error": 2}
    assert stats["errors_marked"] == {"error_pattern": 1, "error_payload": 1}
    shown = cli("stats", "--db", db).stdout
    assert "2 calls read as ok were marked tool errors" in shown
    bad = cli("ingest", chat, "--db", tmp_path / "u.duckdb", "--error-pattern", "(")
    assert bad.exit_code == 2 and isinstance(bad.exception, SystemExit)  # no traceback
    assert "--error-pattern '(' is not a regular expression" in bad.output


def test_check_reads_errors_as_ingest_does(chat: Path, tmp_path: Path) -> None:
    contracts = tmp_path / "contracts.json"
    items = {"id": "c_items", "tool": "get_order", "side": "result", "kind": "present",
             "paths": ["result.items"], "status": "accepted"}  # fmt: skip
    contracts.write_text(ContractFile.model_validate({"contracts": [items]}).model_dump_json())
    plain = check(chat, contracts)
    (summary,) = plain.contracts
    assert (summary.checked, summary.violated, summary.not_evaluated) == (3, 1, 1)
    assert plain.runs[0].errors == ["call c1 (get_order) ended with tool_error, retried"]
    marked = check(chat, contracts, error_pattern="^Error:")
    (summary,) = marked.contracts
    assert (summary.checked, summary.violated, summary.not_evaluated) == (2, 0, 2)
    out = cli("check", chat, "--contracts", contracts, "--error-pattern", "^Error:", "--json")
    assert json.loads(out.stdout)["contracts"][0]["not_evaluated"] == 2
