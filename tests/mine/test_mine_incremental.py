"""Mining again after new traces builds the profiles of the tasks that changed only, and
finds exactly what a full mine of a fresh store of every file finds: the same contracts,
parameters, evidence and counterexamples. The relations' counts per task are kept the
same way, and must be the very rows a fresh store counts; so are the held-out counts of
fitted contracts, per fold.

Profiles are kept per task (what makes them reusable) in stores whose calls carry many
values for their paths; these small stores would be kept per fold, so the tests keep
them per task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.mine.evidence import kept_counts as kept_module
from tracemine.mine.profile import aggregates as profile_module
from tracemine.mine.propose import context as context_module
from tracemine.simulate import simulate, write_traces

TASKS = 48


def _mined(db: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    result = mine(db, folds=3, min_tasks=3, target_fa=0.05)
    return _dumped(result), result.provenance["profile"]


def _write(tmp_path: Path, name: str, runs: list[dict[str, Any]]) -> Path:
    return write_traces(runs, tmp_path / f"{name}.flat.jsonl", "flat")


@pytest.fixture(autouse=True)
def _per_task(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(profile_module, "PROFILE_SHARE", 0)


@pytest.fixture(scope="module")
def runs() -> list[dict[str, Any]]:
    return simulate(suite="commerce", tasks=TASKS + 6, seed=5, trials=2)


def _tasks(runs: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["task_id"] for r in runs))


def test_new_tasks_build_their_profiles_only(tmp_path: Path, runs: list[dict]) -> None:
    tasks = _tasks(runs)
    old = _write(tmp_path, "old", [r for r in runs if r["task_id"] in tasks[:TASKS]])
    new = _write(tmp_path, "new", [r for r in runs if r["task_id"] in tasks[TASKS:]])
    grown = tmp_path / "grown.duckdb"
    ingest([old], grown)
    before, first = _mined(grown)
    assert first["tasks_built"] == TASKS
    ingest([new], grown)
    after, profile = _mined(grown)
    assert profile["tasks_built"] == len(tasks) - TASKS
    assert profile["tasks"] == len(tasks)

    fresh = tmp_path / "fresh.duckdb"
    ingest([old, new], fresh)
    expected, full = _mined(fresh)
    assert full["tasks_built"] == len(tasks)
    assert after == expected
    assert after != before  # else a stale mine could not be told from a fresh one
    # and the stored rows are the very rows a full build makes
    assert _profile_rows(grown) == _profile_rows(fresh)


def test_a_task_given_more_calls_is_rebuilt(tmp_path: Path, runs: list[dict]) -> None:
    """A new file may hold a new trial of a task mined before: that task's rows are built
    again from all its calls, the old ones and the new."""
    tasks = _tasks(runs)[:TASKS]
    kept = [r for r in runs if r["task_id"] in tasks]
    again = [r for r in kept if r["task_id"] == tasks[3]]
    later = [{**r, "run_id": f"{r['run_id']}-again"} for r in again[:1]]
    old, new = _write(tmp_path, "old", kept), _write(tmp_path, "new", later)
    grown = tmp_path / "grown.duckdb"
    ingest([old], grown)
    _mined(grown)
    ingest([new], grown)
    after, profile = _mined(grown)
    assert profile["tasks_built"] == 1

    fresh = tmp_path / "fresh.duckdb"
    ingest([old, new], fresh)
    expected, _ = _mined(fresh)
    assert after == expected
    assert _profile_rows(grown) == _profile_rows(fresh)


def test_another_survey_builds_every_task(tmp_path: Path, runs: list[dict]) -> None:
    """Per-task rows list the values of listed paths only: when the new calls give such a
    path too many distinct values to list, the survey changes and every task is built
    anew (here the new tasks alone are few enough to be built on their own)."""
    tasks = _tasks(runs)
    old = _write(tmp_path, "old", [r for r in runs if r["task_id"] in tasks[:TASKS]])
    lookup = next(r for r in runs if r["calls"][0]["tool"] == "get_order")
    odd = []
    for n in range(300):  # ten new tasks, thirty runs each, each its own currency
        call = dict(lookup["calls"][0])
        call["result"] = {**call["result"], "currency": f"C{n:03d}"}
        odd.append({**lookup, "run_id": f"odd-{n}", "task_id": f"odd-{n % 10}",
                    "calls": [call]})  # fmt: skip
    new = _write(tmp_path, "new", odd)
    grown = tmp_path / "grown.duckdb"
    ingest([old], grown)
    _mined(grown)
    ingest([new], grown)
    after, profile = _mined(grown)
    assert profile["tasks"] == TASKS + 10
    assert profile["tasks_built"] == profile["tasks"]

    fresh = tmp_path / "fresh.duckdb"
    ingest([old, new], fresh)
    expected, _ = _mined(fresh)
    assert after == expected


def _profile_rows(db: Path) -> tuple[list[tuple], ...]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return tuple(
            sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
            for table in ("tm_profiles", "tm_profile_values", "tm_pair_tasks")
        )
    finally:
        con.close()


class _Spy:
    """Records how the held-out counts of fitted contracts were taken: (items, only)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[int, str | None]] = []
        real = kept_module.count_fitted

        def spied(con: Any, survey: Any, items: list, only: str | None = None) -> Any:
            self.calls.append((len(items), only))
            return real(con, survey, items, only=only)

        monkeypatch.setattr(kept_module, "count_fitted", spied)


def test_mining_again_with_other_thresholds_reuses_heldout_counts(
    tmp_path: Path, runs: list[dict], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same calls, same folds: every fitted contract's held-out count is the stored one
    (counted on no task), and the contracts are a fresh store's."""
    trace = _write(tmp_path, "all", runs)
    grown, fresh = tmp_path / "grown.duckdb", tmp_path / "fresh.duckdb"
    ingest([trace], grown)
    ingest([trace], fresh)
    _mined(grown)
    spy = _Spy(monkeypatch)
    again = mine(grown, folds=3, min_tasks=3, target_fa=0.2)
    assert spy.calls and all(only == "_tm_added" for _, only in spy.calls)
    expected = mine(fresh, folds=3, min_tasks=3, target_fa=0.2)
    assert spy.calls[-1][1] is None  # the fresh store counted everything
    assert _dumped(again) == _dumped(expected)


def test_folds_that_only_grew_count_their_new_tasks_only(
    tmp_path: Path, runs: list[dict], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Folds dealt by a hash of the task (what a store of many tasks gets; here forced
    on a small one) keep their tasks when tasks are added: a fitted contract seen before
    is counted on the new tasks and added to its stored counts, giving the same counts
    and first counterexamples as counting the fold whole."""
    monkeypatch.setattr(context_module, "STABLE_FOLD_TASKS", 1)
    tasks = _tasks(runs)
    old = _write(tmp_path, "old", [r for r in runs if r["task_id"] in tasks[:TASKS]])
    new = _write(tmp_path, "new", [r for r in runs if r["task_id"] in tasks[TASKS:]])
    grown = tmp_path / "grown.duckdb"
    ingest([old], grown)
    _mined(grown)
    ingest([new], grown)
    spy = _Spy(monkeypatch)
    after, _ = _mined(grown)
    reused = sum(n for n, only in spy.calls if only == "_tm_added")
    assert reused > 0
    fresh = tmp_path / "fresh.duckdb"
    ingest([old, new], fresh)
    full = mine(fresh, folds=3, min_tasks=3, target_fa=0.05)
    assert after == _dumped(full)
    assert full.provenance["params"]["folds_dealt"] == "hash"


def _dumped(result: Any) -> list[dict[str, Any]]:
    return sorted((c.model_dump(mode="json") for c in result.contracts), key=lambda c: c["id"])


def test_mine_says_how_many_tasks_it_built(tmp_path: Path, runs: list[dict]) -> None:
    """The command's summary line tells a mine after new tasks from a full one."""
    tasks = _tasks(runs)
    old = _write(tmp_path, "old", [r for r in runs if r["task_id"] in tasks[:TASKS]])
    new = _write(tmp_path, "new", [r for r in runs if r["task_id"] in tasks[TASKS:]])
    db, out = tmp_path / "grown.duckdb", tmp_path / "candidates.json"
    options = ["mine", "--db", str(db), "--out", str(out), "--folds", "3", "--min-tasks", "3"]
    ingest([old], db)
    first = CliRunner().invoke(app, options)
    assert first.exit_code == 0, first.output
    assert "profiles computed" in " ".join(first.output.split())
    again = CliRunner().invoke(app, options)
    assert "profiles reused" in " ".join(again.output.split())
    ingest([new], db)
    grown = CliRunner().invoke(app, options)
    said = " ".join(grown.output.split())
    assert (
        f"profiles built for {len(tasks) - TASKS} of {len(tasks)} tasks, the others' reused" in said
    )
