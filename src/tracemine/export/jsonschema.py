"""``jsonschema``: one JSON Schema (2020-12) per tool result, usable as an MCP tool's
``outputSchema``. Conditional contracts become ``if``/``then``; contracts relating two
values, reading the arguments or spanning a run are reported, not dropped."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tracemine.export._base import Exported, Options, by_tool
from tracemine.export._fragments import (
    DIALECT,
    Unexpressible,
    fragment_body,
    merge,
    predicate_schema,
    type_hints,
)
from tracemine.model.contract import Contract, ContractFile

SUFFIX = ".result.schema.json"


def result_schema(
    tool: str, contracts: list[Contract], hints: dict[str, str] | None = None
) -> tuple[dict[str, Any], list[tuple[Contract, str]]]:
    """The schema of ``tool``'s result that the given contracts (all of that tool) imply,
    and the contracts it could not express with the reason.

    >>> schema, skipped = result_schema("get_order", contracts)  # doctest: +SKIP
    >>> jsonschema.validate(result, schema)  # doctest: +SKIP
    """
    body: dict[str, Any] = {}
    conditions: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    skipped: list[tuple[Contract, str]] = []
    expressed: list[str] = []
    for c in contracts:
        try:
            fragment = fragment_body(c, hints)
            if c.when is None:
                merge(body, fragment)
            else:
                # contracts under the same condition share one if/then
                key = json.dumps(c.when.model_dump(mode="json"), sort_keys=True)
                _, then = conditions.setdefault(key, (predicate_schema(c.when), {}))
                merge(then, fragment)
        except Unexpressible as exc:
            skipped.append((c, str(exc)))
            continue
        expressed.append(c.id)
    if conditions:
        merge(body, {"allOf": [{"if": i, "then": t} for i, t in conditions.values()]})
    schema = {
        "$schema": DIALECT,
        "title": f"{tool} result",
        "description": f"What tracemine contracts require of a {tool} result.",
        **body,
        "x-tracemine-contracts": sorted(expressed),
    }
    return schema, skipped


def file_name(tool: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", tool) + SUFFIX


def export(
    contracts: list[Contract], source: ContractFile, out: Path, options: Options
) -> Exported:
    """One ``<tool>.result.schema.json`` per tool in the directory ``out``."""
    result = Exported()
    hints_all = type_hints(source.contracts)
    for tool, items in by_tool(contracts).items():
        hints = {path: t for (name, path), t in hints_all.items() if name == tool}
        schema, skipped = result_schema(tool, items, hints)
        for contract, reason in skipped:
            result.skip(contract, reason)
        if len(schema["x-tracemine-contracts"]) == 0:
            continue  # nothing of this tool's result could be said
        result.exported += len(schema["x-tracemine-contracts"])
        text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
        result.files[out / file_name(tool)] = text
    if not result.files:
        result.notes.append("no contract could be expressed as a result schema; nothing written")
    return result
