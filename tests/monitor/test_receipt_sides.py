"""A receipt's note says what was checked and found wrong — the call's arguments, its
result, or how it fits the run — and a tool the file has no contracts for is counted in
the monitor's notices and said once, not passed over in silence."""

from __future__ import annotations

import logging

import pytest
from monitor_contracts import contract

from tracemine.model.result import NOTE_MARK

REFUND = "create_refund"


@pytest.fixture
def monitor(make_monitor):
    return make_monitor(
        contract("range", ["args.amount"], tool=REFUND, params={"min": 0}),
        contract("non_empty", ["result.refund_id"], tool=REFUND),
        contract("bounded_by", ["args.amount"], tool=REFUND, side="run",
                 params={"from_tool": "get_order", "from_path": "result.total"}),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("arguments", "result", "head"),
    [
        ({"amount": -5}, {"refund_id": "R1"}, "The arguments of this create_refund call may be"),
        ({"amount": 50}, {"refund_id": "R1"}, "This create_refund call may not fit the earlier"),
    ],
    ids=["arguments", "run"],
)
def test_the_note_names_the_side_that_broke(monitor, arguments, result, head) -> None:
    run = monitor.start_run()
    monitor.check("get_order", {}, {"total": 10}, run=run)
    receipt = monitor.check(REFUND, arguments, result, run=run)
    (violation,) = receipt.violations
    note = receipt.note()
    assert note.startswith(NOTE_MARK + head), note
    assert not note.startswith("\n") and violation.describe() in note


def test_a_note_over_several_sides_says_each(monitor) -> None:
    run = monitor.start_run()
    receipt = monitor.check(REFUND, {"amount": -5}, {"refund_id": ""}, run=run)
    note = receipt.note()
    assert note.startswith(NOTE_MARK + "This create_refund call may be wrong: "), note
    assert "arguments args.amount" in note and "result result.refund_id" in note
    assert "run args.amount" in note  # no earlier order: the bound is broken too


def test_a_tool_without_contracts_is_counted_and_said_once(monitor, caplog) -> None:
    assert monitor.notices == ()
    with caplog.at_level(logging.WARNING, logger="tracemine.monitor"):
        receipts = [monitor.check("send_email", {"to": "a"}, {"sent": True}) for _ in range(3)]
        monitor.check("get_weather", {}, {"t": 1})
    assert all(r.ok and r.coverage == "unknown" for r in receipts)
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2 and "send_email has no contracts" in said[0]
    assert monitor.unknown_tools == {"send_email": 3, "get_weather": 1}
    (notice,) = monitor.notices
    assert "4 calls of tools with no contracts were not checked" in notice
    assert "send_email (3), get_weather (1)" in notice
