"""What runs on a worker: read shards into a store, merge the stores of shards that
share tasks, and run a mining step on a store. Plain functions of plain arguments (paths,
shards, the mine's small parameters), so any engine can ship them; none holds a
connection between calls, and each writes its store under a temporary name first, so a
worker that dies leaves nothing that passes for a finished store.

Stores live in the work folder, which every worker and the client see (one machine, or
a shared filesystem); the trace files may be anywhere fsspec reaches.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from tracemine.errors import StoreError
from tracemine.ingest import store
from tracemine.ingest.pipeline import FileReport, ShardPiece, ingest_shards, stored_report
from tracemine.ingest.readers import READERS
from tracemine.mine.profile.shards import Setup, prepare
from tracemine.mine.profile.state import nominal
from tracemine.mine.profile.where import Filter

COPY_CHUNK = 1 << 22


@dataclass(frozen=True)
class Config:
    """How a worker runs steps: DuckDB's memory cap and threads."""

    memory: str | None = None
    threads: int | None = None


def _open(fs_url: str) -> Any:
    import fsspec

    return fsspec.open(fs_url, "rb")


def count_lines(url: str, start: int, end: int) -> int:
    """Line ends in bytes ``start`` to ``end`` of the file at ``url``."""
    lines = 0
    with _open(url) as handle:
        handle.seek(start)
        left = end - start
        while left > 0 and (chunk := handle.read(min(COPY_CHUNK, left))):
            lines += chunk.count(b"\n")
            left -= len(chunk)
    return lines


def _chunks(url: str, start: int, end: int | None) -> Iterator[bytes]:
    """The shard's bytes (``start`` to ``end``, or to the end of the file), a chunk at a
    time."""
    with _open(url) as handle:
        handle.seek(start)
        left = None if end is None else end - start
        while left is None or left > 0:
            chunk = handle.read(COPY_CHUNK if left is None else min(COPY_CHUNK, left))
            if not chunk:
                break
            yield chunk
            if left is not None:
                left -= len(chunk)


def _local_copy(url: str, start: int, end: int | None, folder: Path) -> Path:
    """The shard's bytes in a local file of their own."""
    target = folder / f"shard-{uuid.uuid4().hex}"
    with target.open("wb") as out:
        for chunk in _chunks(url, start, end):
            out.write(chunk)
    return target


_SCRATCH = "tracemine-shard-"
_BUILDING = ".building"


def clear_unfinished(work: Path) -> None:
    """Remove what a worker that died left half written under ``work`` (the client does
    this before a mine, which holds the work folder's lock)."""
    for folder in (work / "shards", work / "groups"):
        if not folder.is_dir():
            continue
        for leftover in folder.iterdir():
            if leftover.name.startswith(_SCRATCH) and leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)
            elif leftover.name.endswith((_BUILDING, _BUILDING + ".wal")):
                leftover.unlink(missing_ok=True)


def content_hash(url: str, start: int, end: int | None) -> str:
    """sha256 of the shard's bytes (``start`` to ``end``, or to the end of the file)."""
    digest = hashlib.sha256()
    for chunk in _chunks(url, start, end):
        digest.update(chunk)
    return digest.hexdigest()


def ingest(shards: list[Any], path: str, config: Config) -> list[FileReport]:
    """Read ``shards`` (:class:`tracemine.engine.plan.Shard`, consecutive ones of the
    corpus) one after the other into one store at ``path``, each under its own ingest
    id, as one ingest of their files would, unless a finished store is there; the report
    of each."""
    target = Path(path)
    if target.exists():
        return _ingested(shards, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=_SCRATCH, dir=target.parent))
    try:
        building = scratch / "store.duckdb"
        ingest_shards(_pieces(shards, scratch), building, threads=config.threads)
        os.replace(building, target)  # whole or not at all
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return _ingested(shards, target)


def _pieces(shards: list[Any], scratch: Path) -> Iterator[ShardPiece]:
    """The shards as ingest reads them: a local whole file where it is, anything else
    copied into ``scratch`` while it is read."""
    for shard in shards:
        if shard.local and shard.whole:
            yield ShardPiece(Path(shard.url.removeprefix("file://")), shard.ingest_id,
                             shard.url, shard.format, shard.first_line or 1)  # fmt: skip
            continue
        copy = _local_copy(shard.url, shard.start, shard.end, scratch)
        try:
            yield ShardPiece(copy, shard.ingest_id, shard.url, shard.format,
                             shard.first_line or 1)  # fmt: skip
        finally:
            copy.unlink(missing_ok=True)


def _ingested(shards: list[Any], target: Path) -> list[FileReport]:
    # the reports a finished store keeps (``detail`` holds the file's hash: not said)
    con = store.connect(target, read_only=True)
    try:
        reports = [stored_report(con, shard.ingest_id, shard.url) for shard in shards]
    finally:
        con.close()
    out = []
    for shard, report in zip(shards, reports, strict=True):
        if report is None:
            raise StoreError(f"{target}: the store of {shard.name} holds no finished ingest")
        report.detail = ""
        out.append(report)
    return out


def shard_keys(
    con: duckdb.DuckDBPyConnection, filters: list[Filter], task_key: str | None
) -> tuple[set[int], set[int]]:
    """Step: hashes of the store's run ids and of its nominal tasks (building
    ``tm_calls``): shards that share one must be mined as one store."""
    nominal(con, filters, task_key)
    runs = {int(h) for (h,) in con.execute("SELECT hash(run_id) FROM runs").fetchall()}
    tasks = {int(h) for (h,) in con.execute("SELECT DISTINCT hash(task) FROM tm_calls")
             .fetchall()}  # fmt: skip
    return runs, tasks


def merge(path: str, members: list[str]) -> None:
    """Write at ``path`` one store holding the stores ``members`` (in ingest order) as one
    ingest of their files would: rows appended, a run read from two files keeping its
    fields and gaining those it lacked, and the calls of runs that order by time ordered
    again over both files."""
    target = Path(path)
    if target.exists():
        return
    building = target.with_name(f"{target.name}.{uuid.uuid4().hex}{_BUILDING}")
    con = store.connect(building)
    try:
        columns = ", ".join(store.RUN_COLUMNS)
        keep = ", ".join(f"{c} = coalesce(runs.{c}, EXCLUDED.{c})" for c in store.RUN_COLUMNS
                         if c not in ("run_id", "ingest_id"))  # fmt: skip
        for number, member in enumerate(members):
            con.execute(f"ATTACH '{_sql_text(member)}' AS m{number} (READ_ONLY)")
            for table in ("ingests", "calls", "json_values", "quarantine"):
                con.execute(f"INSERT INTO {table} SELECT * FROM m{number}.{table}")
            con.execute(
                f"INSERT INTO runs ({columns}) SELECT {columns} FROM m{number}.runs "
                f"ORDER BY ingest_id, run_id ON CONFLICT (run_id) DO UPDATE SET {keep}"
            )
            con.execute(f"DETACH m{number}")
        rows = con.execute("SELECT ingest_id, source_format FROM ingests ORDER BY 1").fetchall()
        for ingest_id, name in rows:
            reader = READERS.get(name)
            if reader is not None and reader.orders_by_time:
                con.execute(store.resequence_sql(), [ingest_id])
        con.execute("CHECKPOINT")
    finally:
        con.close()
    os.replace(building, target)


def _sql_text(text: str) -> str:
    return text.replace("'", "''")


def run_step(path: str, setup: Setup, step: Callable[..., Any], args: tuple, config: Config) -> Any:
    """Run ``step(con, *args)`` on the store at ``path``, prepared with ``setup``; DuckDB
    running out of memory is said in one line (the engine says which shards')."""
    con = store.connect(path, memory_limit=config.memory)
    try:
        if config.threads:
            con.execute(f"SET threads = {int(config.threads)}")
        prepare(con, setup)
        return step(con, *args)
    except duckdb.Error as exc:
        if not store.ran_out_of_memory(exc):
            raise
        raise store.out_of_memory(f"mining ({step.__name__})", "", config.memory) from None
    finally:
        con.close()
