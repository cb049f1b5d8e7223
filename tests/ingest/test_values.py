"""The flattened ``json_values`` table: paths, types, lengths, indices, caps."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from tracemine.ingest import ingest


def _values(tmp_path: Path, result: object, arguments: object = None, status: str = "ok"):
    line = {"run_id": "r", "task_id": "t", "tool": "x", "call_id": "c", "status": status}
    if arguments is not None:
        line["arguments"] = arguments
    if status != "missing":
        line["result"] = result
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(line) + "\n")
    db = tmp_path / "v.duckdb"
    ingest([path], db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT side, path, jtype, num, str, bool, len, idx FROM json_values "
            "ORDER BY side, path, idx NULLS FIRST"
        ).fetchall()
        anomalies = con.execute("SELECT anomalies FROM calls").fetchall()[0][0]
    finally:
        con.close()
    return rows, anomalies


def test_paths_generalise_array_elements_and_quote_odd_keys(tmp_path: Path) -> None:
    result = {"items": [{"p": 1}, {"p": 2.5}], "a.b": True, "_meta": None, "x-y": "s"}
    rows, _ = _values(tmp_path, result, arguments={"order_id": "#W1"})
    paths = {(side, path, jtype) for side, path, jtype, *_ in rows}
    assert ("args", "args.order_id", "string") in paths
    assert ("result", "result.items", "array") in paths
    assert ("result", "result.items[*].p", "integer") in paths
    assert ("result", "result.items[*].p", "number") in paths
    assert ("result", 'result["a.b"]', "boolean") in paths
    assert ("result", "result._meta", "null") in paths
    assert ("result", "result.x-y", "string") in paths
    items = next(r for r in rows if r[1] == "result.items")
    assert items[6] == 2  # array length
    elements = [r for r in rows if r[1] == "result.items[*].p"]
    assert sorted((r[3], r[7]) for r in elements) == [(1.0, 0), (2.5, 1)]


def test_strings_keep_length_and_a_prefix(tmp_path: Path) -> None:
    rows, _ = _values(tmp_path, {"s": "é" * 300})
    (row,) = [r for r in rows if r[1] == "result.s"]
    assert row[6] == 300 and len(row[4]) == 256


def test_null_result_is_a_row_and_missing_result_is_none(tmp_path: Path) -> None:
    rows, _ = _values(tmp_path, None)
    assert rows == [("result", "result", "null", None, None, None, None, None)]
    missing = tmp_path / "missing"
    missing.mkdir()
    rows, _ = _values(missing, None, status="missing")
    assert rows == []


def test_huge_numbers_and_nested_arrays(tmp_path: Path) -> None:
    rows, _ = _values(tmp_path, {"big": 10**30, "grid": [[1, 2], [3]]})
    big = next(r for r in rows if r[1] == "result.big")
    assert big[3] == float(10**30)
    inner = [r for r in rows if r[1] == "result.grid[*][*]"]
    assert sorted(r[3] for r in inner) == [1.0, 2.0, 3.0]


def test_long_arrays_are_capped_and_flagged(tmp_path: Path) -> None:
    rows, anomalies = _values(tmp_path, {"ids": list(range(1500))})
    elements = [r for r in rows if r[1] == "result.ids[*]"]
    assert len(elements) == 1000
    assert next(r for r in rows if r[1] == "result.ids")[6] == 1500
    assert "values_capped" in anomalies
