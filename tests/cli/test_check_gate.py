"""``check`` is a gate that knows what it enforces: nothing accepted is a refusal, not a
pass, and a run whose calls broke an enforced contract fails in the JUnit ``runs`` suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tracemine.errors import InputError
from tracemine.gate import check
from tracemine.model.contract import Contract, ContractFile

CALLS = [
    {"run_id": "good", "task_id": "t1", "seq": 0, "call_id": "c0", "tool": "get_order",
     "arguments": {"order_id": "#W1"}, "result": {"total": 12}, "status": "ok"},
    {"run_id": "bad", "task_id": "t2", "seq": 0, "call_id": "c0", "tool": "get_order",
     "arguments": {"order_id": "#W2"}, "result": {"total": -3}, "status": "ok"},
]  # fmt: skip


def _files(tmp_path: Path, status: str) -> tuple[Path, Path]:
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps(c) + "\n" for c in CALLS), "utf-8")
    contract = Contract(tool="get_order", side="result", kind="non_negative",
                        paths=["result.total"], status=status)  # fmt: skip
    contracts = tmp_path / "contracts.json"
    contracts.write_text(ContractFile(contracts=[contract]).model_dump_json(), "utf-8")
    return traces, contracts


def _tracemine(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracemine", *args], cwd=tmp_path, text=True,
                          capture_output=True, env={**os.environ, "COLUMNS": "200"})  # fmt: skip


def test_check_on_an_all_proposed_file_exits_2_in_one_line(tmp_path: Path) -> None:
    traces, contracts = _files(tmp_path, "proposed")
    out = _tracemine(tmp_path, "check", traces.name, "-c", contracts.name)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stdout == "" and len(out.stderr.strip().splitlines()) == 1
    assert "contracts.json: no accepted contract to enforce (1 proposed)" in out.stderr
    assert "--include-proposed" in out.stderr and "Traceback" not in out.stderr
    with pytest.raises(InputError, match="no accepted contract"):
        check(traces, contracts)
    # asked to enforce the proposed ones, it does, and says how many
    enforced = _tracemine(tmp_path, "check", traces.name, "-c", contracts.name,
                          "--include-proposed")  # fmt: skip
    assert enforced.returncode == 1, enforced.stdout + enforced.stderr
    assert "2 calls in 2 runs against 1 enforced contracts" in " ".join(enforced.stdout.split())


def test_junit_runs_suite_fails_a_run_whose_call_broke_a_contract(tmp_path: Path) -> None:
    traces, contracts = _files(tmp_path, "accepted")
    report = check(traces, contracts)
    assert report.enforced == 1
    assert {r.run_id: r.call_violations for r in report.runs} == {
        "good": {},
        "bad": {report.contracts[0].contract_id: 1},
    }
    out = _tracemine(tmp_path, "check", traces.name, "-c", contracts.name, "--junit", "out.xml")
    assert out.returncode == 1, out.stdout + out.stderr
    runs = next(s for s in ET.parse(tmp_path / "out.xml").getroot() if s.get("name") == "runs")
    assert runs.get("failures") == "1"
    failed = {c.get("name"): c.find("failure") for c in runs}
    assert failed["good"] is None and failed["bad"] is not None
    assert "result.total" in (failed["bad"].text or "")


def test_check_and_the_monitor_apply_the_review_file_beside_the_contracts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After ``review accept``, ``check merged.json`` enforces what was accepted (it used to
    say "accept some with tracemine review accept" again), and ``Monitor.load`` does too."""
    from tracemine.monitor import ContractLoadError, Monitor

    traces, contracts = _files(tmp_path, "proposed")
    (cid,) = [c["id"] for c in json.loads(contracts.read_text("utf-8"))["contracts"]]
    accepted = _tracemine(tmp_path, "review", "accept", cid, "--contracts", contracts.name)
    assert accepted.returncode == 0, accepted.stderr
    assert (tmp_path / "contracts.review.yaml").is_file()
    out = _tracemine(tmp_path, "check", traces.name, "-c", contracts.name)
    assert out.returncode == 1, out.stdout + out.stderr  # the accepted contract caught bad
    said = " ".join(out.stdout.split())
    assert "against 1 enforced contracts: 1 violations" in said
    assert "applied 1 review decisions from contracts.review.yaml" in said
    monitor = Monitor.load(contracts)
    assert [s.id for s in monitor.contracts] == [cid]
    assert monitor.notices[0].startswith("applied 1 review decisions")
    # a rejection beside the file silences the contract in both
    rejected = _tracemine(tmp_path, "review", "reject", cid, "--contracts", contracts.name,
                          "--reason", "totals may be negative for credits")  # fmt: skip
    assert rejected.returncode == 0, rejected.stderr
    refused = _tracemine(tmp_path, "check", traces.name, "-c", contracts.name)
    assert refused.returncode == 2 and "no accepted contract" in refused.stderr
    assert Monitor.load(contracts, include_proposed=True).contracts == []
    # --review names another file; a missing one is a one-line error
    elsewhere = _tracemine(tmp_path, "check", traces.name, "-c", contracts.name,
                           "--review", "nowhere.review.yaml")  # fmt: skip
    assert elsewhere.returncode == 2 and len(elsewhere.stderr.strip().splitlines()) == 1
    assert "nowhere.review.yaml: no such review file" in elsewhere.stderr
    # where the mining stack that reads YAML decisions is missing, the monitor refuses
    # in one line instead of enforcing the file as if nobody had reviewed it
    monkeypatch.setitem(sys.modules, "tracemine.review.apply", None)
    with pytest.raises(ContractLoadError, match=r"review decisions in .*contracts\.review\.yaml need "
                       r"tracemine\[mine\] to apply; run `tracemine export"):  # fmt: skip
        Monitor.load(contracts)
