"""What templates share: building a candidate with its support."""

from __future__ import annotations

from typing import Any

from tracemine.model.contract import Contract, Evidence, Kind, Predicate, Side


def candidate(
    tool: str,
    side: str,
    kind: Kind,
    paths: list[str],
    params: dict[str, Any] | None = None,
    *,
    calls: int,
    tasks: int,
    when: Predicate | None = None,
) -> Contract:
    """A mined candidate; ``calls`` and ``tasks`` are its support in the proposing context."""
    return Contract(
        tool=tool,
        side=Side(side),
        kind=kind,
        paths=paths,
        params=params or {},
        when=when,
        evidence=Evidence(calls=calls, tasks=tasks),
    )


def is_root(path: str) -> bool:
    return path in ("args", "result")
