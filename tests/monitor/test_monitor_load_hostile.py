"""A contract file is input like any other: whatever a field holds, loading it either
works or raises :class:`ContractLoadError` naming the contract, and `validate-contracts`
calls valid only what the monitor can load."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tracemine.monitor import SCHEMA_VERSION, ContractLoadError, Monitor
from tracemine.monitor._load import RELATIONAL, RUN_LEVEL, UNARY

HOSTILE: list[Any] = [
    10**400, -(10**400), float("inf"), float("nan"), [], ["range"], {}, {"a": [1]}, None,
    True, "", "x" * 10_000, "\x00", [[[[[[[[[[]]]]]]]]]], 2**64, -0.0,
]  # fmt: skip
FIELDS = ["kind", "side", "status", "tool", "id", "paths", "when", "recovery", "implied_by"]
PARAMS = ["min", "max", "values", "type", "format", "regex", "value", "tolerance", "tool",
          "same", "from_tool", "from_path", "required", "forbidden"]  # fmt: skip


def _base(kind: str) -> dict[str, Any]:
    paths = ["result.a", "args.b"] if kind in RELATIONAL else ["result.a"]
    side = "run" if kind in RUN_LEVEL else "result"
    return {"id": "c1", "tool": "t", "side": side, "kind": kind, "paths": paths,
            "params": {}, "status": "accepted"}  # fmt: skip


def _documents() -> list[dict[str, Any]]:
    docs = []
    for kind in sorted(UNARY | RELATIONAL | RUN_LEVEL):
        for value in HOSTILE:
            for name in PARAMS:
                docs.append({**_base(kind), "params": {name: value}})
            docs.append({**_base(kind), "params": {"min": 0, "max": value}})
    for value in HOSTILE:
        for name in FIELDS:
            docs.append({**_base("range"), "params": {"min": 0}, name: value})
    return docs


def test_every_hostile_contract_loads_or_is_refused_with_a_reason() -> None:
    refused = 0
    for item in _documents():
        document = {"schema_version": SCHEMA_VERSION, "contracts": [item]}
        try:
            monitor = Monitor.from_dict(document, include_proposed=True)
        except ContractLoadError as exc:
            refused += 1
            assert "\n" not in str(exc), exc
            assert "c1" in str(exc) or "contracts[0]" in str(exc), exc
            continue
        receipt = monitor.check("t", {"b": 1}, {"a": 1})  # advisory: never raises
        assert receipt.tool == "t"
    assert refused > 0


def test_a_bound_no_double_can_hold_is_refused_by_name() -> None:
    item = {**_base("range"), "params": {"min": 0, "max": 10**400}}
    with pytest.raises(ContractLoadError, match=r"contracts\[0\] \(c1\): range needs params"):
        Monitor.from_dict({"schema_version": SCHEMA_VERSION, "contracts": [item]})


def test_a_list_as_kind_is_an_unknown_kind() -> None:
    item = {**_base("range"), "kind": ["range"]}
    with pytest.raises(ContractLoadError, match=r"unknown kind \['range'\]"):
        Monitor.from_dict({"schema_version": SCHEMA_VERSION, "contracts": [item]})


def test_validate_contracts_calls_valid_only_what_the_monitor_loads(tmp_path: Path) -> None:
    from tracemine.model.contract import Contract, ContractFile

    good = Contract(tool="t", side="result", kind="range", paths=["result.a"],
                    params={"min": 0, "max": 10}, status="accepted")  # fmt: skip
    data = json.loads(ContractFile(contracts=[good]).model_dump_json())
    data["contracts"][0]["params"]["max"] = 10**400
    path = tmp_path / "contracts.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "tracemine", "validate-contracts", str(path)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "range needs params.min and/or max as numbers" in done.stderr
