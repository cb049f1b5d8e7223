"""Each contract kind, checked on a call that keeps it and on one that breaks it."""

from __future__ import annotations

from typing import Any

import pytest
from monitor_contracts import contract

ORDER = {
    "order_id": "#W0000001",
    "status": "open",
    "currency": "USD",
    "total": 3.5,
    "placed_at": "2024-05-01T10:20:30Z",
    "items": [{"sku": "a", "qty": 1, "amount": 1.5}, {"sku": "b", "qty": 2, "amount": 2.0}],
    "tags": ["x", "y"],
}
ARGS = {"order_id": "#W0000001", "limit": 5, "skus": ["a", "b", "c"], "labels": ["x", "y", "z"]}

# kind, paths, params, a change to the order that breaks it
CASES: list[tuple[str, list[str], dict[str, Any], dict[str, Any]]] = [
    ("present", ["result.order_id"], {}, {"order_id": None, "__drop__": "order_id"}),
    ("not_null", ["result.status"], {}, {"status": None}),
    ("type", ["result.total"], {"type": "number"}, {"total": "3.5"}),
    ("type", ["result.items[*].qty"], {"type": "integer"}, {"items": [{"qty": 1.5}]}),
    ("non_negative", ["result.items[*].qty"], {}, {"items": [{"qty": 1}, {"qty": -2}]}),
    ("positive", ["result.total"], {}, {"total": 0}),
    ("range", ["result.total"], {"min": 0, "max": 10}, {"total": 11}),
    ("one_of", ["result.status"], {"values": ["open", "delivered"]}, {"status": "lost"}),
    ("non_empty", ["result.items"], {}, {"items": []}),
    ("length", ["result.tags"], {"min": 1, "max": 2}, {"tags": ["x", "y", "z"]}),
    ("format", ["result.currency"], {"format": "currency"}, {"currency": "usd"}),
    ("format", ["result.placed_at"], {"format": "date-time"}, {"placed_at": "2024-02-30T10:00Z"}),
    ("pattern", ["result.order_id"], {"regex": "^#W[0-9]{7}$"}, {"order_id": "W1"}),
    ("unique", ["result.items[*].sku"], {}, {"items": [{"sku": "a"}, {"sku": "a"}]}),
    ("const", ["result.currency"], {"value": "USD"}, {"currency": "EUR"}),
    ("equals", ["result.order_id", "args.order_id"], {}, {"order_id": "#W0000002"}),
    ("le", ["len(result.items)", "args.limit"], {}, {"items": [{}] * 6}),
    ("lt", ["result.total", "args.limit"], {}, {"total": 5}),
    (
        "sum_equals",
        ["sum(result.items[*].amount)", "result.total"],
        {"tolerance": 0.01},
        {"total": 4.0},
    ),
    ("member", ["result.items[*].sku", "args.skus"], {}, {"items": [{"sku": "z"}]}),
    ("subset", ["result.tags", "args.labels"], {}, {"tags": ["x", "q"]}),
]


def _broken(change: dict[str, Any]) -> dict[str, Any]:
    order = {**ORDER, **{k: v for k, v in change.items() if k != "__drop__"}}
    order.pop(change.get("__drop__", ""), None)
    return order


@pytest.mark.parametrize(
    ("kind", "paths", "params", "change"), CASES, ids=[f"{c[0]}-{c[1][0]}" for c in CASES]
)
def test_kind_holds_and_breaks(make_monitor, kind, paths, params, change) -> None:
    item = contract(kind, paths, params=params)
    monitor = make_monitor(item)
    good = monitor.check("get_order", ARGS, ORDER)
    assert good.ok and good.coverage == "full", good
    bad_result = _broken(change)
    bad = monitor.check("get_order", ARGS, bad_result)
    assert not bad.ok, (kind, bad)
    (violation,) = bad.violations
    assert violation.contract_id == item.id
    assert violation.kind == kind
    assert violation.path == paths[0] or violation.path.startswith(paths[0].split("[")[0])
    assert violation.expected and violation.observed
    assert bad_result == _broken(change), "the result must not be changed"


def test_relations_that_hold_are_judged_without_their_closures(make_monitor) -> None:
    """The generated checker compares the two values itself and asks a relation's closure
    only when the relation does not plainly hold (the closure then names the violation)."""
    relations = [c for c in CASES if c[0] in ("equals", "le", "lt", "sum_equals")]
    monitor = make_monitor(*(contract(k, p, params=params) for k, p, params, _ in relations))
    namespace = monitor._plans["get_order"].fast.__globals__
    asked: list[str] = []

    def counted(name: str, closure: Any) -> Any:
        return lambda a, r: asked.append(name) or closure(a, r)

    for name in [n for n in namespace if n.startswith("_t")]:
        namespace[name] = counted(name, namespace[name])
    assert monitor.check("get_order", ARGS, ORDER).ok
    assert asked == []
    for kind, _, _, change in relations:
        before = len(asked)
        receipt = monitor.check("get_order", ARGS, _broken(change))
        assert kind in [v.kind for v in receipt.violations]
        assert len(asked) > before


def test_wildcard_violation_names_the_element(make_monitor) -> None:
    monitor = make_monitor(contract("non_negative", ["result.items[*].qty"]))
    receipt = monitor.check("get_order", {}, {"items": [{"qty": 1}, {"qty": 2}, {"qty": -1}]})
    assert receipt.violations[0].path == "result.items[2].qty"
    assert receipt.violations[0].observed == "-1"


def test_when_makes_a_contract_conditional(make_monitor) -> None:
    item = contract(
        "non_empty",
        ["result.items"],
        when={"path": "result.status", "op": "==", "value": "delivered"},
    )
    monitor = make_monitor(item)
    assert monitor.check("get_order", {}, {"status": "open", "items": []}).ok
    assert not monitor.check("get_order", {}, {"status": "delivered", "items": []}).ok


@pytest.mark.parametrize(
    ("op", "value", "status", "applies"),
    [
        ("!=", "open", "open", False),
        ("in", ["a", "b"], "b", True),
        ("not_in", ["a"], "a", False),
        ("present", None, "x", True),
        ("absent", None, "x", False),
        (">=", 3, 4, True),
        ("<", 3, 4, False),
    ],
)
def test_when_operators(make_monitor, op, value, status, applies) -> None:
    item = contract(
        "non_empty", ["result.items"], when={"path": "result.status", "op": op, "value": value}
    )
    receipt = make_monitor(item).check("get_order", {}, {"status": status, "items": []})
    assert receipt.ok is (not applies)


def test_coverage_unknown_partial_and_failed_calls(make_monitor) -> None:
    monitor = make_monitor(
        contract("format", ["result.placed_at"], params={"format": "no-such-format"}),
        contract("equals", ["result.order_id", "args.order_id"]),
        contract("present", ["args.order_id"]),
    )
    assert monitor.check("other_tool", {}, {}).coverage == "unknown"
    receipt = monitor.check("get_order", {"order_id": "#W1"}, {"placed_at": "x"})
    assert receipt.ok and receipt.coverage == "partial"
    reasons = {u.kind: u.reason for u in receipt.not_evaluated}
    assert "no-such-format" in reasons["format"] and "absent" in reasons["equals"]
    failed = monitor.check("get_order", {}, "boom", status="tool_error")
    assert failed.coverage == "partial"
    assert [v.kind for v in failed.violations] == ["present"]  # args contracts still apply


def test_only_accepted_contracts_are_enforced_unless_asked(make_monitor) -> None:
    proposed = contract("non_empty", ["result.items"], status="proposed")
    rejected = contract("present", ["result.order_id"], status="rejected")
    assert make_monitor(proposed, rejected).check("get_order", {}, {"items": []}).ok
    strict = make_monitor(proposed, rejected, include_proposed=True)
    assert [v.kind for v in strict.check("get_order", {}, {"items": []}).violations] == [
        "non_empty"
    ]


def test_implied_contracts_are_not_repeated(make_monitor) -> None:
    positive = contract("positive", ["result.total"])
    implied = contract("non_negative", ["result.total"], implied_by=positive.id)
    receipt = make_monitor(positive, implied).check("get_order", {}, {"total": -1})
    assert [v.kind for v in receipt.violations] == ["positive"]


def test_note_recovery_redaction_and_truncation(make_monitor) -> None:
    item = contract(
        "format",
        ["result.contact"],
        params={"format": "phone"},
        recovery={"tools": ["find_customer"], "hint": "Ask for the phone again."},
    )
    monitor = make_monitor(item, contract("type", ["result.blob"], params={"type": "number"}))
    result = {
        "contact": "mail jane.doe@example.com or card 4111 1111 1111 1111",
        "blob": "x" * 5000,
    }
    receipt = monitor.check("get_order", {}, result)
    assert receipt.recovery_tools == ("find_customer",)
    text = " ".join(v.observed for v in receipt.violations)
    assert "jane.doe" not in text and "4111" not in text and "<email>" in text
    assert all(len(v.observed) <= 120 for v in receipt.violations)
    note = receipt.note()
    assert note.startswith("[tracemine] ") and "find_customer" in note and len(note) < 800
    assert monitor.check("get_order", {}, {"contact": "+1 555 123 4567", "blob": 1}).note() == ""


def test_receipt_to_dict_is_plain_data(make_monitor) -> None:
    receipt = make_monitor(contract("non_empty", ["result.items"])).check(
        "get_order", {}, {"items": []}, call_id="c1"
    )
    data = receipt.to_dict()
    assert data["call_id"] == "c1" and data["violations"][0]["kind"] == "non_empty"


def test_nested_wildcards_load_and_check() -> None:
    """Paths with two wildcards fall back to the closures instead of failing to load."""
    from tracemine.model.contract import Contract, ContractFile, ContractStatus
    from tracemine.monitor import Monitor

    contract = Contract(
        tool="t", side="result", kind="non_negative", paths=["result.m[*][*]"],
        status=ContractStatus.ACCEPTED,
    )  # fmt: skip
    monitor = Monitor.from_dict(ContractFile(contracts=[contract]).model_dump(mode="json"))
    assert monitor.check("t", {}, {"m": [[1, 2], [3]]}).ok
    receipt = monitor.check("t", {}, {"m": [[1, -2]]})
    assert not receipt.ok and receipt.violations[0].kind == "non_negative"


def test_nested_present_is_judged_where_the_parent_exists() -> None:
    from tracemine.model.contract import Contract, ContractFile, ContractStatus
    from tracemine.monitor import Monitor

    contract = Contract(
        tool="t", side="result", kind="present", paths=["result.address.city"],
        status=ContractStatus.ACCEPTED,
    )  # fmt: skip
    monitor = Monitor.from_dict(ContractFile(contracts=[contract]).model_dump(mode="json"))
    assert monitor.check("t", {}, {"address": {"city": "Oslo"}}).ok
    assert monitor.check("t", {}, {}).ok  # optional parent absent
    assert monitor.check("t", {}, {"address": None}).ok  # nullable parent
    assert not monitor.check("t", {}, {"address": {}}).ok  # parent there, field missing
    assert not monitor.check("t", {}, {"address": "<html>"}).ok  # wrong shape
    assert not monitor.check("t", {}, "<html>error</html>").ok
