"""Which operation is which tool.

By default a tool is the operation whose operationId (or MCP/function name) is the tool's
name — exactly, or after ignoring case and separators (``get_order`` ↔ ``getOrder``) when
that is unambiguous. A mapping file overrides it, tool by tool::

    get_order: getOrder                   # an operationId
    list_orders: GET /orders              # method and path
    create_refund: {method: post, path: /orders/{id}/refunds}
    search: {operationId: searchItems}

(optionally under a top-level ``tools:`` key), JSON or YAML.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracemine.openapi.load import Spec
from tracemine.openapi.operations import METHODS, Operation
from tracemine.openapi.refs import SpecError, read_document


@dataclass(slots=True)
class ToolMap:
    """Tools and their operations, and what found no partner."""

    tools: dict[str, Operation] = field(default_factory=dict)
    unmapped_tools: list[str] = field(default_factory=list)
    unmapped_operations: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)


def read_mapping(path: str | Path) -> dict[str, Any]:
    """Read a mapping file; :class:`SpecError` names it when it is not tool → operation."""
    document = read_document(Path(path))
    if isinstance(document, dict) and isinstance(document.get("tools"), dict):
        document = document["tools"]
    if not isinstance(document, dict) or not all(isinstance(k, str) for k in document):
        raise SpecError(f"{path}: a mapping file maps tool names to operations")
    return document


def map_tools(
    specs: Sequence[Spec], tools: Iterable[str] | None = None, mapping: dict[str, Any] | None = None
) -> ToolMap:
    """Pair ``tools`` (the names traces use) with the operations of ``specs``.

    Without ``tools`` every operation that names itself (operationId, tool name) is a
    tool. Raises :class:`SpecError` when the mapping names an operation no spec has."""
    operations = [op for spec in specs for op in spec.operations]
    result = ToolMap()
    by_id: dict[str, list[Operation]] = {}
    by_norm: dict[str, list[Operation]] = {}
    for op in operations:
        name = op.operation_id or op.tool
        if name:
            by_id.setdefault(name, []).append(op)
            by_norm.setdefault(_norm(name), []).append(op)
    for tool, target in (mapping or {}).items():
        result.tools[tool] = _find(tool, target, operations, by_id)
    wanted = list(dict.fromkeys(tools)) if tools is not None else list(by_id)
    for tool in wanted:
        if tool in result.tools:
            continue
        found = by_id.get(tool) or by_norm.get(_norm(tool)) or []
        if len(found) > 1:
            result.ambiguous.append(f"{tool}: {', '.join(f'{o.spec}:{o.key}' for o in found)}")
        if found:
            result.tools[tool] = found[0]
        else:
            result.unmapped_tools.append(tool)
    used = {id(op) for op in result.tools.values()}
    result.unmapped_operations = [f"{op.spec}: {op.key}" for op in operations if id(op) not in used]
    return result


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _find(
    tool: str, target: Any, operations: list[Operation], by_id: dict[str, list[Operation]]
) -> Operation:
    method = path = op_id = None
    if isinstance(target, str):
        parts = target.split(None, 1)
        if len(parts) == 2 and parts[0].lower() in METHODS and parts[1].startswith("/"):
            method, path = parts[0].lower(), parts[1].strip()
        else:
            op_id = target
    elif isinstance(target, dict):
        op_id = target.get("operationId") or target.get("operation")
        method = str(target["method"]).lower() if target.get("method") else None
        path = target.get("path")
    if op_id is not None:
        found = by_id.get(str(op_id))
        if not found:
            raise SpecError(f"mapping for tool {tool!r}: no operation {op_id!r} in the specs")
        return found[0]
    if method is None or path is None:
        raise SpecError(
            f"mapping for tool {tool!r}: give an operationId, 'METHOD /path' or {{method, path}}"
        )
    for op in operations:
        if op.method == method and op.path == path:
            return op
    raise SpecError(f"mapping for tool {tool!r}: no operation {method.upper()} {path} in the specs")
