"""A result too large to judge in an agent loop's time is reported as not evaluated, too
large, in milliseconds; what does not walk the large part is still judged."""

from __future__ import annotations

import time

import pytest
from monitor_contracts import contract

from tracemine.model.contract import ContractFile
from tracemine.monitor import Monitor, set_limits


def _monitor(*contracts) -> Monitor:
    return Monitor.from_dict(ContractFile(contracts=list(contracts)).model_dump(mode="json"))


@pytest.fixture(autouse=True)
def _default_limits():
    yield
    set_limits(max_elements=100_000, max_pairs=1_000_000)


def test_a_million_elements_are_not_walked() -> None:
    monitor = _monitor(
        contract("non_negative", ["result.items[*].qty"]),
        contract("type", ["result.items[*]"], params={"type": "object"}),
        contract("unique", ["result.items[*].sku"]),
        contract("present", ["result.total"]),
    )
    result = {"items": [{"qty": -1, "sku": "a"}] * 1_000_000}  # the missing total is found
    started = time.perf_counter()
    receipt = monitor.check("get_order", {}, result)
    seconds = time.perf_counter() - started
    assert seconds < 0.5, seconds  # it took 4–10 s when every contract walked the list
    assert receipt.coverage == "partial"
    assert len(receipt.not_evaluated) == 3
    assert all("too large: result.items" in u.reason for u in receipt.not_evaluated)
    assert [v.kind for v in receipt.violations] == ["present"]


def test_small_results_are_judged_as_before() -> None:
    monitor = _monitor(contract("non_negative", ["result.items[*].qty"]))
    receipt = monitor.check("get_order", {}, {"items": [{"qty": 1}, {"qty": -2}]})
    assert receipt.coverage == "full" and [v.kind for v in receipt.violations] == ["non_negative"]


def test_a_relation_over_two_wide_sides_is_not_compared_pair_by_pair() -> None:
    monitor = _monitor(contract("le", ["result.a[*]", "result.b[*]"]))
    wide = {"a": list(range(6000)), "b": list(range(6000, 12000))}
    started = time.perf_counter()
    receipt = monitor.check("get_order", {}, wide)
    assert time.perf_counter() - started < 0.5  # 9 s, pair by pair
    (skipped,) = receipt.not_evaluated
    assert "6000 × 6000 value pairs" in skipped.reason
    assert receipt.ok  # not evaluated is not a violation


def test_limits_can_be_raised_and_are_checked() -> None:
    monitor = _monitor(contract("non_negative", ["result.items[*]"]))
    result = {"items": [1] * 200_000 + [-1]}
    assert monitor.check("get_order", {}, result).not_evaluated
    set_limits(max_elements=1_000_000)
    receipt = monitor.check("get_order", {}, result)
    assert not receipt.not_evaluated and not receipt.ok
    with pytest.raises(ValueError, match="max_pairs must be a positive integer"):
        set_limits(max_pairs=0)


class _Hostile:
    """What a tool might hand the monitor: a name that cannot be printed, a result whose
    ``model_dump`` does harm when called."""

    called = False

    def __str__(self) -> str:
        raise RuntimeError("no text for you")

    def model_dump(self, **_: object) -> dict[str, object]:
        _Hostile.called = True
        return {}


def test_a_tool_name_or_call_id_that_cannot_be_printed_still_gets_a_receipt() -> None:
    monitor = _monitor(contract("present", ["result.total"]))
    receipt = monitor.check(_Hostile(), {}, {}, call_id=_Hostile())  # type: ignore[arg-type]
    assert receipt.tool == "<_Hostile>" and receipt.call_id == "<_Hostile>"
    receipt = monitor.check("get_order", {}, {}, call_id=_Hostile())
    assert receipt.call_id == "<_Hostile>" and [v.kind for v in receipt.violations] == ["present"]


def test_guard_calls_model_dump_on_pydantic_models_only() -> None:
    from pydantic import BaseModel

    class Order(BaseModel):
        total: float

    monitor = _monitor(contract("present", ["result.total"]))

    @monitor.guard("get_order")
    def get_order() -> object:
        return _Hostile()

    @monitor.guard("get_order")
    def get_model() -> Order:
        return Order(total=3.0)

    get_order()
    assert not _Hostile.called
    get_model()
    assert get_model.last_receipt.ok  # type: ignore[attr-defined]
