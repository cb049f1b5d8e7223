"""One file into the store, whole or not at all: read by a
:class:`~tracemine.ingest.writer.FileWriter`, then its runs and its ``ingests`` row in one
last transaction; what was written of a file that failed is removed."""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from tracemine import _gc
from tracemine.errors import InputError, UnknownFormatError
from tracemine.ingest import store
from tracemine.ingest.detect import detect_format, reader_for
from tracemine.ingest.limits import DEFAULT, Limits
from tracemine.ingest.readers.base import Reader
from tracemine.ingest.report import FileReport, ProgressCallback
from tracemine.ingest.source import file_hash
from tracemine.ingest.taskkey import TaskKey
from tracemine.ingest.writer import FileWriter
from tracemine.model.result import DEFAULT_RULE, ErrorRule


def ingest_file(
    con: Any,
    path: Path,
    format_name: str,
    key: TaskKey | None,
    replace: bool,
    validate: bool,
    progress: ProgressCallback | None,
    *,
    ingest_id: int | None = None,
    source_file: str | None = None,
    first_line: int = 1,
    forced: bool = False,
    errors: ErrorRule = DEFAULT_RULE,
    limits: Limits = DEFAULT,
) -> FileReport:
    source_file = source_file or path.as_posix()
    digest, size = file_hash(path)
    reader_cls = reader_for(format_name)
    # a file is the same file only at the same path: a copy elsewhere (the second trial's
    # log, byte for byte the first's) is a file of its own, with runs of its own
    same_content = store.ingests_of(con, digest)
    earlier = next((row for row in same_content if _same_path(row[1], source_file, path)), None)
    twin = next((row[1] for row in same_content if row is not earlier), None)
    # an earlier reading that stored no calls under another reader (a wrong --format) or
    # an older version of this one did not ingest the file: it is read again
    retry = (
        earlier is not None
        and not earlier[4]
        and ((earlier[2], earlier[3]) != (format_name, reader_cls.version))
    )
    if earlier is not None and not replace and not retry:
        return FileReport(
            source_file=source_file,
            outcome="skipped",
            detail="already ingested; --replace re-reads it",
        )
    existing = earlier[0] if earlier is not None else None
    name = format_name
    reader = reader_cls(source_file)
    reader.task_key = key
    started = time.perf_counter()
    writer = FileWriter(con, reader, key, validate, ingest_id, errors, limits)
    try:
        # calls and their values are committed batch by batch, with this file's ingest_id;
        # the file counts as stored only once its ``ingests`` row is committed, with its
        # runs, in the last transaction. Until then its rows are unfinished: removed here
        # on any error, and by ``store.connect`` if the process died.
        with _gc.paused():
            report = writer.run(path, size, progress, first_line)
        if forced and report.units_read and not report.calls:
            refused = _forced_in_vain(path, source_file, name, report)
            if refused:
                raise InputError(refused)
        with store.transaction(con):
            if existing is not None:
                store.delete_ingest(con, existing, successor=writer.ingest_id)
            apart = writer.keep_runs_apart(digest)
            writer.write_runs()
            if reader.ids_repeat_across_units:
                con.execute(store.flag_repeated_ids_sql(), [writer.ingest_id])
            if reader.orders_by_time:
                con.execute(store.resequence_sql(), [writer.ingest_id])
            con.execute(
                "INSERT INTO ingests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    writer.ingest_id, digest, source_file, name, reader.version,
                    key.spec if key else None, size, report.units_read, report.units_stored,
                    report.units_quarantined, report.items_quarantined, report.runs,
                    report.calls, report.calls_missing_result,
                    datetime.now(UTC).replace(tzinfo=None), time.perf_counter() - started,
                ],
            )  # fmt: skip
    except BaseException as exc:
        writer.abandon()
        try:
            store.remove_unfinished(con, writer.ingest_id)
        except duckdb.Error:
            # a fatal error (a commit out of memory) leaves the database unusable until it
            # is opened again, and opening removes the unfinished rows: the first error is
            # the one to say
            if not isinstance(exc, duckdb.Error):
                raise
        raise
    report.outcome = "replaced" if existing is not None else "ingested"
    report.seconds = round(time.perf_counter() - started, 3)
    notes = []
    if retry and earlier is not None and not replace:
        notes.append(f"read again: its earlier reading as {earlier[2]} stored no calls")
    if twin is not None:
        notes.append(f"same content as {twin}, read as a file of its own")
    if apart:
        ids = "run id" if apart == 1 else "run ids"
        notes.append(f"{apart} {ids} that another file's runs have (made from the file's name, "
                     f"or a copy's) stored as <id>@{source_file}")  # fmt: skip
    if report.units_read and not report.calls:
        notes.append(no_calls_warning(reader_cls, report.units_read))
    report.detail = "; ".join(notes)
    return report


def _same_path(stored: str, source_file: str, path: Path) -> bool:
    """Whether a file recorded as ``stored`` is the one at ``path`` (named the same, or
    the same file on disk named another way: ``./a.jsonl``, an absolute path)."""
    if stored == source_file:
        return True
    try:
        return os.path.samefile(stored, path)
    except (OSError, ValueError):
        return False


NO_CALLS = "found no tool calls"


def no_calls_warning(reader: type[Reader], records: int) -> str:
    """What a file of ``records`` records and no calls is told: which reader ran and
    what it looks for."""
    looks_for = getattr(reader, "looks_for", "") or _summary(reader)
    counted = "1 record" if records == 1 else f"{records} records"
    return f"the {reader.name} reader {NO_CALLS} in {counted}; it reads {looks_for}"


def _summary(reader: type[Reader]) -> str:
    """The first line of a reader module's docstring (what the format is)."""
    doc = (sys.modules[reader.__module__].__doc__ or reader.name).strip().splitlines()[0]
    return doc.rstrip(":.").strip()


def _forced_in_vain(path: Path, source_file: str, name: str, report: FileReport) -> str:
    """Why a file read under a forced reader that found no calls in it is refused, when
    another reader would read it; "" when none would (what the forced one made of it is
    kept, quarantined with its reasons) or it is the one detected (the file has no calls)."""
    try:
        detected = detect_format(path)
    except UnknownFormatError:
        return ""
    if detected == name:
        return ""
    records = "record" if report.units_read == 1 else "records"
    return (
        f"{source_file}: --format {name} found no tool calls in its {report.units_read} "
        f"{records} ({report.units_quarantined} quarantined); it looks like {detected}: run "
        f"without --format, or with --format {detected}. Nothing of it was stored"
    )
