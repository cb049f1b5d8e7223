"""The plain call log: one run per record.

    {"task_id": "t1", "calls": [{"index": 0, "name": "get_order",
      "arguments": {"order_id": "#W0000001"}, "ok": true, "result": {...},
      "duration_ms": 12.5}], "final_text": "..."}

``ok: false`` is a tool error (its result is the error message when it is text); a call
without ``result`` and without ``ok`` never got a result.
"""

from __future__ import annotations

from typing import Any

from tracemine.ingest.readers._common import SeenIds, run_fields
from tracemine.ingest.readers.base import (
    BadRecord,
    Reader,
    Sink,
    as_float,
    as_small_int,
    as_str,
    parse_arguments,
    parse_result_text,
)


class CallLogReader(Reader):
    name = "calllog"
    priority = 40

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        calls = unit.get("calls") if isinstance(unit, dict) else None
        return (
            isinstance(calls, list)
            and "messages" not in unit
            and (not calls or any(isinstance(c, dict) and "name" in c for c in calls[:5]))
        )

    @classmethod
    def splittable(cls, unit: Any) -> bool:
        return True  # a unit is a whole run

    def feed(self, unit: Any, line: int, out: Sink) -> None:
        if not isinstance(unit, dict) or not isinstance(unit.get("calls"), list):
            raise BadRecord("expected an object with a 'calls' array")
        fields = run_fields({k: v for k, v in unit.items() if k not in ("calls", "final_text")})
        run_id = as_str(unit.get("run_id") or unit.get("id")) or self.default_run_id(line)
        if isinstance(unit.get("final_text"), str):
            fields["metadata"]["final_text"] = unit["final_text"]
        out.run(self.new_run(run_id=run_id, **fields))
        seen = SeenIds()
        for position, call in enumerate(unit["calls"]):
            pointer = f"/calls/{position}"
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                out.quarantine(line, pointer, "call without a string 'name'", call)
                continue
            raw_args, arguments, args_error = parse_arguments(call.get("arguments"))
            has_result = "result" in call
            result = call.get("result")
            result_text = result if isinstance(result, str) else None
            if result_text is not None:
                result = parse_result_text(result_text)
            ok = call.get("ok")
            if ok is False:
                status = "tool_error"
            elif has_result or ok is True:
                status = "ok"
            else:
                status = "missing"
            error = call.get("error")
            call_id = as_str(call.get("id", call.get("call_id")))
            anomalies = ["duplicate_call_id"] if seen.is_duplicate(run_id, call_id) else []
            out.call(
                self.new_call(
                    source_line=line,
                    source_pointer=pointer,
                    run_id=run_id,
                    task_id=fields["task_id"],
                    seq=index
                    if (index := as_small_int(call.get("index"))) is not None
                    else position,
                    call_id=call_id,
                    result_call_id=call_id if status != "missing" else None,
                    id_pairing="inferred" if status != "missing" else "none",
                    tool=call["name"],
                    arguments_raw=raw_args,
                    arguments=arguments,
                    arguments_error=args_error,
                    result=result if status != "missing" else None,
                    result_text=result_text,
                    status=status,
                    error_message=_error_message(error, result_text, status),
                    error_type=as_str(error.get("type")) if isinstance(error, dict) else None,
                    duration_ms=as_float(call.get("duration_ms")),
                    anomalies=anomalies,
                )
            )


def _error_message(error: Any, result_text: str | None, status: str) -> str | None:
    if isinstance(error, dict):
        return as_str(error.get("message")) or as_str(error)
    if error is not None:
        return as_str(error)
    return result_text if status == "tool_error" else None
