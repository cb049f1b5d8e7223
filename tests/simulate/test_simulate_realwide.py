"""The real-wide suite: thousands of distinct paths a tool once stored, as real exports have."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from tracemine.ingest import ingest
from tracemine.simulate import simulate, write_traces


def _ok_calls(runs: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    return [c for r in runs for c in r["calls"] if c["tool"] == tool and c["status"] == "ok"]


def test_realwide_is_reproducible_kept_out_of_all_and_carries_its_properties() -> None:
    runs = simulate("realwide", tasks=30, seed=4, trials=2)
    assert simulate("realwide", tasks=30, seed=4, trials=2) == runs
    assert simulate("realwide", tasks=10, seed=4, trials=2) == runs[:20], "extends"
    assert not any(r["family"].startswith("realwide.") for r in simulate("all", 12, seed=4))
    assert {len(r["calls"]) for r in runs} == {5}
    for call in _ok_calls(runs, "search_flights"):
        assert call["result"]["count"] == len(call["result"]["offers"])
        for offer in call["result"]["offers"]:
            assert 0 <= offer["price"]["taxes_cents"] <= offer["price"]["amount_cents"]
    for call in _ok_calls(runs, "get_seat_map"):
        assert call["result"]["seats_total"] == len(call["result"]["seats"])
    for call in _ok_calls(runs, "book_trip"):
        assert call["result"]["offer_id"] == call["arguments"]["offer_id"]
        assert call["result"]["hotel_id"] == call["arguments"]["hotel_id"]


def test_realwide_stores_thousands_of_paths_a_tool_and_hundreds_of_values_a_call(
    tmp_path: Path,
) -> None:
    runs = simulate("realwide", tasks=150, seed=0, trials=1)
    trace = write_traces(runs, tmp_path / "realwide.flat.jsonl", "flat")
    ingest([trace], tmp_path / "store.duckdb")
    con = duckdb.connect(str(tmp_path / "store.duckdb"), read_only=True)
    try:
        paths = dict(con.execute(
            "SELECT tool, count(DISTINCT path) FROM calls JOIN json_values USING (call_key) "
            "WHERE side = 'result' GROUP BY tool").fetchall())  # fmt: skip
        mean, most = con.execute(
            "SELECT avg(n), max(n) FROM (SELECT call_key, count(*) AS n FROM json_values "
            "WHERE side = 'result' GROUP BY call_key)").fetchall()[0]  # fmt: skip
    finally:
        con.close()
    assert max(paths.values()) >= 2000, paths  # the seat map: seats keyed by name
    assert sum(1 for n in paths.values() if n >= 300) >= 4, paths  # optional fields, rules
    assert 150 <= mean <= 300, mean
    assert most >= 1500, most
