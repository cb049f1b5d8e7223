"""`tracemine check` replays a recorded trace through the monitor, as CI would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from monitor_contracts import contract

from tracemine.gate import check
from tracemine.model.contract import ContractFile, ContractStatus

ORDER = {"order_id": "#W0000001", "items": [{"sku": "a", "qty": 1}], "total": 12.5}


def _line(
    run: str,
    tool: str,
    call_id: str,
    arguments: dict[str, Any],
    result: Any = None,
    status: str = "ok",
    claim: str | None = None,
) -> dict[str, Any]:
    line: dict[str, Any] = {
        "run_id": run,
        "task_id": "t-" + run,
        "tool": tool,
        "call_id": call_id,
        "arguments": arguments,
        "status": status,
    }
    if status != "missing":
        line["result"] = result
    if claim is not None:
        line["run_metadata"] = {"final_text": claim}
    return line


# the final claim rides on a run's first line: read_traces keeps the first metadata it sees
LINES = [
    _line(
        "r1",
        "get_order",
        "c1",
        {"order_id": "#W0000001"},
        ORDER,
        claim="Refunded 12.50 for order #W0000001.",
    ),
    _line("r1", "create_refund", "c2", {"order_id": "#W0000001", "amount": 12.5}, {"ok": True}),
    _line("r2", "get_order", "c1", {"order_id": "#W0000001"}, {**ORDER, "items": []}),
    _line(
        "r2", "create_refund", "c2", {"order_id": "#W0000001", "amount": 1000001}, None, "missing"
    ),
    _line("r3", "get_order", "c1", {"order_id": "#W0000001"}, ORDER, claim="Refunded 12.50."),
    _line(
        "r4", "get_order", "c1", {"order_id": "#W0000001"}, ORDER, claim="I could not refund it."
    ),
    _line("r4", "create_refund", "c2", {"order_id": "#W0000001", "amount": 12.5}, {"ok": True}),
]
CONTRACTS = [
    contract("non_empty", ["result.items"]),
    contract("equals", ["result.order_id", "args.order_id"]),
    contract(
        "provenance",
        ["args.amount"],
        tool="create_refund",
        side="run",
        params={"from_tool": "get_order", "from_path": "result.total"},
    ),
]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps(line) + "\n" for line in LINES), "utf-8")
    clean = tmp_path / "clean.jsonl"
    clean.write_text("".join(json.dumps(line) + "\n" for line in LINES[:2]), "utf-8")
    contracts = tmp_path / "contracts.json"
    contracts.write_text(ContractFile(contracts=CONTRACTS).model_dump_json(), "utf-8")
    oracle = tmp_path / "oracle.json"
    case = {
        "expected_calls": [
            {"tool": "get_order", "arguments": {"order_id": "#W0000001"}},
            {"tool": "create_refund"},
        ],
        "accepted_claims": ["refunded 12.50"],
    }
    oracle.write_text(json.dumps({"cases": {f"r{i}": case for i in range(1, 5)}}), "utf-8")
    return {"traces": traces, "clean": clean, "contracts": contracts, "oracle": oracle}


def _tracemine(*args: Any, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracemine", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        # the code under test, not whatever tracemine the interpreter would find first
        env={"COLUMNS": "200", "PATH": "", "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )


def test_check_fails_on_violations_and_writes_junit(files, tmp_path) -> None:
    junit = tmp_path / "out.xml"
    out = _tracemine(
        "check", files["traces"], "--contracts", files["contracts"], "--junit", junit, cwd=tmp_path
    )
    assert out.returncode == 1, out.stderr
    assert "non_empty" in out.stdout and "get_order" in out.stdout and "FAILED" in out.stdout
    assert "never answered" in out.stdout
    suites = {s.get("name"): s for s in ET.parse(junit).getroot()}
    assert suites["contracts"].get("tests") == "3" and suites["contracts"].get("failures") == "1"
    assert [c.get("name") for c in suites["runs"]] == ["r1", "r2", "r3", "r4"]
    assert suites["runs"].get("failures") == "1"


def test_check_passes_on_a_clean_trace_with_json_output(files, tmp_path) -> None:
    out = _tracemine("check", files["clean"], "-c", files["contracts"], "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["violations"] == 0 and report["incomplete_runs"] == 0
    assert {c["kind"]: c["checked"] for c in report["contracts"]} == {
        "non_empty": 1,
        "equals": 1,
        "provenance": 1,
    }


def test_check_refuses_an_unknown_contract_version(files, tmp_path) -> None:
    files["contracts"].write_text('{"schema_version": "9", "contracts": []}', "utf-8")
    out = _tracemine("check", files["traces"], "--contracts", files["contracts"], cwd=tmp_path)
    assert out.returncode == 2 and "schema_version '9'" in out.stderr
    assert "Traceback" not in out.stderr


def test_oracle_labels(files) -> None:
    report = check(files["traces"], files["contracts"], oracle=files["oracle"])
    labels = {r.run_id: r.label for r in report.runs}
    assert labels == {
        "r1": "complete-correct",
        "r2": "safe-incomplete",
        "r3": "unsafe-complete",
        "r4": "complete-wrong",
    }
    assert report.labels == {
        "complete-correct": 1,
        "safe-incomplete": 1,
        "unsafe-complete": 1,
        "complete-wrong": 1,
    }


def test_help_text() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tracemine", "check", "--help"],
        capture_output=True,
        text=True,
        env={"COLUMNS": "200", "PATH": ""},
    )
    assert out.returncode == 0 and "--junit" in out.stdout and "--oracle" in out.stdout


def test_check_says_that_proposed_contracts_were_not_enforced(files, tmp_path) -> None:
    # one accepted contract is enforced; the proposed ones beside it are said, not checked
    proposed = [CONTRACTS[0]] + [
        c.model_copy(update={"status": ContractStatus.PROPOSED}) for c in CONTRACTS[1:]
    ]
    files["contracts"].write_text(ContractFile(contracts=proposed).model_dump_json(), "utf-8")
    out = _tracemine("check", files["clean"], "-c", files["contracts"], cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    told = " ".join(out.stdout.split())  # the note may wrap
    assert f"2 of {len(proposed)} contracts are proposed and not enforced" in told
    assert "--include-proposed" in told and "against 1 enforced contracts" in told
    report = check([files["clean"]], files["contracts"])
    # the proposed contracts are said, and so is the tool the replay met with no contract
    proposed_said = [n for n in report.notices if "proposed and not enforced" in n]
    assert len(proposed_said) == 1 and report.enforced == 1
    assert any("create_refund (1)" in n for n in report.notices)
    enforced = check([files["clean"]], files["contracts"], include_proposed=True)
    assert not any("proposed" in n for n in enforced.notices)
    assert len(enforced.contracts) == enforced.enforced == 3
