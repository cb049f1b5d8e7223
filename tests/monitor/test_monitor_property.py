"""The monitor is advisory: whatever it is fed, ``check`` and ``finalize`` return.
And the generated fast path must say exactly what the contract-by-contract path says."""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from monitor_contracts import contract

from tracemine.monitor import Monitor, Receipt

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=30)
    | st.sampled_from(["#W0000001", "open", "USD", "2024-05-01T10:20:30Z", "a@b.co", ""])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(
            st.sampled_from(
                ["items", "qty", "sku", "status", "total", "order_id", "amount", "id", "x"]
            )
            | st.text(max_size=5),
            inner,
            max_size=6,
        )
    ),
    max_leaves=40,
)
WEIRD = JSON | st.builds(object) | st.tuples(JSON) | st.sets(st.integers()) | st.binary()

CONTRACTS = [
    contract("present", ["result.order_id"]),
    contract("not_null", ["result.status"]),
    contract("type", ["result.total"], params={"type": "number"}),
    contract("type", ["result.items[*].sku"], params={"type": "string"}),
    contract("type", ["result.items"], params={"type": "array"}),
    contract("non_negative", ["result.items[*].qty"]),
    contract("positive", ["result.total"]),
    contract("range", ["result.items[*].amount"], params={"min": 0, "max": 100}),
    contract("one_of", ["result.status"], params={"values": ["open", 1, True, None, {"a": 1}]}),
    contract("non_empty", ["result.items"]),
    contract("length", ["result.id"], params={"min": 1, "max": 10}),
    contract("format", ["result.status"], params={"format": "date-time"}),
    contract("pattern", ["result.order_id"], params={"regex": "^#W[0-9]{7}$"}),
    contract("unique", ["result.items[*].sku"]),
    contract("const", ["result.x"], params={"value": [1, 2]}),
    contract("equals", ["result.order_id", "args.order_id"]),
    contract("le", ["len(result.items)", "args.limit"]),
    contract("lt", ["result.total", "args.limit"]),
    contract(
        "sum_equals", ["sum(result.items[*].amount)", "result.total"], params={"tolerance": 0.01}
    ),
    contract("member", ["result.items[*].sku", "args.skus"]),
    contract("subset", ["keys(result)", "args.skus"]),
    contract(
        "non_empty", ["result.items"], when={"path": "result.status", "op": "in", "value": ["open"]}
    ),
    contract("present", ["result.items[*].id"]),
    contract("type", ["result.x.y"], params={"type": "integer"}),
    contract(
        "requires_prior",
        [],
        side="run",
        params={"tool": "get_order", "same": ["args.order_id", "args.order_id"]},
    ),
    contract(
        "provenance",
        ["args.amount"],
        side="run",
        params={"from_tool": "get_order", "from_path": "result.total"},
    ),
    contract(
        "bounded_by",
        ["args.amount"],
        side="run",
        params={"from_tool": "get_order", "from_path": "result.total"},
    ),
    contract("call_cap", [], side="run", params={"max": 3}),
    contract("expected_tools", [], tool="*", side="run", params={"required": ["get_order"]}),
]


@pytest.fixture(scope="module")
def monitors(tmp_path_factory) -> tuple[Monitor, Monitor]:
    from tracemine.model.contract import ContractFile

    path = tmp_path_factory.mktemp("contracts") / "contracts.json"
    path.write_text(ContractFile(contracts=CONTRACTS).model_dump_json(), "utf-8")
    fast, slow = Monitor.load(path), Monitor.load(path)
    for plan in slow._plans.values():
        plan.fast = plan.hot = None  # the reference path, contract by contract
    return fast, slow


def _same(a: Receipt, b: Receipt) -> None:
    assert json.dumps(a.to_dict(), default=str) == json.dumps(b.to_dict(), default=str)


@given(args=JSON, result=JSON)
def test_fast_path_agrees_with_the_reference(monitors, args, result) -> None:
    fast, slow = monitors
    before = copy.deepcopy(result)
    _same(fast.check("get_order", args, result), slow.check("get_order", args, result))
    assert _equal_with_nan(result, before), "the result must not be changed"


@given(
    tool=WEIRD | st.just("get_order"),
    args=WEIRD,
    result=WEIRD,
    call_id=WEIRD,
    status=WEIRD | st.sampled_from(["ok", "tool_error", "missing"]),
)
def test_check_and_finalize_never_raise(monitors, tool, args, result, call_id, status) -> None:
    fast, _ = monitors
    run = fast.start_run()
    for _ in range(2):
        receipt = fast.check(tool, args, result, call_id=call_id, run=run, status=status)
        assert receipt.coverage in ("full", "partial", "unknown")
        assert isinstance(receipt.note(), str)
    assert fast.finalize(run).verdict in ("complete", "incomplete")
    assert fast.finalize([args, result]).verdict in ("complete", "incomplete")


@given(
    calls=st.lists(
        st.fixed_dictionaries(
            {
                "tool": st.sampled_from(["get_order", "create_refund"]),
                "args": JSON,
                "result": JSON,
                "call_id": st.none() | st.sampled_from(["c1", "c2", "c3"]),
            }
        ),
        max_size=6,
    )
)
def test_run_level_checks_never_raise(monitors, calls) -> None:
    fast, _ = monitors
    run = fast.start_run(declared=bool(calls) and calls[0]["call_id"] is not None)
    for call in calls:
        fast.check(call["tool"], call["args"], call["result"], call_id=call["call_id"], run=run)
    assert fast.finalize(run).verdict in ("complete", "incomplete")


def test_huge_and_deep_values(monitors) -> None:
    fast, slow = monitors
    deep: object = 1
    for _ in range(50_000):
        deep = [deep]
    nested_dict: object = {"x": 1}
    for _ in range(50_000):
        nested_dict = {"items": nested_dict, "status": nested_dict}
    huge = {
        "items": [{"sku": str(i), "qty": i, "amount": 1} for i in range(100_000)],
        "total": 100_000,
        "order_id": "#W" + "9" * 100_000,
    }
    for result in (deep, nested_dict, huge, {"status": deep, "x": deep}, "x" * 10_000_000):
        for monitor in (fast, slow):
            receipt = monitor.check("get_order", {"order_id": deep, "limit": 10}, result)
            assert receipt.coverage in ("full", "partial")
            assert all(len(v.observed) <= 120 for v in receipt.violations)


def _equal_with_nan(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_equal_with_nan, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal_with_nan(a[k], b[k]) for k in a)
    return a == b


NUMBERISH = (
    st.integers() | st.floats() | st.booleans() | st.none() | st.text(max_size=3)
    | st.integers(min_value=2**63, max_value=2**80)
)  # fmt: skip


@given(amount=NUMBERISH, totals=st.lists(NUMBERISH, max_size=3))
def test_bounded_by_holds_exactly_when_a_number_is_within_an_earlier_one(
    monitors, amount, totals
) -> None:
    fast, _ = monitors
    run = fast.start_run()
    for total in totals:
        fast.check("get_order", {}, {"total": total}, run=run)
    receipt = fast.check("get_order", {"amount": amount}, {}, run=run)
    broken = {v.kind for v in receipt.violations} >= {"bounded_by"}

    def number(value: object) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool) and value == value

    ceilings = [t for t in totals if number(t)]
    # null is a value, not an absent argument: it is no number, so it breaks the bound
    assert broken == (not (number(amount) and ceilings and amount <= max(ceilings)))
