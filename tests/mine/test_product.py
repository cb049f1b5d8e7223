"""A total that is a price times a quantity: ``book(fare_cents, passengers=[…])`` returns
``total == fare_cents × len(passengers)``, an order's ``items[*].line_total`` is its
``unit_price × quantity``. Mined as ``product`` where it held on every task, so a price or
a total in the wrong unit (×100) breaks it while every range still holds; not mined where
the total carries a fee of its own. The miner counts the calls and elements the monitor
judges (one without the three numbers is not judged)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from reference import holds

from tracemine.mine import mine
from tracemine.mine.select.describe import describe
from tracemine.model.contract import Contract, ContractFile, Kind
from tracemine.monitor import Monitor

from helpers import store_calls

TOTAL = ["result.total_cents", "args.fare_cents", "len(args.passengers)"]
LINES = ["result.items[*].line_total", "result.items[*].quantity", "result.items[*].unit_price"]


def _book(rng: random.Random, i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    fare = rng.randint(5_000, 90_000)
    people = [f"p{i}-{j}" for j in range(rng.randint(1, 4))]
    return {"fare_cents": fare, "passengers": people}, {
        "booking": f"B{i}",
        "total_cents": fare * len(people),
    }


def _book_with_fee(rng: random.Random, i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    args, result = _book(rng, i)
    return args, {**result, "total_cents": result["total_cents"] + rng.choice((0, 0, 250))}


def _order(rng: random.Random, i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    items = []
    for n in range(rng.randint(0, 4)):
        quantity, price = rng.randint(1, 3), round(rng.uniform(1, 90), 2)
        item: dict[str, Any] = {"sku": f"S{i}-{n}", "unit_price": price}
        if rng.random() < 0.8:  # an item without its quantity says nothing of the product
            item |= {"quantity": quantity, "line_total": round(quantity * price, 2)}
        items.append(item)
    return {"order_id": f"O{i}"}, {"order_id": f"O{i}", "items": items}


def _calls(tasks: int, seed: int = 0) -> list[tuple[str, str, dict[str, Any], Any]]:
    rng = random.Random(seed)
    out: list[tuple[str, str, dict[str, Any], Any]] = []
    for i in range(tasks):
        for tool, make in (("book", _book), ("book_with_fee", _book_with_fee),
                           ("get_order", _order)):  # fmt: skip
            for _ in range(2):
                out.append((f"t{i}", tool, *make(rng, i)))
    return out


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> ContractFile:
    return mine(store_calls(tmp_path_factory.mktemp("product"), _calls(30)), budget=False)


def _products(contracts: list[Contract], tool: str) -> dict[tuple[str, ...], Contract]:
    return {tuple(c.paths): c for c in contracts if c.tool == tool and c.kind == Kind.PRODUCT}


def test_a_total_of_price_times_quantity_is_mined_per_call_and_per_element(
    mined: ContractFile,
) -> None:
    (total,) = _products(mined.contracts, "book").values()
    assert total.paths == TOTAL and total.params == {"tolerance": 0.01}
    assert describe(total) == f"{TOTAL[0]} == {TOTAL[1]} × {TOTAL[2]} (± 0.01)"
    (lines,) = _products(mined.contracts, "get_order").values()
    assert lines.paths == LINES
    assert describe(lines).endswith("element by element")
    for contract in (total, lines):
        evidence = contract.evidence
        assert evidence is not None and evidence.family == "product/result"
        assert evidence.heldout_tasks == evidence.tasks >= 25
        assert evidence.heldout_task_violations == 0


def test_a_total_with_a_fee_of_its_own_is_no_product(mined: ContractFile) -> None:
    assert _products(mined.contracts, "book_with_fee") == {}
    # the same calls without the fee are one: the pair is tried, and refused for the fee
    assert tuple(TOTAL) in _products(mined.contracts, "book")


def test_the_miner_counts_the_calls_the_monitor_judges(mined: ContractFile) -> None:
    """Supporting calls: those with the three numbers, or with an element holding them; an
    order of no item, or of items without quantities, is not one."""
    calls = _calls(30)
    for tool, paths in (("book", TOTAL), ("get_order", LINES)):
        contract = _products(mined.contracts, tool)[tuple(paths)]
        monitor = Monitor.from_dict(ContractFile(contracts=[contract]).model_dump(mode="json"),
                                    include_proposed=True)  # fmt: skip
        judged = [monitor.check(tool, a, r) for _, t, a, r in calls if t == tool]
        evaluated = sum(not receipt.not_evaluated for receipt in judged)
        referred = [holds(contract, a, r) for _, t, a, r in calls if t == tool]
        assert evaluated == sum(v is not None for v in referred)
        assert contract.evidence is not None and contract.evidence.calls == evaluated
        if tool == "get_order":
            assert 0 < evaluated < len(judged)


def test_a_price_or_a_total_in_the_wrong_unit_breaks_it(mined: ContractFile) -> None:
    total = _products(mined.contracts, "book")[tuple(TOTAL)]
    lines = _products(mined.contracts, "get_order")[tuple(LINES)]
    chosen = ContractFile(contracts=[total, lines]).model_dump(mode="json")
    monitor = Monitor.from_dict(chosen, include_proposed=True)
    rng = random.Random(99)
    args, result = _book(rng, 99)
    assert monitor.check("book", args, result).ok
    wrong = monitor.check("book", args, {**result, "total_cents": result["total_cents"] * 100})
    assert total.id in {v.contract_id for v in wrong.violations}
    order = {"order_id": "O1", "items": [
        {"sku": "a", "quantity": 2, "unit_price": 4.5, "line_total": 9.0},
        {"sku": "b", "quantity": 1, "unit_price": 12.25, "line_total": 12.25}]}  # fmt: skip
    assert monitor.check("get_order", {"order_id": "O1"}, order).ok
    order["items"][1]["unit_price"] = 1225
    receipt = monitor.check("get_order", {"order_id": "O1"}, order)
    (found,) = [v for v in receipt.violations if v.contract_id == lines.id]
    assert found.path == "result.items[1].line_total" and found.observed == "12.25 is not 1 × 1225"
