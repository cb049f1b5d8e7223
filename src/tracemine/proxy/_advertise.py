"""``tracemine mcp wrap --advertise FILE``: the ``outputSchema`` of ``export --format mcp``
added to ``tools/list`` for each tool the server declares none for.

MCP says a tool that declares an ``outputSchema`` returns ``structuredContent`` that
conforms to it, and clients validate it (the official SDKs raise on a result that does
not). So for each tool given a schema here, a result without ``structuredContent`` whose
text is one JSON object gets that object as its ``structuredContent`` (the text blocks stay
as the server sent them, as the protocol's backwards-compatibility advice has it). A result
whose text is not a JSON object is sent on unchanged: the client then says the tool
returned no structured content, which is true of a result its schema does not describe.
A tool error (``isError``) is never validated by clients and is sent on unchanged.

A tool the server already declares an ``outputSchema`` for keeps its own, and its results
are not touched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tracemine.errors import InputError


def load_advertised(path: str | Path) -> dict[str, dict[str, Any]]:
    """The ``outputSchema`` per tool name in an ``export --format mcp`` file."""
    try:
        document = json.loads(Path(path).read_text("utf-8"))
    except OSError as exc:
        raise InputError(f"--advertise {path}: cannot read it ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise InputError(f"--advertise {path}: not JSON ({exc})") from None
    tools = document.get("tools") if isinstance(document, dict) else None
    if not isinstance(tools, list):
        raise InputError(
            f'--advertise {path}: expected {{"tools": [{{"name", '
            '"outputSchema"}]}, as tracemine export --format mcp writes'
        )
    schemas: dict[str, dict[str, Any]] = {}
    for position, tool in enumerate(tools):
        where = f"--advertise {path}: tools[{position}]"
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise InputError(f'{where}: expected an object with a string "name"')
        schema = tool.get("outputSchema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise InputError(f"{where} ({tool['name']}): outputSchema must be a JSON Schema "
                             "object with \"type\": \"object\"")  # fmt: skip
        schemas[tool["name"]] = schema
    return schemas


def advertised_listing(
    result: dict[str, Any], schemas: dict[str, dict[str, Any]]
) -> tuple[dict[str, Any] | None, set[str]]:
    """A ``tools/list`` result with the schemas added where a tool has none (``None`` when
    nothing changes), and the names of the tools given one."""
    tools = result.get("tools")
    if not isinstance(tools, list):
        return None, set()
    given: set[str] = set()
    out = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        if isinstance(name, str) and name in schemas and tool.get("outputSchema") is None:
            tool = {**tool, "outputSchema": schemas[name]}
            given.add(name)
        out.append(tool)
    return ({**result, "tools": out} if given else None), given


def structured(result: dict[str, Any]) -> dict[str, Any] | None:
    """A ``tools/call`` result with ``structuredContent`` read from its text, when it has
    none, is not a tool error, and its text is one JSON object; else ``None``."""
    if result.get("structuredContent") is not None or result.get("isError") is True:
        return None
    content = result.get("content")
    if not isinstance(content, list):
        return None
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    if len(texts) != 1 or not isinstance(texts[0], str):
        return None
    try:
        value = json.loads(texts[0])
    except ValueError:
        return None
    return {**result, "structuredContent": value} if isinstance(value, dict) else None
