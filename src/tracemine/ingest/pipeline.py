"""``ingest``: files in, DuckDB store out. One transaction per file, so a file is stored
whole or not at all; every unit read is either stored or quarantined with its reason."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tracemine.errors import InputError, UnknownFormatError
from tracemine.ingest import store
from tracemine.ingest.detect import detect_format, reader_for
from tracemine.ingest.readers.base import BadRecord, Reader, Sink, dumps, excerpt
from tracemine.ingest.source import BadUnit, file_hash, iter_units
from tracemine.ingest.taskkey import TaskKey
from tracemine.model.trace import CallRecord, RunRecord

BATCH_CALLS = 20_000
INGEST_MEMORY_LIMIT = "512MB"
# values are flattened by DuckDB every this many calls: large enough to use both cores,
# small enough that one statement's working memory stays bounded
FLATTEN_CALLS = 200_000
_PLAIN_CALL_COLUMNS = tuple(
    name
    for name in store.CALL_COLUMNS
    if name not in ("call_key", "ingest_id", "arguments", "result")
)
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
) -> IngestReport:
    """Read trace files into the DuckDB store at ``db``.

    ``format`` forces a reader (detected per file otherwise); ``task_key`` derives task
    ids (a field, a metadata key, or ``regex:PATTERN`` over the run id); ``replace``
    re-reads files already ingested; ``validate`` checks every record against the
    pydantic model (slower; for tests and new readers).

    >>> report = ingest(["traces.jsonl"], "traces.duckdb")  # doctest: +SKIP
    >>> report.total("calls")  # doctest: +SKIP
    """
    if isinstance(paths, str | Path):
        paths = [paths]
    files = expand_paths(paths)
    if format is not None:
        reader_for(format)  # fail before touching the store
    key = TaskKey.parse(task_key) if task_key else None
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
    # ingest streams: DuckDB spills what does not fit, so memory stays flat with file size
    con = store.connect(db, memory_limit=INGEST_MEMORY_LIMIT)
    reports = []
    try:
        for path, name in plan:
            if name is None:
                detail = "no reader recognises it (not a trace file?)"
                skipped = FileReport(source_file=path.as_posix(), outcome="skipped", detail=detail)
                reports.append(skipped)
                continue
            reports.append(_ingest_file(con, path, name, key, replace, validate, progress))
    finally:
        con.close()
    return IngestReport(db=str(db), files=reports)


def _ingest_file(
    con: Any,
    path: Path,
    format_name: str,
    key: TaskKey | None,
    replace: bool,
    validate: bool,
    progress: ProgressCallback | None,
) -> FileReport:
    source_file = path.as_posix()
    digest, size = file_hash(path)
    existing = store.find_ingest(con, digest)
    if existing is not None and not replace:
        row = store.fetch_one(
            con, "SELECT source_file FROM ingests WHERE ingest_id = ?", [existing]
        )
        assert row is not None
        return FileReport(
            source_file=source_file,
            outcome="skipped",
            detail=f"already ingested (same content as {row[0]}); --replace re-reads it",
        )
    name = format_name
    reader = reader_for(name)(source_file)
    started = time.perf_counter()
    con.execute("BEGIN TRANSACTION")
    try:
        if existing is not None:
            store.delete_ingest(con, existing)
        writer = _FileWriter(con, reader, key, validate)
        report = writer.run(path, size, progress)
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
    report.outcome = "replaced" if existing is not None else "ingested"
    report.seconds = round(time.perf_counter() - started, 3)
    return report


class _FileWriter:
    """Reads one file through its reader and writes batches inside the open transaction."""

    def __init__(self, con: Any, reader: Reader, key: TaskKey | None, validate: bool) -> None:
        self.con = con
        self.reader = reader
        self.key = key
        self.validate = validate
        self.ingest_id, self.next_key = store.next_ids(con)
        self.calls: dict[str, list[Any]] = {name: [] for name in store.CALL_COLUMNS}
        self.first_key = self.next_key
        self.quarantine: dict[str, list[Any]] = {name: [] for name in store.QUARANTINE_COLUMNS}
        self.runs: dict[str, dict[str, Any]] = {}
        self.seq: dict[str, int] = {}
        self.report = FileReport(
            source_file=reader.source_file, source_format=reader.name, outcome="ingested"
        )

    def run(self, path: Path, size: int, progress: ProgressCallback | None) -> FileReport:
        report = self.report
        on_bytes = (
            (lambda done: progress(self.reader.source_file, done, size)) if progress else None
        )
        for position, unit in iter_units(path, on_bytes):
            report.units_read += 1
            if isinstance(unit, BadUnit):
                self._quarantine(position, None, "unit", unit.reason, excerpt(unit.raw))
                report.units_quarantined += 1
                continue
            sink = Sink()
            try:
                self.reader.feed(unit, position, sink)
            except BadRecord as exc:
                self._quarantine(position, None, "unit", str(exc), excerpt(unit))
                report.units_quarantined += 1
                continue
            except (RecursionError, MemoryError):
                raise
            except Exception as exc:  # a shape the reader did not expect: keep it, say why
                reason = f"unreadable {self.reader.name} record ({type(exc).__name__}: {exc})"
                self._quarantine(position, None, "unit", reason, excerpt(unit))
                report.units_quarantined += 1
                continue
            report.units_stored += 1
            self._absorb(sink)
        sink = Sink()
        self.reader.finish(sink)
        self._absorb(sink)
        self._flush(final=True)
        self._write_runs()
        if self.reader.orders_by_time:
            self.con.execute(store.resequence_sql(), [self.ingest_id])
        if progress:
            progress(self.reader.source_file, size, size)
        return report

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
            self._add_call(record)
        if len(self.calls["call_key"]) >= BATCH_CALLS:
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
        cols = self.calls
        cols["call_key"].append(key)
        cols["ingest_id"].append(self.ingest_id)
        arguments = record["arguments"]
        cols["arguments"].append(None if arguments is None else dumps(arguments))
        # a JSON null result is a fact ("null"); a missing one is SQL NULL
        missing = record["status"] == "missing"
        cols["result"].append(None if missing else dumps(record["result"]))
        for name in _PLAIN_CALL_COLUMNS:
            cols[name].append(record[name])
        self.report.calls += 1
        if record["status"] == "missing":
            self.report.calls_missing_result += 1

    # -- writing -------------------------------------------------------------------------
    def _flush(self, final: bool = False) -> None:
        if self.calls["call_key"]:
            store.append(self.con, "calls", self.calls)
            self.calls = {name: [] for name in store.CALL_COLUMNS}
        if self.next_key > self.first_key and (
            final or self.next_key - self.first_key >= FLATTEN_CALLS
        ):
            span = [self.first_key, self.next_key - 1]
            self.con.execute(store.flatten_sql("args"), span)
            self.con.execute(store.flatten_sql("result"), span)
            self.con.execute(store.mark_capped_sql(), span)
            self.first_key = self.next_key
        if self.quarantine["reason"]:
            store.append(self.con, "quarantine", self.quarantine)
            self.quarantine = {name: [] for name in store.QUARANTINE_COLUMNS}

    def _write_runs(self) -> None:
        if not self.runs:
            return
        cols: dict[str, list[Any]] = {name: [] for name in store.RUN_COLUMNS}
        for run in self.runs.values():
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
                    cols[name].append(dumps(run.get("metadata") or {}))
                else:
                    cols[name].append(run.get(name))
        self.report.runs = len(self.runs)
        store.upsert_runs(self.con, cols)


class Traces(BaseModel):
    """A file read into memory without a store: its runs, calls and quarantined items."""

    source_format: str
    runs: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    quarantined: list[dict[str, Any]]


def read_traces(path: str | Path, format: str | None = None) -> Traces:
    """Read one trace file into normalized records, in memory (for small files: the
    fault injector, the checker, tests). Runs carry what the source said; calls are
    plain dicts keyed by the :class:`~tracemine.model.CallRecord` fields."""
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

    for position, unit in iter_units(file):
        if isinstance(unit, BadUnit):
            quarantined.append({"source_line": position, "source_pointer": None,
                                "reason": unit.reason, "excerpt": excerpt(unit.raw)})  # fmt: skip
            continue
        sink = Sink()
        try:
            reader.feed(unit, position, sink)
        except BadRecord as exc:
            quarantined.append({"source_line": position, "source_pointer": None,
                                "reason": str(exc), "excerpt": excerpt(unit)})  # fmt: skip
            continue
        absorb(sink)
    sink = Sink()
    reader.finish(sink)
    absorb(sink)
    counters: dict[str, int] = {}
    for call in calls:
        run_id = call["run_id"]
        if call["seq"] is None:
            call["seq"] = counters.get(run_id, 0)
        counters[run_id] = max(counters.get(run_id, 0), call["seq"] + 1)
        runs.setdefault(run_id, reader.new_run(run_id=run_id))
    if reader.orders_by_time:
        calls.sort(key=lambda c: (c["run_id"], c["started_at"] is None, c["started_at"] or 0,
                                  c["source_line"] or 0))  # fmt: skip
    return Traces(source_format=name, runs=list(runs.values()), calls=calls,
                  quarantined=quarantined)  # fmt: skip
