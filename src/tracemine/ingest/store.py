"""The DuckDB store: schema (DDL) and the writes ingest makes.

Tables
  ingests      one row per file read: content hash, format, counts, time
  runs         one row per run (conversation, trace, session)
  calls        one row per tool call (the normalized record, grouping fields in ``runs``)
  json_values  one row per leaf and per array/object of arguments and results
               (``values`` is a reserved word in SQL, hence the name)
  quarantine   what could not be stored, with file, line, pointer and reason
View
  call_records calls joined with their run: the full normalized record
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import duckdb

from tracemine.errors import MemoryLimitError, StoreError

SCHEMA_VERSION = "1"

DDL = """
CREATE TABLE IF NOT EXISTS tracemine_meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS ingests (
    ingest_id INTEGER PRIMARY KEY,
    file_hash VARCHAR NOT NULL,
    source_file VARCHAR NOT NULL,
    source_format VARCHAR NOT NULL,
    adapter_version VARCHAR,
    task_key VARCHAR,
    bytes BIGINT,
    units_read BIGINT,
    units_stored BIGINT,
    units_quarantined BIGINT,
    items_quarantined BIGINT,
    runs_seen BIGINT,
    calls_stored BIGINT,
    calls_missing_result BIGINT,
    started_at TIMESTAMP,
    duration_s DOUBLE
);
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY,
    task_id VARCHAR,
    task_id_source VARCHAR,
    trial INTEGER,
    session_id VARCHAR,
    run_outcome VARCHAR,
    reward DOUBLE,
    family VARCHAR,
    source_format VARCHAR,
    source_file VARCHAR,
    ingest_id INTEGER,
    metadata JSON
);
CREATE TABLE IF NOT EXISTS calls (
    call_key BIGINT PRIMARY KEY,
    ingest_id INTEGER NOT NULL,
    run_id VARCHAR NOT NULL,
    source_format VARCHAR,
    source_file VARCHAR,
    source_line BIGINT,
    source_pointer VARCHAR,
    adapter_version VARCHAR,
    seq INTEGER,
    turn INTEGER,
    parallel_index INTEGER,
    call_id VARCHAR,
    result_call_id VARCHAR,
    id_pairing VARCHAR,
    tool VARCHAR NOT NULL,
    server VARCHAR,
    schema_ref VARCHAR,
    arguments_raw VARCHAR,
    arguments JSON,
    arguments_error VARCHAR,
    result JSON,
    result_text VARCHAR,
    result_raw VARCHAR,
    result_truncated BOOLEAN,
    result_redacted BOOLEAN,
    status VARCHAR,
    error_type VARCHAR,
    error_message VARCHAR,
    started_at TIMESTAMP,
    ended_at TIMESTAMP,
    duration_ms DOUBLE,
    anomalies VARCHAR[]
);
CREATE TABLE IF NOT EXISTS json_values (
    call_key BIGINT NOT NULL,
    side VARCHAR NOT NULL,
    path VARCHAR NOT NULL,
    jtype VARCHAR NOT NULL,
    num DOUBLE,
    str VARCHAR,
    bool BOOLEAN,
    len INTEGER,
    idx INTEGER
);
CREATE TABLE IF NOT EXISTS quarantine (
    ingest_id INTEGER,
    source_file VARCHAR,
    source_line BIGINT,
    source_pointer VARCHAR,
    level VARCHAR,
    reason VARCHAR,
    excerpt VARCHAR
);
CREATE OR REPLACE VIEW call_records AS
SELECT c.* EXCLUDE (ingest_id),
       r.task_id, r.task_id_source, r.trial, r.session_id, r.run_outcome
FROM calls c LEFT JOIN runs r USING (run_id);
"""

CALL_COLUMNS = (
    "call_key", "ingest_id", "run_id", "source_format", "source_file", "source_line",
    "source_pointer", "adapter_version", "seq", "turn", "parallel_index", "call_id",
    "result_call_id", "id_pairing", "tool", "server", "schema_ref", "arguments_raw",
    "arguments", "arguments_error", "result", "result_text", "result_raw", "result_truncated",
    "result_redacted", "status", "error_type", "error_message", "started_at", "ended_at",
    "duration_ms", "anomalies",
)  # fmt: skip
RUN_COLUMNS = (
    "run_id", "task_id", "task_id_source", "trial", "session_id", "run_outcome", "reward",
    "family", "source_format", "source_file", "ingest_id", "metadata",
)  # fmt: skip
VALUE_COLUMNS = ("call_key", "side", "path", "jtype", "num", "str", "bool", "len", "idx")
QUARANTINE_COLUMNS = (
    "ingest_id", "source_file", "source_line", "source_pointer", "level", "reason", "excerpt",
)  # fmt: skip


def connect(
    db: str | Path, *, read_only: bool = False, memory_limit: str | None = None
) -> duckdb.DuckDBPyConnection:
    """Open (and, unless read-only, create) a tracemine store. ``memory_limit`` bounds
    DuckDB's buffers (it spills to disk past it); ``TRACEMINE_DUCKDB_MEMORY`` overrides.
    Opening to write also removes what a writer that died spilled beside the store."""
    path = Path(db)
    if read_only and not path.exists():
        raise StoreError(f"{path}: no such database; run `tracemine ingest` first")
    if not _duckdb_or_new(path):
        raise StoreError(f"{path}: not a DuckDB database; name a new file or a tracemine store")
    spill = None if read_only else _spill_folder(path)
    # asked before connecting: once connected, this process holds the file either way
    shared = spill is not None and _open_in_this_process(path)
    try:
        # insertion order is not part of any table's meaning (call_key and seq are), and
        # keeping it makes DuckDB buffer large inserts in memory
        config: dict[str, str | bool | int | float | list[str]] = {
            "preserve_insertion_order": False
        }
        if limit := os.environ.get("TRACEMINE_DUCKDB_MEMORY") or memory_limit:
            config["memory_limit"] = limit
        con = duckdb.connect(str(path), read_only=read_only, config=config)
    except duckdb.Error as exc:
        if held := re.search(r"Conflicting lock is held in .*?\(PID (\d+)\)", str(exc)):
            raise StoreError(_busy(path, f"process {held[1]}")) from None
        raise StoreError(f"{path}: cannot open as a DuckDB database: {exc}") from None
    con.execute("SET enable_progress_bar = false")  # progress is the CLI's to show
    try:
        if spill is not None:
            _remove_stale_spill(con, spill, shared=shared)
        tables = {row[0] for row in con.execute("SHOW TABLES").fetchall()}
        if not read_only:
            if tables and "tracemine_meta" not in tables:
                raise StoreError(f"{path}: a DuckDB database, but not a tracemine store")
            con.execute(DDL)
            con.execute(
                "INSERT INTO tracemine_meta VALUES ('schema_version', ?) ON CONFLICT DO NOTHING",
                [SCHEMA_VERSION],
            )
        elif "tracemine_meta" not in tables:
            raise StoreError(f"{path}: not a tracemine store")
        row = fetch_one(con, "SELECT value FROM tracemine_meta WHERE key = 'schema_version'")
        version = row[0] if row else None
        if version != SCHEMA_VERSION:
            raise StoreError(
                f"{path}: store schema version {version!r}, this tracemine reads "
                f"{SCHEMA_VERSION!r}; re-ingest into a new database"
            )
        unfinished = fetch_one(con, _UNFINISHED_SQL)
        if unfinished and unfinished[0]:
            if not read_only:
                remove_unfinished(con)
            else:  # clean up through a writing connection, then read
                con.close()
                connect(path, memory_limit=memory_limit).close()
                return connect(path, read_only=True, memory_limit=memory_limit)
    except duckdb.OutOfMemoryException:
        con.close()
        raise out_of_memory(f"opening {path}", "", memory_limit) from None
    except BaseException:
        con.close()
        raise
    return con


# DuckDB spills to ``<db>.tmp`` beside a file database (its default temp_directory) and
# removes what it spilled when it closes, or once it spills there again; a writer killed
# mid-ingest leaves hundreds of MB behind, for good when the next ingests fit in memory.
# A connection that may write holds DuckDB's exclusive lock on the file, so no other
# process has the store open, readers included: what the folder holds is a dead process's,
# or this process's when it already had the store open (connections of one process share
# one database instance, spill folder and all). DuckDB 2 names its files by the process
# that made them, ``duckdb_temp_<pid>_<n>_owner`` and ``duckdb_temp_<pid>_<n>_storage_*.tmp``;
# earlier versions ``duckdb_temp_storage*.tmp`` and ``duckdb_temp_block-*.block``. Nothing
# else in the folder is touched. (``duckdb_temporary_files()`` cannot tell live from stale:
# it lists every ``.block`` file it finds in the folder.)
_SPILLED = re.compile(
    r"duckdb_temp_(?:(\d+)_\d+_)?(?:owner|storage[\w-]*\.tmp|block-[\w-]+\.block)"
)


def _spill_folder(path: Path) -> Path | None:
    """DuckDB's temp folder for the database file at ``path``, when it is there."""
    folder = path.with_name(path.name + ".tmp")
    return folder if folder.is_dir() else None


def _open_in_this_process(path: Path) -> bool:
    """Whether this process holds the file at ``path`` open already (a DuckDB connection
    to it, which a new connection would share, spill folder and all); True when that
    cannot be told (no ``/proc/self/fd`` or ``/dev/fd``)."""
    try:
        target = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            handles = os.listdir(listing)
        except OSError:
            continue
        for name in handles:
            try:
                held = os.fstat(int(name))
            except (OSError, ValueError):  # the listing's own handle, closed since
                continue
            if (held.st_dev, held.st_ino) == (target.st_dev, target.st_ino):
                return True
        return False
    return True


def _remove_stale_spill(con: duckdb.DuckDBPyConnection, folder: Path, *, shared: bool) -> None:
    """Remove the spill files in ``folder``, then the folder if that empties it.
    ``shared``: this process had the store open before ``con``, whose database instance
    may be spilling there, so only files named by another process's id are removed (that
    process no longer has the store open, and died or closed without cleaning up). Best
    effort: a file that cannot be removed is left, and never stops the open."""
    try:
        setting = fetch_one(con, "SELECT current_setting('temp_directory')")
        if not setting or os.path.realpath(str(setting[0])) != os.path.realpath(folder):
            return  # DuckDB spills elsewhere: the folder is not its own
        entries = [e for e in os.scandir(folder) if e.is_file(follow_symlinks=False)]
    except (OSError, duckdb.Error):
        return
    mine = str(os.getpid())
    for entry in entries:
        named = _SPILLED.fullmatch(entry.name)
        if named is None or (shared and named[1] in (None, mine)):
            continue
        with suppress(OSError):
            os.unlink(entry.path)
    with suppress(OSError):  # something is left in it
        folder.rmdir()


# One writer a store. DuckDB locks the file against other processes; the threads of one
# process share one database instance, so two ingests in threads would each take the same
# ingest id and remove each other's rows: each writer holds the store's entry here, and a
# second one fails at once, as it would from another process (waiting could hang a caller
# that already holds a connection of its own).
_WRITERS: dict[str, str] = {}
_WRITERS_GUARD = threading.Lock()


@contextmanager
def writing(db: str | Path) -> Iterator[None]:
    """Hold this process's write lease on the store at ``db`` for the block: an ingest or
    mine in another thread of this process then fails with :class:`StoreError`, as one in
    another process does."""
    path = Path(db)
    key = os.path.realpath(path)
    with _WRITERS_GUARD:
        holder = _WRITERS.get(key)
        if holder is not None:
            raise StoreError(_busy(path, f"thread {holder!r} of this process"))
        _WRITERS[key] = threading.current_thread().name
    try:
        yield
    finally:
        with _WRITERS_GUARD:
            del _WRITERS[key]


def _busy(path: Path, holder: str) -> str:
    return (
        f"{path}: the store is in use by another ingest or mine ({holder}); "
        "one writes to a store at a time: wait for it to finish, or name another --db"
    )


def _duckdb_or_new(path: Path) -> bool:
    """Whether ``path`` is absent, empty or a DuckDB file (its header's magic bytes):
    handed anything else (a trace file named by mistake), DuckDB may still open it."""
    try:
        with path.open("rb") as handle:
            header = handle.read(12)
    except OSError:  # absent (DuckDB creates it), a folder or unreadable (DuckDB says why)
        return True
    return not header or header[8:12] == b"DUCK"


# An ingest commits a file's calls batch by batch (one transaction for a whole large file
# would hold its rows in memory) and records the file in ``ingests`` last, in the
# transaction that also writes its runs. Rows whose ``ingest_id`` has no ``ingests`` row
# belong to a file whose ingest did not finish; they are removed before anyone reads.
_UNFINISHED = "ingest_id NOT IN (SELECT ingest_id FROM ingests)"
_UNFINISHED_SQL = f"""
SELECT (SELECT count(*) FROM calls WHERE {_UNFINISHED})
     + (SELECT count(*) FROM quarantine WHERE {_UNFINISHED})
"""


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The block as one transaction: committed when it ends, rolled back (and the error
    raised again) when it raises."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def remove_unfinished(con: duckdb.DuckDBPyConnection, ingest_id: int | None = None) -> None:
    """Delete the rows of unfinished ingests (of ``ingest_id`` only, when given)."""
    which = "ingest_id = $1" if ingest_id is not None else _UNFINISHED
    params = [ingest_id] if ingest_id is not None else []
    with transaction(con):
        con.execute(
            "DELETE FROM json_values WHERE call_key >= "
            f"(SELECT coalesce(min(call_key), 0) FROM calls WHERE {which}) "
            f"AND call_key IN (SELECT call_key FROM calls WHERE {which})",
            params,
        )
        con.execute(f"DELETE FROM calls WHERE {which}", params)
        con.execute(f"DELETE FROM quarantine WHERE {which}", params)


MEMORY_SETTING = "TRACEMINE_DUCKDB_MEMORY"
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}  # fmt: skip


_MEMORY_WORDS = ("out of memory", "failed to pin block", "could not allocate")


def ran_out_of_memory(exc: BaseException) -> bool:
    """Whether a DuckDB error means its memory cap was reached. DuckDB says so with an
    ``OutOfMemoryException``, or, when the cap is reached while a transaction commits,
    with a transaction or fatal error saying it could not pin a block."""
    if isinstance(exc, duckdb.OutOfMemoryException):
        return True
    return isinstance(exc, duckdb.Error) and any(w in str(exc).lower() for w in _MEMORY_WORDS)


def parse_size(text: str | None) -> int | None:
    """Bytes of a size such as ``1GB``, ``512MiB`` or ``2e9``; None if it is not one."""
    found = re.fullmatch(r"\s*([0-9.eE+]+)\s*([a-zA-Z]*)\s*", text or "")
    if not found:
        return None
    try:
        return int(float(found[1]) * _UNITS[found[2].lower() or "b"])
    except (KeyError, ValueError):
        return None


def out_of_memory(job: str, step: str, default: str | None) -> MemoryLimitError:
    """The one-line error for DuckDB running out of its memory cap while ``job`` was
    ``step``: what ran out, the cap in force, and what to set it to. A statement's need
    is not known before it runs, so the advice is a doubling of the cap (the smallest
    that can differ), and ``at least``: larger inputs may need more."""
    limit = os.environ.get(MEMORY_SETTING) or default
    where = f"{job} ran out of memory" + (f" {step}" if step else "")
    size = parse_size(limit) or 0
    if size <= 0:
        return MemoryLimitError(
            f"{where}; set {MEMORY_SETTING} to a size DuckDB may use, such as 2GB, and run again"
        )
    need = 2 * size
    advice = f"{need / 10**9:.3g}GB" if need >= 10**9 else f"{math.ceil(need / 10**6)}MB"
    return MemoryLimitError(
        f"{where}: DuckDB may use {limit} here ({MEMORY_SETTING}); "
        f"set {MEMORY_SETTING}={advice} or more and run again"
    )


def sql_string(text: str) -> str:
    """``text`` as an SQL string literal (quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


def fetch_one(
    con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None
) -> tuple[Any, ...] | None:
    """First row or None. (``fetchone`` would leave the result open, and DuckDB refuses
    other work on a connection with an unfinished result.)"""
    rows = con.execute(sql, params or []).fetchall()
    return rows[0] if rows else None


def fetch_arrow(con: duckdb.DuckDBPyConnection, sql: str) -> Any:
    """The whole result of ``sql`` as a pyarrow Table, through the relation API (a DB-API
    result would be copied once more)."""
    relation = con.sql(sql)
    fetch = getattr(relation, "to_arrow_table", None) or getattr(relation, "arrow")  # noqa: B009
    return fetch()


def ingests_of(con: duckdb.DuckDBPyConnection, file_hash: str) -> list[tuple[Any, ...]]:
    """``(ingest_id, source_file, source_format, adapter_version, calls_stored)`` of every
    file ingested with this content hash, oldest first."""
    return con.execute(
        "SELECT ingest_id, source_file, source_format, adapter_version, calls_stored "
        "FROM ingests WHERE file_hash = ? ORDER BY ingest_id",
        [file_hash],
    ).fetchall()


def colliding_runs_sql(table: str) -> str:
    """SQL (parameters: source file, its name, content hash) for the run ids of ``table``
    (one column, ``run_id``: a file's runs) that another file's runs already use by
    accident: ids a reader made from the file's name (``name``, ``name:…``, ``name#…``),
    which files of one name in different folders share, and any id of a file with the
    same content (a copy holds the very ids). Other shared ids are one run told of in two
    files (spans of one trace in two exports) and stay shared."""
    return f"""
    SELECT f.run_id FROM {table} f JOIN runs r USING (run_id)
    LEFT JOIN ingests i ON i.ingest_id = r.ingest_id
    WHERE r.source_file <> $1
      AND (i.file_hash = $3 OR f.run_id = $2 OR starts_with(f.run_id, $2 || ':')
           OR starts_with(f.run_id, $2 || '#'))
    """


def delete_ingest(
    con: duckdb.DuckDBPyConnection, ingest_id: int, successor: int | None = None
) -> None:
    """Remove everything one file brought in (for ``--replace``). Runs that the
    ``successor`` ingest (the file read again) still has calls in are kept and pass to it."""
    con.execute(
        "DELETE FROM json_values WHERE call_key IN "
        "(SELECT call_key FROM calls WHERE ingest_id = ?)",
        [ingest_id],
    )
    con.execute("DELETE FROM calls WHERE ingest_id = ?", [ingest_id])
    con.execute("DELETE FROM quarantine WHERE ingest_id = ?", [ingest_id])
    con.execute(
        "DELETE FROM runs WHERE ingest_id = ? AND run_id NOT IN (SELECT run_id FROM calls)",
        [ingest_id],
    )
    if successor is not None:
        con.execute("UPDATE runs SET ingest_id = ? WHERE ingest_id = ?", [successor, ingest_id])
    con.execute("DELETE FROM ingests WHERE ingest_id = ?", [ingest_id])


KEY_BITS = 40
"""A file's calls take the keys ``ingest_id << KEY_BITS`` onwards (a trillion calls a
file, eight million files a store). A call's key then depends only on its file's ingest
id and its place in that file, so a file read into a store of its own under the ingest
id it would have had in a larger one (a shard: :mod:`tracemine.engine`) gets the very
keys, and stores of shards hold, table for table, what one store of their files would."""


def first_key(ingest_id: int) -> int:
    """The first ``call_key`` of the file ingested as ``ingest_id``."""
    return ingest_id << KEY_BITS


def next_ids(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """The next free ``ingest_id`` and the first ``call_key`` of its file."""
    ingest_row = fetch_one(con, "SELECT coalesce(max(ingest_id), 0) + 1 FROM ingests")
    assert ingest_row is not None
    ingest_id = int(ingest_row[0])
    # an ingest of a store made before keys followed ingest ids may have used keys past
    # its own id's range (never in practice: that needs 2**40 calls)
    row = fetch_one(con, "SELECT coalesce(max(call_key), 0) + 1 FROM calls")
    return ingest_id, max(first_key(ingest_id), int(row[0]) if row else 0)


def append(con: duckdb.DuckDBPyConnection, table: str, columns: dict[str, list[Any]]) -> None:
    """Append a batch given as column lists (through Arrow: one vectorized insert)."""
    import pyarrow as pa

    batch = pa.table(columns)
    con.register("_tracemine_batch", batch)
    try:
        names = ", ".join(columns)
        con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM _tracemine_batch")
    finally:
        con.unregister("_tracemine_batch")


def upsert_runs(con: duckdb.DuckDBPyConnection, columns: dict[str, list[Any]]) -> None:
    """Insert runs; a run already known (from another file) keeps its fields and gains
    the ones it lacked."""
    import pyarrow as pa

    batch = pa.table(columns)
    con.register("_tracemine_runs", batch)
    try:
        names = ", ".join(RUN_COLUMNS)
        updates = ", ".join(
            f"{name} = coalesce(runs.{name}, EXCLUDED.{name})"
            for name in RUN_COLUMNS
            if name not in ("run_id", "ingest_id")
        )
        con.execute(
            f"INSERT INTO runs ({names}) SELECT {names} FROM _tracemine_runs "
            f"ON CONFLICT (run_id) DO UPDATE SET {updates}"
        )
    finally:
        con.unregister("_tracemine_runs")


MAX_ARRAY_ITEMS = 1000
"""Array elements past this index are not flattened (the array's length still is)."""

_PATH_FROM_FULLKEY = r"""
CASE WHEN contains(t.fullkey, '"') THEN
    regexp_replace(regexp_replace(regexp_replace(substr(t.fullkey, 2),
        '\."([A-Za-z_][A-Za-z0-9_\-]*)"', '.\1', 'g'),
        '\."((?:[^"\\]|\\.)*)"', '["\1"]', 'g'),
        '\[[0-9]+\]', '[*]', 'g')
WHEN contains(t.fullkey, '[') THEN regexp_replace(substr(t.fullkey, 2), '\[[0-9]+\]', '[*]', 'g')
ELSE substr(t.fullkey, 2) END
"""


def flatten_sql(side: str) -> str:
    """SQL (parameters: first and last call_key) that flattens the ``arguments`` or the
    ``result`` of a range of calls into ``json_values``: one row per leaf and per
    array/object, array indices generalised to ``[*]``. DuckDB's ``json_tree`` does the
    walking, vectorized, so ingest never walks values in Python."""
    column = "arguments" if side == "args" else "result"
    return rf"""
    INSERT INTO json_values
    SELECT c.call_key, '{side}',
           '{side}' || {_PATH_FROM_FULLKEY},
           CASE t.type WHEN 'OBJECT' THEN 'object' WHEN 'ARRAY' THEN 'array'
                WHEN 'VARCHAR' THEN 'string' WHEN 'BOOLEAN' THEN 'boolean'
                WHEN 'NULL' THEN 'null' WHEN 'DOUBLE' THEN 'number' ELSE 'integer' END,
           CASE WHEN t.type IN ('UBIGINT', 'BIGINT', 'HUGEINT', 'DOUBLE')
                THEN TRY_CAST(t.atom AS DOUBLE) END,
           CASE WHEN t.type = 'VARCHAR' THEN left(t.value ->> '$', 256) END,
           CASE WHEN t.type = 'BOOLEAN' THEN t.atom = 'true' END,
           CASE t.type WHEN 'ARRAY' THEN json_array_length(t.value)
                WHEN 'OBJECT' THEN len(json_keys(t.value))
                WHEN 'VARCHAR' THEN length(t.value ->> '$') END,
           CASE WHEN contains(t.fullkey, '[') THEN
                TRY_CAST(regexp_extract(t.fullkey, '\[([0-9]+)\][^\[]*$', 1) AS INTEGER) END
    FROM calls c, json_tree(c.{column}) t
    WHERE c.call_key BETWEEN $1 AND $2 AND c.{column} IS NOT NULL
      AND NOT (contains(t.fullkey, '[') AND regexp_matches(t.fullkey, '\[[0-9]{{4,}}\]'))
    """


def flatten(con: duckdb.DuckDBPyConnection, first: int, last: int) -> None:
    """Flatten the arguments and results of calls ``first``..``last`` into
    ``json_values`` and flag the calls whose arrays were too long to flatten whole."""
    span = [first, last]
    con.execute(flatten_sql("args"), span)
    con.execute(flatten_sql("result"), span)
    con.execute(mark_capped_sql(), span)


def mark_capped_sql() -> str:
    """SQL (parameters: first and last call_key) flagging calls with arrays too long to
    flatten whole."""
    return f"""
    UPDATE calls SET anomalies = list_append(anomalies, 'values_capped')
    WHERE call_key IN (
        SELECT DISTINCT call_key FROM json_values
        WHERE call_key BETWEEN $1 AND $2 AND jtype = 'array' AND len > {MAX_ARRAY_ITEMS})
    """


def flag_repeated_ids_sql() -> str:
    """SQL (one parameter: ingest_id) flagging every call of that file whose call id was
    already used by an earlier call of the same run."""
    return """
    UPDATE calls SET anomalies = list_append(anomalies, 'duplicate_call_id')
    WHERE call_key IN (
        SELECT call_key FROM (
            SELECT call_key, row_number() OVER (PARTITION BY run_id, call_id
                                                ORDER BY call_key) AS nth
            FROM calls WHERE ingest_id = $1 AND call_id IS NOT NULL)
        WHERE nth > 1)
    """


def resequence_sql() -> str:
    """SQL (one parameter: ingest_id) that orders the calls of that file's runs by time."""
    return """
    UPDATE calls SET seq = ordered.new_seq
    FROM (
        SELECT call_key,
               (row_number() OVER (PARTITION BY run_id
                    ORDER BY started_at NULLS LAST, source_line, parallel_index, call_key) - 1)
                   AS new_seq
        FROM calls WHERE run_id IN (SELECT run_id FROM calls WHERE ingest_id = $1)
    ) AS ordered
    WHERE calls.call_key = ordered.call_key
    """
