"""Mining under a small DuckDB memory cap: it works within the cap and finds what it finds
without one, or it stops with one line naming what ran out and what to set the cap to."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.errors import MemoryLimitError
from tracemine.ingest import ingest
from tracemine.ingest.store import parse_size
from tracemine.mine import mine
from tracemine.simulate import simulate, write_traces


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of wide results: lists of 5-30 offers, about a hundred values a call."""
    folder = tmp_path_factory.mktemp("wide")
    trace = write_traces(simulate("offers", tasks=90, seed=5, trials=1), folder / "w.jsonl", "flat")
    ingest([trace], folder / "wide.duckdb")
    return folder / "wide.duckdb"


def _mine(db: Path) -> list[dict]:
    found = mine(db, folds=3, min_tasks=3, target_fa=0.05)
    return [c.model_dump(mode="json") for c in found.contracts]


def test_a_small_cap_finds_the_same(
    wide: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    capped = tmp_path / "capped.duckdb"
    shutil.copy(wide, capped)
    expected = _mine(wide)
    monkeypatch.setenv("TRACEMINE_DUCKDB_MEMORY", "96MB")
    assert _mine(capped) == expected


def test_a_cap_too_small_is_one_line(
    wide: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    capped = tmp_path / "tiny.duckdb"
    shutil.copy(wide, capped)
    monkeypatch.setenv("TRACEMINE_DUCKDB_MEMORY", "8MB")
    with pytest.raises(MemoryLimitError, match=r"ran out of memory .*=16MB or more"):
        mine(capped, folds=3)
    result = CliRunner().invoke(app, ["mine", "--db", str(capped), "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    message = result.output.strip()
    assert "TRACEMINE_DUCKDB_MEMORY=16MB" in message and "Traceback" not in message
    assert len(message.splitlines()) <= 2  # one line, which the terminal may wrap


def test_conditional_targets_read_the_store_without_a_shared_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The targets' per-call rows scan the whole store in two halves; sharing that scan
    made DuckDB hold every value of the store (about the memory cap on a wide one) before
    the path filter. Both reads run with the shared scan off, and the setting is restored."""
    import duckdb

    from tracemine.mine.profile.aggregates import Survey
    from tracemine.mine.propose import conditional

    def setting(con: duckdb.DuckDBPyConnection) -> str:
        row = con.execute("SELECT current_setting('disabled_optimizers')").fetchone()
        return str(row[0]) if row and row[0] else ""

    seen: list[str] = []

    def rows(con: duckdb.DuckDBPyConnection, *_: object) -> tuple[list[str], dict]:
        seen.append(setting(con))
        return [], {}

    def values(con: duckdb.DuckDBPyConnection, *_: object) -> None:
        seen.append(setting(con))

    monkeypatch.setattr(conditional, "_target_rows", rows)
    monkeypatch.setattr(conditional, "_feature_values", values)
    con = duckdb.connect()
    con.execute("SET disabled_optimizers = 'late_materialization'")
    conditional.read_rows(con, [], [], Survey())
    assert len(seen) == 2 and all("common_subplan" in s for s in seen)
    assert all("late_materialization" in s for s in seen)
    assert setting(con) == "late_materialization"


def _caps_by_stage(db: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """DuckDB's memory cap (bytes) as each stage of a mine of ``db`` starts."""
    mine_api = importlib.import_module("tracemine.mine.api")

    opened = []

    def connect(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        con = real(*args, **kwargs)
        opened.append(con)
        return con

    real = mine_api.connect
    monkeypatch.setattr(mine_api, "connect", connect)
    caps: dict[str, int] = {}

    def progress(name: str) -> None:
        row = opened[0].execute("SELECT current_setting('memory_limit')").fetchone()
        caps[name] = parse_size(str(row[0] if row else "").replace(" ", "")) or 0

    mine(db, folds=3, min_tasks=3, progress=progress)
    return caps


def test_the_cap_falls_once_the_profiles_are_built(
    wide: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What DuckDB reads stays in its buffers up to its cap: past the profiles, the later
    statements get a smaller one, so the store is not cached beside the candidates. A cap
    the user sets holds for the whole mine."""
    db = tmp_path / "caps.duckdb"
    shutil.copy(wide, db)
    monkeypatch.delenv("TRACEMINE_DUCKDB_MEMORY", raising=False)
    caps = _caps_by_stage(db, monkeypatch)
    # a stage's progress is reported before its cap is set: the next stage sees it
    assert caps["profiles"] > 900 * 2**20
    assert caps["held-out counts"] <= 640 * 10**6
    assert caps["detection estimate"] <= 320 * 10**6 and caps["selection"] <= 320 * 10**6
    monkeypatch.setenv("TRACEMINE_DUCKDB_MEMORY", "2GB")
    caps = _caps_by_stage(db, monkeypatch)
    assert set(caps.values()) == {caps["reading"]} and caps["reading"] > 1.5 * 2**30


def test_the_cyclic_collector_is_off_while_mining(wide: Path, tmp_path: Path) -> None:
    """A mine builds no reference cycles; the collector walked its millions of containers
    again and again for nothing. It is off for the mine, and back on after it."""
    import gc

    db = tmp_path / "gc.duckdb"
    shutil.copy(wide, db)
    enabled: list[bool] = []
    assert gc.isenabled()
    mine(db, folds=3, min_tasks=3, progress=lambda _: enabled.append(gc.isenabled()))
    assert enabled and not any(enabled)
    assert gc.isenabled()
