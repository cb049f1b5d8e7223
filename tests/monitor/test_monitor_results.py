"""The monitor reads a result as ingest does: content text is parsed, a note trailer is cut,
and an error (flagged, raised, or an error payload said to be ok) is judged by no result
contract — the run gate reports it instead."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from monitor_contracts import contract

from tracemine.monitor import Monitor, MonitoredSession, guard

ORDER = {"order_id": "#W1", "items": [{"sku": "a", "qty": 1}], "total": 918.43}
ERROR = {"error": {"code": "not_found", "message": "no order #W1"}}


@pytest.fixture
def monitor(make_monitor: Any) -> Monitor:
    return make_monitor(
        contract("present", ["result.items"]),
        contract("non_empty", ["result.items"]),
        contract("type", ["result.total"], params={"type": "number"}),
        contract("equals", ["result.order_id", "args.order_id"]),
    )


def ids(receipt: Any) -> list[str]:
    return sorted(v.kind for v in receipt.violations)


def test_content_text_is_checked_as_the_value_it_holds(monitor: Monitor) -> None:
    args = {"order_id": "#W1"}
    assert monitor.check("get_order", args, json.dumps(ORDER)).ok
    broken = {**ORDER, "items": [], "order_id": "#W2"}
    assert ids(monitor.check("get_order", args, json.dumps(broken))) == ["equals", "non_empty"]
    assert ids(monitor.check("get_order", args, broken)) == ["equals", "non_empty"]


def test_a_note_appended_to_the_content_is_not_part_of_the_result(monitor: Monitor) -> None:
    args = {"order_id": "#W1"}
    text = json.dumps({**ORDER, "order_id": "#W2"})
    receipt = monitor.check("get_order", args, text)
    assert ids(receipt) == ["equals"]
    for content in (receipt.annotate(text), text + "\n" + receipt.note()):
        again = monitor.check("get_order", args, content)
        assert ids(again) == ["equals"] and again.violations == receipt.violations


def test_annotate_leaves_clean_content_alone(monitor: Monitor) -> None:
    text = json.dumps(ORDER)
    receipt = monitor.check("get_order", {"order_id": "#W1"}, text)
    assert receipt.note() == "" and receipt.annotate(text) == text
    broken = monitor.check("get_order", {"order_id": "#W1"}, {**ORDER, "items": []})
    assert broken.note().startswith("[tracemine] ")
    assert broken.annotate(text) == text + "\n\n" + broken.note()


@pytest.mark.parametrize("content", [ERROR, json.dumps(ERROR), {"detail": "Not Found"}])
def test_an_error_payload_said_to_be_ok_is_a_tool_error(monitor: Monitor, content: Any) -> None:
    run = monitor.start_run("r1")
    receipt = monitor.check("get_order", {"order_id": "#W1"}, content, call_id="c1", run=run)
    assert receipt.ok and receipt.coverage == "partial"
    assert {u.kind for u in receipt.not_evaluated} == {"present", "non_empty", "type", "equals"}
    assert all("tool_error" in u.reason for u in receipt.not_evaluated)
    verdict = monitor.finalize(run)
    assert not verdict.complete
    assert [g.code for g in verdict.errors] == ["execution_error"]
    without_run = monitor.check("get_order", {"order_id": "#W1"}, content)
    assert without_run.ok and without_run.coverage == "partial"


def test_a_run_rebuilt_from_records_sees_the_error_too(monitor: Monitor) -> None:
    calls = [{"run_id": "r1", "seq": 0, "call_id": "c1", "tool": "get_order",
              "arguments": {"order_id": "#W1"}, "result": json.dumps(ERROR), "status": "ok"}]  # fmt: skip
    verdict = monitor.finalize(calls)
    assert [g.code for g in verdict.errors] == ["execution_error"]


def test_an_exception_in_a_guarded_tool_is_a_tool_error(monitor: Monitor) -> None:
    run = monitor.start_run("r1")

    @guard(monitor, "get_order", run=run)
    def get_order(order_id: str) -> dict[str, Any]:
        raise LookupError("no order")

    with pytest.raises(LookupError):
        get_order("#W1")
    receipt = get_order.last_receipt  # type: ignore[attr-defined]
    assert receipt.ok and receipt.coverage == "partial"
    assert [g.code for g in monitor.finalize(run).errors] == ["execution_error"]


def test_a_guarded_tool_returning_an_error_payload_is_not_judged(monitor: Monitor) -> None:
    @monitor.guard("get_order")
    def get_order(order_id: str) -> dict[str, Any]:
        return {"error": "order service unavailable"}

    assert get_order("#W1") == {"error": "order service unavailable"}
    assert get_order.last_receipt.ok  # type: ignore[attr-defined]


@dataclass
class Text:
    text: str
    type: str = "text"


@dataclass
class Result:
    content: list[Any] = field(default_factory=list)
    structuredContent: dict[str, Any] | None = None
    isError: bool = False


class Session:
    """Answers every ``call_tool`` with one result, as an MCP client session would."""

    def __init__(self, result: Any) -> None:
        self.result = result

    async def call_tool(self, name: str, arguments: Any = None) -> Any:
        return self.result


def called(monitor: Monitor, result: Any, run: Any = None) -> Any:
    session = MonitoredSession(Session(result), monitor, run=run)
    assert asyncio.run(session.call_tool("get_order", {"order_id": "#W1"})) is result
    return session.last_receipt


def test_an_mcp_error_result_is_not_judged_by_result_contracts(monitor: Monitor) -> None:
    run = monitor.start_run("r1")
    receipt = called(monitor, Result([Text(json.dumps({"items": []}))], isError=True), run)
    assert receipt.ok and receipt.coverage == "partial"
    assert {u.kind for u in receipt.not_evaluated} == {"present", "non_empty", "type", "equals"}
    assert [g.code for g in monitor.finalize(run).errors] == ["execution_error"]


def test_mcp_text_is_read_as_the_mcp_reader_reads_it(monitor: Monitor) -> None:
    note = "[tracemine] This get_order result may be wrong: earlier."
    text = json.dumps(ORDER)
    assert called(monitor, Result([Text(text + "\n\n" + note)])).ok
    assert called(monitor, Result([Text(text), Text(note)])).ok
    assert called(
        monitor, Result([Text('{"order_id": "#W1",'), Text('"items": [1], "total": 2}')])
    ).ok
    number = monitor.check("get_order", {"order_id": "#W1"}, 918.43)
    assert called(monitor, Result([Text("918.43")])).violations == number.violations
