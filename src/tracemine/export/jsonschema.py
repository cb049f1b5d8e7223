"""``jsonschema``: one JSON Schema (2020-12) per tool result, usable as an MCP tool's
``outputSchema``. Conditional contracts become ``if``/``then``; contracts relating two
values, reading the arguments or spanning a run are reported, not dropped."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
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


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def file_names(tools: Iterable[str]) -> dict[str, str]:
    """A file name per tool, unique even where the tools' names are not safe as file
    names: ``get order``, ``get/order`` and ``get_order`` all read ``get_order`` once
    sanitized, and ``Get_Order`` meets ``get_order`` on a case-blind file system. Such a
    tool's name gets a short hash of the real name; a plain, unshared name stays plain."""
    tools = list(tools)
    stems = {tool: _UNSAFE.sub("_", tool).strip(".") or "tool" for tool in tools}
    shared = Counter(stem.lower() for stem in stems.values())
    names = {}
    for tool, stem in stems.items():
        if stem != tool or shared[stem.lower()] > 1:
            stem += "." + hashlib.sha256(tool.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        names[tool] = stem + SUFFIX
    return names


def tool_schemas(
    contracts: list[Contract], source: ContractFile, result: Exported
) -> Iterator[tuple[str, list[Contract], dict[str, Any]]]:
    """Each tool's contracts and the result schema they imply, for the tools it says
    something of; what a schema cannot say goes to ``result`` as skipped."""
    hints_all = type_hints(source.contracts)
    for tool, items in by_tool(contracts).items():
        hints = {path: t for (name, path), t in hints_all.items() if name == tool}
        schema, skipped = result_schema(tool, items, hints)
        for contract, reason in skipped:
            result.skip(contract, reason)
        if schema["x-tracemine-contracts"]:  # else nothing of this tool's result is said
            yield tool, items, schema


def export(
    contracts: list[Contract], source: ContractFile, out: Path, options: Options
) -> Exported:
    """One ``<tool>.result.schema.json`` per tool in the directory ``out``."""
    result = Exported()
    names = file_names(c.tool for c in contracts)
    for tool, _, schema in tool_schemas(contracts, source, result):
        result.exported += len(schema["x-tracemine-contracts"])
        text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
        result.files[out / names[tool]] = text
    if not result.files:
        result.notes.append("no contract could be expressed as a result schema; nothing written")
    return result
