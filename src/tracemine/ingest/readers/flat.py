"""Flat JSONL: one tool call per line.

    {"run_id": "r1", "task_id": "t1", "seq": 0, "tool": "get_order",
     "call_id": "c1", "arguments": {"order_id": "#W0000001"},
     "result": {...}, "error": null, "status": "ok", "duration_ms": 12.5}

``tool`` may be ``name``; ``arguments`` an object or the raw string; ``error`` a string or
``{"type", "message"}``; ``ok: false`` or an ``error`` make a tool error; a line with
neither ``result`` nor ``error`` is a call whose result is missing. Every field of the
normalized record is accepted under its own name, so tracemine's own exports read back.
"""

from __future__ import annotations

from typing import Any

from tracemine.ingest.readers._common import SeenIds
from tracemine.ingest.readers.base import (
    BadRecord,
    Reader,
    Sink,
    as_float,
    as_int,
    as_str,
    duration_ms,
    parse_arguments,
    parse_result_text,
    parse_time,
)
from tracemine.model.trace import Status

_STATUSES = {status.value for status in Status}
_RUN_KEYS = ("task_id", "trial", "session_id", "run_outcome", "reward", "family")


class FlatReader(Reader):
    name = "flat"
    priority = 90
    ids_repeat_across_units = True

    def __init__(self, source_file: str) -> None:
        super().__init__(source_file)
        self.seen = SeenIds()
        self.last_run: tuple[Any, ...] | None = None

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        return (
            isinstance(unit, dict)
            and isinstance(unit.get("tool", unit.get("name")), str)
            and ("arguments" in unit or "result" in unit or "run_id" in unit)
            and "messages" not in unit
            and "calls" not in unit
        )

    def feed(self, unit: Any, line: int, out: Sink) -> None:
        if not isinstance(unit, dict):
            raise BadRecord(f"expected one call per line as an object, got {type(unit).__name__}")
        tool = unit.get("tool", unit.get("name"))
        if not isinstance(tool, str) or not tool:
            raise BadRecord("field 'tool' (or 'name') is missing or not a string")
        run_id = as_str(unit.get("run_id")) or self.default_run_id(line)
        call_id = as_str(unit.get("call_id", unit.get("id")))
        raw_args, arguments, args_error = parse_arguments(unit.get("arguments"))
        if unit.get("arguments_raw") is not None and isinstance(unit["arguments_raw"], str):
            raw_args = unit["arguments_raw"]
        status, error_type, error_message = _status(unit)
        result = unit.get("result")
        result_text = unit.get("result_text") if isinstance(unit.get("result_text"), str) else None
        if isinstance(result, str):
            result_text = result_text or result
            result = parse_result_text(result)
        started = parse_time(unit.get("started_at"))
        ended = parse_time(unit.get("ended_at"))
        anomalies = (
            list(unit.get("anomalies") or []) if isinstance(unit.get("anomalies"), list) else []
        )
        if self.flags_repeats and self.seen.is_duplicate(run_id, call_id):
            anomalies.append("duplicate_call_id")
        result_call_id = as_str(unit.get("result_call_id"))
        out.call(
            self.new_call(
                source_line=line,
                run_id=run_id,
                seq=as_int(unit.get("seq", unit.get("index"))),
                turn=as_int(unit.get("turn")),
                parallel_index=as_int(unit.get("parallel_index")),
                call_id=call_id,
                result_call_id=result_call_id or (call_id if status != "missing" else None),
                id_pairing="exact" if call_id and status != "missing" else "inferred",
                tool=tool,
                server=as_str(unit.get("server")),
                schema_ref=as_str(unit.get("schema_ref")),
                arguments_raw=raw_args,
                arguments=arguments,
                arguments_error=args_error or as_str(unit.get("arguments_error")),
                result=None if status == "missing" else result,
                result_text=result_text,
                result_raw=as_str(unit.get("result_raw")),
                result_truncated=bool(unit.get("result_truncated", False)),
                result_redacted=bool(unit.get("result_redacted", False)),
                status=status,
                error_type=error_type,
                error_message=error_message,
                started_at=started,
                ended_at=ended,
                duration_ms=as_float(unit.get("duration_ms")) or duration_ms(started, ended),
                anomalies=anomalies,
            )
        )
        run: dict[str, Any] = {key: unit.get(key) for key in _RUN_KEYS}
        # the lines of a run usually repeat its fields: say the run again only when
        # something about it changed (a record per line cost a dict and a merge per call)
        metadata = unit.get("run_metadata")
        said = (run_id, *run.values())
        if said == self.last_run and not metadata:
            return
        self.last_run = said
        out.run(
            self.new_run(
                run_id=run_id,
                task_id=as_str(run["task_id"]),
                trial=as_int(run["trial"]),
                session_id=as_str(run["session_id"]),
                run_outcome=as_str(run["run_outcome"]),
                reward=as_float(run["reward"]),
                family=as_str(run["family"]),
                metadata=unit.get("run_metadata")
                if isinstance(unit.get("run_metadata"), dict)
                else {},
            )
        )


def _status(unit: dict[str, Any]) -> tuple[str, str | None, str | None]:
    error = unit.get("error")
    error_type = as_str(unit.get("error_type"))
    error_message = as_str(unit.get("error_message"))
    if isinstance(error, dict):
        error_type = error_type or as_str(error.get("type") or error.get("code"))
        error_message = error_message or as_str(error.get("message"))
    elif error is not None and error is not False:
        error_message = error_message or as_str(error)
    declared = unit.get("status")
    if isinstance(declared, str) and declared in _STATUSES:
        return declared, error_type, error_message
    if error not in (None, False) or unit.get("ok") is False:
        return "tool_error", error_type, error_message
    if "result" not in unit:
        return "missing", error_type, error_message
    return "ok", error_type, error_message
