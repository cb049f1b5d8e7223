"""The synthetic suites: reproducible to the byte, varied, and carrying the planted properties."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from tracemine.errors import InputError
from tracemine.simulate import DOMAINS, FORMATS, openapi_document, simulate, write_traces

ORDER_ID = re.compile(r"^#W\d{7}$")


@pytest.fixture(scope="module")
def runs() -> list[dict[str, Any]]:
    return simulate("all", tasks=60, seed=11)


def calls_of(runs: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    return [c for r in runs for c in r["calls"] if c["tool"] == tool and c["status"] == "ok"]


@pytest.mark.parametrize("name", [*FORMATS, "openai_chat.gz"])
def test_same_seed_same_bytes(tmp_path: Path, name: str) -> None:
    format = name.removesuffix(".gz")
    suffix = ".jsonl.gz" if name.endswith(".gz") else ".jsonl"
    first = write_traces(simulate("all", 9, seed=5), tmp_path / f"a{suffix}", format)
    second = write_traces(simulate("all", 9, seed=5), tmp_path / f"b{suffix}", format)
    other = write_traces(simulate("all", 9, seed=6), tmp_path / f"c{suffix}", format)
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes() != other.read_bytes()


def test_a_larger_simulation_extends_a_smaller_one() -> None:
    small = simulate("commerce", tasks=4, seed=3)
    large = simulate("commerce", tasks=8, seed=3)
    assert large[: len(small)] == small


def test_runs_carry_task_metadata_and_vary(runs: list[dict[str, Any]]) -> None:
    assert {r["family"].split(".")[0] for r in runs} == set(DOMAINS)
    trials = Counter(r["task_id"] for r in runs)
    assert len(trials) == 60 and set(trials.values()) == {3}
    assert all(r["run_id"] and r["reward"] in (0.0, 1.0) for r in runs)
    assert {r["run_outcome"] for r in runs} == {"success", "failure"}
    calls = [c for r in runs for c in r["calls"]]
    assert any(c["parallel_index"] is not None for c in calls), "parallel calls"
    assert any(c["status"] == "tool_error" for c in calls), "legitimate tool errors"
    assert len({r["family"] for r in runs}) >= 8
    # call ids are unique within a run: the nominal data has no completeness fault
    for run in runs:
        ids = [c["call_id"] for c in run["calls"]]
        assert len(ids) == len(set(ids))
        assert [c["seq"] for c in run["calls"]] == list(range(len(ids)))
        assert all(c["ended_at"] <= run["ended_at"] for c in run["calls"])


def test_retries_repeat_the_failed_call(runs: list[dict[str, Any]]) -> None:
    retried = 0
    for run in runs:
        for before, after in zip(run["calls"], run["calls"][1:], strict=False):
            transient = before["error_type"] in ("upstream_timeout", "rate_limited")
            if transient:
                assert (after["tool"], after["arguments"]) == (before["tool"], before["arguments"])
                assert after["status"] == "ok"
                retried += 1
    assert retried > 0


def test_commerce_properties_hold(runs: list[dict[str, Any]]) -> None:
    for call in calls_of(runs, "get_order"):
        order = call["result"]
        assert (
            ORDER_ID.match(order["order_id"]) and order["order_id"] == call["arguments"]["order_id"]
        )
        assert order["items"], "an order has at least one item"
        assert sum(i["line_total_cents"] for i in order["items"]) == order["subtotal_cents"]
        assert order["subtotal_cents"] + order["shipping_cents"] == order["total_cents"]
        assert ("tracking_number" in order) == (
            order["status"] in ("shipped", "delivered", "returned")
        )
    for call in calls_of(runs, "search_orders"):
        args, result = call["arguments"], call["result"]
        assert len(result["orders"]) <= args["limit"] and result["total"] >= len(result["orders"])
        if args.get("status") == "delivered":
            assert result["orders"]
        assert all(o["status"] == args.get("status", o["status"]) for o in result["orders"])
    for call in calls_of(runs, "list_items"):
        assert all(i["order_id"] == call["arguments"]["order_id"] for i in call["result"]["items"])
    refunds = 0
    for run in runs:
        orders: dict[str, int] = {}
        for call in run["calls"]:
            if call["tool"] == "get_order" and call["status"] == "ok":
                orders[call["result"]["order_id"]] = call["result"]["total_cents"]
            if call["tool"] == "create_refund":
                refunds += 1
                assert orders[call["arguments"]["order_id"]] == call["arguments"]["amount_cents"]
        assert sum(c["tool"] == "create_refund" for c in run["calls"]) <= 1
    assert refunds > 10


def test_search_and_travel_properties_hold(runs: list[dict[str, Any]]) -> None:
    empty_pages = 0
    for call in calls_of(runs, "search_docs"):
        args, result = call["arguments"], call["result"]
        assert len(result["hits"]) <= args["page_size"] <= 20
        assert result["total_hits"] >= len(result["hits"])
        empty_pages += not result["hits"]
        if result["total_hits"] > 0 and args["page"] == 1:
            assert result["hits"]
    assert empty_pages > 0, "an empty page is sometimes the right answer"
    for call in calls_of(runs, "scan_directory"):
        result = call["result"]
        assert result["files_matched"] == len(result["matches"])
        assert result["complete"] == (not result["skipped"])
        assert all(m["path"].startswith(call["arguments"]["root"]) for m in result["matches"])
    for call in calls_of(runs, "search_flights"):
        for flight in call["result"]["flights"]:
            assert flight["arrive_at"] > flight["depart_at"]
            assert flight["fare"]["amount_cents"] > 0 and flight["seats_left"] >= 0
    for call in calls_of(runs, "book_flight"):
        total = call["result"]["total"]["amount_cents"]
        assert total == call["arguments"]["fare_cents"] * len(call["arguments"]["passenger_ids"])


def test_openapi_document_mixes_declared_prose_and_missing() -> None:
    doc = yaml.safe_load(openapi_document("commerce"))
    assert doc["openapi"].startswith("3.1")
    operations = {op["operationId"] for path in doc["paths"].values() for op in path.values()}
    assert operations == {"get_order", "list_items", "search_orders", "fetch_policy",
                          "fetch_region", "create_refund"}  # fmt: skip
    order = doc["components"]["schemas"]["Order"]["properties"]
    assert "pattern" in doc["components"]["schemas"]["OrderIdValue"]  # declared
    assert "never negative" in order["shipping_cents"]["description"]  # prose only
    assert "minimum" not in order["shipping_cents"]
    assert "ISO 4217" in order["currency"]["description"]
    assert set(order["tracking_number"]) == {"type"}  # nothing said
    with pytest.raises(InputError):
        openapi_document("travel")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"suite": "shop"}, "unknown suite"), ({"tasks": 0}, "--tasks"), ({"trials": 0}, "--trials")],
)
def test_bad_options_are_input_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        simulate(**kwargs)


def test_offers_results_are_wide_and_kept_out_of_all() -> None:
    runs = simulate("offers", tasks=20, seed=4, trials=2)
    assert simulate("offers", tasks=20, seed=4, trials=2) == runs
    assert not any(r["family"].startswith("offers.") for r in simulate("all", 12, seed=4))
    searches = calls_of(runs, "search_offers")
    assert searches
    for call in searches:
        offers, args = call["result"]["offers"], call["arguments"]
        assert 5 <= len(offers) <= 30 and len(offers) <= args["max_results"]
        assert call["result"]["count"] == len(offers)
        for offer in offers:
            assert 10 <= len(offer) <= 15
            assert offer["stops"] == len(offer["segments"]) - 1
            assert 0 <= offer["price"]["taxes_cents"] < offer["price"]["amount_cents"]
    for call in calls_of(runs, "hold_offer"):
        assert call["result"]["offer_id"] == call["arguments"]["offer_id"]
