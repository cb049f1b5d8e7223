"""``unique`` judges the values that are there, as mining counts them."""

from __future__ import annotations

from tracemine.model.contract import Contract, ContractFile, Kind, Side
from tracemine.monitor import Monitor


def _monitor() -> Monitor:
    contract = Contract(tool="search", side=Side.RESULT, kind=Kind.UNIQUE,
                        paths=["result.flights[*].fare.taxes_cents"])  # fmt: skip
    document = ContractFile(contracts=[contract]).model_dump(mode="json", exclude_none=True)
    return Monitor.from_dict(document, include_proposed=True)


def test_missing_and_null_values_do_not_repeat() -> None:
    # fares without taxes were reported as a repeated value: a false alarm on 60 % of the
    # calls of a simulated suite whose mined contract held on every task
    result = {"flights": [{"fare": {}}, {"fare": {}}, {"fare": {"taxes_cents": None}},
                          {"fare": {"taxes_cents": None}}, {"fare": {"taxes_cents": 5}}]}  # fmt: skip
    assert _monitor().check("search", {}, result).ok


def test_a_repeated_value_is_still_a_violation() -> None:
    result = {"flights": [{"fare": {"taxes_cents": 5}}, {"fare": {}}, {"fare": {"taxes_cents": 5}}]}
    receipt = _monitor().check("search", {}, result)
    assert not receipt.ok and receipt.violations[0].kind == "unique"
