"""Paths with ``{*}``: every entry of an object keyed by ids, checked like ``[*]``."""

from __future__ import annotations

from typing import Any

import pytest
from monitor_contracts import contract

from tracemine.model.paths import ANY_KEY, PathError, parse, select

PRODUCT = {
    "product_id": "6086499569",
    "variants": {
        "1270145486": {"item_id": "1270145486", "price": 158.89, "available": True},
        "4983901480": {"item_id": "4983901480", "price": 12.5, "available": False},
    },
}


def test_the_step_parses_prints_and_selects() -> None:
    path = parse("result.variants{*}.price")
    assert path.steps == ("variants", ANY_KEY, "price")
    assert path.plain == "result.variants{*}.price"
    assert path.has_wildcard
    assert select(path, {}, PRODUCT) == [158.89, 12.5]
    assert select(parse("result.variants{*}"), {}, {"variants": [1, 2]}) == []  # not a map
    assert parse('result["a b"]{*}[*]').plain == 'result["a b"]{*}[*]'
    with pytest.raises(PathError):
        parse("result.variants{x}")


@pytest.mark.parametrize(
    ("kind", "path", "params", "entry", "value"),
    [
        ("non_negative", "result.variants{*}.price", {}, "4983901480", -1),
        ("type", "result.variants{*}.price", {"type": "number"}, "1270145486", "158.89"),
        ("not_null", "result.variants{*}.available", {}, "4983901480", None),
        ("present", "result.variants{*}.item_id", {}, "1270145486", ...),
    ],
)
def test_a_fault_in_any_entry_is_named_by_its_key(
    make_monitor: Any, kind: str, path: str, params: dict, entry: str, value: Any
) -> None:
    monitor = make_monitor(contract(kind, [path], tool="get_product", params=params))
    assert monitor.check("get_product", {}, PRODUCT).ok
    broken: Any = {**PRODUCT, "variants": {k: dict(v) for k, v in PRODUCT["variants"].items()}}
    field = path.rsplit(".", 1)[1]
    if value is ...:
        del broken["variants"][entry][field]
    else:
        broken["variants"][entry][field] = value
    (violation,) = monitor.check("get_product", {}, broken).violations
    assert violation.path == f'result.variants["{entry}"].{field}'


def test_unique_and_sums_over_entries(make_monitor: Any) -> None:
    monitor = make_monitor(
        contract("unique", ["result.variants{*}.item_id"], tool="get_product"),
        contract("le", ["sum(result.variants{*}.price)", "result.cap"], tool="get_product"),
    )
    assert monitor.check("get_product", {}, {**PRODUCT, "cap": 200}).ok
    twice = {"1": {"item_id": "a", "price": 1}, "2": {"item_id": "a", "price": 1}}
    kinds = {
        v.kind for v in monitor.check("get_product", {}, {"variants": twice, "cap": 1}).violations
    }
    assert kinds == {"unique", "le"}
