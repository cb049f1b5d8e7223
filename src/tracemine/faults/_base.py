"""What the fault appliers share: the candidate site and what is known about the nominal
runs (values seen per tool and path, per task) that some faults borrow from."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tracemine.faults.paths import Token, is_number, pattern, walk

Apply = Callable[[dict[str, Any], random.Random], str]

_ENUM_MAX_VALUES = 8
_ENUM_MIN_REPEATS = 3


@dataclass(slots=True)
class Site:
    """A place where one fault can go: call ``index`` of a run, ``side`` (``args``,
    ``result`` or ``call`` for ids, status and timing) and the path inside it. ``apply``
    navigates from the run when called, so a site stays valid after a run is restored."""

    index: int
    side: str
    tokens: list[Token]
    apply: Apply
    also: list[int] = field(default_factory=list)  # other calls the fault touches


def ok_calls(run: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """Calls that succeeded with a result: the only ones a fault can spoil."""
    return [
        (index, call)
        for index, call in enumerate(run["calls"])
        if call.get("status") == "ok" and call.get("result") is not None
    ]


def structured(call: dict[str, Any]) -> bool:
    return isinstance(call.get("result"), dict | list)


def touched_result(call: dict[str, Any]) -> None:
    """The result changed: the texts it was parsed from no longer describe it."""
    call["result_text"] = None
    call["result_raw"] = None


def touched_arguments(call: dict[str, Any]) -> None:
    call["arguments_raw"] = None


class Context:
    """Facts about the nominal runs, gathered once before any fault is applied."""

    def __init__(self, runs: list[dict[str, Any]]) -> None:
        self.values: dict[tuple[str, str], list[tuple[str, Any]]] = {}
        self.results: dict[str, list[tuple[str, Any]]] = {}
        seen: dict[tuple[str, str], dict[str, int]] = {}
        objects: dict[tuple[str, str], int] = {}
        members: dict[tuple[str, str], int] = {}
        self.nullable: set[tuple[str, str]] = set()
        for run in runs:
            task = str(run.get("task_id") or run["run_id"])
            for _, call in ok_calls(run):
                tool = call["tool"]
                if structured(call):
                    self.results.setdefault(tool, []).append((task, call["result"]))
                if isinstance(call["result"], dict):
                    objects[(tool, "result")] = objects.get((tool, "result"), 0) + 1
                for tokens, value in walk(call["result"]):
                    here = (tool, pattern("result", tokens))
                    if isinstance(tokens[-1], str):
                        members[here] = members.get(here, 0) + 1
                    if isinstance(value, dict):
                        objects[here] = objects.get(here, 0) + 1
                    elif value is None:
                        self.nullable.add(here)
                    if isinstance(value, str) or is_number(value):
                        key = (tool, pattern("result", tokens))
                        self.values.setdefault(key, []).append((task, value))
                    if isinstance(value, str):
                        counts = seen.setdefault((tool, pattern("result", tokens)), {})
                        counts[value] = counts.get(value, 0) + 1
        # members present in every object that holds them: leaving one out is a fault,
        # while leaving out an optional field (absent by design elsewhere) is not
        self.required: set[tuple[str, str]] = {
            (tool, path)
            for (tool, path), count in members.items()
            if count == objects.get((tool, path[: path.rindex(".")]), -1)
        }
        self.vocab: dict[tuple[str, str], list[str]] = {
            key: list(counts)
            for key, counts in seen.items()
            if len(counts) <= _ENUM_MAX_VALUES
            and sum(counts.values()) >= _ENUM_MIN_REPEATS * len(counts)
            and all(_enum_like(value) for value in counts)
        }

    def other_task_values(self, tool: str, path: str, task: str, current: Any) -> list[Any]:
        """Values seen at the same tool and path in other tasks, of the same type, that
        differ from ``current``; first seen first, without repeats."""
        found: list[Any] = []
        for other_task, value in self.values.get((tool, path), []):
            if (
                other_task != task
                and type(value) is type(current)
                and value != current
                and value not in found
            ):
                found.append(value)
                if len(found) >= 20:  # enough to choose from; keeps this linear
                    break
        return found


def _enum_like(value: str) -> bool:
    return 0 < len(value) <= 24 and not any(ch.isdigit() for ch in value) and " " not in value
