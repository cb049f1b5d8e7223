"""Counting a group's tasks or calls with a bit each finds what counting them one by one
finds: the tasks per fold of profiles and relation counts, and the held-out calls of
fitted contracts, fall back to grouping past their bit budgets, with the same
candidates, counts and examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracemine.ingest import ingest
from tracemine.mine import measure as measure_module
from tracemine.mine import mine
from tracemine.mine import profile as profile_module

FIXTURE = Path(__file__).parent.parent / "fixtures" / "mine" / "shop_small.jsonl"


def _snapshot(db: Path) -> dict:
    result = mine(db, folds=3, target_fa=0.2, min_tasks=3, where="run_outcome=success")
    return {
        "summary": result.provenance["summary"],
        "contracts": [c.model_dump(mode="json") for c in result.contracts],
    }


@pytest.mark.parametrize("part_calls", [100_000, 40])
def test_bits_or_grouping_find_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part_calls: int
) -> None:
    bits, grouped = tmp_path / "bits.duckdb", tmp_path / "grouped.duckdb"
    ingest([FIXTURE], bits)
    ingest([FIXTURE], grouped)
    monkeypatch.setattr(profile_module, "PART_CALLS", part_calls)
    monkeypatch.setattr(profile_module, "PROFILE_SHARE", 10**9)  # per fold: tasks by bits
    expected = _snapshot(bits)
    monkeypatch.setattr(profile_module, "BITS_PER_GROUP", 0)
    monkeypatch.setattr(measure_module, "FITTED_BITS", 0)
    found = _snapshot(grouped)
    assert expected["contracts"]
    assert found == expected
