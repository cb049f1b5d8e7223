"""A declared pattern the monitor would refuse is left out of the merged file, and the merge
says which, where and why: the monitor refuses a whole file for one such pattern, even
one a reviewer accepted along with everything else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tracemine.model.contract import ContractFile, Kind, load_contracts, save_contracts
from tracemine.monitor import Monitor
from tracemine.openapi import merge_files
from tracemine.review import ReviewFile, apply_review, decide

GOOD = "^[A-Z]{3}$"
ECMA_ONLY = r"^\p{L}+$"  # Unicode property escapes: ECMA-262, not Python's re
BACKTRACKING = r"^(a)\1$"  # a back-reference: only a backtracker matches it
POINTER = "#/paths/~1orders~1{order_id}/get/responses/200/content/application~1json/schema"


def _spec(tmp_path: Path) -> Path:
    fields: dict[str, Any] = {
        "code": {"type": "string", "pattern": GOOD},
        "name": {"type": "string", "pattern": ECMA_ONLY},
        "echo": {"type": "string", "pattern": BACKTRACKING},
    }
    document = {
        "openapi": "3.0.3", "info": {"title": "orders", "version": "1"},
        "paths": {"/orders/{order_id}": {"get": {
            "operationId": "getOrder",
            "parameters": [{"name": "order_id", "in": "path", "required": True,
                            "schema": {"type": "string"}}],
            "responses": {"200": {"description": "the order", "content": {
                "application/json": {"schema": {"type": "object", "properties": fields}}}}},
        }}},
    }  # fmt: skip
    path = tmp_path / "orders.openapi.json"
    path.write_text(json.dumps(document), "utf-8")
    return path


def _patterns(contracts: ContractFile) -> dict[str, str]:
    return {c.paths[0]: c.params["regex"] for c in contracts.contracts if c.kind == Kind.PATTERN}


def test_a_refused_pattern_is_left_out_and_said(tmp_path: Path) -> None:
    report = merge_files(ContractFile(), [_spec(tmp_path)], out=tmp_path / "merged.json")
    assert _patterns(report.merged) == {"result.code": GOOD}
    assert len(report.merged.contracts) > 1  # the other declarations of the fields stay
    refused = {r["path"]: r for r in report.refused_patterns}
    assert set(refused) == {"result.name", "result.echo"}
    name = refused["result.name"]
    assert name["operation"] == "getOrder" and name["tool"] == "getOrder"
    assert name["regex"] == ECMA_ONLY and name["spec"] == "orders.openapi.json"
    assert name["pointer"] == f"{POINTER}/properties/name"
    assert name["reason"].startswith("pattern does not compile: bad escape \\p")
    assert refused["result.echo"]["reason"] == "back-references are not allowed"
    said = [w for w in report.warnings if "left out: the monitor refuses it" in w]
    assert len(said) == 2
    assert any(repr(ECMA_ONLY) in w and "getOrder" in w and "properties/name" in w for w in said)


def test_the_merged_file_loads_in_the_monitor_with_every_contract_accepted(
    tmp_path: Path,
) -> None:
    merged = merge_files(ContractFile(), [_spec(tmp_path)], out=tmp_path / "merged.json")
    assert merged.out is not None
    review = ReviewFile()
    contracts = load_contracts(merged.out)
    decide(review, contracts.contracts, "accepted", reviewer="test")
    accepted = save_contracts(apply_review(contracts, review), tmp_path / "accepted.json")
    monitor = Monitor.load(accepted)
    assert monitor.check("getOrder", {"order_id": "1"}, {"code": "ABC", "name": "Zoë"}).ok
    assert not monitor.check("getOrder", {"order_id": "1"}, {"code": "abc"}).ok
