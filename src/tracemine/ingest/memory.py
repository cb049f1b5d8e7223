"""``read_traces``: one trace file read into memory, without a store, as ``ingest`` would
read it (for small files: the checker, the fault injector, tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tracemine.errors import InputError
from tracemine.ingest.detect import detect_format, reader_for
from tracemine.ingest.errors import error_rule
from tracemine.ingest.readers.base import (
    BadRecord,
    Sink,
    excerpt,
    not_numbers,
    quarantine_not_numbers,
)
from tracemine.ingest.source import BadUnit, iter_units


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
        quarantine_not_numbers(sink, position, unit, parsed)
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
