"""What DuckDB spilled into ``<db>.tmp`` for a writer that was killed is removed when the
store is next opened to write, and nothing else: not another folder's files, not the files
of a connection still open, not while another process holds the store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tracemine.errors import StoreError
from tracemine.ingest import ingest, store
from tracemine.ingest.pipeline import INGEST_MEMORY_LIMIT


def _traces(path: Path, task: str) -> Path:
    record = {"task_id": task, "calls": [{"name": "get", "arguments": {"i": 1}, "ok": True,
                                          "result": {"n": 1}}]}  # fmt: skip
    path.write_text(json.dumps(record) + "\n", "utf-8")
    return path


def _dead_pid() -> int:
    """The id of a process that has ended (what a killed writer's files are named by)."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(gone.stdout)


def _spill(folder: Path, pid: int | None) -> list[Path]:
    """Files named as DuckDB names them: ``<pid>_<n>_`` from DuckDB 2 on, none before."""
    folder.mkdir(exist_ok=True)
    if pid is None:
        names = ["duckdb_temp_storage-0.tmp", "duckdb_temp_storage_S32K-0.tmp",
                 "duckdb_temp_block-4611686018427388032.block"]  # fmt: skip
    else:
        names = [f"duckdb_temp_{pid}_0_owner", f"duckdb_temp_{pid}_0_storage_DEFAULT-0.tmp",
                 f"duckdb_temp_{pid}_0_storage_S128K-0.tmp"]  # fmt: skip
    files = [folder / name for name in names]
    for file in files:
        file.write_bytes(b"\0" * 4096 if "owner" not in file.name else b"")
    return files


def test_the_spill_of_a_dead_writer_is_gone_after_the_next_ingest(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest([_traces(tmp_path / "a.jsonl", "a")], db)
    _spill(tmp_path / "s.duckdb.tmp", _dead_pid())
    _spill(tmp_path / "s.duckdb.tmp", None)  # an older DuckDB's names
    report = ingest([_traces(tmp_path / "b.jsonl", "b")], db)
    assert report.files[0].outcome == "ingested"
    assert not (tmp_path / "s.duckdb.tmp").exists()


def test_only_duckdbs_own_files_in_the_stores_own_folder_are_removed(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest([_traces(tmp_path / "a.jsonl", "a")], db)
    stale = _spill(tmp_path / "s.duckdb.tmp", _dead_pid())
    kept = tmp_path / "s.duckdb.tmp" / "notes.txt"
    kept.write_text("mine", "utf-8")
    other = _spill(tmp_path / "other.duckdb.tmp", _dead_pid())
    ingest([_traces(tmp_path / "b.jsonl", "b")], db)
    assert not any(f.exists() for f in stale)
    assert kept.read_text("utf-8") == "mine"
    assert all(f.exists() for f in other)


def test_an_open_connection_of_this_process_keeps_its_files(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest([_traces(tmp_path / "a.jsonl", "a")], db)
    # a caller's own connection: an ingest in this process shares its database instance
    held = store.connect(db, memory_limit=INGEST_MEMORY_LIMIT)
    try:
        own = _spill(tmp_path / "s.duckdb.tmp", os.getpid())
        stale = _spill(tmp_path / "s.duckdb.tmp", _dead_pid())
        ingest([_traces(tmp_path / "b.jsonl", "b")], db)
        assert all(f.exists() for f in own)
        assert not any(f.exists() for f in stale)
    finally:
        held.close()


_READER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print("open", flush=True)
sys.stdin.read()
"""


def test_nothing_is_removed_while_another_process_has_the_store_open(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest([_traces(tmp_path / "a.jsonl", "a")], db)
    stale = _spill(tmp_path / "s.duckdb.tmp", _dead_pid())
    reader = subprocess.Popen([sys.executable, "-c", _READER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert reader.stdout is not None and reader.stdout.readline() == "open\n"
        with pytest.raises(StoreError, match="in use by another ingest or mine"):
            ingest([_traces(tmp_path / "b.jsonl", "b")], db)
        assert all(f.exists() for f in stale)  # its spill could be in there
    finally:
        reader.communicate("", timeout=60)
    ingest([_traces(tmp_path / "b.jsonl", "b")], db)
    assert not (tmp_path / "s.duckdb.tmp").exists()


_SPILLER = """
import sys
from tracemine.ingest import store
con = store.connect(sys.argv[1], memory_limit="40MB")
con.execute("SET threads = 1")
con.execute("SELECT s, count(*) FROM (SELECT md5(range::VARCHAR) AS s FROM range(5000000)) "
            "GROUP BY s ORDER BY s").fetchall()
"""


def test_a_writer_killed_while_spilling_leaves_nothing_after_the_next_ingest(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.duckdb"
    folder = tmp_path / "s.duckdb.tmp"
    writer = subprocess.Popen([sys.executable, "-c", _SPILLER, str(db)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not any(p.name.endswith(".tmp") for p in folder.glob("duckdb_temp_*")):
            assert writer.poll() is None, writer.stderr.read() if writer.stderr else ""
            assert time.monotonic() < deadline, "DuckDB did not spill"
            time.sleep(0.02)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.communicate(timeout=60)
    assert any(folder.iterdir())  # what the killed writer spilled, left behind
    report = ingest([_traces(tmp_path / "a.jsonl", "a")], db)
    assert report.files[0].outcome == "ingested"
    assert not folder.exists()
