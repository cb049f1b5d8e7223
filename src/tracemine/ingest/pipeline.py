"""``ingest``: files in, DuckDB store out. A file is stored whole or not at all (its rows
count only once its ``ingests`` row is committed; an interrupted file's rows are removed);
every unit read is either stored or quarantined with its reason."""

from __future__ import annotations

import functools
import itertools
import operator
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import orjson
from pydantic import BaseModel, Field

from tracemine import collector
from tracemine.errors import InputError, UnknownFormatError
from tracemine.ingest import store
from tracemine.ingest.detect import detect_format, reader_for
from tracemine.ingest.errors import error_rule
from tracemine.ingest.limits import DEFAULT, MAX_DEPTH, Limits
from tracemine.ingest.readers.base import BadRecord, Reader, Sink, dumps, excerpt, not_numbers
from tracemine.ingest.source import BadUnit, file_hash, iter_units
from tracemine.ingest.taskkey import TaskKey, store_runs, suggest
from tracemine.model.result import DEFAULT_RULE, ErrorRule
from tracemine.model.trace import CallRecord, RunRecord

BATCH_CALLS = 20_000
BATCH_BYTES = 32_000_000
"""A batch is written at this many calls or this many bytes of their JSON and texts,
whichever comes first: wide results (lists of offers, kilobytes a call) must not pile up
in memory, and the batch is copied once more into Arrow to be written."""
RUNS_IN_MEMORY = 20_000
INGEST_MEMORY_LIMIT = "512MB"
CHECKPOINT_EVERY = "1GB"
# values are flattened by DuckDB, in a thread beside the reader, every this many calls:
# small enough that little is left to flatten when the reader ends, large enough that a
# statement's fixed costs do not count
FLATTEN_CALLS = 20_000
FLATTEN_BYTES = 32_000_000
"""A range is flattened at this many bytes of arguments and results, if it comes before
``FLATTEN_CALLS`` calls: the rows ``json_tree`` makes follow the bytes, not the calls."""
_TEXTS = ("arguments_raw", "result_text", "result_raw")
_PLAIN_CALL_COLUMNS = tuple(
    name
    for name in store.CALL_COLUMNS
    if name not in ("call_key", "ingest_id", "arguments", "result")
)
# a call is kept as one tuple (call_key, arguments, result, *plain fields) until its batch
# is written: one C-level field lookup per call instead of a list append per column
_plain_fields = operator.itemgetter(*_PLAIN_CALL_COLUMNS)
_ROW_COLUMNS = ("call_key", "arguments", "result", *_PLAIN_CALL_COLUMNS)
TRACE_SUFFIXES = (".jsonl", ".json", ".ndjson", ".gz")


class FileReport(BaseModel):
    """What happened to one file."""

    source_file: str
    source_format: str | None = None
    outcome: str  # ingested | skipped | replaced
    detail: str = ""
    units_read: int = 0
    units_stored: int = 0
    units_quarantined: int = 0
    items_quarantined: int = 0
    runs: int = 0
    calls: int = 0
    calls_missing_result: int = 0
    runs_without_task: int = 0
    seconds: float = 0.0


class IngestReport(BaseModel):
    """What an ingest did, file by file. ``units_read == units_stored + units_quarantined``."""

    db: str
    files: list[FileReport]
    task_key_suggestions: list[str] = Field(
        default_factory=list,
        description="when some runs of the store have no task id: the --task-key values "
        "that would give them one, with the tasks each gives",
    )

    def total(self, field: str) -> int:
        return sum(int(getattr(report, field)) for report in self.files)


ProgressCallback = Callable[[str, int, int], None]
"""Called with (file, bytes read, file size)."""


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
                reports.append(_ingest_file(con, path, name, key, replace, validate, progress,
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


def _quarantine_not_numbers(
    sink: Sink, position: int, unit: Any, parsed: list[tuple[str, str]]
) -> None:
    """An item quarantined for each NaN or infinity the unit held (stored as null):
    ``parsed`` from the unit itself, the rest from JSON texts inside it the reader parsed."""
    for pointer, what in parsed + not_numbers():
        sink.quarantine(position, pointer, f"{what} is not a JSON number; stored as null", unit)


def _task_key_suggestions(con: duckdb.DuckDBPyConnection) -> list[str]:
    """What ``mine --task-key`` could be, when some runs of the store have no task id."""
    row = store.fetch_one(con, "SELECT count(*) FILTER (task_id IS NULL) FROM runs")
    if not row or not row[0]:
        return []
    return [str(found) for found in suggest(store_runs(con))]


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
    """Read one shard of a corpus into a store of its own: ``path`` holds the shard (a
    file, or a byte range of one cut at line ends), stored as the file ``source_file``
    from line ``first_line`` on, under ``ingest_id`` (its place among the corpus' files),
    so that its calls get the keys one store of the whole corpus would give them
    (:data:`tracemine.ingest.store.KEY_BITS`). A store already holding it is left as it
    is, and its report is given again. ``threads`` caps DuckDB's threads (workers that
    share a machine share its cores)."""
    with store.writing(db):
        return _ingest_shard(path, db, ingest_id, source_file, format, first_line, threads)


def _ingest_shard(
    path: str | Path, db: str | Path, ingest_id: int, source_file: str, format: str,
    first_line: int, threads: int | None,
) -> FileReport:  # fmt: skip
    con = store.connect(db, memory_limit=INGEST_MEMORY_LIMIT)
    con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_EVERY}'")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    try:
        found = stored_report(con, ingest_id, source_file)
        if found is not None:
            found.outcome, found.detail = "skipped", "already read into this shard's store"
            return found
        try:
            return _ingest_file(con, Path(path), format, None, False, False, None,
                                ingest_id=ingest_id, source_file=source_file,
                                first_line=first_line)  # fmt: skip
        except duckdb.Error as exc:
            if not store.ran_out_of_memory(exc):
                raise
            raise store.out_of_memory(f"ingesting {source_file}", "", INGEST_MEMORY_LIMIT) from None
    finally:
        con.close()


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


def _ingest_file(
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
    writer = _FileWriter(con, reader, key, validate, ingest_id, errors, limits)
    try:
        # calls and their values are committed batch by batch, with this file's ingest_id;
        # the file counts as stored only once its ``ingests`` row is committed, with its
        # runs, in the last transaction. Until then its rows are unfinished: removed here
        # on any error, and by ``store.connect`` if the process died.
        with collector.paused():
            report = writer.run(path, size, progress, first_line)
        if forced and report.units_read and not report.calls:
            refused = _forced_in_vain(path, source_file, name, report)
            if refused:
                raise InputError(refused)
        con.execute("BEGIN TRANSACTION")
        try:
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
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
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


class _Flattener:
    """Flattens committed ranges of calls into ``json_values`` on its own connection, in a
    thread, while the reader goes on: DuckDB works outside the GIL, so parsing and
    flattening overlap on two cores. The queue is short, so the reader waits rather than
    running ahead of what is flattened."""

    def __init__(self, con: Any) -> None:
        self.cursor = con.cursor()
        self.ranges: queue.Queue[tuple[int, int] | None] = queue.Queue(maxsize=2)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._work, name="tracemine-flatten", daemon=True)
        self.thread.start()

    def _work(self) -> None:
        while (span := self.ranges.get()) is not None:
            if self.error is not None:
                continue  # drain: the reader learns of the error on its next submit
            try:
                self.cursor.execute("BEGIN TRANSACTION")
                store.flatten(self.cursor, *span)
                self.cursor.execute("COMMIT")
            except BaseException as exc:  # handed to the reading thread
                self.error = exc
                with suppress(Exception):  # the transaction may not be open
                    self.cursor.execute("ROLLBACK")

    def submit(self, first: int, last: int) -> None:
        self._raise()
        self.ranges.put((first, last))

    def close(self) -> None:
        """Wait for every submitted range; raise what failed."""
        if self.thread.is_alive():
            self.ranges.put(None)
            self.thread.join()
        self.cursor.close()
        self._raise()

    def _raise(self) -> None:
        if self.error is not None:
            raise self.error


class _FileWriter:
    """Reads one file through its reader, commits its calls batch by batch and has them
    flattened; the runs are written by the caller's last transaction."""

    def __init__(
        self, con: Any, reader: Reader, key: TaskKey | None, validate: bool,
        ingest_id: int | None = None, errors: ErrorRule = DEFAULT_RULE,
        limits: Limits = DEFAULT,
    ) -> None:  # fmt: skip
        self.con = con
        self.errors = errors
        self.limits = limits
        # values are written with the configured depth limit (the default one is dumps')
        self.dumps: Callable[[Any], str] = (
            dumps if limits.max_depth == MAX_DEPTH
            else functools.partial(dumps, max_depth=limits.max_depth)
        )  # fmt: skip
        self.reader = reader
        self.key = key
        self.validate = validate
        self.ingest_id, self.next_key = store.next_ids(con)
        if ingest_id is not None:  # a shard: its place among the corpus' files
            self.ingest_id, self.next_key = ingest_id, store.first_key(ingest_id)
        self.call_rows: list[tuple[Any, ...]] = []
        self.first_key = self.next_key
        self.batch_bytes = 0  # JSON and texts of the calls held in ``call_rows``
        self.range_bytes = 0  # arguments and results since the last range flattened
        self.quarantine: dict[str, list[Any]] = {name: [] for name in store.QUARANTINE_COLUMNS}
        self.runs: dict[str, dict[str, Any]] = {}
        self.staged = 0  # runs set aside in the staging table
        self.seq: dict[str, int] = {}
        self.flattener: _Flattener | None = None
        self.report = FileReport(
            source_file=reader.source_file, source_format=reader.name, outcome="ingested"
        )

    def run(
        self, path: Path, size: int, progress: ProgressCallback | None, first_line: int = 1
    ) -> FileReport:
        report = self.report
        on_bytes = (
            (lambda done: progress(self.reader.source_file, done, size)) if progress else None
        )
        read = stored = quarantined = 0  # plain counters: the report is a pydantic model
        feed, reader_name = self.reader.feed, self.reader.name
        sink = Sink(self.errors)  # one for the whole file, emptied after every unit
        not_numbers()  # what detecting the format parsed is not this file's content yet
        units = iter_units(path, on_bytes, self.limits)
        if first_line != 1:  # a byte range of a larger file: its lines are numbered on
            units = ((position + first_line - 1, unit) for position, unit in units)
        for position, unit in units:
            read += 1
            parsed = not_numbers()  # the unit was parsed before it was handed over
            if isinstance(unit, BadUnit):
                self._quarantine(position, None, "unit", unit.reason, excerpt(unit.raw))
                quarantined += 1
                continue
            try:
                feed(unit, position, sink)
            except BadRecord as exc:
                sink.clear()  # what the reader emitted before it gave up goes too
                not_numbers()
                self._quarantine(position, None, "unit", str(exc), excerpt(unit))
                quarantined += 1
                continue
            except Exception as exc:  # a shape the reader did not expect: keep it, say why
                # (RecursionError and MemoryError too: the record is dropped with its stack)
                sink.clear()
                not_numbers()
                reason = f"unreadable {reader_name} record ({type(exc).__name__}: {exc})"
                self._quarantine(position, None, "unit", reason, excerpt(unit))
                quarantined += 1
                continue
            stored += 1
            _quarantine_not_numbers(sink, position, unit, parsed)
            self._absorb(sink)
            sink.clear()
        report.units_read, report.units_stored = read, stored
        report.units_quarantined = quarantined
        self._finish_reader()
        self._flush(final=True)
        if self.flattener is not None:
            self.flattener.close()
            self.flattener = None
        report.calls, report.calls_missing_result = store.fetch_one(
            self.con,
            "SELECT count(*), count(*) FILTER (status = 'missing') FROM calls WHERE ingest_id = ?",
            [self.ingest_id],
        ) or (0, 0)
        if progress:
            progress(self.reader.source_file, size, size)
        return report

    def _finish_reader(self) -> None:
        """What the reader kept for the end of the file, absorbed; if the reader fails on
        it, what it held is quarantined as one item, with why."""
        sink = Sink(self.errors)
        try:
            self.reader.finish(sink)
        except Exception as exc:
            not_numbers()
            reason = f"unreadable {self.reader.name} records at the end of the file " \
                f"({type(exc).__name__}: {exc}); what they held is not stored"  # fmt: skip
            self._quarantine(None, None, "item", reason, "")
            self.report.items_quarantined += 1
            return
        self._absorb(sink)

    def _metadata_json(self, run: dict[str, Any]) -> str:
        """A run's metadata as JSON; metadata no JSON writer takes (nested past
        ``--max-depth``) is stored as ``{}`` and quarantined as an item, with why."""
        try:
            return self.dumps(run.get("metadata") or {})
        except ValueError as exc:
            reason = f"run {run['run_id']!r}: metadata could not be stored ({exc}); stored as {{}}"
            self._quarantine(None, "/metadata", "item", reason, excerpt(run.get("metadata")))
            self.report.items_quarantined += 1
            run["metadata"] = {}
            return "{}"

    def abandon(self) -> None:
        """Stop flattening after an error (what was written is removed by the caller)."""
        if self.flattener is not None:
            flattener, self.flattener = self.flattener, None
            with suppress(BaseException):  # the first error is the one to report
                flattener.close()

    # -- collecting --------------------------------------------------------------------
    def _quarantine(
        self, line: int | None, pointer: str | None, level: str, reason: str, raw: str
    ) -> None:
        q = self.quarantine
        q["ingest_id"].append(self.ingest_id)
        q["source_file"].append(self.reader.source_file)
        q["source_line"].append(line)
        q["source_pointer"].append(pointer)
        q["level"].append(level)
        q["reason"].append(reason)
        q["excerpt"].append(raw)

    def _absorb(self, sink: Sink) -> None:
        for line, pointer, reason, raw in sink.quarantined:
            self._quarantine(line, pointer, "item", reason, raw)
            self.report.items_quarantined += 1
        for run in sink.runs:
            self._merge_run(run)
        for record in sink.calls:
            try:
                self._add_call(record)
            except ValueError as exc:  # a value no JSON writer takes: kept, with why
                reason = f"call could not be stored: {exc}"
                raw = record.get("arguments_raw") or record.get("result_text") or record["tool"]
                self._quarantine(record["source_line"], record["source_pointer"], "item",
                                 reason, excerpt(raw))  # fmt: skip
                self.report.items_quarantined += 1
        if len(self.call_rows) >= BATCH_CALLS or self.batch_bytes >= BATCH_BYTES:
            self._flush()

    def _merge_run(self, run: dict[str, Any]) -> None:
        known = self.runs.get(run["run_id"])
        if known is None:
            self.runs[run["run_id"]] = dict(run)
            return
        for name, value in run.items():
            if name == "metadata" and value:
                merged = dict(known.get("metadata") or {})
                for meta_key, meta_value in value.items():
                    merged.setdefault(meta_key, meta_value)
                known["metadata"] = merged
            elif known.get(name) is None and value is not None:
                known[name] = value

    def _add_call(self, record: dict[str, Any]) -> None:
        if self.validate:
            CallRecord.model_validate(record)
        arguments = record["arguments"]
        # a JSON null result is a fact ("null"); a missing one is SQL NULL. Written first:
        # a value that cannot be written leaves no trace of the call behind
        to_json = self.dumps
        arguments_json = None if arguments is None else to_json(arguments)
        result_json = None if record["status"] == "missing" else to_json(record["result"])
        run_id = record["run_id"]
        if run_id not in self.runs:
            self._merge_run(
                self.reader.new_run(
                    run_id=run_id,
                    task_id=record.get("task_id"),
                    task_id_source=record.get("task_id_source") or "none",
                    trial=record.get("trial"),
                    session_id=record.get("session_id"),
                    run_outcome=record.get("run_outcome"),
                )
            )
        if record["seq"] is None:
            record["seq"] = self.seq.get(run_id, 0)
        self.seq[run_id] = max(self.seq.get(run_id, 0), record["seq"] + 1)
        key = self.next_key
        self.next_key += 1
        self.call_rows.append((key, arguments_json, result_json, *_plain_fields(record)))
        size = len(arguments_json or "") + len(result_json or "")
        self.range_bytes += size
        self.batch_bytes += size + sum(len(record.get(name) or "") for name in _TEXTS)

    # -- writing -------------------------------------------------------------------------
    def _flush(self, final: bool = False) -> None:
        if rows := self.call_rows:
            self.call_rows, self.batch_bytes = [], 0
            columns = dict(zip(_ROW_COLUMNS, map(list, zip(*rows, strict=True)), strict=True))
            columns["ingest_id"] = [self.ingest_id] * len(rows)
            store.append(self.con, "calls", columns)
        if len(self.runs) >= RUNS_IN_MEMORY:
            self._spill_runs()
        if self.quarantine["reason"]:
            store.append(self.con, "quarantine", self.quarantine)
            self.quarantine = {name: [] for name in store.QUARANTINE_COLUMNS}
        if self.next_key > self.first_key and (
            final
            or self.next_key - self.first_key >= FLATTEN_CALLS
            or self.range_bytes >= FLATTEN_BYTES
        ):
            if final and self.flattener is None:  # a small file: no thread for one range
                store.flatten(self.con, self.first_key, self.next_key - 1)
            else:
                if self.flattener is None:
                    self.flattener = _Flattener(self.con)
                self.flattener.submit(self.first_key, self.next_key - 1)
            self.first_key, self.range_bytes = self.next_key, 0

    # -- runs --------------------------------------------------------------------------
    # Runs are merged in memory (a run's lines may each say something about it) up to
    # RUNS_IN_MEMORY of them; past that they are set aside in a staging table and merged
    # back, run by run and in the order they were read, when the file ends. A file of a
    # million short runs then costs no more memory than one of a thousand.

    def _spill_runs(self) -> None:
        if not self.runs:
            return
        if not self.staged:  # the runs table's columns, and the order runs were read in
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {_STAGE} AS "
                "SELECT * EXCLUDE (ingest_id), 0::BIGINT AS ord FROM runs LIMIT 0"
            )
        cols: dict[str, list[Any]] = {name: [] for name in (*_STAGE_COLUMNS, "ord")}
        for run in self.runs.values():
            for name in _STAGE_COLUMNS:
                value = run.get(name)
                cols[name].append(self._metadata_json(run) if name == "metadata" else value)
            cols["ord"].append(self.staged)
            self.staged += 1
        store.append(self.con, _STAGE, cols)
        self.runs = {}

    def _staged_runs(self) -> Iterator[dict[str, Any]]:
        """The staged runs, each merged from its records in reading order."""
        names = ", ".join(_STAGE_COLUMNS)
        last = ""
        while True:
            rows = self.con.execute(
                f"SELECT {names} FROM {_STAGE} WHERE run_id IN (SELECT DISTINCT run_id "
                f"FROM {_STAGE} WHERE run_id > ? ORDER BY run_id LIMIT {RUNS_IN_MEMORY}) "
                "ORDER BY run_id, ord",
                [last],
            ).fetchall()
            if not rows:
                return
            self.runs = {}
            for row in rows:
                run = dict(zip(_STAGE_COLUMNS, row, strict=True))
                run["metadata"] = orjson.loads(run["metadata"])
                self._merge_run(run)
            last = rows[-1][0]
            yield from self.runs.values()
            self.runs = {}

    def keep_runs_apart(self, digest: str) -> int:
        """Give this file's runs ids of their own where they would merge by accident with
        another file's (:func:`tracemine.ingest.store.colliding_runs_sql`): such a run is
        stored as ``<id>@<source file>``, the id it had in the file kept in its metadata.
        Returns how many were renamed."""
        source_file = self.reader.source_file
        found = store.fetch_one(self.con, "SELECT count(*) FROM runs WHERE source_file <> ?",
                                [source_file])  # fmt: skip
        if not found or not found[0]:
            return 0  # a store of this file alone (the usual first ingest): nothing to do
        import pyarrow as pa

        ids = list(self.runs)
        if self.staged:
            staged = self.con.execute(f"SELECT DISTINCT run_id FROM {_STAGE}").fetchall()
            ids += [row[0] for row in staged]
        self.con.register("_tracemine_file_runs", pa.table({"run_id": pa.array(ids, pa.string())}))
        try:
            name = source_file.rsplit("/", 1)[-1]
            rows = self.con.execute(
                store.colliding_runs_sql("_tracemine_file_runs"), [source_file, name, digest]
            ).fetchall()
        finally:
            self.con.unregister("_tracemine_file_runs")
        renamed = [(row[0], f"{row[0]}@{source_file}") for row in rows]
        if not renamed:
            return 0
        old_ids, new_ids = [old for old, _ in renamed], [new for _, new in renamed]
        self.con.execute(
            "UPDATE calls SET run_id = m.new FROM (SELECT unnest($2) AS old, unnest($3) AS new) m "
            "WHERE calls.ingest_id = $1 AND calls.run_id = m.old",
            [self.ingest_id, old_ids, new_ids],
        )
        for old, new in renamed:
            run = self.runs.pop(old, None)
            if run is not None:
                run["run_id"] = new
                run["metadata"] = {**(run.get("metadata") or {}), "run_id_in_file": old}
                self.runs[new] = run
        if self.staged:
            self.con.execute(
                f"UPDATE {_STAGE} SET run_id = m.new, metadata = json_merge_patch(metadata, "
                "json_object('run_id_in_file', m.old)) FROM (SELECT unnest($1) AS old, "
                f"unnest($2) AS new) m WHERE {_STAGE}.run_id = m.old",
                [old_ids, new_ids],
            )
        return len(renamed)

    def write_runs(self) -> None:
        if self.staged:
            self._spill_runs()
            staged = self._staged_runs()
            while batch := list(itertools.islice(staged, RUNS_IN_MEMORY)):
                self._write_run_batch(batch)
            self.con.execute(f"DROP TABLE {_STAGE}")
        elif self.runs:
            self._write_run_batch(self.runs.values())
        if self.quarantine["reason"]:  # metadata that could not be stored, with why
            store.append(self.con, "quarantine", self.quarantine)
            self.quarantine = {name: [] for name in store.QUARANTINE_COLUMNS}

    def _write_run_batch(self, runs: Iterable[dict[str, Any]]) -> None:
        cols: dict[str, list[Any]] = {name: [] for name in store.RUN_COLUMNS}
        for run in runs:
            if self.key is not None:
                derived = self.key.task_id(run)
                if derived is not None:
                    run["task_id"], run["task_id_source"] = derived, "configured"
            if run.get("task_id") is None:
                run["task_id_source"] = "none"
                self.report.runs_without_task += 1
            elif run.get("task_id_source") in (None, "none"):
                run["task_id_source"] = "explicit"
            if self.validate:
                RunRecord.model_validate(run)
            for name in store.RUN_COLUMNS:
                if name == "ingest_id":
                    cols[name].append(self.ingest_id)
                elif name == "metadata":
                    cols[name].append(self._metadata_json(run))
                else:
                    cols[name].append(run.get(name))
            self.report.runs += 1
        store.upsert_runs(self.con, cols)


_STAGE = "tracemine_runs_stage"
_STAGE_COLUMNS = tuple(name for name in store.RUN_COLUMNS if name != "ingest_id")


class Traces(BaseModel):
    """A file read into memory without a store: its runs, calls and quarantined items."""

    source_format: str
    runs: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    quarantined: list[dict[str, Any]]


def read_traces(
    path: str | Path, format: str | None = None, *, error_pattern: str | None = None
) -> Traces:
    """Read one trace file into normalized records, in memory (for small files: the
    fault injector, the checker, tests). Runs carry what the source said; calls are
    plain dicts keyed by the :class:`~tracemine.model.CallRecord` fields. Tool errors are
    marked as :func:`ingest` marks them (``error_pattern`` as there)."""
    errors = error_rule(error_pattern)
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{file}: no such file")
    name = format or detect_format(file)
    reader = reader_for(name)(file.as_posix())
    runs: dict[str, dict[str, Any]] = {}
    calls: list[dict[str, Any]] = []
    quarantined: list[dict[str, Any]] = []

    def absorb(sink: Sink) -> None:
        for line, pointer, reason, raw in sink.quarantined:
            quarantined.append({"source_line": line, "source_pointer": pointer,
                                "reason": reason, "excerpt": raw})  # fmt: skip
        for run in sink.runs:
            known = runs.setdefault(run["run_id"], dict(run))
            for field, value in run.items():
                if field == "metadata" and value:
                    known["metadata"] = {**value, **(known.get("metadata") or {})}
                elif known.get(field) is None and value is not None:
                    known[field] = value
        calls.extend(sink.calls)

    not_numbers()
    for position, unit in iter_units(file):
        parsed = not_numbers()
        if isinstance(unit, BadUnit):
            quarantined.append({"source_line": position, "source_pointer": None,
                                "reason": unit.reason, "excerpt": excerpt(unit.raw)})  # fmt: skip
            continue
        sink = Sink(errors)
        try:
            reader.feed(unit, position, sink)
        except BadRecord as exc:
            not_numbers()
            quarantined.append({"source_line": position, "source_pointer": None,
                                "reason": str(exc), "excerpt": excerpt(unit)})  # fmt: skip
            continue
        _quarantine_not_numbers(sink, position, unit, parsed)
        absorb(sink)
    sink = Sink(errors)
    reader.finish(sink)
    absorb(sink)
    counters: dict[str, int] = {}
    for call in calls:
        run_id = call["run_id"]
        if call["seq"] is None:
            call["seq"] = counters.get(run_id, 0)
        counters[run_id] = max(counters.get(run_id, 0), call["seq"] + 1)
        runs.setdefault(run_id, reader.new_run(run_id=run_id))
    if reader.ids_repeat_across_units:
        _flag_repeated_ids(calls)
    if reader.orders_by_time:
        calls.sort(key=lambda c: (c["run_id"], c["started_at"] is None, c["started_at"] or 0,
                                  c["source_line"] or 0))  # fmt: skip
    return Traces(source_format=name, runs=list(runs.values()), calls=calls,
                  quarantined=quarantined)  # fmt: skip


def _flag_repeated_ids(calls: list[dict[str, Any]]) -> None:
    """What ``store.flag_repeated_ids_sql`` does in the store, for calls held in memory."""
    seen: set[tuple[str, str]] = set()
    for call in calls:
        if call["call_id"] is None:
            continue
        key = (call["run_id"], call["call_id"])
        if key in seen:
            call["anomalies"] = [*(call["anomalies"] or []), "duplicate_call_id"]
        seen.add(key)
