"""What every reader shares: the reader protocol, the per-unit sink and value helpers.

A *unit* is one top-level JSON value of a file: a line of JSONL, or an element of a
top-level JSON array. A reader turns units into call records (plain dicts keyed by
``CALL_FIELDS``), run records and quarantined items. Formats whose runs span many units
(OTLP spans, MCP messages, flat call logs) keep pending state and flush it in ``finish``.
"""

from __future__ import annotations

import math
import re
import reprlib
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, ClassVar

import orjson

from tracemine.ingest.limits import MAX_DEPTH, ORJSON_DEPTH, depth_exceeds
from tracemine.model.result import DEFAULT_RULE, ErrorRule, parse_text, result_value
from tracemine.model.trace import CALL_FIELDS, RUN_FIELDS

EXCERPT_CHARS = 400


class BadRecord(Exception):
    """Raised by a reader for a unit it cannot use; the unit is quarantined with this reason."""


_CALL_DEFAULTS: dict[str, Any] = {name: None for name in CALL_FIELDS}
_CALL_DEFAULTS.update(
    task_id_source="none",
    id_pairing="none",
    result_truncated=False,
    result_redacted=False,
    status="unknown",
)
_RUN_DEFAULTS: dict[str, Any] = {name: None for name in RUN_FIELDS}
_RUN_DEFAULTS.update(task_id_source="none")


class Sink:
    """Collects what a reader emits for one unit (or for ``finish``).

    Every call goes through :meth:`call`, where ``errors`` (the default
    :class:`~tracemine.model.result.ErrorRule` unless given) marks a call read as ``ok``
    whose result is an error payload: its status becomes ``tool_error`` and its
    ``error_type`` names the rule; the result is kept. The monitor applies the same rule
    to a result checked as ``ok``, so ingest, ``check`` and the agent loop agree."""

    __slots__ = ("calls", "errors", "quarantined", "runs")

    def __init__(self, errors: ErrorRule = DEFAULT_RULE) -> None:
        self.calls: list[dict[str, Any]] = []
        self.runs: list[dict[str, Any]] = []
        self.quarantined: list[tuple[int | None, str | None, str, str]] = []
        self.errors = errors

    def call(self, record: dict[str, Any]) -> None:
        if record.get("status") == "ok":
            rule = self.errors.mark(record.get("result"))
            if rule is not None:
                record.update(status="tool_error", error_type=rule,
                              error_message=record.get("error_message") or _message_of(
                                  record.get("result")))  # fmt: skip
        self.calls.append(record)

    def run(self, record: dict[str, Any]) -> None:
        self.runs.append(record)

    def quarantine(self, line: int | None, pointer: str | None, reason: str, raw: Any) -> None:
        self.quarantined.append((line, pointer, reason, excerpt(raw)))

    def clear(self) -> None:
        self.calls.clear()
        self.runs.clear()
        self.quarantined.clear()


class Reader:
    """Base class of the format adapters. Subclasses set ``name`` and implement
    ``sniff`` and ``feed`` (and ``finish`` when they keep state across units)."""

    name: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    #: detection order: lower is tried first (more specific shapes first)
    priority: ClassVar[int] = 50
    #: seq of a run's calls is recomputed from started_at after the file is read
    orders_by_time: ClassVar[bool] = False
    #: a call id may repeat anywhere in the file (not only within one unit): such a reader
    #: does not flag repeats itself; whoever collects the file does (ingest in the store,
    #: with one query; ``read_traces`` over the calls it holds)
    ids_repeat_across_units: ClassVar[bool] = False

    def __init__(self, source_file: str) -> None:
        self.source_file = source_file
        #: ingest's ``--task-key`` (a :class:`~tracemine.ingest.taskkey.TaskKey`), for a
        #: format whose calls name their own task (the ``mcp`` reader's ``params._meta``)
        self.task_key: Any = None

    @classmethod
    def sniff(cls, unit: Any) -> bool:
        """True when the first unit of a file looks like this format."""
        raise NotImplementedError

    @classmethod
    def near_miss(cls, unit: Any) -> str | None:
        """For a first unit this reader does not take but nearly does (a platform's
        export with a field renamed or missing), one line saying what it expected;
        detection then reports that line instead of "no reader recognises this file"."""
        return None

    @classmethod
    def splittable(cls, unit: Any) -> bool:
        """True when a file whose first unit is ``unit`` may be cut between any two
        units and read in pieces: every unit of it holds whole runs, and the reader keeps
        nothing from one unit to the next (a shard of a sharded mine may then be a byte
        range of the file)."""
        return False

    def feed(self, unit: Any, line: int, out: Sink) -> None:
        """Read one unit. Raise :class:`BadRecord` to quarantine it whole."""
        raise NotImplementedError

    def finish(self, out: Sink) -> None:
        """Flush pending state at the end of the file."""

    # -- helpers for subclasses -------------------------------------------------------
    def default_run_id(self, line: int) -> str:
        """Run id for a source that gives none: the file's name and the record's position."""
        return f"{self.source_file.rsplit('/', 1)[-1]}:{line}"

    def new_call(self, **fields: Any) -> dict[str, Any]:
        record = dict(_CALL_DEFAULTS)
        record["source_format"] = self.name
        record["source_file"] = self.source_file
        record["adapter_version"] = self.version
        record.update(fields)
        return record

    def new_run(self, **fields: Any) -> dict[str, Any]:
        record = dict(_RUN_DEFAULTS)
        record["source_format"] = self.name
        record["source_file"] = self.source_file
        record.update(fields)
        return record


# -- value helpers ---------------------------------------------------------------------


def excerpt(raw: Any, limit: int = EXCERPT_CHARS) -> str:
    """The start of ``raw`` as text, for a quarantine row: bytes decoded, a parsed value
    written as JSON (or, for one no JSON writer takes, its bounded repr)."""
    if isinstance(raw, bytes):
        text = raw[: limit * 4].decode("utf-8", "replace")
    elif isinstance(raw, str):
        text = raw
    else:
        try:
            text = orjson.dumps(raw, default=str).decode()
        except (TypeError, orjson.JSONEncodeError):
            # too deep or too large an integer for orjson: repr would recurse as deep as
            # the value goes, reprlib stops a few levels down and after a few items
            text = _SHORT_REPR.repr(raw)
    return text if len(text) <= limit else text[:limit] + "…"


_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxlevel = 12
_SHORT_REPR.maxstring = _SHORT_REPR.maxother = EXCERPT_CHARS
_SHORT_REPR.maxdict = _SHORT_REPR.maxlist = 20
_SHORT_REPR.maxlong = 60


def loads(text: str | bytes) -> Any:
    """Parse JSON; fall back to the standard library for what orjson refuses (NaN, and
    escaped UTF-16 surrogates that pair with nothing, which become U+FFFD: no UTF-8 text,
    so no store, can hold them). Raises ValueError for text that is not JSON, and for
    JSON nested past orjson's 1024 levels (the standard library would recurse)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):
            raise NestedTooDeeply(f"JSON nested deeper than {_PARSE_DEPTH} levels") from None
        import json

        try:
            value = json.loads(text)
            _note_not_numbers(value, "")
            if _SURROGATE_ESCAPE.search(text if isinstance(text, str) else text.decode("utf-8")):
                return _rebuilt(value, _paired)
            return value
        except RecursionError:  # the parser, or a walk of what it made
            raise NestedTooDeeply("JSON nested too deeply to parse") from None


_PARSE_DEPTH = 1024  # orjson's own limit


class NestedTooDeeply(ValueError):
    """JSON text that is nested too deeply to parse (:func:`loads`)."""


_NOT_NUMBERS = threading.local()
_NAMES = {"nan": "NaN", "inf": "a number too large for a double (Infinity)",
          "-inf": "a number too large for a double (-Infinity)"}  # fmt: skip


def _note_not_numbers(value: Any, pointer: str) -> None:
    """Remember where ``value`` holds NaN or an infinity: JSON has no such numbers, only
    the lenient parser lets them in, and the store writes them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        found = getattr(_NOT_NUMBERS, "found", None)
        if found is None:
            found = _NOT_NUMBERS.found = []
        found.append((pointer or "/", _NAMES[repr(value)]))
    elif isinstance(value, dict):
        for key, item in value.items():
            _note_not_numbers(item, f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _note_not_numbers(item, f"{pointer}/{index}")


def not_numbers() -> list[tuple[str, str]]:
    """``(JSON pointer, what was there)`` for each NaN or infinity parsed by this thread
    since the last call (pointers are within the JSON text that held them: the unit, or a
    string inside it such as a call's arguments). They are stored as null; the caller
    quarantines an item for each, so the change is on record."""
    found = getattr(_NOT_NUMBERS, "found", None)
    _NOT_NUMBERS.found = None
    return found or []


def quarantine_not_numbers(
    sink: Sink, position: int, unit: Any, parsed: list[tuple[str, str]]
) -> None:
    """An item quarantined for each NaN or infinity the unit held (stored as null):
    ``parsed`` from the unit itself, the rest from JSON texts inside it the reader parsed."""
    for pointer, what in parsed + not_numbers():
        sink.quarantine(position, pointer, f"{what} is not a JSON number; stored as null", unit)


_SURROGATE_ESCAPE = re.compile(r"\\[uU][dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _paired(value: Any) -> Any:
    """A string's unpaired surrogates replaced by U+FFFD."""
    if isinstance(value, str) and _SURROGATE.search(value):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def _rebuilt(value: Any, leaf: Callable[[Any], Any]) -> Any:
    """A parsed JSON value rebuilt with ``leaf`` applied to every key and scalar."""
    if isinstance(value, dict):
        return {leaf(k): _rebuilt(v, leaf) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rebuilt(v, leaf) for v in value]
    return leaf(value)


def dumps(value: Any, max_depth: int = MAX_DEPTH) -> str:
    """Compact JSON text of a parsed value; NaN and infinities become null. Raises
    ValueError for a value nested deeper than ``max_depth`` levels (or too deeply for the
    standard library's writer)."""
    if max_depth < ORJSON_DEPTH and depth_exceeds(value, max_depth):
        raise ValueError(f"value nested deeper than {max_depth} levels (--max-depth)")
    try:
        return orjson.dumps(value, default=str).decode()
    except TypeError:
        # orjson refuses integers past 64 bits and nesting past 254 levels, both of which
        # the parser may have let through: the standard library writes them exactly
        import json

        if depth_exceeds(value, max_depth):
            raise ValueError(f"value nested deeper than {max_depth} levels (--max-depth)") from None
        try:
            return json.dumps(_rebuilt(value, _finite), default=str, ensure_ascii=False,
                              separators=(",", ":"), allow_nan=False)  # fmt: skip
        except RecursionError:
            raise ValueError("value nested too deeply to store") from None


def _finite(value: Any) -> Any:
    """NaN and infinities as None, as orjson writes them."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def parse_arguments(raw: Any) -> tuple[str | None, Any, str | None]:
    """``(arguments_raw, arguments, arguments_error)`` from what the source gave.

    A string is kept exactly and parsed; a structure is serialized for ``arguments_raw``.
    An unparseable string gives ``arguments=None`` and an error: the call could not be
    parsed, which is not the same as no call.
    """
    if raw is None:
        return None, None, None
    if isinstance(raw, str):
        if raw.strip() == "":
            return raw, {}, None
        try:
            return raw, loads(raw), None
        except ValueError as exc:
            return raw, None, f"arguments are not valid JSON: {exc}"
    return dumps(raw), raw, None


def parse_result_text(text: str) -> Any:
    """A result given as text, as every stage reads it
    (:func:`tracemine.model.result.result_value`): a monitor note trailer cut, JSON
    parsed, other text kept as text."""
    return result_value(text, loads)


def parse_json_text(text: str) -> Any:
    """Text parsed by the same rules as a result, but kept whole (no note is cut): for
    arguments given as plain text."""
    return parse_text(text, loads)


def _message_of(result: Any) -> str | None:
    """The message an error payload carries, for ``error_message``."""
    if isinstance(result, str):
        return result[:EXCERPT_CHARS]
    if not isinstance(result, dict):
        return None
    error = result.get("error")
    for value in (error.get("message") if isinstance(error, dict) else error,
                  result.get("message"), result.get("detail"), result.get("title")):  # fmt: skip
        if isinstance(value, str) and value:
            return value[:EXCERPT_CHARS]
    return excerpt(result)


def text_of_parts(parts: Iterable[Any]) -> str | None:
    """Join the text of content parts (``{"type": "text", "text": ...}``); None if none."""
    texts = []
    for part in parts:
        if isinstance(part, dict):
            value = part.get("text")
            if isinstance(value, str):
                texts.append(value)
        elif isinstance(part, str):
            texts.append(part)
    return "\n".join(texts) if texts else None


_MAX_DIGITS = 30
"""Longer digit strings are no time or count (and ``int`` refuses past a few thousand)."""


def parse_time(value: Any) -> datetime | None:
    """ISO 8601 strings, epoch seconds/milliseconds/nanoseconds; None when unreadable."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        # isdecimal, not isdigit: int() refuses "²", a digit to isdigit
        if text.isdecimal():
            return parse_time(int(text)) if len(text) <= _MAX_DIGITS else None
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC).replace(tzinfo=None)
    if isinstance(value, int | float):
        if isinstance(value, int) and abs(value) > 10**_MAX_DIGITS:
            return None  # float() cannot hold it, and no clock is that far off
        number = float(value)
        if number > 1e17:  # nanoseconds
            number /= 1e9
        elif number > 1e14:  # microseconds
            number /= 1e6
        elif number > 1e11:  # milliseconds
            number /= 1e3
        try:
            return datetime.fromtimestamp(number, tz=UTC).replace(tzinfo=None)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def duration_ms(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return (end - start).total_seconds() * 1000.0


def as_str(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    return dumps(value)


def as_dict(value: Any) -> dict[str, Any]:
    """The value if it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdecimal():
        digits = value.strip().lstrip("-")
        # isdecimal, not isdigit: int() refuses "²"; nor does it read thousands of digits
        return int(value) if len(digits) <= _MAX_DIGITS and value.count("-") <= 1 else None
    return None


def as_small_int(value: Any) -> int | None:
    """An integer for one of the store's 32-bit columns (seq, turn, trial …): None unless
    it is an integer in that range (a larger one says nothing such a field could)."""
    number = as_int(value)
    return number if number is not None and -(2**31) <= number < 2**31 else None


def as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None
