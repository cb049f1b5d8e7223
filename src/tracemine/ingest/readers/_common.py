"""Pieces two or more readers share (not a reader itself)."""

from __future__ import annotations

from typing import Any

from tracemine.ingest.readers.base import as_float, as_small_int, as_str

_OUTCOME_KEYS = ("run_outcome", "outcome", "success", "passed", "label", "status")
_FAMILY_KEYS = ("family", "task_type", "task_family", "category", "domain")


def run_fields(wrapper: dict[str, Any]) -> dict[str, Any]:
    """Grouping fields found on a run's wrapper object (result files, call logs)."""
    raw_metadata = wrapper.get("metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    merged: dict[str, Any] = {**metadata}
    for name, value in wrapper.items():
        if name != "metadata" and not isinstance(value, dict | list):
            merged[name] = value
    reward = as_float(merged.get("reward"))
    outcome = next((merged[k] for k in _OUTCOME_KEYS if merged.get(k) is not None), None)
    if outcome is None and reward is not None:
        outcome = as_str(merged.get("reward"))
    task_id = as_str(
        merged.get("task_id") if merged.get("task_id") is not None else merged.get("task")
    )
    return {
        "task_id": task_id,
        "task_id_source": "explicit" if task_id is not None else "none",
        "trial": as_small_int(merged.get("trial")),
        "session_id": as_str(merged.get("session_id")),
        "run_outcome": as_str(outcome),
        "reward": reward,
        "family": as_str(
            next((merged[k] for k in _FAMILY_KEYS if merged.get(k) is not None), None)
        ),
        "metadata": merged,
    }


class SeenIds:
    """Remembers (run, call id) pairs to flag duplicates, in bounded memory per entry."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: set[int] = set()

    def is_duplicate(self, run_id: str, call_id: str | None) -> bool:
        if call_id is None:
            return False
        marker = hash((run_id, call_id))
        if marker in self._seen:
            return True
        self._seen.add(marker)
        return False
