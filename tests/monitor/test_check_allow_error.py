"""A tool error can be the right answer ("order not found" for an order that does not
exist, an MCP ``isError`` result saying so): ``check --allow-error TOOL=REGEX`` and
``Monitor(expected_errors=...)`` let a run that ends so pass, and nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from monitor_contracts import contract

from tracemine.gate import check
from tracemine.model.contract import ContractFile
from tracemine.monitor import Monitor

ORDER = {"order_id": "#W1", "items": [{"sku": "a", "qty": 1}], "total": 12.5}
NOT_FOUND_MCP = {"content": [{"type": "text", "text": "Order #W9 Not Found"}], "isError": True}


def _line(run: str, call_id: str, order: str, result: Any, status: str = "ok") -> dict[str, Any]:
    return {"run_id": run, "task_id": "t-" + run, "tool": "get_order", "call_id": call_id,
            "arguments": {"order_id": order}, "status": status, "result": result}  # fmt: skip


LINES = [
    _line("r1", "c1", "#W1", ORDER),
    _line("r2", "c1", "#W9", "Error: order not found", "tool_error"),  # a right answer
    _line("r3", "c1", "#W9", NOT_FOUND_MCP, "tool_error"),  # the same, as MCP says it
    _line("r4", "c1", "#W2", "database unreachable", "tool_error"),  # a real failure
]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps(line) + "\n" for line in LINES), "utf-8")
    contracts = tmp_path / "contracts.json"
    document = ContractFile(contracts=[contract("non_empty", ["result.items"])])
    contracts.write_text(document.model_dump_json(), "utf-8")
    return traces, contracts


def _verdicts(report: Any) -> dict[str, str]:
    return {r.run_id: r.verdict for r in report.runs}


def test_without_it_every_unretried_error_fails_the_run(files) -> None:
    report = check([files[0]], files[1])
    assert _verdicts(report) == {"r1": "complete", "r2": "incomplete", "r3": "incomplete",
                                 "r4": "incomplete"}  # fmt: skip
    assert report.failed


def test_an_expected_error_leaves_its_run_complete_and_only_that_one(files) -> None:
    report = check([files[0]], files[1], allow_errors=["get_order=not found"])
    assert _verdicts(report) == {"r1": "complete", "r2": "complete", "r3": "complete",
                                 "r4": "incomplete"}  # fmt: skip
    said = {r.run_id: r.errors for r in report.runs}
    assert said["r2"] == ["call c1 (get_order) ended with tool_error, as expected "
                          "(get_order=not found)"]  # fmt: skip
    assert report.failed  # r4's database error is still a failure


def test_the_cli_passes_when_every_error_is_expected(files, tmp_path: Path) -> None:
    traces = tmp_path / "expected.jsonl"
    traces.write_text("".join(json.dumps(line) + "\n" for line in LINES[:3]), "utf-8")
    env = {**os.environ, "COLUMNS": "200"}
    run = [sys.executable, "-m", "tracemine", "check", str(traces), "-c", str(files[1])]
    failed = subprocess.run(run, capture_output=True, text=True, env=env)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    passed = subprocess.run([*run, "--allow-error", "*=not found"], capture_output=True,
                            text=True, env=env)  # fmt: skip
    assert passed.returncode == 0, passed.stdout + passed.stderr
    other_tool = subprocess.run([*run, "--allow-error", "create_refund=not found"],
                                capture_output=True, text=True, env=env)  # fmt: skip
    assert other_tool.returncode == 1


def test_a_bad_allow_error_is_one_line(files) -> None:
    for bad, said in [("=x", "give TOOL=REGEX"), ("get_order=(", "is not a regular expression")]:
        done = subprocess.run(
            [sys.executable, "-m", "tracemine", "check", str(files[0]), "-c", str(files[1]),
             "--allow-error", bad], capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert "--allow-error" in done.stderr and said in done.stderr


def test_the_monitor_in_the_loop_takes_the_same_expectations(files) -> None:
    monitor = Monitor.load(files[1], expected_errors=["get_order"])
    run = monitor.start_run("r")
    monitor.check("get_order", {"order_id": "#W9"}, "order not found", call_id="c1", run=run,
                  status="tool_error")  # fmt: skip
    assert monitor.finalize(run).complete
    with pytest.raises(ValueError, match="give TOOL=REGEX"):
        Monitor.load(files[1], expected_errors=[""])
