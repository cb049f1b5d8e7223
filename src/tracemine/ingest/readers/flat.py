"""Flat JSONL: one tool call per line.

    {"run_id": "r1", "task_id": "t1", "seq": 0, "tool": "get_order",
     "call_id": "c1", "arguments": {"order_id": "#W0000001"},
     "result": {...}, "error": null, "status": "ok", "duration_ms": 12.5}

``tool`` may be ``name``; ``arguments`` an object or the raw string; ``error`` a string or
``{"type", "message"}``; ``ok: false`` or an ``error`` make a tool error; a line with
neither ``result`` nor ``error`` is a call whose result is missing. Every field of the
normalized record is accepted under its own name, so tracemine's own exports read back.
A cassette's header line (``{"tracemine_cassette": 1, ...}``, see ``tracemine.replay``)
is read and skipped: it holds no call.
"""

from __future__ import annotations

from typing import Any

from tracemine.ingest.readers.base import (
    BadRecord,
    Reader,
    Sink,
    as_float,
    as_small_int,
    as_str,
    duration_ms,
    parse_arguments,
    parse_result_text,
    parse_time,
)
from tracemine.model.trace import Status

_STATUSES = {status.value for status in Status}
_CASSETTE_HEADER = "tracemine_cassette"
_RUN_KEYS = ("task_id", "trial", "session_id", "run_outcome", "reward", "family")
_RARE_KEYS = frozenset(
    {
        "arguments_raw", "result_text", "started_at", "ended_at", "anomalies",
        "result_call_id", "turn", "parallel_index", "server", "schema_ref",
        "arguments_error", "result_raw", "result_truncated", "result_redacted",
    }
)  # fmt: skip


class FlatReader(Reader):
    name = "flat"
    priority = 90
    ids_repeat_across_units = True

    def __init__(self, source_file: str) -> None:
        super().__init__(source_file)
        self.last_run: tuple[Any, ...] | None = None

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        if isinstance(unit, dict) and _CASSETTE_HEADER in unit:
            return True
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
        get = unit.get  # this runs once per call of a large file: lookups kept cheap
        tool = unit["tool"] if "tool" in unit else get("name")
        if tool is None and _CASSETTE_HEADER in unit:
            return
        if not isinstance(tool, str) or not tool:
            raise BadRecord("field 'tool' (or 'name') is missing or not a string")
        run_id = as_str(get("run_id")) or self.default_run_id(line)
        call_id = as_str(unit["call_id"] if "call_id" in unit else get("id"))
        raw_args, arguments, args_error = parse_arguments(get("arguments"))
        status, error_type, error_message = _status(unit)
        result = get("result")
        result_text = None
        anomalies: list[Any] = []
        started = ended = None
        # fields most lines do not have: looked up only when the line has one of them
        rare = unit.keys() & _RARE_KEYS
        if rare:
            if isinstance(get("arguments_raw"), str):
                raw_args = unit["arguments_raw"]
            if isinstance(get("result_text"), str):
                result_text = unit["result_text"]
            started = parse_time(get("started_at"))
            ended = parse_time(get("ended_at"))
            if isinstance(get("anomalies"), list):
                anomalies = list(unit["anomalies"])
        if isinstance(result, str):
            result_text = result_text or result
            result = parse_result_text(result)
        result_call_id = as_str(get("result_call_id")) if rare else None
        seq = get("seq")
        out.call(
            self.new_call(
                source_line=line,
                run_id=run_id,
                seq=as_small_int(get("index") if seq is None and "seq" not in unit else seq),
                turn=as_small_int(get("turn")) if rare else None,
                parallel_index=as_small_int(get("parallel_index")) if rare else None,
                call_id=call_id,
                result_call_id=result_call_id or (call_id if status != "missing" else None),
                id_pairing="exact" if call_id and status != "missing" else "inferred",
                tool=tool,
                server=as_str(get("server")) if rare else None,
                schema_ref=as_str(get("schema_ref")) if rare else None,
                arguments_raw=raw_args,
                arguments=arguments,
                arguments_error=args_error or (as_str(get("arguments_error")) if rare else None),
                result=None if status == "missing" else result,
                result_text=result_text,
                result_raw=as_str(get("result_raw")) if rare else None,
                result_truncated=bool(get("result_truncated", False)) if rare else False,
                result_redacted=bool(get("result_redacted", False)) if rare else False,
                status=status,
                error_type=error_type,
                error_message=error_message,
                started_at=started,
                ended_at=ended,
                duration_ms=as_float(get("duration_ms")) or duration_ms(started, ended),
                anomalies=anomalies,
            )
        )
        metadata = get("run_metadata")
        said = (run_id, *map(get, _RUN_KEYS))
        # the lines of a run usually repeat its fields: say the run again only when
        # something about it changed (a record per line cost a dict and a merge per call)
        if said == self.last_run and not metadata:
            return
        self.last_run = said
        _, task_id, trial, session_id, run_outcome, reward, family = said
        out.run(
            self.new_run(
                run_id=run_id,
                task_id=as_str(task_id),
                trial=as_small_int(trial),
                session_id=as_str(session_id),
                run_outcome=as_str(run_outcome),
                reward=as_float(reward),
                family=as_str(family),
                metadata=metadata if isinstance(metadata, dict) else {},
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
