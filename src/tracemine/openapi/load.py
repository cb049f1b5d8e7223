"""Loading declared schemas: OpenAPI 2.0/3.0/3.1, MCP ``tools/list``, function-calling
docs with a response schema, and plain JSON Schema — each read into a :class:`Spec`, a
list of :class:`Operation` whose schemas stay in their documents.

>>> spec = load_spec("api.yaml")  # doctest: +SKIP
>>> [op.key for op in spec.operations]  # doctest: +SKIP
['getOrder', 'listOrders']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracemine import _gc
from tracemine.openapi.operations import Operation, Param, openapi_operations
from tracemine.openapi.refs import Loc, Refs, SpecError, read_document

_SCHEMA_KEYS = frozenset({"$schema", "type", "properties", "items", "allOf", "oneOf", "anyOf",
                          "$ref", "enum", "$defs", "definitions"})  # fmt: skip
_RESPONSE_KEYS = ("response", "returns", "outputSchema", "output_schema")


@dataclass(slots=True)
class Spec:
    """A loaded document: what kind it is, its operations, and what was noticed on the
    way (remote references left unfollowed …)."""

    source: str
    kind: str
    operations: list[Operation]
    refs: Refs
    warnings: list[str] = field(default_factory=list)


def load_spec(source: str | Path | dict[str, Any] | list[Any], *, name: str | None = None) -> Spec:
    """Load one declared-schema document (a path, or an already parsed document).

    Kinds: ``openapi-3.1``, ``openapi-3.0``, ``swagger-2.0``, ``mcp`` (a ``tools/list``
    result, bare or in its JSON-RPC envelope), ``functions`` (function-calling docs,
    BFCL-style ``{"name", "parameters", "response"}``), ``json-schema`` (one tool's
    result; the tool is named after the file). Raises :class:`SpecError` naming the file
    (and pointer) when the document cannot be used.
    """
    with _gc.paused():
        if isinstance(source, dict | list):
            document: Any = source
            label = name or "<document>"
            base = (Path.cwd() / label).as_uri()
        else:
            path = Path(source)
            document = read_document(path)
            label = name or path.name
            base = path.resolve().as_uri()
        try:
            return _load(document, label, base)
        except RecursionError:
            raise SpecError(f"{label}: nested too deeply to read") from None


def _load(document: Any, label: str, base: str) -> Spec:
    if isinstance(document, dict) and ("openapi" in document or "swagger" in document):
        version = str(document.get("openapi") or document.get("swagger"))
        if version.startswith("3.1"):
            kind = "openapi-3.1"
        elif version.startswith("3."):
            kind = "openapi-3.0"
        elif version.startswith("2"):
            kind = "swagger-2.0"
        else:
            raise SpecError(f"{label}: unsupported OpenAPI version {version!r}")
        refs = Refs(document, base, json_schema=kind == "openapi-3.1")
        operations = openapi_operations(refs, label, swagger=kind == "swagger-2.0")
        return _spec(label, kind, operations, refs)
    tools = _mcp_tools(document)
    if tools is not None:
        refs = Refs(document, base, json_schema=True)
        return _spec(label, "mcp", [_tool(refs, label, loc) for loc in tools], refs)
    functions = _functions(document)
    if functions is not None:
        refs = Refs(document, base, json_schema=True)
        return _spec(label, "functions", [_tool(refs, label, loc) for loc in functions], refs)
    if isinstance(document, dict) and _SCHEMA_KEYS & document.keys():
        refs = Refs(document, base, json_schema=True)
        tool = re.sub(r"(\.schema)?\.(json|ya?ml)$", "", label)
        op = Operation(spec=label, pointer="#", tool=tool, responses=[refs.root])
        op.has_json_response = True
        return _spec(label, "json-schema", [op], refs)
    raise SpecError(f"{label}: not a schema document tracemine reads ({_describe(document)})")


def _spec(label: str, kind: str, operations: list[Operation], refs: Refs) -> Spec:
    spec = Spec(label, kind, operations, refs)
    if not operations:
        spec.warnings.append(f"{label}: declares no operations")
    return spec


def _describe(document: Any) -> str:
    if isinstance(document, dict):
        keys = ", ".join(sorted(map(str, document))[:6]) or "none"
        return (
            "expected OpenAPI (`openapi`/`swagger`), an MCP tools/list result (`tools`), "
            f"function docs or a JSON Schema; top-level keys: {keys}"
        )
    return f"the document is a {type(document).__name__}, not an object"


def _mcp_tools(document: Any) -> list[Loc] | None:
    """``{"tools": [...]}``, the JSON-RPC response ``{"result": {"tools": [...]}}``, or the
    bare list of tools (what a client's ``list_tools()`` gives, dumped)."""
    tools: Any = document
    prefix = "#"
    if isinstance(document, dict):
        root = document
        if isinstance(document.get("result"), dict) and "tools" in document["result"]:
            root, prefix = document["result"], "#/result"
        tools, prefix = root.get("tools"), prefix + "/tools"
    if not isinstance(tools, list) or not all(isinstance(t, dict) and "name" in t for t in tools):
        return None
    if not any("inputSchema" in t or "outputSchema" in t for t in tools):
        return None
    return [Loc(tools[i], "", f"{prefix}/{i}") for i in range(len(tools))]


def _functions(document: Any) -> list[Loc] | None:
    """A list of function docs, ``{"functions": [...]}``, or a single one; OpenAI's
    ``{"type": "function", "function": {...}}`` wrapper is unwrapped."""
    pointer = "#"
    if isinstance(document, dict) and isinstance(document.get("functions"), list):
        document, pointer = document["functions"], "#/functions"
    items = document if isinstance(document, list) else [document]
    out: list[Loc] = []
    for i, item in enumerate(items):
        at = f"{pointer}/{i}" if isinstance(document, list) else pointer
        if isinstance(item, dict) and isinstance(item.get("function"), dict):
            item, at = item["function"], at + "/function"
        if not (isinstance(item, dict) and isinstance(item.get("name"), str)):
            return None
        if not ("parameters" in item or any(k in item for k in _RESPONSE_KEYS)):
            return None
        out.append(Loc(item, "", at))
    return out or None


def _tool(refs: Refs, label: str, loc: Loc) -> Operation:
    """An MCP tool or a function doc: arguments are one object schema, the result another."""
    item = Loc(loc.node, refs.root.base, loc.pointer)
    node = item.node
    op = Operation(spec=label, pointer=item.pointer, tool=node["name"],
                   description=str(node.get("description") or ""))  # fmt: skip
    for key in ("inputSchema", "parameters", "input_schema"):
        if isinstance(node.get(key), dict):
            op.body, op.body_required = _own_schema(refs, item.child(key)), True
            break
    for key in _RESPONSE_KEYS:
        if isinstance(node.get(key), dict):
            op.responses.append(_own_schema(refs, item.child(key)))
            op.has_json_response = True
            break
    return op


def _own_schema(refs: Refs, loc: Loc) -> Loc:
    """A tool's schema is a JSON Schema of its own: generators (pydantic in the MCP SDK)
    write ``{"$ref": "#/$defs/Item"}`` meaning that schema's ``$defs``, not the document's."""
    refs.scopes[loc.pointer] = loc.node
    return loc


__all__ = ["Operation", "Param", "Spec", "SpecError", "load_spec"]
