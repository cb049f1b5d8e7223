"""Mining a part of the tasks at a time (to bound memory) finds exactly what mining them
all at once finds: the same candidates, parameters, counts and counterexamples."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.mine import profile as profile_module

FIXTURE = Path(__file__).parent.parent / "fixtures" / "mine" / "shop_small.jsonl"


def _snapshot(db: Path) -> dict:
    result = mine(db, folds=3, target_fa=0.2, min_tasks=3, where="run_outcome=success")
    return {
        "summary": result.provenance["summary"],
        "contracts": [c.model_dump(mode="json") for c in result.contracts],
    }


def test_parts_change_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole, split = tmp_path / "whole.duckdb", tmp_path / "split.duckdb"
    ingest([FIXTURE], whole)
    ingest([FIXTURE], split)
    expected = _snapshot(whole)
    monkeypatch.setattr(profile_module, "PART_CALLS", 40)
    found = _snapshot(split)
    con = duckdb.connect(str(split), read_only=True)
    try:
        parts = con.execute("SELECT count(DISTINCT part) FROM tm_calls").fetchall()[0][0]
    finally:
        con.close()
    assert parts > 2
    assert found == expected
