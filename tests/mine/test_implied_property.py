"""The implication rule against the monitor: wherever mining may hide a contract behind a
stronger one, every value that breaks the weaker one must break the stronger one too."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracemine.mine.select.implied import _STRONGER, implies, mark_implied
from tracemine.model.contract import Contract, ContractFile, Kind
from tracemine.monitor import Monitor

WORDS = ["USD", "usd", "EUR", "2024-05-01", "2024-02-30", "", "abc", "158.89", "#W0000001"]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.5, -0.5, 2.0, 1e300]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(WORDS), st.text(max_size=4),
)  # fmt: skip
VALUES = st.one_of(
    SCALARS, st.lists(SCALARS, max_size=3), st.dictionaries(st.sampled_from("ab"), SCALARS)
)
BOUNDS = st.sampled_from([None, -1, 0, 0.5, 1, 2, 10])
TYPES = st.sampled_from(["string", "number", "integer", "boolean", "null", "object", "array"])
LITERALS = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(WORDS))

PARAMS: dict[Kind, st.SearchStrategy[dict[str, Any]]] = {
    Kind.RANGE: st.fixed_dictionaries({"min": BOUNDS, "max": BOUNDS}),
    Kind.LENGTH: st.fixed_dictionaries({"min": st.sampled_from([None, 0, 1, 2]),
                                        "max": st.sampled_from([None, 2, 5])}),
    Kind.TYPE: st.fixed_dictionaries({"type": TYPES}),
    Kind.ONE_OF: st.fixed_dictionaries({"values": st.lists(LITERALS, min_size=1, max_size=4,
                                                           unique_by=json.dumps)}),
    Kind.CONST: st.fixed_dictionaries({"value": LITERALS}),
    Kind.FORMAT: st.fixed_dictionaries({"format": st.sampled_from(["currency", "date"])}),
    Kind.PATTERN: st.fixed_dictionaries({"regex": st.sampled_from(["^a", "^#W[0-9]{7}$", "x*"])}),
}  # fmt: skip
RELATIONAL = {Kind.LE, Kind.LT}
# every kind against every kind, not only the pairs the rule lists: a rule that grows a
# wrong entry must fail here
KINDS = [*PARAMS, Kind.NON_NEGATIVE, Kind.POSITIVE, Kind.NOT_NULL, Kind.NON_EMPTY,
         Kind.PRESENT, Kind.LE, Kind.LT]  # fmt: skip


def _contract(kind: Kind, params: dict[str, Any]) -> Contract | None:
    paths = ["result.x", "result.y"] if kind in RELATIONAL else ["result.x"]
    params = {k: v for k, v in params.items() if v is not None or kind in (Kind.CONST,)}
    if kind == Kind.RANGE and params.get("min", -math.inf) > params.get("max", math.inf):
        return None
    try:
        return Contract(tool="t", side="result", kind=kind, paths=paths, params=params,
                        status="accepted")  # fmt: skip
    except ValueError:
        return None  # parameters the contract model refuses are never mined


def _violated(contracts: list[Contract], result: dict[str, Any]) -> set[str]:
    data = json.loads(ContractFile(contracts=contracts).model_dump_json())
    receipt = Monitor.from_dict(data).check("t", {}, result)
    return {v.contract_id for v in receipt.violations}


def _breaks_both(strong: Contract, weak: Contract, result: dict[str, Any]) -> None:
    # checked one contract a monitor, so neither can hide the other
    if _violated([weak], result):
        assert _violated([strong], result), (strong.kind, strong.params, weak.kind, result)


@pytest.mark.parametrize("weak_kind", KINDS, ids=str)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data(), x=VALUES, y=VALUES)
def test_what_breaks_the_weaker_breaks_the_stronger(
    weak_kind: Kind, data: st.DataObject, x: Any, y: Any
) -> None:
    # the stronger kind is drawn from those the rule lists for this one more often than not
    listed = _STRONGER.get(weak_kind, ())
    strong_kind = data.draw(st.sampled_from(listed) if listed and data.draw(st.booleans())
                            else st.sampled_from(KINDS))  # fmt: skip
    weak = _contract(weak_kind, data.draw(PARAMS.get(weak_kind, st.just({}))))
    strong = _contract(strong_kind, data.draw(PARAMS.get(strong_kind, st.just({}))))
    if weak is None or strong is None or not implies(strong, weak):
        return
    _breaks_both(strong, weak, {"x": x, "y": y})


LINKED = [  # one pair per entry of the rule that must stay linked: the rule is not empty
    (Kind.NON_NEGATIVE, {}, Kind.RANGE, {"min": 0, "max": 10}),
    (Kind.NON_NEGATIVE, {}, Kind.POSITIVE, {}),
    (Kind.POSITIVE, {}, Kind.RANGE, {"min": 1}),
    (Kind.NOT_NULL, {}, Kind.CONST, {"value": "USD"}),
    (Kind.NOT_NULL, {}, Kind.ONE_OF, {"values": ["a", "b"]}),
    (Kind.NOT_NULL, {}, Kind.TYPE, {"type": "string"}),
    (Kind.TYPE, {"type": "string"}, Kind.CONST, {"value": "USD"}),
    (Kind.TYPE, {"type": "integer"}, Kind.ONE_OF, {"values": [1, 2]}),
    (Kind.ONE_OF, {"values": ["a", "b"]}, Kind.CONST, {"value": "a"}),
    (Kind.FORMAT, {"format": "currency"}, Kind.ONE_OF, {"values": ["USD", "EUR"]}),
    (Kind.NON_EMPTY, {}, Kind.LENGTH, {"min": 1}),
    (Kind.LE, {}, Kind.LT, {}),
]
NOT_LINKED = [  # the stronger-looking one passes a value the weaker one rejects
    (Kind.TYPE, {"type": "number"}, Kind.RANGE, {"min": 0, "max": 10}),  # "158.89"
    (Kind.NOT_NULL, {}, Kind.RANGE, {"min": 0}),  # null
    (Kind.TYPE, {"type": "string"}, Kind.PATTERN, {"regex": "^#W[0-9]{7}$"}),  # 123
    (Kind.NON_EMPTY, {}, Kind.PATTERN, {"regex": "^a"}),  # []
    (Kind.ONE_OF, {"values": ["a"]}, Kind.CONST, {"value": "b"}),
    (Kind.TYPE, {"type": "integer"}, Kind.ONE_OF, {"values": [1, "1"]}),
    (Kind.FORMAT, {"format": "currency"}, Kind.ONE_OF, {"values": ["USD", "dollars"]}),
    (Kind.NON_NEGATIVE, {}, Kind.RANGE, {"max": 10}),
]


CASES = [(*case, True) for case in LINKED] + [(*case, False) for case in NOT_LINKED]


@pytest.mark.parametrize(("weak_kind", "weak_params", "strong_kind", "strong_params", "linked"),
                         CASES)  # fmt: skip
def test_the_rule_links_what_is_logic_and_nothing_that_would_hide_a_fault(
    weak_kind: Kind, weak_params: dict, strong_kind: Kind, strong_params: dict, linked: bool
) -> None:
    weak, strong = _contract(weak_kind, weak_params), _contract(strong_kind, strong_params)
    assert weak is not None and strong is not None
    assert implies(strong, weak) is linked


def _kept(kinds: list[tuple[Kind, dict[str, Any]]], path: str) -> ContractFile:
    made = [Contract(tool="get_order", side="result", kind=k, paths=[path], params=p,
                     status="accepted") for k, p in kinds]  # fmt: skip
    return ContractFile(contracts=mark_implied(made))


def test_a_price_as_a_string_or_null_is_still_caught() -> None:
    # the shape found in real results: every value contract mining keeps on a price
    kept = _kept([(Kind.TYPE, {"type": "number"}), (Kind.NOT_NULL, {}), (Kind.NON_NEGATIVE, {}),
                  (Kind.POSITIVE, {}), (Kind.RANGE, {"min": 1.5, "max": 900})],
                 "result.items[*].price")  # fmt: skip
    hidden = {c.kind for c in kept.contracts if c.implied_by}
    # positive and non_negative behind the range, not_null behind the type; the type stays
    assert hidden == {Kind.NON_NEGATIVE, Kind.POSITIVE, Kind.NOT_NULL}
    monitor = Monitor.from_dict(json.loads(kept.model_dump_json()))
    for price in (None, "abc", "158.89"):
        receipt = monitor.check("get_order", {}, {"items": [{"price": 3.0}, {"price": price}]})
        assert not receipt.ok, price
    assert monitor.check("get_order", {}, {"items": [{"price": 158.89}]}).ok


def test_an_id_as_a_number_is_caught_without_a_relation() -> None:
    kept = _kept([(Kind.TYPE, {"type": "string"}), (Kind.PATTERN, {"regex": "^#W[0-9]{7}$"})],
                 "result.order_id")  # fmt: skip
    assert all(c.implied_by is None for c in kept.contracts)
    monitor = Monitor.from_dict(json.loads(kept.model_dump_json()))
    receipt = monitor.check("get_order", {}, {"order_id": 123})
    assert [v.kind for v in receipt.violations] == ["type"]
