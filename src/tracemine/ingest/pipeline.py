"""``ingest``: files in, DuckDB store out. A file is stored whole or not at all (its rows
count only once its ``ingests`` row is committed; an interrupted file's rows are removed);
every unit read is either stored or quarantined with its reason.

This module runs an ingest (files, or one shard of a corpus) file by file; one file is
:mod:`tracemine.ingest.file`, its batches :mod:`tracemine.ingest.writer` and its runs
:mod:`tracemine.ingest.runs`; reading a file into memory instead is
:mod:`tracemine.ingest.memory`. The names callers import from here stay here."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from tracemine.errors import InputError, UnknownFormatError
from tracemine.ingest import store
from tracemine.ingest.detect import detect_format, reader_for
from tracemine.ingest.errors import error_rule
from tracemine.ingest.file import ingest_file
from tracemine.ingest.limits import DEFAULT, Limits
from tracemine.ingest.memory import Traces, read_traces
from tracemine.ingest.report import FileReport, IngestReport, ProgressCallback
from tracemine.ingest.taskkey import TaskKey, store_runs, suggest
from tracemine.ingest.writer import FLATTEN_CALLS
from tracemine.model.result import ErrorRule

__all__ = [
    "FLATTEN_CALLS",
    "INGEST_MEMORY_LIMIT",
    "TRACE_SUFFIXES",
    "FileReport",
    "IngestReport",
    "ProgressCallback",
    "Traces",
    "expand_paths",
    "ingest",
    "ingest_shard",
    "read_traces",
    "stored_report",
]

INGEST_MEMORY_LIMIT = "512MB"
CHECKPOINT_EVERY = "1GB"
TRACE_SUFFIXES = (".jsonl", ".json", ".ndjson", ".gz", ".parquet")


def expand_paths(paths: Iterable[str | Path]) -> list[tuple[Path, bool]]:
    """Files named, and trace files inside folders named, each with whether it was found in
    a folder (rather than named); a missing path is an error."""
    found: list[tuple[Path, bool]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            inside = sorted(
                p for p in path.rglob("*") if p.is_file() and p.name.endswith(TRACE_SUFFIXES)
            )
            if not inside:
                raise InputError(
                    f"{path}: folder holds no trace files ({', '.join(TRACE_SUFFIXES)})"
                )
            found.extend((p, True) for p in inside)
        elif path.is_file():
            found.append((path, False))
        else:
            raise InputError(f"{path}: no such file or folder")
    return found


def ingest(
    paths: Sequence[str | Path] | str | Path,
    db: str | Path,
    *,
    format: str | None = None,
    task_key: str | None = None,
    replace: bool = False,
    validate: bool = False,
    progress: ProgressCallback | None = None,
    error_pattern: str | None = None,
    limits: Limits | None = None,
) -> IngestReport:
    """Read trace files into the DuckDB store at ``db``.

    ``format`` forces a reader (detected per file otherwise); ``task_key`` derives task
    ids (a field, a metadata key, or ``regex:PATTERN`` over the run id); ``replace``
    re-reads files already ingested; ``validate`` checks every record against the
    pydantic model (slower; for tests and new readers); ``error_pattern`` marks text
    results it matches as tool errors, beside the default rule
    (:class:`~tracemine.model.result.ErrorRule`). ``limits`` bounds what one
    record may cost (:class:`~tracemine.ingest.limits.Limits`; past a limit the record is
    quarantined). One ingest at a time writes to a store: another, in this process or
    another, fails at once with :class:`~tracemine.errors.StoreError`.

    >>> report = ingest(["traces.jsonl"], "traces.duckdb")  # doctest: +SKIP
    >>> report.total("calls")  # doctest: +SKIP
    """
    if isinstance(paths, str | Path):
        paths = [paths]
    files = expand_paths(paths)
    if format is not None:
        reader_for(format)  # fail before touching the store
    key = TaskKey.parse(task_key) if task_key else None
    errors = error_rule(error_pattern)
    # every file's reader is known before the store is touched: a file no reader
    # recognises is a mistake to fix, not something to discover halfway through a batch
    # (files found inside a folder that no reader recognises — a schema or a README.json
    # beside the traces — are reported as skipped instead)
    plan: list[tuple[Path, str | None]] = []
    for path, in_folder in files:
        try:
            plan.append((path, format or detect_format(path)))
        except UnknownFormatError:
            if not in_folder:
                raise
            plan.append((path, None))
    with store.writing(db):
        return _ingest_files(plan, db, key, replace, validate, progress, limits or DEFAULT,
                             forced=format is not None, errors=errors)  # fmt: skip


def _ingest_files(
    plan: list[tuple[Path, str | None]], db: str | Path, key: TaskKey | None, replace: bool,
    validate: bool, progress: ProgressCallback | None, limits: Limits, *, forced: bool,
    errors: ErrorRule,
) -> IngestReport:  # fmt: skip
    # ingest streams: DuckDB spills what does not fit, so memory stays flat with file size
    con = store.connect(db, memory_limit=INGEST_MEMORY_LIMIT)
    # batches are committed one by one; checkpointing after every 16 MB of log (the
    # default) rewrote partly filled row groups again and again and left the store a third
    # larger (776 MB against 582 MB at a million calls, same time and memory)
    con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_EVERY}'")
    reports = []
    try:
        for path, name in plan:
            if name is None:
                detail = "no reader recognises it (not a trace file?)"
                skipped = FileReport(source_file=path.as_posix(), outcome="skipped", detail=detail)
                reports.append(skipped)
                continue
            try:
                reports.append(ingest_file(con, path, name, key, replace, validate, progress,
                                            forced=forced, errors=errors,
                                            limits=limits))  # fmt: skip
            except duckdb.Error as exc:  # the file's rows are removed: say why
                if not store.ran_out_of_memory(exc):
                    raise
                raise store.out_of_memory(
                    f"ingesting {path.as_posix()}", "", INGEST_MEMORY_LIMIT
                ) from None
        suggestions = _task_key_suggestions(con) if key is None else []
    finally:
        con.close()
    return IngestReport(db=str(db), files=reports, task_key_suggestions=suggestions)


def _task_key_suggestions(con: duckdb.DuckDBPyConnection) -> list[str]:
    """What ``mine --task-key`` could be, when some runs of the store have no task id."""
    row = store.fetch_one(con, "SELECT count(*) FILTER (task_id IS NULL) FROM runs")
    if not row or not row[0]:
        return []
    return [str(found) for found in suggest(store_runs(con))]


@dataclass(frozen=True)
class ShardPiece:
    """One shard to read into a store: ``path`` holds its bytes (a file, or a byte range
    of one cut at line ends), stored as the file ``source_file`` from line ``first_line``
    on, under ``ingest_id`` (its place among the corpus' files)."""

    path: Path
    ingest_id: int
    source_file: str
    format: str
    first_line: int = 1


def ingest_shard(
    path: str | Path,
    db: str | Path,
    *,
    ingest_id: int,
    source_file: str,
    format: str,
    first_line: int = 1,
    threads: int | None = None,
) -> FileReport:
    """Read one shard of a corpus into a store (:func:`ingest_shards`)."""
    piece = ShardPiece(Path(path), ingest_id, source_file, format, first_line)
    return ingest_shards([piece], db, threads=threads)[0]


def ingest_shards(
    pieces: Iterable[ShardPiece], db: str | Path, *, threads: int | None = None
) -> list[FileReport]:
    """Read shards of a corpus, in order, into the store at ``db`` over one connection,
    each under its ingest id, so that its calls get the keys one store of the whole
    corpus would give them (:data:`tracemine.ingest.store.KEY_BITS`). A shard the store
    already holds is left as it is, and its report is given again. ``pieces`` may be a
    generator: each is taken once the one before is stored. ``threads`` caps DuckDB's
    threads (workers that share a machine share its cores)."""
    with store.writing(db):
        con = store.connect(db, memory_limit=INGEST_MEMORY_LIMIT)
        try:
            con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_EVERY}'")
            if threads:
                con.execute(f"SET threads = {int(threads)}")
            return [_ingest_shard(con, piece) for piece in pieces]
        finally:
            con.close()


def _ingest_shard(con: Any, piece: ShardPiece) -> FileReport:
    found = stored_report(con, piece.ingest_id, piece.source_file)
    if found is not None:
        found.outcome, found.detail = "skipped", "already read into this shard's store"
        return found
    try:
        return ingest_file(con, piece.path, piece.format, None, False, False, None,
                           ingest_id=piece.ingest_id, source_file=piece.source_file,
                           first_line=piece.first_line)  # fmt: skip
    except duckdb.Error as exc:
        if not store.ran_out_of_memory(exc):
            raise
        raise store.out_of_memory(
            f"ingesting {piece.source_file}", "", INGEST_MEMORY_LIMIT
        ) from None


def stored_report(con: Any, ingest_id: int, source_file: str) -> FileReport | None:
    """The report of the file ingested as ``ingest_id``, from what the store keeps of it
    (``detail`` holds its content hash); None if there is none."""
    stored = store.fetch_one(
        con, "SELECT source_format, units_read, units_stored, units_quarantined, "
        "items_quarantined, runs_seen, calls_stored, calls_missing_result, duration_s, "
        "(SELECT count(*) FROM runs WHERE task_id IS NULL AND ingest_id = $1), file_hash "
        "FROM ingests WHERE ingest_id = $1",
        [ingest_id],
    )  # fmt: skip
    if stored is None:
        return None
    names = ("source_format", "units_read", "units_stored", "units_quarantined",
             "items_quarantined", "runs", "calls", "calls_missing_result", "seconds",
             "runs_without_task")  # fmt: skip
    return FileReport(source_file=source_file, outcome="ingested", detail=stored[-1],
                      **dict(zip(names, stored[:-1], strict=True)))  # fmt: skip
