"""``mcp``: per tool, the ``outputSchema`` its contracts imply, as an MCP server declares it
in ``tools/list`` (JSON Schema 2020-12, the protocol's default dialect).

The file is shaped as a ``tools/list`` result: ``{"tools": [{"name", "outputSchema"}]}``.
A server author pastes a tool's ``outputSchema`` into its declaration; ``tracemine mcp
wrap --advertise FILE`` adds it to ``tools/list`` for the tools a server declares none
for. A client that validates structured content (the official SDKs do) then refuses a
result the contracts rule out.

The schema is the ``jsonschema`` target's (:func:`tracemine.export.jsonschema.
result_schema`), with what MCP adds: ``structuredContent`` is a JSON object, so an
``outputSchema`` describes an object. A tool whose contracts say its result is something
else (a list, a string) gets no ``outputSchema``, and its contracts are reported, not
dropped; what a schema cannot say (relations, arguments, runs) is reported as the
``jsonschema`` target reports it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tracemine.export._base import Exported, Options
from tracemine.export.jsonschema import tool_schemas
from tracemine.model.contract import Contract, ContractFile

NOT_AN_OBJECT = (
    "an MCP outputSchema describes structuredContent, a JSON object; this tool's result is {}"
)


def output_schemas(
    contracts: list[Contract], source: ContractFile
) -> tuple[dict[str, dict[str, Any]], Exported]:
    """The ``outputSchema`` of each tool the contracts say something of, and what could
    not be said."""
    result = Exported()
    schemas: dict[str, dict[str, Any]] = {}
    for tool, items, schema in tool_schemas(contracts, source, result):
        expressed = set(schema["x-tracemine-contracts"])
        declared = schema.get("type")
        if declared is None:
            # MCP already requires an object here: saying so narrows nothing
            schema = {"$schema": schema["$schema"], "type": "object",
                      **{k: v for k, v in schema.items() if k != "$schema"}}  # fmt: skip
        elif declared != "object" and not (isinstance(declared, list) and "object" in declared):
            what = " or ".join(declared) if isinstance(declared, list) else str(declared)
            article = "an" if what[:1] in "aeiou" else "a"
            for contract in items:
                if contract.id in expressed:
                    result.skip(contract, NOT_AN_OBJECT.format(f"{article} {what}"))
            continue
        elif isinstance(declared, list):
            schema["type"] = "object"  # the other types cannot be structuredContent
        schemas[tool] = schema
        result.exported += len(expressed)
    return schemas, result


def export(
    contracts: list[Contract], source: ContractFile, out: Path, options: Options
) -> Exported:
    """Write ``{"tools": [{"name", "outputSchema"}]}`` to ``out``."""
    schemas, result = output_schemas(contracts, source)
    if not schemas:
        result.notes.append("no contract could be expressed as an outputSchema; nothing written")
        return result
    document = {
        "$comment": "outputSchema per tool, from tracemine's reviewed contracts; "
        "tracemine mcp wrap --advertise reads this file",
        "tools": [{"name": tool, "outputSchema": schema} for tool, schema in schemas.items()],
    }
    result.files[out] = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return result
