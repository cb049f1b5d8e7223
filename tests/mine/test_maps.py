"""Which objects are maps: keys that look like ids and change from task to task."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.mine.maps import id_like
from tracemine.model.contract import Contract


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
    assert found.provenance["profile"]["maps"] == [{"tool": "nested", "path": "result.a"}]
    assert not [c for c in found.contracts if c.tool == "nested" and "k_" in c.paths[0]]
