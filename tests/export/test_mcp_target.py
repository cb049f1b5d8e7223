"""``export --format mcp``: each tool's ``outputSchema`` as the MCP SDK's own ``Tool`` type
takes it, accepting every result the contracts were mined from and refusing a faulty one
the way the SDK's client validates structured content."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tracemine.export import export_contracts
from tracemine.model.contract import Contract, ContractFile

mcp_types = pytest.importorskip("mcp_types")


def test_each_output_schema_is_an_mcp_tool_declaration(mined: Any, tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    out = tmp_path / "tools.json"
    report = export_contracts(mined.candidates, "mcp", out)
    document = json.loads(out.read_text("utf-8"))
    assert report.exported > 0 and report.files == [str(out)]
    tools = {t["name"]: t["outputSchema"] for t in document["tools"]}
    # every tool listed is one the traces called (the set is not empty)
    assert tools and set(tools) <= {tool for tool, _ in mined.ok_results()}
    for name, schema in tools.items():
        # the SDK's Tool type, as a server declares it in tools/list
        declared = mcp_types.Tool(name=name, input_schema={"type": "object"},
                                  output_schema=schema)  # fmt: skip
        assert declared.output_schema == schema and schema["type"] == "object"
        Draft202012Validator.check_schema(schema)
    # every result the accepted contracts were mined from is valid structured content
    for tool, result in mined.ok_results():
        if tool in tools and isinstance(result, dict):
            errors = list(Draft202012Validator(tools[tool]).iter_errors(result))
            assert not errors, (tool, result, errors[:1])
    # what JSON Schema cannot say is reported by kind, as the jsonschema target reports it
    assert report.unexpressed and all(u.reason for u in report.unexpressed)


def test_a_tool_whose_result_is_not_an_object_gets_no_output_schema(tmp_path: Path) -> None:
    contracts = ContractFile(contracts=[
        Contract(tool="tags", side="result", kind="type", paths=["result"],
                 params={"type": "array"}, status="accepted"),
        Contract(tool="tags", side="result", kind="non_empty", paths=["result"],
                 status="accepted"),
        Contract(tool="refund", side="result", kind="non_negative", paths=["result.amount"],
                 status="accepted"),
    ])  # fmt: skip
    out = tmp_path / "tools.json"
    report = export_contracts(contracts, "mcp", out)
    (tool,) = json.loads(out.read_text("utf-8"))["tools"]
    # no type contract at the root: MCP's own "an object" is said, nothing narrower
    assert tool["name"] == "refund" and tool["outputSchema"]["type"] == "object"
    assert tool["outputSchema"]["properties"]["amount"] == {"minimum": 0}
    reasons = {(u.tool, u.kind): u.reason for u in report.unexpressed}
    assert set(reasons) == {("tags", "type"), ("tags", "non_empty")}
    assert all("structuredContent, a JSON object; this tool's result is an array" in r
               for r in reasons.values())  # fmt: skip
    assert report.exported == 1


def test_export_mcp_on_the_command_line(mined: Any, tmp_path: Path) -> None:
    out = tmp_path / "tools.json"
    done = subprocess.run(
        [sys.executable, "-m", "tracemine", "export", "-c", str(mined.candidates),
         "-f", "mcp", "-o", str(out), "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["format"] == "mcp" and report["files"] == [str(out)]
    assert json.loads(out.read_text("utf-8"))["tools"]


def test_the_demo_export_is_current_and_refuses_a_wrong_type(tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    root = Path(__file__).parents[2] / "mined_contracts"
    fresh = tmp_path / "tools.json"
    export_contracts(root / "merged.json", "mcp", fresh, include_proposed=True)
    committed = json.loads((root / "mcp.tools.json").read_text("utf-8"))
    assert json.loads(fresh.read_text("utf-8")) == committed, "make demo rewrites it"
    refused = 0
    for tool in committed["tools"]:
        schema = tool["outputSchema"]
        mcp_types.Tool(name=tool["name"], input_schema={"type": "object"}, output_schema=schema)
        typed = {name: p for name, p in schema.get("properties", {}).items()
                 if name in schema.get("required", []) and p.get("type") == "string"}  # fmt: skip
        if not typed:
            continue
        name = sorted(typed)[0]
        # the wrong_type fault: a required string field arrives as a number
        errors = list(Draft202012Validator(schema).iter_errors({name: 12345}))
        assert any(list(e.path) == [name] for e in errors), (tool["name"], name)
        refused += 1
    assert refused >= 5
