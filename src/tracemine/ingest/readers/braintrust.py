"""Braintrust spans: the rows of project logs or of an experiment, as the fetch API returns
them (``POST /v1/project_logs/{id}/fetch``, ``/v1/experiment/{id}/fetch``: a page
``{"events": [...], "cursor": ...}``), as a BTQL query returns them (``POST /btql``,
``{"data": [...], "schema": ..., "cursor": ...}``, or parquet with ``fmt: parquet``), or
saved one row a line (JSON lines) or as one JSON array::

    {"id": "7b31cd61-486e-4f37-817f-58eddb3a6b8d", "_xact_id": "1000196101390481408",
     "created": "2025-06-01T10:00:00.150000+00:00", "project_id": "...", "log_id": "g",
     "span_id": "8ab6da466c4258dc", "root_span_id": "0cddbf5b008395e55653f4cb4cf4b86c",
     "span_parents": ["d0e61988f54ac1a0"],
     "span_attributes": {"name": "get_order", "type": "tool"},
     "input": {"order_id": "A-1"}, "output": {"order_id": "A-1", "total": 42.5},
     "error": null, "metadata": {"tool_call_id": "call_1"},
     "metrics": {"start": 1748772000.15, "end": 1748772000.3}, "context": {...}}

The shape was read from the Braintrust API reference (``ProjectLogsEvent``,
``ExperimentEvent``, ``FetchProjectLogsEventsResponse``; braintrust.dev/docs, API v1.0.0)
and the ``braintrust`` Python SDK 0.48.1 (``_generated_types.py``, ``logger.py``,
``framework.py``): a span's ``span_attributes.type`` is ``llm``, ``score``, ``function``,
``eval``, ``task``, ``tool`` (and a few more); ``input`` and ``output`` are any JSON value
(a ``@traced`` function's bound arguments and its return value; the OpenAI Agents
integration gives the arguments and the result as text); ``error`` is the exception with
its stack trace (``traceback.format_exception``: ``Traceback (most recent call last): …
ValueError: no such order``; ``str(error)`` in some integrations); ``metrics.start`` and
``metrics.end`` are Unix seconds. The root span of a trace has no ``span_parents``; in an
experiment it is the ``eval`` span, whose ``input`` identifies the test case ("Braintrust
will use the input to know whether two test cases are the same") and whose ``origin``
names the dataset record it ran (``{"object_type": "dataset", "id": ...}``).

A span with ``span_attributes.type`` ``tool`` is one call: ``span_attributes.name`` is the
tool, ``input`` the arguments, ``output`` the result (a LangChain ``ToolMessage``, which
the SDK's LangChain integration logs, gives its ``content``, ``tool_call_id`` and
``status``), ``error`` a tool error (a timeout or a cancellation by the exception's type);
the call id is ``tool_call_id`` (``gen_ai.tool.call.id``, ``call_id``) in its metadata,
else the span id (paired as inferred). A span still open (no ``metrics.end``) with no
output and no error is a call whose result is missing. Other spans are no calls.

The tracemine run is the trace (``root_span_id``). Its task id is ``task_id`` (or
``task.id``) in the tool span's metadata, else in any span's of its trace (the root
first), else the dataset record the root span's ``origin`` names, else, for an
experiment's ``eval`` root, its ``input`` (as ``input:`` and a digest); the run's metadata
says which (``task_id_from``). ``trial``, ``family``, ``reward`` and ``run_outcome`` (also
with a ``tracemine.`` prefix) come from the metadata, the root's first.

The fetch API pages over the event log's history, so a row may come again with an earlier
``_xact_id``: the latest version of each row id is read, the others are quarantined. A row
with ``_is_merge: true`` (what the SDK sends) is merged into the row of its id read
before it. Rows may come in any order (the newest first), so calls are decided at the end
of the file and ordered by time.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from tracemine.ingest.readers._common import (
    TASK_KEYS,
    THREAD_KEYS,
    first,
    platform_call,
    trace_run,
)
from tracemine.ingest.readers.base import (
    BadRecord,
    Reader,
    Sink,
    _message_of,
    as_dict,
    as_float,
    as_int,
    as_str,
    dumps,
    parse_arguments,
    parse_result_text,
    parse_time,
    text_of_parts,
)
from tracemine.ingest.readers.langsmith import _message

_CALL_ID_KEYS = ("tool_call_id", "gen_ai.tool.call.id", "call_id")
_PAGE_KEYS = ("events", "data")  # the fetch API's page, a BTQL query's result
_SPAN_SHAPE = (
    "a Braintrust span has id, span_id, root_span_id, span_parents, span_attributes "
    "{name, type}, input, output, error, metadata, metrics {start, end}"
)
# fields a merge row does not change (the SDK's ``MERGE_ROW_SKIP_FIELDS``)
_MERGE_KEEPS = ("created", "span_id", "root_span_id", "span_parents")
# what a span that is no call is kept for: its trace, its root, the run's metadata
_RUN_FIELDS = ("id", "_xact_id", "span_id", "root_span_id", "span_parents", "is_root",
               "span_attributes", "metadata", "origin", "scores", "experiment_id",
               "project_id", "log_id")  # fmt: skip
_TRACEBACK = "Traceback (most recent call last):"
_RAISED = re.compile(r"([A-Za-z_][\w.]*)(?::\s*(.*))?$", re.DOTALL)  # ValueError: …
_NAMED = re.compile(  # Error: …, TypeError: … (a JavaScript stack's first line)
    r"((?:[A-Za-z_][\w.]*)?(?:Error|Exception|Timeout|Exit|Interrupt|Warning)):\s*(.*)$",
    re.DOTALL,
)


def _is_span(unit: Any) -> bool:
    return (
        isinstance(unit, dict)
        and isinstance(unit.get("span_id"), str)
        and isinstance(unit.get("root_span_id"), str)
        and ("span_attributes" in unit or "span_parents" in unit)
    )


def _page(unit: Any) -> list[Any] | None:
    """The rows of a fetch page or a BTQL result, if ``unit`` is one."""
    if not isinstance(unit, dict) or _is_span(unit):
        return None
    for key in _PAGE_KEYS:
        rows = unit.get(key)
        if isinstance(rows, list) and any(_is_span(row) for row in rows[:5]):
            return rows
    return None


def _type_of(row: dict[str, Any]) -> str:
    return (as_str(as_dict(row.get("span_attributes")).get("type")) or "").lower()


def _is_root(row: dict[str, Any]) -> bool:
    """A trace's root span: no parents (or ``is_root``; older SDKs also gave the root the
    trace's id as its span id)."""
    return (
        not row.get("span_parents")
        or row.get("is_root") is True
        or row.get("span_id") == row.get("root_span_id")
    )


def _slim(row: dict[str, Any]) -> dict[str, Any]:
    """What a span that is no call gives its run; a tool or eval span is kept whole."""
    if _type_of(row) in ("tool", "eval", ""):
        return row
    return {k: row[k] for k in _RUN_FIELDS if k in row}


def _xact(row: dict[str, Any]) -> tuple[int, int | str]:
    """A row's ``_xact_id`` for ordering versions (a decimal string, compared as a number);
    a row without one comes before any that has one."""
    value = row.get("_xact_id")
    number = as_int(value)
    if number is not None:
        return 2, number
    return (1, str(value)) if value is not None else (0, 0)


def _merged(into: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """``update`` deep-merged into a copy of ``into``: objects merge key by key, any other
    value replaces what was there (the SDK's ``merge_dicts``)."""
    out = dict(into)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def _error(value: Any) -> tuple[str, str | None, str]:
    """``(status, error type, message)`` of a span's ``error``: the exception a Python
    stack trace ends with (the last one, when exceptions were chained), a JavaScript
    stack's first line, a ``Type: message`` text, or an object's ``message`` and
    ``name`` / ``type``."""
    error_type: str | None = None
    if isinstance(value, dict):
        error_type = as_str(value.get("name") or value.get("type") or value.get("code"))
        message = as_str(value.get("message")) or dumps(value)
    else:
        text = as_str(value) or ""
        message = text.strip()
        _, traced, trace = text.rpartition(_TRACEBACK)
        lines = trace.splitlines()
        # frames are indented; the exception is the first line that is not
        raised = next((i for i, ln in enumerate(lines) if ln.strip() and not ln[0].isspace()),
                      None)  # fmt: skip
        first = message.splitlines()[0].strip() if message else ""
        if traced and raised is not None:
            found = _RAISED.match("\n".join(lines[raised:]).strip())
            if found is not None:
                error_type, message = found.group(1), (found.group(2) or "").strip() or message
        elif (named := _NAMED.match(first)) is not None:
            error_type, message = named.group(1), named.group(2).strip()
    lowered = (error_type or "").lower()
    if "timeout" in lowered or "timedout" in lowered or "deadline" in lowered:
        return "timeout", error_type, message
    if "cancel" in lowered:
        return "cancelled", error_type, message
    return "tool_error", error_type, message


def _has_error(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    return value is not None and value is not False and value != {}


def _digest(value: Any) -> str:
    text = dumps(value)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class _Row:
    """One span row as read (its latest version), with where it was read."""

    row: dict[str, Any]
    line: int
    pointer: str | None


class BraintrustReader(Reader):
    """Braintrust span rows, one a unit (or a page of them); calls are decided at the end
    of the file, when every row's latest version and each trace's root are known."""

    name = "braintrust"
    version = "1"
    priority = 26
    orders_by_time = True
    looks_for = (
        "Braintrust spans with span_attributes.type 'tool' (span_id, root_span_id, "
        "span_attributes, input, output)"
    )

    def __init__(self, source_file: str) -> None:
        super().__init__(source_file)
        self.rows: dict[str, _Row] = {}  # row id -> its latest version

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        return _is_span(unit) or _page(unit) is not None

    @classmethod
    def near_miss(cls, unit: Any) -> str | None:
        if not isinstance(unit, dict) or cls.sniff(unit):
            return None
        for key in _PAGE_KEYS:
            rows = unit.get(key)
            if isinstance(rows, list) and rows and isinstance(rows[0], dict):
                said = cls.near_miss(rows[0])
                if said:
                    return said.replace("its first record", f"the first of its {key}", 1)
        attributes = unit.get("span_attributes")
        if isinstance(attributes, dict) and ("type" in attributes or "name" in attributes):
            lacks = [k for k in ("span_id", "root_span_id") if not isinstance(unit.get(k), str)]
            return (
                f"its first record has span_attributes and no {' or '.join(lacks)} ({_SPAN_SHAPE})"
            )
        if "root_span_id" in unit and "span_parents" not in unit:
            if isinstance(unit.get("span_id"), str) and isinstance(unit["root_span_id"], str):
                return (
                    "its first record has span_id and root_span_id and no span_attributes "
                    f"or span_parents ({_SPAN_SHAPE})"
                )
            return f"its first record has root_span_id and no string span_id ({_SPAN_SHAPE})"
        return None

    def feed(self, unit: Any, line: int, out: Sink) -> None:
        rows = _page(unit)
        if rows is not None:
            key = next(k for k in _PAGE_KEYS if unit.get(k) is rows)
            for index, row in enumerate(rows):
                self._row(row, line, f"/{key}/{index}", out)
            return
        if not _is_span(unit):
            raise BadRecord(f"expected a Braintrust span ({_SPAN_SHAPE})")
        self._row(unit, line, None, out)

    def _row(self, row: Any, line: int, pointer: str | None, out: Sink) -> None:
        if not _is_span(row):
            out.quarantine(line, pointer, f"not a Braintrust span ({_SPAN_SHAPE})", row)
            return
        if row.get("span_attributes") is not None and not isinstance(row["span_attributes"], dict):
            out.quarantine(line, pointer, "span_attributes is not an object", row)
            return
        row_id = as_str(row.get("id")) or row["span_id"]
        known = self.rows.get(row_id)
        if known is None:
            self.rows[row_id] = _Row(_slim(row), line, pointer)
            return
        if row.get("_is_merge") is True:
            update = {k: v for k, v in row.items() if k not in _MERGE_KEEPS}
            known.row = _slim(_merged(known.row, update))
            return
        if _xact(row) > _xact(known.row):
            reason = (
                f"row {row_id} has a later version (_xact_id {row.get('_xact_id')}, line "
                f"{line}); the latest version is read"
            )
            out.quarantine(known.line, known.pointer, reason, known.row)
            self.rows[row_id] = _Row(_slim(row), line, pointer)
            return
        earlier = "an earlier" if _xact(row) < _xact(known.row) else "the same"
        reason = (
            f"row {row_id} repeats a row read before (line {known.line}) with {earlier} "
            "_xact_id; the latest version is read"
        )
        out.quarantine(line, pointer, reason, row)

    # -- at the end of the file: calls, runs ----------------------------------------------

    def finish(self, out: Sink) -> None:
        traces: dict[str, list[dict[str, Any]]] = {}  # root span id -> its rows, root first
        for entry in self.rows.values():
            row = entry.row
            members = traces.setdefault(row["root_span_id"], [])
            if _is_root(row):
                members.insert(0, row)
            else:
                members.append(row)
        records: dict[str, dict[str, Any]] = {}
        for entry in self.rows.values():
            row = entry.row
            if _type_of(row) != "tool":
                continue
            call = self._call(row, entry, out)
            if call is None:
                continue
            trace = row["root_span_id"]
            record = records.get(trace)
            if record is None:
                record = records[trace] = self._record(trace, traces[trace])
            own = as_dict(row.get("metadata"))
            task_id = as_str(first(own, TASK_KEYS)) or record["task_id"]
            session = as_str(first(own, THREAD_KEYS)) or record["session_id"]
            call.update(run_id=trace, task_id=task_id, session_id=session)
            out.call(call)
        for record in records.values():
            out.run(record)
        self.rows.clear()

    def _call(self, row: dict[str, Any], entry: _Row, out: Sink) -> dict[str, Any] | None:
        line, pointer = entry.line, entry.pointer
        tool = as_str(as_dict(row.get("span_attributes")).get("name"))
        if not tool:
            out.quarantine(line, pointer, "tool span without a name (span_attributes.name)", row)
            return None
        metadata = as_dict(row.get("metadata"))
        call_id = as_str(first(metadata, _CALL_ID_KEYS))
        arguments_raw, arguments, args_error = parse_arguments(row.get("input"))
        status, error_type, error_message = "ok", None, None
        result: Any = None
        result_text: str | None = None
        answered = row.get("output") is not None
        if answered:
            value = row["output"]
            message = _message(value)
            if message is not None:  # the LangChain integration logs the ToolMessage
                call_id = call_id or as_str(message.get("tool_call_id"))
                value = message.get("content")
                if isinstance(value, list) and all(isinstance(p, dict | str) for p in value):
                    value = text_of_parts(value)
            if isinstance(value, str):
                result_text, result = value, parse_result_text(value)
            else:
                result = value
            if message is not None and message.get("status") == "error":
                status, error_message = "tool_error", _message_of(result)
        metrics = as_dict(row.get("metrics"))
        start, end = parse_time(metrics.get("start")), parse_time(metrics.get("end"))
        if _has_error(row.get("error")):
            status, error_type, error_message = _error(row["error"])
        elif not answered and end is None:
            status = "missing"  # still open: no result came back
        return platform_call(
            self,
            line=line,
            pointer=pointer,
            own_id=call_id,
            node_id=row["span_id"],
            status=status,
            started_at=start,
            ended_at=end,
            tool=tool,
            arguments_raw=arguments_raw,
            arguments=arguments,
            arguments_error=args_error,
            result=result,
            result_text=result_text,
            error_type=error_type,
            error_message=error_message,
        )

    def _record(self, trace: str, members: list[dict[str, Any]]) -> dict[str, Any]:
        """The run record of a trace, from its spans' metadata (the root's first)."""
        metadata: dict[str, Any] = {}
        for member in members:
            for key, value in as_dict(member.get("metadata")).items():
                metadata.setdefault(key, value)
        root = members[0] if members and _is_root(members[0]) else {}
        task_id, task_from = as_str(first(metadata, TASK_KEYS)), "metadata"
        origin = as_dict(root.get("origin"))
        if task_id is None and origin.get("object_type") == "dataset" and origin.get("id"):
            task_id, task_from = as_str(origin["id"]), "origin"
        if task_id is None and _type_of(root) == "eval" and root.get("input") is not None:
            task_id, task_from = f"input:{_digest(root['input'])}", "input"
        extra: dict[str, Any] = {
            key: root[key]
            for key in ("experiment_id", "project_id", "log_id")
            if isinstance(root.get(key), str) and key not in metadata
        }
        if origin:
            extra["origin"] = {k: v for k, v in origin.items() if isinstance(v, str)}
        scores = {k: v for k, v in as_dict(root.get("scores")).items() if as_float(v) is not None}
        if scores:
            extra["scores"] = scores
        return trace_run(
            self, trace, metadata, id_source="root_span_id", task=(task_id, task_from),
            session=as_str(first(metadata, THREAD_KEYS)), extra=extra, own_keys=_CALL_ID_KEYS,
        )  # fmt: skip
