"""What a call asked for comes back: ``create_event(participants=[…])`` returns the event
with those participants, ``get_orders(ids=[…])`` one order per id. Mined as ``subset``
from the argument list's values into the result's, so a result emptied or cut where
matches must exist breaks it; priced in a family of its own (``subset/result/asked``).
And a result's values within an argument list are judged as the monitor judges them: an
empty list present holds none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracemine.mine import mine
from tracemine.mine.evidence.pooling import family_of
from tracemine.model.contract import Contract, Kind
from tracemine.monitor import Monitor

from helpers import store_calls

PEOPLE = [f"user{i}@example.com" for i in range(12)]


def _event(i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    asked = [PEOPLE[(i + j) % len(PEOPLE)] for j in range(1 + i % 3)]
    organizer = PEOPLE[(i * 5) % len(PEOPLE)]
    result = {"id": str(100 + i), "title": f"meeting {i}", "participants": [organizer, *asked]}
    return {"title": f"meeting {i}", "participants": asked}, result


def _orders(i: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    ids = [f"o{i + j}" for j in range(1 + i % 4)]
    return {"order_ids": ids}, [{"order_id": o, "total": 10 + n} for n, o in enumerate(ids)]


def _asked(contracts: list[Contract], tool: str) -> dict[tuple[str, ...], Contract]:
    return {tuple(c.paths): c for c in contracts if c.tool == tool and c.kind == Kind.SUBSET
            and c.paths[0].startswith("args.")}  # fmt: skip


def test_the_values_an_argument_list_asked_for_are_found_in_the_result(tmp_path: Path) -> None:
    calls = [(f"t{i}", "create_event", *_event(i)) for i in range(30)]
    calls += [(f"t{i}", "get_orders", *_orders(i)) for i in range(30)]
    found = mine(store_calls(tmp_path, calls))
    events = _asked(found.contracts, "create_event")
    orders = _asked(found.contracts, "get_orders")
    assert set(events) == {("args.participants[*]", "result.participants[*]")}
    assert set(orders) == {("args.order_ids[*]", "result[*].order_id")}
    echo = events[("args.participants[*]", "result.participants[*]")]
    assert echo.evidence is not None and echo.evidence.family == "subset/result/asked"
    assert echo.evidence.heldout_tasks == 30 and echo.evidence.heldout_task_violations == 0
    monitor = Monitor.from_dict(found.model_dump(mode="json"), include_proposed=True)
    args, result = _event(99)
    assert monitor.check("create_event", args, result).ok
    emptied = monitor.check("create_event", args, {**result, "participants": []})
    assert echo.id in {v.contract_id for v in emptied.violations}
    args, result = _orders(97)
    cut = monitor.check("get_orders", args, result[:1])
    assert orders[("args.order_ids[*]", "result[*].order_id")].id in \
        {v.contract_id for v in cut.violations}  # fmt: skip
    assert monitor.check("get_orders", args, result).ok


def test_an_asked_value_a_task_did_not_find_is_held_against_the_echo(tmp_path: Path) -> None:
    # a lookup that finds nothing for some ids, in some tasks: the echo's held-out record
    # shows it, and it is not offered as if it always held
    # (beside the same lookup finding every id, which gets it)
    calls = []
    for i in range(30):
        args, result = _orders(i)
        calls.append((f"t{i}", "get_orders", args, result[:-1] if i % 3 == 0 else result))
        calls.append((f"t{i}", "get_all_orders", args, result))
    found = mine(store_calls(tmp_path, calls), budget=False)
    assert not _asked(found.contracts, "get_orders")
    assert set(_asked(found.contracts, "get_all_orders")) == {
        ("args.order_ids[*]", "result[*].order_id")
    }


def test_an_empty_argument_list_checks_what_the_result_returned(tmp_path: Path) -> None:
    # result values within an argument list: where the list is present and empty, the
    # monitor judges every returned value outside it; so do the held-out counts
    def call(i: int) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
        allowed = [] if i % 4 == 0 else [f"c{i % 7}", f"c{(i + 1) % 7}"]
        return (f"t{i}", "pick", {"choices": allowed}, {"choice": f"c{i % 7}"})

    found = mine(store_calls(tmp_path, [call(i) for i in range(40)]), budget=False)
    member = [c for c in found.contracts if c.tool == "pick" and c.kind == Kind.MEMBER]
    assert not member, [c.description for c in member]
    (tmp_path / "tidy").mkdir()
    tidy = mine(store_calls(tmp_path / "tidy", [call(i) for i in range(40) if i % 4]), budget=False)
    kept = [c for c in tidy.contracts if c.tool == "pick" and c.kind == Kind.MEMBER]
    assert [c.paths for c in kept] == [["result.choice", "args.choices"]]


def test_only_echoes_have_the_asked_family() -> None:
    def subset(paths: list[str]) -> Contract:
        return Contract(tool="t", side="result", kind=Kind.SUBSET, paths=paths, params={})

    assert family_of(subset(["args.ids[*]", "result[*].id"])) == "subset/result/asked"
    assert family_of(subset(["result[*].id", "args.ids"])) == "subset/result"
    assert family_of(subset(["args.names", "keys(result)"])) == "subset/result"
