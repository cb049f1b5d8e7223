"""The ``inferred-schema`` arm: a baseline with no statistics at all. Per tool and side, a
JSON Schema inferred by GenSON from every argument and every result of the mining set,
checked with ``jsonschema`` (Draft 2020-12) on the evaluation calls.

It is the yardstick a user would reach for first (infer a schema from good traffic,
validate against it), so selection must never do worse than it on what a schema can see.
It is a baseline, not part of tracemine's runtime: GenSON comes with the ``dev`` extra
(``pip install 'tracemine[dev]'``), and without it the arm is reported as not available.

The arm is judged exactly as the others are: a monitor with no contracts replays every run
(so the completeness gate is the same), a call's arguments are validated whenever it has a
receipt and its result only when the monitor would read one (status ``ok``, ``unknown`` or
none, and not an error payload: a tool error is no false alarm here either), and each
schema error is an alarm at that call, named by side and JSON Schema keyword, with the
path it points at (a ``required`` error points at the missing key).
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from tracemine.model.result import is_error_payload, result_value

NAME = "inferred-schema"
OK_STATUSES = (None, "ok", "unknown")
"""Statuses whose result the monitor reads (a result of any other is an error payload)."""
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def unavailable() -> str | None:
    """Why the arm cannot be built here, or ``None`` when it can."""
    if importlib.util.find_spec("genson") is None:
        return "not available: GenSON is not installed (pip install 'tracemine[dev]')"
    return None


def read_result(call: dict[str, Any]) -> tuple[bool, Any]:
    """Whether the monitor would check this call's result, and the value it would read."""
    if call.get("status") == "missing":
        return False, None
    value = result_value(call.get("result"))
    if call.get("status") not in OK_STATUSES:
        return False, value
    return not (isinstance(value, dict) and is_error_payload(value)), value


@dataclass(slots=True)
class InferredSchemas:
    """One JSON Schema per (tool, side), and their validators."""

    schemas: dict[tuple[str, str], dict[str, Any]]
    _validators: dict[tuple[str, str], Draft202012Validator] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._validators = {key: Draft202012Validator(s) for key, s in self.schemas.items()}

    def document(self) -> dict[str, Any]:
        """The schemas as one reviewable JSON document: ``{tool: {args, result}}``."""
        out: dict[str, dict[str, Any]] = {}
        for (tool, side), schema in sorted(self.schemas.items()):
            out.setdefault(tool, {})[side] = schema
        return {"arm": NAME, "dialect": Draft202012Validator.META_SCHEMA["$schema"],
                "tools": out}  # fmt: skip

    def errors(self, call: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
        """``(side, keyword, path)`` of every schema error of one call."""
        if call.get("status") == "missing":
            return
        tool = str(call.get("tool"))
        checked, value = read_result(call)
        sides = [("args", call.get("arguments"))] + ([("result", value)] if checked else [])
        for side, instance in sides:
            validator = self._validators.get((tool, side))
            if validator is None:
                continue  # a tool the mining set never called: no schema, as no contracts
            for error in validator.iter_errors(instance):
                yield side, str(error.validator), _path(side, error)


def infer_schemas(runs: Iterable[dict[str, Any]]) -> InferredSchemas:
    """GenSON schemas of the runs' arguments and checked results, per tool."""
    from genson import SchemaBuilder

    builders: dict[tuple[str, str], Any] = {}

    def add(tool: str, side: str, value: Any) -> None:
        builder = builders.get((tool, side))
        if builder is None:
            builder = builders[(tool, side)] = SchemaBuilder(schema_uri=None)
        builder.add_object(value)

    for run in runs:
        for call in run["calls"]:
            if call.get("status") == "missing":
                continue
            tool = str(call.get("tool"))
            add(tool, "args", call.get("arguments"))
            checked, value = read_result(call)
            if checked:
                add(tool, "result", value)
    return InferredSchemas({key: b.to_schema() for key, b in builders.items()})


def _path(side: str, error: Any) -> str:
    """The tracemine path an error points at: ``result.items[0].price``; for ``required``,
    the first missing key under the object it names."""
    steps = list(error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [k for k in error.validator_value if k not in error.instance]
        steps += missing[:1]
    text = side
    for step in steps:
        if isinstance(step, int):
            text += f"[{step}]"
        elif _PLAIN_KEY.match(str(step)):
            text += f".{step}"
        else:
            text += '["' + str(step).replace("\\", "\\\\").replace('"', '\\"') + '"]'
    return text
