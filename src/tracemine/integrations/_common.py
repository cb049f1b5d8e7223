"""What the integrations share: standard library only, no framework."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tracemine.monitor import Run


def missing(module: str, extra: str, package: str) -> ImportError:
    """The error an integration raises when its framework is not installed."""
    return ImportError(
        f"{module} needs {package}, which is not installed: pip install 'tracemine[{extra}]'"
    )


RunSource = Run | Callable[[], Run | None] | None


def current_run(source: RunSource) -> Run | None:
    """The run to record into: a :class:`Run`, or what a callable gives (``None`` when it
    raises or gives something else — the check goes on without a run)."""
    if source is None or isinstance(source, Run):
        return source
    try:
        found = source()
    except Exception:
        return None
    return found if isinstance(found, Run) else None


def parse_arguments(text: Any) -> Any:
    """Tool arguments as frameworks carry them (a JSON string, most often) as a value;
    text that is not JSON stays text, for contracts to judge."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def as_text(value: Any) -> str:
    """A tool's output as text for a model: text unchanged, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
