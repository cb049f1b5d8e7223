"""The tool wrapper with real LangChain tools: the ToolMessage keeps the tool's content,
artifact, status and id, with the note after the content when a contract is violated."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from integration_calls import ARGS, BAD, GOOD
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, ToolException, tool

from tracemine.integrations.langchain import MonitoredTool
from tracemine.model.result import NOTE_MARK, strip_note
from tracemine.monitor import Monitor, Receipt


def order_tool(result: dict[str, Any]) -> BaseTool:
    @tool(response_format="content_and_artifact")
    def get_order(order_id: str) -> tuple[str, dict[str, Any]]:
        """Look up an order by its id."""
        return json.dumps(result), {"raw": result, "source": "orders-db"}

    return get_order


def call(call_id: str = "call_1") -> dict[str, Any]:
    return {"name": "get_order", "args": dict(ARGS), "id": call_id, "type": "tool_call"}


@pytest.mark.parametrize("result", [BAD, GOOD])
def test_the_wrapper_gives_the_verdict_monitor_check_gives(monitor: Monitor,
                                                           result: dict[str, Any]) -> None:  # fmt: skip
    seen: list[Receipt] = []
    wrapped = MonitoredTool(order_tool(result), monitor, on_receipt=seen.append)
    wrapped.invoke(call())
    expected = monitor.check("get_order", ARGS, json.dumps(result), call_id="call_1")
    assert seen == [expected] and wrapped.last_receipt == expected


def test_the_tool_message_keeps_content_and_artifact_and_gets_the_note(monitor: Monitor) -> None:
    plain = order_tool(BAD).invoke(call())
    message = MonitoredTool(order_tool(BAD), monitor).invoke(call())
    assert isinstance(message, ToolMessage)
    assert message.content == monitor.check("get_order", ARGS, BAD).annotate(plain.content)
    assert strip_note(message.content) == plain.content
    assert message.artifact == plain.artifact
    assert (message.tool_call_id, message.name, message.status) == ("call_1", "get_order",
                                                                      "success")  # fmt: skip


def test_a_result_that_holds_comes_back_as_the_tool_made_it(monitor: Monitor) -> None:
    plain = order_tool(GOOD).invoke(call())
    assert MonitoredTool(order_tool(GOOD), monitor).invoke(call()) == plain


def test_async_and_plain_arguments(monitor: Monitor) -> None:
    wrapped = MonitoredTool(order_tool(BAD), monitor)
    message = asyncio.run(wrapped.ainvoke(call("call_2")))
    assert NOTE_MARK in message.content and wrapped.last_receipt.call_id == "call_2"
    # called without a tool call LangChain returns the content alone: it stays as it was
    assert wrapped.invoke(dict(ARGS)) == json.dumps(BAD)
    assert not wrapped.last_receipt.ok


def test_content_blocks_get_the_note_as_one_more_block(monitor: Monitor) -> None:
    @tool
    def get_order(order_id: str) -> list[dict[str, str]]:
        """Look up an order by its id."""
        return [{"type": "text", "text": json.dumps(BAD)}]

    message = MonitoredTool(get_order, monitor).invoke(call())
    note = monitor.check("get_order", ARGS, BAD).note()
    assert message.content == [{"type": "text", "text": json.dumps(BAD)},
                               {"type": "text", "text": note}]  # fmt: skip


def test_the_wrapper_looks_like_the_tool_and_its_errors_still_raise(monitor: Monitor) -> None:
    @tool
    def get_order(order_id: str) -> str:
        """Look up an order by its id."""
        raise LookupError(order_id)

    wrapped = MonitoredTool(get_order, monitor)
    assert (wrapped.name, wrapped.description, wrapped.args) == (
        get_order.name, get_order.description, get_order.args)  # fmt: skip
    with pytest.raises(LookupError):
        wrapped.invoke(call())


def test_calls_are_recorded_into_a_run(monitor: Monitor) -> None:
    run = monitor.start_run("r1", declared=True)
    MonitoredTool(order_tool(GOOD), monitor, agent_run=run).invoke(call())
    verdict = monitor.finalize(run)
    assert verdict.complete and verdict.calls == 1


def test_a_tool_error_message_is_checked_as_a_tool_error(monitor: Monitor) -> None:
    @tool
    def get_order(order_id: str) -> str:
        """Look up an order by its id."""
        raise ToolException("orders database unreachable")

    get_order.handle_tool_error = True  # LangChain answers the model with the error text
    wrapped = MonitoredTool(get_order, monitor)
    message = wrapped.invoke(call())
    assert message.status == "error" and message.content == "orders database unreachable"
    expected = monitor.check("get_order", ARGS, message.content, call_id="call_1",
                             status="tool_error")  # fmt: skip
    assert wrapped.last_receipt == expected
    assert expected != monitor.check("get_order", ARGS, message.content, call_id="call_1")


def test_a_tool_that_raises_leaves_no_receipt_of_the_call_before(monitor: Monitor) -> None:
    answers: list[Any] = [GOOD]

    @tool
    def get_order(order_id: str) -> str:
        """Look up an order by its id."""
        if not answers:
            raise LookupError(order_id)
        return json.dumps(answers.pop())

    wrapped = MonitoredTool(get_order, monitor)
    wrapped.invoke(call("call_1"))
    assert wrapped.last_receipt is not None and wrapped.last_receipt.call_id == "call_1"
    with pytest.raises(LookupError):
        wrapped.invoke(call("call_2"))
    assert wrapped.last_receipt is None


def test_wrapping_a_tool_the_contracts_say_nothing_about_warns(monitor: Monitor) -> None:
    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        return "sent"

    with pytest.warns(UserWarning, match=r"none for tool 'send_email'.*get_order"):
        wrapped = MonitoredTool(send_email, monitor)
    pass_through = wrapped.invoke({"to": "a@example.com"})  # the receipt says it too
    assert pass_through == "sent" and wrapped.last_receipt.coverage == "unknown"
