"""Which calls read as ``ok`` are tool errors: the rule ingest marks them by
(:class:`tracemine.model.result.ErrorRule`, applied to every call in the readers' sink), and
``--error-pattern``, the option that adds a pattern for text results."""

from __future__ import annotations

import re

from tracemine.errors import InputError
from tracemine.model.result import DEFAULT_RULE, ErrorRule


def error_rule(pattern: str | None = None) -> ErrorRule:
    """The rule for ``pattern`` (a regular expression searched in text results; None for
    the default rule only). A pattern that does not compile is an :class:`InputError`."""
    if not pattern:
        return DEFAULT_RULE
    try:
        return ErrorRule(pattern)
    except re.error as exc:
        why = f"--error-pattern {pattern!r} is not a regular expression: {exc}"
        raise InputError(why) from None
