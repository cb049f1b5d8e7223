"""``shares_token``, ``ratio``, ``page_full`` and ``product`` in the monitor: the verdicts, what a
call that gives nothing to judge reports, and the files refused on load."""

from __future__ import annotations

import json
import time

import pytest
from monitor_contracts import contract

from tracemine.monitor import ContractLoadError, Monitor
from tracemine.monitor._tokens import tokens

TOKEN = contract("shares_token", ["result.name", "args.query"], tool="find")
RATIO = contract("ratio", ["result.amount_cents", "args.amount"], tool="quote",
                 params={"ratio": 100.0, "tolerance": 0.005})  # fmt: skip
PAGE = contract("page_full", ["len(result.items)", "result.total", "args.limit"], tool="list",
                params={"start": "args.offset"})  # fmt: skip
PAGED = contract("page_full", ["len(result.items)", "result.total", "args.limit"], tool="list",
                 params={"page": "args.page"})  # fmt: skip
PRODUCT = contract("product", ["result.total", "args.fare", "len(args.people)"], tool="book",
                   params={"tolerance": 0.01})  # fmt: skip
LINES = contract("product", ["result.items[*].total", "result.items[*].qty",
                             "result.items[*].price"], tool="order",
                 params={"tolerance": 0.01})  # fmt: skip


def _items(n: int) -> list[dict]:
    return [{"n": i} for i in range(n)]


def test_words_are_compared_without_case_punctuation_or_separators() -> None:
    assert tokens("Paris-Gare-de-Lyon") == {"paris", "gare", "de", "lyon"}
    assert tokens("cityName: LISBON") == {"cityname", "lisbon"}
    assert tokens("a_b c") == frozenset()  # words of one letter are no evidence


@pytest.mark.parametrize(
    ("query", "name", "ok"),
    [
        ("Lisbon", "cityName: Lisbon", True),
        ("Gare de Lyon", "Paris-Gare-de-Lyon", True),
        ("LISBON", "lisbon (all stations)", True),
        ("Lisbon", "cityName: Porto", False),
        ("Gare de Lyon", "Berlin Hbf", False),
    ],
)
def test_shares_token(make_monitor, query, name, ok) -> None:
    receipt = make_monitor(TOKEN).check("find", {"query": query}, {"name": name})
    assert receipt.ok is ok and receipt.coverage == "full"
    if not ok:
        (violation,) = receipt.violations
        assert violation.kind == "shares_token" and violation.path == "result.name"
        assert violation.expected == "result.name shares a word with args.query"


def test_a_query_without_words_or_an_absent_name_is_not_evaluated(make_monitor) -> None:
    monitor = make_monitor(TOKEN)
    for args, result in (({"query": "?"}, {"name": "x"}), ({"query": "Lisbon"}, {})):
        receipt = monitor.check("find", args, result)
        assert receipt.ok and receipt.coverage == "partial"
        assert [u.kind for u in receipt.not_evaluated] == ["shares_token"]


@pytest.mark.parametrize(
    ("amount", "cents", "ok"),
    [(12, 1200, True), (12.5, 1250.0, True), (12, 1203, True), (12, 120000, False),
     (12, 12, False), (12, -1200, False)],
)  # fmt: skip
def test_ratio(make_monitor, amount, cents, ok) -> None:
    receipt = make_monitor(RATIO).check("quote", {"amount": amount}, {"amount_cents": cents})
    assert receipt.ok is ok
    if not ok:
        (violation,) = receipt.violations
        assert violation.kind == "ratio" and "[99.5025, 100.5]" in violation.expected


def test_ratio_over_zero_is_not_evaluated(make_monitor) -> None:
    receipt = make_monitor(RATIO).check("quote", {"amount": 0}, {"amount_cents": 5})
    assert receipt.ok and [u.kind for u in receipt.not_evaluated] == ["ratio"]


@pytest.mark.parametrize(
    ("args", "total", "shown", "ok"),
    [
        ({"limit": 10}, 23, 10, True),  # the first page, full
        ({"limit": 10, "offset": 20}, 23, 3, True),  # the last page, the rest
        ({"limit": 10}, 4, 4, True),  # all there is
        ({"limit": 10, "offset": 30}, 23, 0, True),  # past the end
        ({"limit": 10}, 23, 7, False),  # cut short
        ({"limit": 10, "offset": 10}, 23, 3, False),  # a middle page holding the last's
    ],
)
def test_page_full_with_an_offset(make_monitor, args, total, shown, ok) -> None:
    receipt = make_monitor(PAGE).check("list", args, {"total": total, "items": _items(shown)})
    assert receipt.ok is ok
    if not ok:
        (violation,) = receipt.violations
        assert violation.kind == "page_full" and violation.path == "len(result.items)"
        assert violation.expected == (
            "len(result.items) == min(args.limit, result.total - args.offset)"
        )


def test_page_full_with_a_page_number(make_monitor) -> None:
    monitor = make_monitor(PAGED)
    assert monitor.check("list", {"limit": 5, "page": 3}, {"total": 12, "items": _items(2)}).ok
    assert monitor.check("list", {"limit": 5}, {"total": 12, "items": _items(5)}).ok
    assert not monitor.check("list", {"limit": 5, "page": 2}, {"total": 12, "items": _items(2)}).ok


def test_the_vocabulary_checks_in_microseconds(make_monitor) -> None:
    monitor = make_monitor(TOKEN, RATIO, PAGE)
    calls = [("find", {"query": "Gare de Lyon"}, {"name": "Paris-Gare-de-Lyon"}),
             ("quote", {"amount": 12}, {"amount_cents": 1200}),
             ("list", {"limit": 10}, {"total": 23, "items": _items(10)})]  # fmt: skip
    started = time.perf_counter()
    for _ in range(2000):
        for tool, args, result in calls:
            monitor.check(tool, args, result)
    per_check = (time.perf_counter() - started) / 6000
    assert per_check < 200e-6, f"{per_check * 1e6:.0f} µs a check"


@pytest.mark.parametrize(
    ("fare", "people", "total", "ok"),
    [(250, ["a", "b"], 500, True), (19.99, ["a", "b", "c"], 59.97, True),
     (250, ["a", "b"], 50000, False), (25000, ["a", "b"], 500, False), (250, [], 0, True)],
)  # fmt: skip
def test_product(make_monitor, fare, people, total, ok) -> None:
    receipt = make_monitor(PRODUCT).check("book", {"fare": fare, "people": people},
                                          {"total": total})  # fmt: skip
    assert receipt.ok is ok and not receipt.not_evaluated
    if not ok:
        (violation,) = receipt.violations
        assert violation.expected == "result.total == args.fare × len(args.people)"


def test_a_product_is_judged_element_by_element(make_monitor) -> None:
    monitor = make_monitor(LINES)
    items = [{"qty": 2, "price": 4.5, "total": 9.0}, {"qty": 1, "price": 3, "total": 300},
             {"qty": "2", "price": 1, "total": 7}]  # fmt: skip
    (violation,) = monitor.check("order", {}, {"items": items}).violations
    assert violation.path == "result.items[1].total" and violation.observed == "300 is not 1 × 3"
    assert monitor.check("order", {}, {"items": items[:1] + items[2:]}).ok


@pytest.mark.parametrize(
    ("contract_", "tool", "args", "result"),
    [(PRODUCT, "book", {"fare": 250}, {"total": 500}),
     (PRODUCT, "book", {"fare": "250", "people": []}, {"total": 0}),
     (LINES, "order", {}, {"items": []}),
     (LINES, "order", {}, {"items": [{"qty": 1, "price": 2}, "x"]}),
     (LINES, "order", {}, {"items": {"qty": 1}})],
)  # fmt: skip
def test_a_product_without_its_three_numbers_is_not_evaluated(
    make_monitor, contract_, tool, args, result
) -> None:
    receipt = make_monitor(contract_).check(tool, args, result)
    assert receipt.ok and [u.kind for u in receipt.not_evaluated] == ["product"]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"kind": "ratio", "paths": ["result.a", "args.b"], "params": {"tolerance": 0.1}},
         "ratio needs params.ratio as a number other than 0"),
        ({"kind": "ratio", "paths": ["result.a", "args.b"],
          "params": {"ratio": 2, "tolerance": -1}}, "ratio needs params.tolerance >= 0"),
        ({"kind": "shares_token", "paths": ["result.a[*]", "args.b"]},
         "shares_token needs exactly two paths [left, right], neither under a wildcard"),
        ({"kind": "page_full", "paths": ["len(result.a)", "result.n"]},
         "page_full needs exactly three paths"),
        ({"kind": "page_full", "paths": ["len(result.a)", "result.n", "args.limit"],
          "params": {"start": "args.offset", "page": "args.page"}},
         "page_full takes at most one of params.start and params.page"),
        ({"kind": "product", "paths": ["result.a", "args.b", "args.c"], "params": {}},
         "product needs params.tolerance >= 0"),
        ({"kind": "product", "paths": ["result.a", "args.b"], "params": {"tolerance": 0}},
         "product needs exactly three paths"),
        ({"kind": "product", "paths": ["result.a[*].x", "result.a[*].y", "args.c"],
          "params": {"tolerance": 0}}, "product reads one value a path, or three keys"),
        ({"kind": "product", "paths": ["result.a[*].b[*].x", "result.a[*].b[*].y",
                                       "result.a[*].b[*].z"], "params": {"tolerance": 0}},
         "product reads one value a path, or three keys"),
    ],
)  # fmt: skip
def test_malformed_vocabulary_is_refused_naming_the_field(tmp_path, item, message) -> None:
    data = {"schema_version": "2", "contracts": [
        {"id": "c1", "tool": "t", "side": "result", "status": "accepted", **item}]}  # fmt: skip
    path = tmp_path / "contracts.json"
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(ContractLoadError, match=r"contracts\[0\] \(c1\): " + message.replace(
            "[", r"\[").replace("]", r"\]")):  # fmt: skip
        Monitor.load(str(path))
