"""Hooks: a guarded Python tool, a wrapped MCP session, the example agent loop."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from monitor_contracts import contract

from tracemine.monitor.hooks import MonitoredSession, last_receipt, mcp_payload

from helpers import load_example


@pytest.fixture
def monitor(make_monitor):
    return make_monitor(
        contract("present", ["result.items"]),
        contract("non_empty", ["result.items"]),
        contract("equals", ["result.order_id", "args.order_id"]),
    )


def test_guard_keeps_the_return_value_and_records_the_receipt(monitor) -> None:
    seen = []

    @monitor.guard("get_order", on_receipt=seen.append)
    def get_order(order_id: str, verbose: bool = False) -> dict[str, Any]:
        return {"order_id": "#W2", "items": []}

    value = get_order("#W1")
    assert value == {"order_id": "#W2", "items": []}
    receipt = get_order.last_receipt
    assert receipt is last_receipt() is seen[0] and list(get_order.receipts) == [receipt]
    assert sorted(v.kind for v in receipt.violations) == ["equals", "non_empty"]
    assert get_order.receipts[0].coverage == "full"
    assert get_order.__name__ == "get_order"


def test_guard_on_async_functions_and_models(monitor) -> None:
    @dataclass
    class Order:
        order_id: str
        items: list[str]

    @monitor.guard()
    async def get_order(order_id: str) -> Order:
        return Order(order_id, ["a"])

    order = asyncio.run(get_order(order_id="#W1"))
    assert isinstance(order, Order)
    assert get_order.last_receipt.ok and get_order.last_receipt.coverage == "full"


def test_guard_lets_tool_errors_through_and_records_them(monitor) -> None:
    run = monitor.start_run()

    @monitor.guard("get_order", run=lambda: run)
    def get_order(order_id: str) -> dict[str, Any]:
        raise LookupError("no such order")

    with pytest.raises(LookupError):
        get_order("#W1")
    assert get_order.last_receipt.coverage == "partial"
    verdict = monitor.finalize(run)
    assert not verdict.complete and verdict.errors[0].message.endswith("tool_error")


@dataclass
class _Text:
    text: str
    type: str = "text"


@dataclass
class _Result:
    content: list[Any]
    structuredContent: dict[str, Any] | None = None
    isError: bool = False


class FakeSession:
    """Stands in for ``mcp.ClientSession``: an async ``call_tool`` and other attributes."""

    server_name = "orders"

    def __init__(self, result: Any) -> None:
        self.result = result
        self.calls: list[tuple[str, Any]] = []

    async def call_tool(self, name: str, arguments: Any = None, **kwargs: Any) -> Any:
        self.calls.append((name, arguments))
        return self.result


@pytest.mark.parametrize(
    ("result", "ok"),
    [
        (_Result([_Text('{"order_id": "#W1", "items": [1]}')]), True),
        (_Result([], structuredContent={"order_id": "#W1", "items": []}), False),
        (_Result([_Text("<html>502</html>")]), False),
        ({"content": [{"type": "text", "text": '{"order_id": "#W1", "items": []}'}]}, False),
    ],
)
def test_mcp_session_wrapper(monitor, result, ok) -> None:
    session = MonitoredSession(FakeSession(result), monitor)
    returned = asyncio.run(session.call_tool("get_order", {"order_id": "#W1"}))
    assert returned is result
    assert session.last_receipt is not None and session.last_receipt.ok is ok
    assert session.server_name == "orders"


def test_mcp_errors_are_not_judged_as_results(monitor) -> None:
    result = _Result([_Text("order not found")], isError=True)
    assert mcp_payload(result) == ("order not found", "tool_error")
    session = MonitoredSession(FakeSession(result), monitor)
    asyncio.run(session.call_tool("get_order", {"order_id": "#W1"}))
    assert session.last_receipt.ok and session.last_receipt.coverage == "partial"


def test_example_agent_loop_appends_the_note() -> None:
    messages = load_example("agent_loop").main()
    tool_message = next(m for m in messages if m["role"] == "tool")
    result_text, note = tool_message["content"].split("\n\n", 1)
    assert result_text == '{"order_id": "#W0000002", "items": []}'
    assert note.startswith("[tracemine] ") and "search_orders" in note


def test_the_sdks_own_call_tool_results_are_read_by_their_attributes(monitor) -> None:
    """The official SDK's ``CallToolResult`` (snake_case attributes since mcp 2): an error
    is a tool error and structured content is the result, as on the wire."""
    types = pytest.importorskip("mcp.types")
    failed = types.CallToolResult.model_validate(
        {"content": [{"type": "text", "text": "order not found"}], "isError": True}
    )
    assert mcp_payload(failed) == ("order not found", "tool_error")
    session = MonitoredSession(FakeSession(failed), monitor)
    asyncio.run(session.call_tool("get_order", {"order_id": "#W1"}))
    assert session.last_receipt.ok and session.last_receipt.coverage == "partial"
    empty = types.CallToolResult.model_validate(
        {"content": [], "structuredContent": {"order_id": "#W1", "items": []}}
    )
    assert mcp_payload(empty) == ({"order_id": "#W1", "items": []}, "ok")
    session = MonitoredSession(FakeSession(empty), monitor)
    asyncio.run(session.call_tool("get_order", {"order_id": "#W1"}))
    assert not session.last_receipt.ok
