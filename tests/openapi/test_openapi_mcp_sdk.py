"""``tools/list`` of a server built with the official MCP Python SDK: pydantic writes each
tool's schemas with local ``$defs`` (``{"$ref": "#/$defs/Item"}`` means the tool's own
``outputSchema``, not the document root). Read from the committed copy
(``tests/fixtures/openapi/mcp_sdk_tools_list.json``, written by ``mcp_sdk_tools.py``) and,
where the SDK is installed, from a live in-process server; both as ``{"tools": [...]}``
and as the bare list, through ``tracemine merge`` and through the library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tracemine.model.contract import ContractFile, load_contracts, save_contracts
from tracemine.openapi import SpecError, declared_contracts, load_spec

FIXTURE = Path(__file__).parent.parent / "fixtures" / "openapi" / "mcp_sdk_tools_list.json"


def committed() -> list[dict[str, Any]]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))["tools"]


def live() -> list[dict[str, Any]]:
    pytest.importorskip("mcp")
    from mcp_sdk_tools import tools_list

    return tools_list()


@pytest.fixture(params=["committed", "live"])
def tools(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return committed() if request.param == "committed" else live()


def facts(contracts: Any) -> set[tuple[str, str, str, str]]:
    """(tool, kind, path, params) of each declared contract."""
    return {
        (c.tool, c.kind.value, c.paths[0], json.dumps(c.params, sort_keys=True)) for c in contracts
    }


# what pydantic's $defs declare, three levels down, on both sides and in a recursive model
EXPECTED = {
    ("get_order", "present", "result.items[*].price", "{}"),
    ("get_order", "type", "result.items[*].price", '{"type": "object"}'),
    ("get_order", "present", "result.items[*].price.amount", "{}"),
    ("get_order", "type", "result.items[*].price.amount", '{"type": "number"}'),
    ("get_order", "non_negative", "result.items[*].price.amount", "{}"),
    ("get_order", "type", "result.items[*].quantity", '{"type": "integer"}'),
    ("get_order", "type", "result.total.currency", '{"type": "string"}'),
    ("get_order", "one_of", "result.status", '{"values": ["open", "shipped", "delivered"]}'),
    ("create_order", "present", "args.lines[*].sku", "{}"),
    ("create_order", "type", "args.lines[*].quantity", '{"type": "integer"}'),
    ("create_order", "present", "result.items[*].price.currency", "{}"),
    ("list_categories", "present", "result.result[*].name", "{}"),
    ("list_categories", "type", "result.result[*].children[*]", '{"type": "object"}'),
}


def tracemine(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracemine", *map(str, args)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("shape", ["object", "bare"])
def test_merge_reads_the_sdk_tools_list(
    tools: list[dict[str, Any]], shape: str, tmp_path: Path
) -> None:
    spec = tmp_path / "tools.json"
    spec.write_text(json.dumps({"tools": tools} if shape == "object" else tools), "utf-8")
    candidates = save_contracts(ContractFile(contracts=[]), tmp_path / "candidates.json")
    out = tmp_path / "merged.json"
    done = tracemine("merge", "--candidates", candidates, "--spec", spec, "--out", out)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "tools.json: mcp, 3 operations" in done.stdout
    assert facts(load_contracts(out).contracts) >= EXPECTED
    # and the library call declares them too
    assert facts(declared_contracts(load_spec(spec))) >= EXPECTED


def test_a_tool_schema_ref_reads_its_own_defs_then_the_document() -> None:
    """``#/…`` that the tool's own schema does not hold is looked up in the document."""
    out = {
        "$defs": {"A": {"type": "integer"}},
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/components/B"}},
    }
    document = {
        "tools": [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": out}],
        "components": {"B": {"type": "string"}},
    }
    got = facts(declared_contracts(load_spec(document, name="doc.json")))
    assert {("t", "type", "result.a", '{"type": "integer"}'),
            ("t", "type", "result.b", '{"type": "string"}')} <= got  # fmt: skip


def test_a_ref_to_nothing_in_a_bare_list_is_one_clear_error() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object"},
            "outputSchema": {"properties": {"x": {"$ref": "#/$defs/Gone"}}}}  # fmt: skip
    spec = load_spec([tool], name="tools.json")
    with pytest.raises(SpecError, match=r"tools\.json#/0/outputSchema/properties/x: \$ref"):
        declared_contracts(spec)
