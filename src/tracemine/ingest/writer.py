"""The batch writer: one file read through its reader, its calls committed batch by
batch, their values flattened into ``json_values`` by a thread beside the reader
(:class:`Flattener`); its runs are held by :class:`~tracemine.ingest.runs.FileRuns` for
the ingest's last transaction."""

from __future__ import annotations

import functools
import operator
import queue
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from tracemine.ingest import store
from tracemine.ingest.limits import DEFAULT, MAX_DEPTH, Limits
from tracemine.ingest.readers.base import (
    BadRecord,
    Reader,
    Sink,
    dumps,
    excerpt,
    not_numbers,
    quarantine_not_numbers,
)
from tracemine.ingest.report import FileReport, ProgressCallback
from tracemine.ingest.runs import FileRuns
from tracemine.ingest.source import BadUnit, iter_units
from tracemine.ingest.taskkey import TaskKey
from tracemine.model.result import CONTENT_NOT_CAPTURED, DEFAULT_RULE, ErrorRule
from tracemine.model.trace import CallRecord

BATCH_CALLS = 20_000
BATCH_BYTES = 32_000_000
"""A batch is written at this many calls or this many bytes of their JSON and texts,
whichever comes first: wide results (lists of offers, kilobytes a call) must not pile up
in memory, and the batch is copied once more into Arrow to be written."""
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


class Flattener:
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


class FileWriter(FileRuns):
    """Reads one file through its reader, commits its calls batch by batch and has them
    flattened; the runs (:class:`~tracemine.ingest.runs.FileRuns`) are written by the
    caller's last transaction."""

    def __init__(
        self, con: Any, reader: Reader, key: TaskKey | None, validate: bool,
        ingest_id: int | None = None, errors: ErrorRule = DEFAULT_RULE,
        limits: Limits = DEFAULT,
    ) -> None:  # fmt: skip
        super().__init__()
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
        self.seq: dict[str, int] = {}
        self.flattener: Flattener | None = None
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
                if unit.stops:
                    report.stopped = unit.reason
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
            quarantine_not_numbers(sink, position, unit, parsed)
            self._absorb(sink)
            sink.clear()
        report.units_read, report.units_stored = read, stored
        report.units_quarantined = quarantined
        self._finish_reader()
        self._flush(final=True)
        if self.flattener is not None:
            self.flattener.close()
            self.flattener = None
        report.calls, report.calls_missing_result, report.calls_without_content = store.fetch_one(
            self.con,
            "SELECT count(*), count(*) FILTER (status = 'missing'), "
            "count(*) FILTER (list_contains(anomalies, ?)) FROM calls WHERE ingest_id = ?",
            [CONTENT_NOT_CAPTURED, self.ingest_id],
        ) or (0, 0, 0)
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

    def abandon(self) -> None:
        """Stop flattening after an error (what was written is removed by the caller)."""
        if self.flattener is not None:
            flattener, self.flattener = self.flattener, None
            with suppress(BaseException):  # the first error is the one to report
                flattener.close()

    # -- collecting ---------------------------------------------------------------------
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
        self.spill_when_full()
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
                    self.flattener = Flattener(self.con)
                self.flattener.submit(self.first_key, self.next_key - 1)
            self.first_key, self.range_bytes = self.next_key, 0
