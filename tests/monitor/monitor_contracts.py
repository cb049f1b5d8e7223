"""Contracts for the monitor tests, built with the pydantic model so that the file format
the monitor reads stays the one the rest of tracemine writes. (A module of its own: a
test importing from ``conftest`` gets whichever conftest was imported first.)"""

from __future__ import annotations

from typing import Any

from tracemine.model.contract import Contract


def contract(kind: str, paths: list[str], tool: str = "get_order", **fields: Any) -> Contract:
    """An accepted contract (``side`` inferred from the first path)."""
    side = fields.pop("side", None) or ("args" if paths and "args" in paths[0] else "result")
    fields.setdefault("status", "accepted")
    return Contract(tool=tool, side=side, kind=kind, paths=paths, **fields)
