"""What a tool result is, said once for every stage: the readers, the monitor, ``check``
and replay all turn what a tool answered into the value contracts read through
:func:`result_value`, and ask :class:`ErrorRule` whether that value is an error.

Standard library only (the monitor imports it inside agent processes).

- **Text that is JSON is parsed**: a result given as text whose first non-blank
  character opens an object or an array, or that starts like a number, is parsed
  (``"918.43"`` is the number 918.43, ``'{"a": 1}'`` an object); text that does not
  parse stays text. Text longer than :data:`MAX_PARSED_CHARS` stays text.
- **A receipt's note is not part of the result**: from the first line that starts with
  :data:`NOTE_MARK` to the end of the text is a trailer the monitor's
  ``Receipt.annotate`` (or ``content += "\\n" + receipt.note()``) added; it is cut, with
  up to two line breaks before it, before anything else is read.
- **An error payload is an error** (:class:`ErrorRule`): formats without an error flag
  return errors as content; a call said to be ``ok`` whose result is one is a tool error.

>>> result_value('{"total": 12.5}\\n\\n[tracemine] This get_order result may be wrong: …')
{'total': 12.5}
>>> result_value("918.43"), result_value("not found")
(918.43, 'not found')
>>> ErrorRule().mark({"error": {"code": "not_found", "message": "no order #W1"}})
'error_payload'
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

CONTENT_NOT_CAPTURED = "content_not_captured"
"""The anomaly of a call whose arguments or result the trace did not record (OTel content
capture off, OpenInference inputs or outputs hidden): nothing can be judged of it, so
``check`` counts it as not evaluated rather than as a violation."""

NOTE_MARK = "[tracemine] "
"""How the monitor's notes begin; a line starting with it starts a trailer."""
MAX_PARSED_CHARS = 1 << 24
"""Longer text is kept as text: parsing it would cost the agent loop more than it tells."""

_JSON_START = re.compile(r"\s*(?:[{\[]|-?\d|(?:null|true|false)\s*$)")

#: keys an error payload may have; a result with any other key is not one
ERROR_KEYS = frozenset(
    ("error", "errors", "message", "detail", "code", "status", "status_code", "type", "title")
)
#: words that make a lone ``detail`` an error message (``{"detail": "Not Found"}``)
_ERROR_WORDS = re.compile(
    r"\b(?:not found|invalid|error|fail(?:ed|ure)?|denied|forbidden|unauthori[sz]ed|"
    r"not allowed|timed? ?out|unavailable|missing|bad request|exceeded|refused)\b",
    re.IGNORECASE,
)
PAYLOAD_RULE = "error_payload"
PATTERN_RULE = "error_pattern"


def strip_note(text: str) -> str:
    """``text`` without a monitor note trailer (unchanged when it has none)."""
    at = text.find(NOTE_MARK)
    while at > 0 and text[at - 1] != "\n":
        at = text.find(NOTE_MARK, at + 1)
    if at < 0:
        return text
    end = at
    for _ in range(2):  # the blank line annotate() puts before the note, or the one "\n"
        if end and text[end - 1] == "\n":
            end -= 2 if end > 1 and text[end - 2] == "\r" else 1
    return text[:end]


def parse_text(text: str, loads: Callable[[str], Any] = json.loads) -> Any:
    """The value of a text result: parsed when it is JSON that opens with ``{``, ``[`` or
    a number, or is ``null``, ``true`` or ``false`` alone (what ``json.dumps`` writes for
    a tool that returned None or a bool), else the text itself. ``loads`` is the JSON
    parser (ingest passes a faster one that also notes NaN; what is parsed does not depend
    on it)."""
    if len(text) > MAX_PARSED_CHARS:
        return text
    if _JSON_START.match(text):
        try:
            return loads(text)
        except (ValueError, RecursionError):
            return text
    return text


def result_value(content: Any, loads: Callable[[str], Any] = json.loads) -> Any:
    """The value contracts read, from a result given as content text or already parsed:
    text has its note trailer cut and is parsed when it is JSON (:func:`parse_text`);
    any other value is returned as it is."""
    if content.__class__ is not str and not isinstance(content, str):
        return content
    return parse_text(strip_note(content) if NOTE_MARK in content else content, loads)


class ErrorRule:
    """Says whether a call reported as ``ok`` answered with an error, and which rule says so.

    The default rule (``error_payload``) marks a JSON object whose keys are all among
    :data:`ERROR_KEYS` and that carries a non-empty, non-zero ``error`` or ``errors``, or
    a failed ``status`` / ``status_code`` (400–599, or ``error`` / ``failed``) with a
    ``message``, ``detail`` or ``title``, or a ``detail`` that reads as an error (FastAPI's
    ``{"detail": "Not Found"}``, a list of validation errors). Nothing else is marked: a
    result with any other key (``{"error": null, "items": [...]}``) is a result.
    ``pattern`` (``error_pattern``) also marks a text result it matches (``re.search``).

    >>> ErrorRule(r"^Error:").mark("Error: order not found")
    'error_pattern'
    """

    __slots__ = ("pattern",)

    def __init__(self, pattern: str | None = None) -> None:
        self.pattern = re.compile(pattern) if pattern else None  # re.error for a bad one

    def mark(self, value: Any) -> str | None:
        """The rule that makes ``value`` an error payload, or None."""
        if value.__class__ is dict:
            return PAYLOAD_RULE if is_error_payload(value) else None
        if self.pattern is not None and isinstance(value, str) and self.pattern.search(value):
            return PATTERN_RULE
        return None


def is_error_payload(value: dict[Any, Any]) -> bool:
    """The default rule of :class:`ErrorRule` on a JSON object."""
    if not may_be_error(value) or not value.keys() <= ERROR_KEYS:
        return False
    if value.get("error") or value.get("errors"):
        return True
    status = value.get("status", value.get("status_code"))
    if _failed(status) and any(value.get(k) for k in ("message", "detail", "title")):
        return True
    detail = value.get("detail")
    if isinstance(detail, str):
        return bool(_ERROR_WORDS.search(detail))
    return (
        isinstance(detail, list)
        and bool(detail)
        and all(isinstance(item, dict) and ("msg" in item or "message" in item) for item in detail)
    )


def may_be_error(value: dict[Any, Any]) -> bool:
    """False for most results, in a few lookups: none of the keys an error payload needs
    (the monitor asks this inline before :func:`is_error_payload`)."""
    return (
        "error" in value
        or "errors" in value
        or "detail" in value
        or "message" in value
        or "title" in value
    )


def _failed(status: Any) -> bool:
    """An HTTP error status (400–599, as a number or digits) or a status word of failure."""
    if isinstance(status, str):
        if not status.isdigit():
            return status.lower() in ("error", "fail", "failed", "failure")
        status = int(status)
    return isinstance(status, int) and not isinstance(status, bool) and 400 <= status <= 599


DEFAULT_RULE = ErrorRule()
