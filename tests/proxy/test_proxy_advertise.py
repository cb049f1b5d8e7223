"""``tracemine mcp wrap --advertise``: the ``outputSchema`` of ``export --format mcp`` in
``tools/list`` for a tool that declares none, so the SDK's own client refuses a result the
contracts rule out; a tool with a schema of its own keeps it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import PY, wrap
from tracemine.export import export_contracts
from tracemine.model.contract import Contract, ContractFile

PLAIN = Path(__file__).parents[1] / "fixtures" / "mcp" / "plain_server.py"


def _contracts(folder: Path) -> tuple[Path, Path]:
    """An accepted contract file and its ``export --format mcp``."""
    accepted = {"status": "accepted", "side": "result"}
    contracts = ContractFile(contracts=[
        Contract(tool="get_item", kind="non_negative", paths=["result.stock"], **accepted),
        Contract(tool="get_item", kind="present", paths=["result.item_id"], **accepted),
        Contract(tool="get_order", kind="non_negative", paths=["result.total"], **accepted),
    ])  # fmt: skip
    path = folder / "contracts.json"
    path.write_text(contracts.model_dump_json(), "utf-8")
    tools = folder / "tools.json"
    export_contracts(path, "mcp", tools)
    return path, tools


def _session(command: list[str], items: list[str]) -> tuple[dict[str, Any], list[Any]]:
    """tools/list's output schemas, and each get_item call's result or the error the
    SDK's client raised, then get_order's result."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def run() -> tuple[dict[str, Any], list[Any]]:
        params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            listed = await client.list_tools()
            schemas = {t.name: t.output_schema for t in listed.tools}
            outcomes: list[Any] = []
            for item in items:
                try:
                    outcomes.append(await client.call_tool("get_item", {"item_id": item}))
                except RuntimeError as exc:
                    outcomes.append(exc)
            outcomes.append(await client.call_tool("get_order", {"order_id": "#W1"}))
            return schemas, outcomes

    return anyio.run(run)


@pytest.mark.parametrize("fast", [False, True], ids=["tracemine", "proxy-module"])
def test_the_sdk_client_refuses_what_the_contracts_rule_out(tmp_path: Path, fast: bool) -> None:
    contracts, tools = _contracts(tmp_path)
    command = wrap("--advertise", str(tools), "--contracts", str(contracts),
                   server=[PY, str(PLAIN)], fast=fast)  # fmt: skip
    schemas, (good, negative, page, order) = _session(command, ["#I1", "#I9", "#I8"])
    exported = {t["name"]: t["outputSchema"] for t in json.loads(tools.read_text())["tools"]}
    assert schemas["get_item"] == exported["get_item"]
    # the server's own schema for get_order stays: nothing is advertised over it
    assert schemas["get_order"] != exported["get_order"]
    assert schemas["get_order"]["properties"]["total"]["type"] == "number"
    # a nominal result: structured content read from its text, the text as sent
    assert good.structured_content == {"item_id": "#I1", "stock": 4}
    assert json.loads(good.content[0].text) == good.structured_content
    assert good.meta["tracemine/receipt"]["ok"] is True
    # the SDK's own validation refuses the negative stock and the error page
    assert isinstance(negative, RuntimeError) and "Invalid structured content" in str(negative)
    assert isinstance(page, RuntimeError) and "did not return structured content" in str(page)
    # get_order's result is valid for its own schema: the monitor's receipt says what is wrong
    assert order.structured_content["total"] == -5.0
    assert [v["path"] for v in order.meta["tracemine/receipt"]["violations"]] == ["result.total"]


def test_without_advertise_the_client_takes_the_same_results(tmp_path: Path) -> None:
    contracts, _ = _contracts(tmp_path)
    command = wrap("--contracts", str(contracts), server=[PY, str(PLAIN)])
    schemas, (good, negative, page, _) = _session(command, ["#I1", "#I9", "#I8"])
    assert schemas["get_item"] is None
    assert good.structured_content is None and negative.structured_content is None
    assert negative.meta["tracemine/receipt"]["ok"] is False
    assert page.content[0].text.startswith("<html>")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{", "not JSON"),
        ('{"tools": {}}', 'expected {"tools": [{"name", "outputSchema"}]}'),
        ('{"tools": [{"name": "t", "outputSchema": {"type": "array"}}]}',
         'tools[0] (t): outputSchema must be a JSON Schema object with "type": "object"'),
    ],
)  # fmt: skip
def test_a_bad_advertise_file_is_one_line_naming_it(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "tools.json"
    path.write_text(text, "utf-8")
    done = subprocess.run(wrap("--advertise", str(path), server=[PY, str(PLAIN)], fast=True),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: --advertise {path}: ") and said in done.stderr
    assert "Traceback" not in done.stderr


def test_advertise_over_streamable_http(tmp_path: Path) -> None:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from test_proxy_http import _free_port, _wait_for

    contracts, tools = _contracts(tmp_path)
    server_port, proxy_port = _free_port(), _free_port()
    server = subprocess.Popen([PY, str(PLAIN), "--http", str(server_port)],
                              stderr=subprocess.DEVNULL)  # fmt: skip
    proxy = subprocess.Popen([PY, "-m", "tracemine.proxy", "wrap", "--advertise", str(tools),
                              "--contracts", str(contracts),
                              "--http", f"http://127.0.0.1:{server_port}/mcp",
                              "--listen", f"127.0.0.1:{proxy_port}"],
                             stderr=subprocess.DEVNULL)  # fmt: skip

    async def run() -> tuple[Any, Any, Any]:
        url = f"http://127.0.0.1:{proxy_port}/mcp"
        async with (
            streamable_http_client(url) as (read, write, *_),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            listed = await client.list_tools()
            good = await client.call_tool("get_item", {"item_id": "#I1"})
            try:
                await client.call_tool("get_item", {"item_id": "#I9"})
            except RuntimeError as exc:
                return listed, good, exc
            return listed, good, None

    try:
        _wait_for(server_port, server)
        _wait_for(proxy_port, proxy)
        listed, good, refused = anyio.run(run)
    finally:
        for process in (proxy, server):
            process.kill()
            process.wait()
    exported = json.loads(tools.read_text())["tools"][0]
    schemas = {t.name: t.output_schema for t in listed.tools}
    assert exported["name"] == "get_item" and schemas["get_item"] == exported["outputSchema"]
    assert good.structured_content == {"item_id": "#I1", "stock": 4}
    assert isinstance(refused, RuntimeError) and "Invalid structured content" in str(refused)
