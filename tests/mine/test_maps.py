"""Which objects are maps: keys that look like ids and change from task to task."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.mine.profile.maps import id_like
from tracemine.model.contract import Contract
from tracemine.monitor import Monitor


@pytest.mark.parametrize(
    "key",
    [
        "1270145486",
        "gift_card_1591784",
        "USR003",
        "7",
        "3fa85f64-5717-4562-b3fc-2c963f66afa6",
        "linda.jameson@bluesparrowtech.com",
    ],
)
def test_keys_that_look_like_ids(key: str) -> None:
    assert id_like(key)


@pytest.mark.parametrize("key", ["price", "first_name", "line1", "v2", "USD", "created_at"])
def test_keys_that_are_field_names(key: str) -> None:
    assert not id_like(key)


def _contracts(tmp_path: Path, results: list[Any]) -> list[Contract]:
    lines = [
        {"run_id": f"r{i}", "task_id": f"t{i}", "seq": 0, "tool": "lookup", "call_id": f"c{i}",
         "arguments": {}, "result": result, "status": "ok"}
        for i, result in enumerate(results)
    ]  # fmt: skip
    source = tmp_path / "calls.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    ingest([source], tmp_path / "store.duckdb")
    return mine(tmp_path / "store.duckdb", budget=False).contracts


def _mine(tmp_path: Path, results: list[Any]) -> set[str]:
    return {c.paths[0] for c in _contracts(tmp_path, results)}


def test_an_object_keyed_by_changing_ids_is_a_map(tmp_path: Path) -> None:
    results = [
        {"methods": {f"card_{1000 * i + j}": {"balance": j + 1} for j in range(1 + i % 3)}}
        for i in range(30)
    ]
    paths = _mine(tmp_path, results)
    assert "result.methods{*}.balance" in paths
    assert not [p for p in paths if "card_" in p]


def test_keys_every_record_shares_stay_fields(tmp_path: Path) -> None:
    # years as keys, the same in every task: fields, each with its own contracts
    results = [{"totals": {"2023": 10 + i, "2024": 20 + i, "2025": 30 + i}} for i in range(30)]
    paths = _mine(tmp_path, results)
    assert {'result.totals["2023"]', 'result.totals["2025"]'} <= paths
    assert not [p for p in paths if "{*}" in p]


def test_a_map_contract_keeps_its_id_whatever_records_were_mined(tmp_path: Path) -> None:
    # two disjoint sets of records: other keys, the same {*} path, so the same ids
    ids = []
    for half in (0, 1):
        results = [
            {"methods": {f"card_{7919 * i + j}": {"balance": j + 1} for j in range(2)}}
            for i in range(half * 30, half * 30 + 30)
        ]
        folder = tmp_path / str(half)
        folder.mkdir()
        found = _contracts(folder, results)
        ids.append({(c.kind, c.paths[0]): c.id for c in found if "{*}" in c.paths[0]})
    assert ids[0] and ids[0] == ids[1]


def test_mine_says_which_objects_it_read_as_maps(tmp_path: Path) -> None:
    import subprocess
    import sys

    shapes = Path(__file__).resolve().parents[1] / "data" / "real_shapes" / "shapes.jsonl"
    ingest([shapes], tmp_path / "store.duckdb")
    shown = subprocess.run(
        [sys.executable, "-m", "tracemine", "mine", "--db", str(tmp_path / "store.duckdb"),
         "--out", str(tmp_path / "candidates.json")],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "100"},
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    said = " ".join(shown.stdout.split())
    assert (
        "read as maps (keys are ids, paths say {*}): "
        "result.variants (get_product_details), result.payment_methods (get_user_details)"
    ) in said


def _store(tmp_path: Path, calls: list[tuple[str, Any]]) -> Path:
    lines = [
        {"run_id": f"r{i}", "task_id": f"t{i}", "seq": 0, "tool": tool, "call_id": f"c{i}",
         "arguments": {}, "result": result, "status": "ok"}
        for i, (tool, result) in enumerate(calls)
    ]  # fmt: skip
    source = tmp_path / "calls.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    ingest([source], tmp_path / "store.duckdb")
    return tmp_path / "store.duckdb"


def test_a_map_is_decided_per_tool(tmp_path: Path) -> None:
    # the same path: a map of cards in one tool, plain fields in the other
    calls: list[tuple[str, Any]] = []
    for i in range(40):
        calls.append(("lookup", {"data": {f"card_{1000 * i + j}": {"balance": j} for j in (1, 2)}}))
        calls.append(("product", {"data": {"name": f"n{i}", "price": 1.5 + i, "status": "ok"}}))
    found = mine(_store(tmp_path, calls), budget=False)
    paths = {(c.tool, c.paths[0]) for c in found.contracts}
    assert ("lookup", "result.data{*}.balance") in paths
    assert ("product", "result.data.price") in paths
    assert not [p for tool, p in paths if tool == "product" and "{*}" in p]
    assert found.provenance["profile"]["maps"] == [{"tool": "lookup", "path": "result.data"}]


def test_a_result_keyed_by_ids_and_maps_in_maps_do_not_break_mining(tmp_path: Path) -> None:
    calls: list[tuple[str, Any]] = [
        ("whole", {f"card_{1000 * i + j}": {"balance": j} for j in (1, 2)}) for i in range(30)
    ]
    calls += [
        ("nested", {"a": {f"id_{1000 * i + j}": {"x": {f"k_{7 * i + j}": j}} for j in (1, 2)}})
        for i in range(30)
    ]
    found = mine(_store(tmp_path, calls), budget=False)  # a root-level map once crashed this
    assert found.provenance["profile"]["maps"] == [
        {"tool": "nested", "path": "result.a"},
        {"tool": "whole", "path": "result"},
    ]
    assert ("whole", "result{*}.balance") in {(c.tool, c.paths[0]) for c in found.contracts}
    assert not [c for c in found.contracts if c.tool == "nested" and "k_" in c.paths[0]]


NAMES = ["Speedy Rentals", "SunSet Rent-A-Car", "LAX Car Rental", "Green Motion", "City Cars",
         "Hertz Downtown", "Blue Sky Rentals", "Paris Auto", "Rent A Wreck", "Nice Drive"]  # fmt: skip


def test_a_result_keyed_by_record_names_is_a_map_at_the_root(tmp_path: Path) -> None:
    # prices keyed by the companies the call named: the whole result is the map
    calls: list[tuple[str, Any]] = []
    for i in range(30):
        chosen = [NAMES[(i + j) % len(NAMES)] for j in range(1 + i % 3)]
        calls.append(("price_per_day", {name: 40.0 + i + j for j, name in enumerate(chosen)}))
        calls.append(("weather", {"city": "Paris", "temperature": 10 + i % 7}))
    found = mine(_store(tmp_path, calls), budget=False)
    paths = {(c.tool, c.paths[0]) for c in found.contracts}
    assert ("price_per_day", "result{*}") in paths
    assert not [p for tool, p in paths if tool == "price_per_day" and "Rent" in p]
    assert ("weather", "result.temperature") in paths
    assert {"tool": "price_per_day", "path": "result"} in found.provenance["profile"]["maps"]
    # the monitor reads the root's entries, names it never saw included
    monitor = Monitor.from_dict(found.model_dump(mode="json"), include_proposed=True)
    assert monitor.check("price_per_day", {}, {"Unseen Company": 51.0}).ok
    assert not monitor.check("price_per_day", {}, {"Unseen Company": "51"}).ok


def test_names_of_records_seen_in_one_task_make_a_map(tmp_path: Path) -> None:
    # one task cannot show keys change; keys of several words are no field's names
    result = {"Breizh Café": "9:00 AM - 11:00 PM", "Le Baratin": "12:00 PM - 2:00 PM",
              "Bistrot Paul Bert": "12:00 PM - 2:30 PM"}  # fmt: skip
    lines = [
        {"run_id": f"r{trial}", "task_id": "t0", "seq": 0, "tool": "opening_hours",
         "call_id": f"c{trial}", "arguments": {}, "result": result, "status": "ok"}
        for trial in range(3)
    ]  # fmt: skip
    lines += [
        {"run_id": f"w{i}", "task_id": f"w{i}", "seq": 0, "tool": "weather", "call_id": f"w{i}",
         "arguments": {}, "result": {"city": "Paris", "sky": "clear"}, "status": "ok"}
        for i in range(10)
    ]  # fmt: skip
    source = tmp_path / "calls.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    ingest([source], tmp_path / "store.duckdb")
    found = mine(tmp_path / "store.duckdb", budget=False)
    assert {"tool": "opening_hours", "path": "result"} in found.provenance["profile"]["maps"]
    monitor = Monitor.from_dict(found.model_dump(mode="json"), include_proposed=True)
    # another task's restaurants are not missing fields
    assert monitor.check("opening_hours", {}, {"Chez L'Ami Jean": "7:00 PM - 11:00 PM"}).ok
