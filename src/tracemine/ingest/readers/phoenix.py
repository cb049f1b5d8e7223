"""Arize Phoenix spans dataframes: what ``px.Client().get_spans_dataframe()`` returns
(``phoenix.client.Client().spans.get_spans_dataframe()`` likewise), saved by its user as
parquet (``df.to_parquet(path)``) or as JSON lines
(``df.to_json(path, orient="records", lines=True)``), one span a row::

    {"name": "get_order", "span_kind": "TOOL", "parent_id": "a1b2c3d4e5f60718",
     "start_time": 1718000000000, "end_time": 1718000000150,
     "status_code": "ERROR", "status_message": "order not found", "events": [
       {"name": "exception", "timestamp": "2024-06-10T06:13:20.150000+00:00",
        "attributes": {"exception.type": "KeyError", "exception.message": "A-9"}}],
     "context.span_id": "0f1e2d3c4b5a6978",
     "context.trace_id": "5b8efff798038103d269b633813fc60c",
     "attributes.openinference.span.kind": "TOOL", "attributes.tool.name": "get_order",
     "attributes.input.value": "{\\"order_id\\": \\"A-9\\"}",
     "attributes.input.mime_type": "application/json",
     "attributes.output.value": null, "attributes.session.id": "ticket-7",
     "attributes.metadata": {"task_id": "refund-1", "trial": 0}, ...}

The shape was read from Arize Phoenix 20.3.0 (server ``phoenix.trace.dsl.query.
_get_spans_dataframe``; client ``arize-phoenix-client`` 3.3.0) and the OpenInference
semantic conventions: the columns ``name``, ``span_kind``, ``parent_id``, ``start_time``,
``end_time``, ``status_code`` (``OK``, ``ERROR``, ``UNSET``), ``status_message``, ``events``,
``context.span_id``, ``context.trace_id``, then one ``attributes.<key>`` column per
attribute. Phoenix flattens the span's attributes and nests them again but for the
OpenInference keys, which stay whole (``attributes.input.value``,
``attributes.llm.input_messages``: a list of ``{"message.role", "message.content",
"message.tool_calls"}`` objects); any other attribute is split at its dots, so
``tracemine.family`` comes as ``attributes.tracemine`` holding ``{"family": ...}``, and is
joined back here. ``metadata`` and ``tool.parameters`` are JSON strings that Phoenix has
already decoded into objects (text is read too). In JSON lines pandas writes times as
epoch milliseconds and missing values as null; in parquet times are timestamps, objects
are structs (every row with every key of the column, null where a row had none: nulls
are dropped, as Phoenix never stores a null attribute) and a missing number is NaN.

Rows are made into the spans the :mod:`.otlp` reader reads and read by it, so a call
means here what it means there: a ``TOOL`` span (``span_kind``, or
``attributes.openinference.span.kind``) is one call; ``tool.name`` is the tool,
``input.value`` the arguments (JSON text; kept as text under ``input.mime_type``
``text/plain``), ``output.value`` the result, ``tool_call.id`` the call id; status
``ERROR`` makes a tool error (a timeout or a cancellation by the ``exception`` event's
type), with ``status_message`` or the exception's message. LLM, CHAIN, AGENT and other
spans are no calls: the tool calls an LLM span's messages announce are the ``TOOL``
spans that ran them.

The run is the trace (``context.trace_id``). Its task id is ``task_id`` (or ``task.id``)
from the spans' attributes or their ``metadata`` (``using_metadata`` in the
OpenInference instrumentations), else the ``session.id`` (a Phoenix session groups the
traces of one conversation: they are runs of one task); the run's metadata says which
(``task_id_from``). ``trial``, ``family``, ``reward`` and ``run_outcome`` (also with a
``tracemine.`` prefix, as tracemine's simulator writes them) are read from the attributes
of root and agent spans and from any span's metadata. A trace's spans may come in any
order (Phoenix returns the newest first), so calls are kept until the end of the file
and ordered by time.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

from tracemine.ingest.readers.base import (
    BadRecord,
    Sink,
    as_dict,
    as_float,
    as_small_int,
    as_str,
    loads,
)
from tracemine.ingest.readers.otlp import _RUN_KEYS, _TASK_KEYS, OtlpReader, _first, _from_console

TRACE_ID, SPAN_ID = "context.trace_id", "context.span_id"
ATTRIBUTE_PREFIX = "attributes."
# attributes Phoenix decodes from JSON text (``phoenix.trace.attributes``): objects kept whole
_JSON_ATTRIBUTES = ("metadata", "tool.parameters", "llm.prompt_template.variables")
_SPAN_COLUMNS = ("name", "span_kind", "parent_id", "start_time", "end_time", "status_code")


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _without_nulls(value: Any) -> Any:
    """An object with its null members dropped, at every depth (a parquet struct holds
    every key of its column; lists keep their items)."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if _present(v)}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _put(attrs: dict[str, Any], key: str, value: Any) -> None:
    """One attribute column into ``attrs``, nested objects of keys that are no
    OpenInference key joined back into dotted keys, as the span had them."""
    if not _present(value):
        return
    if isinstance(value, dict) and not key.endswith(_JSON_ATTRIBUTES):
        for inner, item in value.items():
            _put(attrs, f"{key}.{inner}", item)
        return
    if key.endswith(_JSON_ATTRIBUTES) and isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = loads(value)
    attrs[key] = _without_nulls(value)


def attributes_of(row: dict[str, Any]) -> dict[str, Any]:
    """The span attributes a dataframe row holds, keyed as OpenInference names them."""
    attrs: dict[str, Any] = {}
    for column, value in row.items():
        if isinstance(column, str) and column.startswith(ATTRIBUTE_PREFIX):
            _put(attrs, column[len(ATTRIBUTE_PREFIX) :], value)
    return attrs


def _events(value: Any) -> list[Any]:
    if isinstance(value, str):  # a dataframe saved as text (CSV-like) keeps them as JSON
        try:
            value = loads(value)
        except ValueError:
            return []
    return [_without_nulls(e) for e in value] if isinstance(value, list) else []


def _is_row(unit: Any) -> bool:
    return isinstance(unit, dict) and (TRACE_ID in unit or SPAN_ID in unit)


class PhoenixReader(OtlpReader):
    """Rows of a Phoenix spans dataframe, read as the OTLP reader reads OpenInference
    spans; only the run (the trace) and its task are decided here (:meth:`_run`)."""

    name = "phoenix"
    version = "1"
    priority = 22  # after otlp: a Phoenix row has no resourceSpans, no "context" object
    looks_for = (
        "OpenInference TOOL spans (span_kind TOOL, with attributes.tool.name, "
        "attributes.input.value and attributes.output.value)"
    )

    def __init__(self, source_file: str) -> None:
        super().__init__(source_file)
        self.metadata: dict[str, dict[str, Any]] = {}  # trace id -> any span's metadata

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        return (
            _is_row(unit)
            and "span_kind" in unit
            and isinstance(unit.get(TRACE_ID, unit.get(SPAN_ID)), str)
        )

    @classmethod
    def near_miss(cls, unit: Any) -> str | None:
        if not isinstance(unit, dict) or cls.sniff(unit):
            return None
        if _is_row(unit):
            has = [c for c in (TRACE_ID, SPAN_ID) if c in unit]
            lacks = [c for c in _SPAN_COLUMNS if c not in unit]
            if lacks:
                return (
                    f"its first row has {' and '.join(has)} and no {', '.join(lacks)} "
                    "(get_spans_dataframe gives name, span_kind, parent_id, start_time, "
                    "end_time, status_code, context.span_id, context.trace_id and "
                    "attributes.* columns)"
                )
            return f"its first row's {has[0]} is not a string"
        if "span_kind" in unit and any(str(k).startswith(ATTRIBUTE_PREFIX) for k in unit):
            return (
                "its first row has span_kind and attributes.* columns and no "
                "context.trace_id or context.span_id (save the dataframe with its span "
                "and trace id columns)"
            )
        return None

    def feed(self, unit: Any, line: int, out: Sink) -> None:
        if not _is_row(unit):
            raise BadRecord(
                "expected a Phoenix spans dataframe row (get_spans_dataframe: name, "
                "span_kind, context.span_id, context.trace_id, attributes.* columns)"
            )
        attrs = attributes_of(unit)
        kind = as_str(attrs.get("openinference.span.kind")) or as_str(unit.get("span_kind"))
        if kind:
            attrs["openinference.span.kind"] = kind.upper()
        trace_id = as_str(unit.get(TRACE_ID)) or ""
        metadata = attrs.get("metadata")
        if isinstance(metadata, dict):
            known = self.metadata.setdefault(trace_id, {})
            for key, value in metadata.items():
                known.setdefault(key, value)
        # the console exporter's span has the same fields, nested: read as OTLP reads it
        console = {
            "name": unit.get("name"),
            "context": {"trace_id": trace_id, "span_id": as_str(unit.get(SPAN_ID))},
            "parent_id": as_str(unit.get("parent_id")),
            "start_time": unit.get("start_time"),
            "end_time": unit.get("end_time"),
            "attributes": attrs,
            "status": {
                "status_code": (as_str(unit.get("status_code")) or "UNSET").upper(),
                "description": unit.get("status_message") or None,
            },
            "events": _events(unit.get("events")),
        }
        self._span(_from_console(console), {}, line, "", out)

    def finish(self, out: Sink) -> None:
        super().finish(out)
        self.metadata.clear()

    def _run(self, runs: dict[str, dict[str, Any]], trace_id: str, conversation: str | None,
             session: str | None, line: int) -> tuple[str, str | None, str | None]:  # fmt: skip
        """``(run id, session, task id)`` of a call in ``trace_id``: the run is the trace;
        the task is a ``task_id`` of its spans' attributes or metadata, else its session."""
        trace = self.traces.get(trace_id, {"facts": {}})
        session = session or as_str(trace.get("session.id"))
        facts = trace["facts"]
        nested = {**self.metadata.get(trace_id, {}), **as_dict(facts.get("metadata"))}
        task_id, task_from = as_str(_first(facts, *_TASK_KEYS)), "attributes"
        if task_id is None:
            task_id, task_from = as_str(_first(nested, *_TASK_KEYS)), "metadata"
        if task_id is None and session:
            task_id, task_from = session, "session.id"
        run_id = trace_id or self.default_run_id(line)
        run = runs.get(run_id)
        if run is None:
            run = runs[run_id] = self.new_run(
                run_id=run_id,
                session_id=session,
                task_id=task_id,
                trial=as_small_int(_fact(facts, nested, ("tracemine.trial", "trial"))),
                family=as_str(_fact(facts, nested, _RUN_KEYS["family"])),
                reward=as_float(_fact(facts, nested, _RUN_KEYS["reward"])),
                run_outcome=as_str(_fact(facts, nested, _RUN_KEYS["run_outcome"])),
                metadata={"run_id_source": "trace_id", "trace_ids": [trace_id] if trace_id else []},
            )
            if task_id is not None:
                run["metadata"]["task_id_from"] = task_from
            if nested and "metadata" not in facts:
                run["metadata"]["metadata"] = nested
        for key, value in facts.items():
            run["metadata"].setdefault(key, value)
        return run_id, session, task_id


def _fact(facts: dict[str, Any], nested: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """A run fact from the root and agent spans' attributes, else from metadata."""
    found = _first(facts, *keys)
    return found if found is not None else _first(nested, *keys)
