"""Each export target on the mined candidates: what goes out, what is reported, and that
the outputs run where they are meant to (the monitor, pytest)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tracemine import read_traces
from tracemine.cli import app
from tracemine.export import export_contracts, result_schema
from tracemine.faults import inject
from tracemine.model.contract import Contract, ContractFile, load_contracts
from tracemine.monitor import Monitor, replay
from tracemine.simulate import write_traces

from helpers import INNER_PYTEST


def test_native_holds_only_accepted_contracts_and_loads_in_the_monitor(
    mined: Any, tmp_path: Path
) -> None:
    out = tmp_path / "contracts.json"
    report = export_contracts(mined.candidates, "native", out)
    native = load_contracts(out)
    assert {c.status.value for c in native.contracts} == {"accepted"}
    assert len(native.contracts) == report.exported == report.selected
    rejected = {c.id for c in native.contracts} & {
        c.id for c in mined.contracts.contracts if c.evidence.heldout_violations
    }
    assert not rejected
    monitor = Monitor.load(out)
    replays = replay(monitor, read_traces(mined.traces).calls)
    violations = [v for r in replays for c in r.calls if c.receipt for v in c.receipt.violations]
    assert not violations, violations[:3]


def test_native_with_proposed_says_how_to_enforce_them(mined: Any, tmp_path: Path) -> None:
    report = export_contracts(
        mined.contracts, "native", tmp_path / "all.json", include_proposed=True
    )
    assert report.selected == len(mined.contracts.contracts)
    assert any("include_proposed" in note for note in report.notes)
    # the file says it too, for whoever loads it without having seen the export
    told = load_contracts(tmp_path / "all.json").provenance["export"]["monitor"]
    assert "include_proposed=True" in told and "proposed" in told


def test_jsonschema_reports_what_it_cannot_express() -> None:
    contracts = [
        Contract(tool="t", side="run", kind="call_cap", paths=[], params={"max": 3}),
        Contract(tool="t", side="result", kind="le", paths=["result.a", "args.limit"]),
        Contract(tool="t", side="args", kind="present", paths=["args.id"]),
        Contract(tool="t", side="result", kind="present", paths=["result.id"]),
        Contract(tool="t", side="result", kind="positive", paths=["result.n"],
                 when={"path": "result.state", "op": "==", "value": "open"}),
    ]  # fmt: skip
    schema, skipped = result_schema("t", contracts)
    reasons = {c.kind.value: reason for c, reason in skipped}
    assert set(reasons) == {"call_cap", "le", "present"}
    assert "run-level" in reasons["call_cap"] and "arguments" in reasons["present"]
    assert schema["required"] == ["id"]
    (conditional,) = schema["allOf"]
    assert conditional["if"]["properties"]["state"] == {"const": "open"}
    assert conditional["then"] == {"properties": {"n": {"exclusiveMinimum": 0}}}


def test_jsonschema_of_a_map_constrains_every_entry() -> None:
    import jsonschema

    contracts = [
        Contract(tool="t", side="result", kind="type", paths=["result.variants{*}.price"],
                 params={"type": "number"}),
        Contract(tool="t", side="result", kind="present", paths=["result.variants{*}.price"]),
    ]  # fmt: skip
    schema, skipped = result_schema("t", contracts)
    assert not skipped
    good = {"variants": {"1270145486": {"price": 158.89}, "4983901480": {"price": 1}}}
    jsonschema.validate(good, schema)
    for bad in ({"1270145486": {"price": "158.89"}}, {"4983901480": {"cost": 1}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"variants": bad}, schema)
    # unique across every entry's items is what the monitor checks: no schema says that
    across = Contract(tool="t", side="result", kind="unique", paths=["result.variants{*}.tags[*]"])
    _, skipped = result_schema("t", [across])
    assert [c.kind.value for c, _ in skipped] == ["unique"]


def _run_pytest(module: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*INNER_PYTEST, module.name],
        cwd=module.parent, capture_output=True, text=True, env={**os.environ, **(env or {})},
        timeout=300,
    )  # fmt: skip


@pytest.mark.slow
def test_pytest_module_replays_traces(mined: Any, tmp_path: Path) -> None:
    module = tmp_path / "test_replay.py"
    export_contracts(mined.candidates, "pytest", module, traces=[mined.traces])
    passed = _run_pytest(module)
    assert passed.returncode == 0, passed.stdout[-2000:]
    assert f"{len(mined.runs)} passed" in passed.stdout
    faulty, truth = inject(mined.runs, ["negative_quantity", "field_omitted"], rate=0.5, seed=2)
    bad = write_traces(faulty, tmp_path / "faulty.jsonl", "openai_chat")
    failed = _run_pytest(module, {"TRACEMINE_TRACES": str(bad)})
    assert failed.returncode == 1
    assert "expected" in failed.stdout and truth


def test_export_cli(mined: Any, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "tracemine", "export", "-c", str(mined.candidates)]
    done = subprocess.run([*command, "-f", "jsonschema", "-o", str(tmp_path / "js"), "--json"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["files"] and report["unexpressed"]
    assert all(u["reason"] for u in report["unexpressed"])
    base = ["export", "-c", str(mined.candidates)]
    missing = CliRunner().invoke(app, [*base, "-f", "openapi-overlay", "-o", str(tmp_path / "o")])
    assert missing.exit_code == 2 and "--spec" in missing.output
    unknown = CliRunner().invoke(app, [*base, "-f", "xml", "-o", str(tmp_path / "x")])
    assert unknown.exit_code == 2 and "native, jsonschema" in unknown.output


@pytest.mark.parametrize("fmt", ["native", "jsonschema", "openapi-overlay", "pytest", "mcp"])
def test_nothing_accepted_writes_empty_targets_and_says_so(
    fmt: str, mined: Any, tmp_path: Path
) -> None:
    empty = ContractFile(contracts=[c.model_copy() for c in mined.contracts.contracts[:5]])
    report = export_contracts(empty, fmt, tmp_path / "out", spec=mined.spec)
    assert report.selected == 0 and report.exported == 0
    assert any("no contract is accepted" in n for n in report.notes)


def test_a_bound_against_an_earlier_call_goes_to_the_monitor_not_to_a_schema(
    tmp_path: Path,
) -> None:
    bound = Contract(tool="create_refund", side="run", kind="bounded_by",
                     paths=["args.amount_cents"], status="accepted",
                     params={"from_tool": "get_order", "from_path": "result.total_cents"})  # fmt: skip
    source = ContractFile(contracts=[bound])
    report = export_contracts(source, "native", tmp_path / "native.json")
    assert report.exported == 1 and not report.unexpressed
    monitor = Monitor.load(tmp_path / "native.json")
    run = monitor.start_run()
    monitor.check("get_order", {"order_id": "#1"}, {"total_cents": 1200}, run=run)
    (v,) = monitor.check("create_refund", {"amount_cents": 4500}, {}, run=run).violations
    assert (v.contract_id, v.observed) == (bound.id, "4500 > 1200")
    _, skipped = result_schema("create_refund", [bound])
    assert [reason for _, reason in skipped] == [
        "run-level: a result schema sees one call at a time"
    ]


def test_jsonschema_files_are_unique_per_tool(tmp_path: Path) -> None:
    """Tool names that read alike once made safe for a file system (``get order``,
    ``get/order``, ``get_order``, ``Get_Order``) get one schema file each."""
    tools = ["get order", "get/order", "get_order", "Get_Order", "../../etc", "list_items"]
    contracts = [Contract(tool=t, side="result", kind="type", paths=["result.id"],
                          params={"type": "string"}, status="accepted") for t in tools]  # fmt: skip
    report = export_contracts(ContractFile(contracts=contracts), "jsonschema", tmp_path / "s")
    files = sorted((tmp_path / "s").iterdir())
    assert len(files) == len(tools) == report.exported
    assert len({f.name.lower() for f in files}) == len(tools)
    titles = {json.loads(f.read_text())["title"] for f in files}
    assert titles == {f"{t} result" for t in tools}
    assert (tmp_path / "s" / "list_items.result.schema.json").is_file()  # plain stays plain
    assert all(f.parent == tmp_path / "s" for f in files)
