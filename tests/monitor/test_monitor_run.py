"""Run-level contracts and the completeness gate."""

from __future__ import annotations

import pytest
from monitor_contracts import contract

from tracemine.monitor import Run


def test_complete_run_in_any_result_order(make_monitor) -> None:
    monitor = make_monitor()
    run = monitor.start_run("r", declared=True)
    for cid in ("c1", "c2", "c3"):
        run.record_call(cid, "get_order", {})
    for cid in ("c3", "c1", "c2"):  # parallel calls come back in any order
        monitor.check("get_order", {}, {}, call_id=cid, run=run)
    verdict = monitor.finalize(run)
    assert verdict.verdict == "complete" and verdict.ok and verdict.note() == ""


def test_gate_names_what_is_missing(make_monitor) -> None:
    monitor = make_monitor()
    run = monitor.start_run("r", declared=True)
    run.record_call("c1", "get_order", {})
    run.record_call("c2", "get_order", {})
    run.record_call("c2", "create_refund", {})  # a duplicate id
    run.record_call("c3", "lookup", {})
    run.record_result("c1", {}, "ok")
    run.record_result("c1", {}, "ok")  # answered twice
    run.record_result("c9", {}, "ok")  # unknown id
    run.record_result("c3", None, "timeout")
    run.record_result("c2", {}, "ok")
    verdict = monitor.finalize(run)
    assert verdict.verdict == "incomplete"
    codes = sorted(g.code for g in verdict.gaps)
    assert codes == [
        "answered_twice",
        "duplicate_id",
        "execution_error",
        "unanswered",
        "unknown_id",
    ]
    assert [e.call_id for e in verdict.errors] == ["c3"]
    assert "incomplete" in verdict.note()


def test_an_execution_error_followed_by_a_successful_retry_is_surfaced_not_blocking(
    make_monitor,
) -> None:
    monitor = make_monitor()
    run = monitor.start_run()
    monitor.check("get_order", {}, "boom", call_id="c1", run=run, status="tool_error")
    monitor.check("get_order", {}, {}, call_id="c2", run=run)
    verdict = monitor.finalize(run)
    assert verdict.complete and "retried" in verdict.errors[0].message


def test_undeclared_check_records_the_call(make_monitor) -> None:
    monitor = make_monitor()
    run = monitor.start_run()
    monitor.check("a", {}, {}, run=run)
    monitor.check("b", {}, {}, call_id="x", run=run)
    assert [c.tool for c in run.calls] == ["a", "b"]
    assert monitor.finalize(run).complete


def test_requires_prior_and_provenance(make_monitor) -> None:
    prior = contract(
        "requires_prior",
        [],
        tool="create_refund",
        side="run",
        params={"tool": "get_order", "same": ["args.order_id", "args.order_id"]},
    )
    source = contract(
        "provenance",
        ["args.amount"],
        tool="create_refund",
        side="run",
        params={"from_tool": "get_order", "from_path": "result.total"},
    )
    monitor = make_monitor(prior, source)
    run = monitor.start_run()
    alone = monitor.check("create_refund", {"order_id": "#1", "amount": 5}, {}, run=run)
    assert sorted(v.kind for v in alone.violations) == ["provenance", "requires_prior"]
    run = monitor.start_run()
    monitor.check("get_order", {"order_id": "#1"}, {"total": 5}, run=run)
    assert monitor.check("create_refund", {"order_id": "#1", "amount": 5.0}, {}, run=run).ok
    wrong = monitor.check("create_refund", {"order_id": "#2", "amount": 1000001}, {}, run=run)
    assert sorted(v.kind for v in wrong.violations) == ["provenance", "requires_prior"]
    verdict = monitor.finalize(run)
    assert verdict.complete and not verdict.ok and len(verdict.violations) == 2
    no_run = monitor.check("create_refund", {"order_id": "#1", "amount": 5}, {})
    assert no_run.coverage == "partial" and "run" in no_run.not_evaluated[0].reason


def test_bounded_by_an_earlier_value(make_monitor) -> None:
    """A refund within the order total fetched earlier: the largest earlier total bounds
    it; more, a string, or no earlier order breaks it; a call without it is not judged."""
    bound = contract("bounded_by", ["args.amount"], tool="create_refund", side="run",
                     params={"from_tool": "get_order", "from_path": "result.total"})  # fmt: skip
    monitor = make_monitor(bound)
    run = monitor.start_run()
    alone = monitor.check("create_refund", {"amount": 5}, {}, run=run)
    (v,) = alone.violations
    assert (v.kind, v.path) == ("bounded_by", "args.amount")
    assert v.expected == "at most an earlier get_order result.total"
    assert v.observed == "5 (no earlier get_order result)"
    run = monitor.start_run()
    monitor.check("get_order", {}, {"total": 1200}, run=run)
    monitor.check("get_order", {}, {"total": 800}, run=run)
    monitor.check("get_order", {}, {"total": 90000}, run=run, status="tool_error")
    assert monitor.check("create_refund", {"amount": 1200.0}, {}, run=run).ok
    assert monitor.check("create_refund", {"amount": 300}, {}, run=run).ok
    assert monitor.check("create_refund", {}, {}, run=run).ok
    (over,) = monitor.check("create_refund", {"amount": 4500}, {}, run=run).violations
    assert over.observed == "4500 > 1200"
    (text,) = monitor.check("create_refund", {"amount": "4500"}, {}, run=run).violations
    assert text.expected.startswith("a number at most") and text.observed == '"4500"'
    verdict = monitor.finalize(run)  # incomplete: the failed get_order was not retried
    assert [g.code for g in verdict.gaps] == ["execution_error"] and len(verdict.violations) == 2


def test_call_cap(make_monitor) -> None:
    monitor = make_monitor(contract("call_cap", [], tool="search", side="run", params={"max": 2}))
    run = monitor.start_run()
    receipts = [monitor.check("search", {}, {}, run=run) for _ in range(3)]
    assert [r.ok for r in receipts] == [True, True, False]
    assert [v.observed for v in monitor.finalize(run).violations] == ["3"]


@pytest.mark.parametrize(
    ("family", "tools", "verdict", "violations"),
    [
        ("refund", ["get_order", "create_refund"], "complete", 0),
        ("refund", ["create_refund"], "incomplete", 0),
        ("refund", ["get_order", "delete_account"], "complete", 1),
        ("other", ["delete_account"], "complete", 0),
    ],
)
def test_expected_tools(make_monitor, family, tools, verdict, violations) -> None:
    item = contract(
        "expected_tools",
        [],
        tool="*",
        side="run",
        params={"family": "refund", "required": ["get_order"], "forbidden": ["delete_account"]},
    )
    monitor = make_monitor(item)
    run = monitor.start_run(family=family)
    for tool in tools:
        monitor.check(tool, {}, {}, run=run)
    result = monitor.finalize(run)
    assert result.verdict == verdict and len(result.violations) == violations


def test_expected_tools_without_family_is_not_evaluated(make_monitor) -> None:
    item = contract(
        "expected_tools",
        [],
        tool="*",
        side="run",
        params={"family": "refund", "required": ["get_order"]},
    )
    verdict = make_monitor(item).finalize(Run())
    assert verdict.complete and verdict.not_evaluated[0].reason == "the run has no family"


def test_finalize_accepts_call_records(make_monitor) -> None:
    calls = [
        {"seq": 1, "tool": "b", "call_id": "c2", "status": "missing"},
        {"seq": 0, "tool": "a", "call_id": "c1", "status": "ok", "result": {}},
        {"seq": 2, "tool": "c", "call_id": "c3", "result_call_id": "zz", "status": "ok"},
    ]
    verdict = make_monitor().finalize(calls)
    assert sorted(g.code for g in verdict.gaps) == ["unanswered", "unanswered", "unknown_id"]


def test_finalize_never_raises(make_monitor) -> None:
    verdict = make_monitor().finalize([{"seq": object()}, "not a call"])  # type: ignore[list-item]
    assert verdict.verdict == "incomplete"
