"""Mining a part of the tasks at a time (to bound memory) finds exactly what mining them
all at once finds: the same candidates, parameters, counts and counterexamples."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.mine.profile import aggregates as profile_module
from tracemine.mine.propose import measure as measure_module

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


@pytest.mark.parametrize("part_calls", [100_000, 40])
def test_profiles_per_fold_or_per_task_find_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part_calls: int
) -> None:
    """Fold profiles add up their tasks exactly (support in tasks, capped value lists,
    distinct counts), whole or a part of the tasks at a time."""
    per_task, per_fold = tmp_path / "task.duckdb", tmp_path / "fold.duckdb"
    ingest([FIXTURE], per_task)
    ingest([FIXTURE], per_fold)
    monkeypatch.setattr(profile_module, "PART_CALLS", part_calls)
    monkeypatch.setattr(profile_module, "PROFILE_SHARE", 0)  # never per fold
    expected = _snapshot(per_task)
    monkeypatch.setattr(profile_module, "PROFILE_SHARE", 10**9)  # always per fold
    found = _snapshot(per_fold)
    grain = {}
    for db in (per_task, per_fold):
        con = duckdb.connect(str(db), read_only=True)
        try:
            grain[db] = con.execute("SELECT count(DISTINCT unit) FROM tm_profiles").fetchall()[0][0]
        finally:
            con.close()
    assert grain[per_fold] == 3 < grain[per_task]
    assert found == expected


def test_fold_profiles_follow_the_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Profiles kept per fold are rebuilt for another seed, and reused for the same."""
    monkeypatch.setattr(profile_module, "PROFILE_SHARE", 10**9)
    again, fresh = tmp_path / "again.duckdb", tmp_path / "fresh.duckdb"
    ingest([FIXTURE], again)
    ingest([FIXTURE], fresh)
    first = mine(again, folds=3, min_tasks=3, seed=0)
    same = mine(again, folds=3, min_tasks=3, seed=0, target_fa=0.2)
    other = mine(again, folds=3, min_tasks=3, seed=1)
    assert first.provenance["profile"]["per"] == "fold"
    assert same.provenance["profile"]["profiles_reused"]
    assert not other.provenance["profile"]["profiles_reused"]
    expected = mine(fresh, folds=3, min_tasks=3, seed=1)
    assert [c.model_dump(mode="json") for c in other.contracts] == [
        c.model_dump(mode="json") for c in expected.contracts
    ]


# Counting a group's tasks or calls with a bit each finds what counting them one by one
# finds: the tasks per fold of profiles and relation counts, and the held-out calls of
# fitted contracts, fall back to grouping past their bit budgets, with the same
# candidates, counts and examples.
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
