"""``openapi-overlay``: an OpenAPI Overlay 1.0 document that adds the contracts to the
response schemas of the source spec, leaving the spec itself untouched.

Tools map to operations by operationId unless a mapping file says otherwise (as in
``tracemine merge``). Each operation's success response schema gets the tool's
constraints as one more ``allOf`` member, so what the spec declared still holds and the
contracts come on top. A schema that is a ``$ref`` is replaced by
``allOf: [<the $ref>, <contracts>]`` (remove, then update the parent): in OpenAPI 3.0
keywords beside a ``$ref`` are ignored. OpenAPI 3.0 and Swagger 2.0 schemas cannot say
everything 3.1 can (no ``if``/``then``, no null type); those contracts are reported.
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

from tracemine.errors import InputError
from tracemine.export._base import Exported, Options, by_tool
from tracemine.export._fragments import Unexpressible, contract_fragment, merge, type_hints
from tracemine.export.jsonschema import result_schema
from tracemine.model.contract import Contract, ContractFile
from tracemine.openapi import load_spec, map_tools, read_mapping

OVERLAY_VERSION = "1.0.0"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# ASCII digits only, and few of them: int() refuses "²" (a digit to str.isdigit) and
# strings of thousands of digits
_YAML_INT = re.compile(r"[0-9]{1,18}")
_TOKEN = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\['((?:[^'\\]|\\.)*)'\]|\[(\d+)\]")


def jsonpath(keys: list[Any]) -> str:
    """A normalized JSONPath (RFC 9535) selecting the node at ``keys``."""
    out = "$"
    for key in keys:
        if isinstance(key, int):
            out += f"[{key}]"
        elif _NAME.fullmatch(key):
            out += f".{key}"
        else:
            out += "['" + key.replace("\\", "\\\\").replace("'", "\\'") + "']"
    return out


def _keys(target: str) -> list[Any]:
    if not target.startswith("$"):
        raise InputError(f"overlay target {target!r} is not a JSONPath")
    keys: list[Any] = []
    position = 1
    while position < len(target):
        match = _TOKEN.match(target, position)
        if match is None:
            raise InputError(f"overlay target {target!r}: only plain name and index selectors "
                             "are supported")  # fmt: skip
        name, quoted, index = match.groups()
        keys.append(int(index) if index else name or re.sub(r"\\(.)", r"\1", quoted))
        position = match.end()
    return keys


def _child(node: Any, key: Any) -> Any:
    if isinstance(node, dict):
        if key in node:
            return key
        if isinstance(key, str) and _YAML_INT.fullmatch(key) and int(key) in node:
            return int(key)  # YAML reads an unquoted 200 as a number
    elif isinstance(node, list) and isinstance(key, int) and key < len(node):
        return key
    raise KeyError(key)


def _deep_update(node: dict[str, Any], update: dict[str, Any]) -> None:
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(node.get(key), dict):
            _deep_update(node[key], value)
        elif isinstance(value, list) and isinstance(node.get(key), list):
            node[key].extend(copy.deepcopy(value))
        else:
            node[key] = copy.deepcopy(value)


def apply_overlay(document: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """The document with the overlay's actions applied in order (a copy). Supports the
    targets tracemine writes — plain name and index selectors — and raises
    :class:`InputError` on others or on a target that selects nothing.

    >>> patched = apply_overlay(yaml.safe_load(spec_text), overlay)  # doctest: +SKIP
    """
    out = copy.deepcopy(document)
    for number, action in enumerate(overlay.get("actions", []), 1):
        keys = _keys(action["target"])
        parent: Any = None
        node: Any = out
        try:
            for key in keys:
                parent, key_found = node, _child(node, key)
                node = node[key_found]
        except KeyError:
            raise InputError(
                f"overlay action {number}: {action['target']} selects nothing"
            ) from None
        if action.get("remove"):
            if parent is None:
                raise InputError(f"overlay action {number}: cannot remove the document root")
            del parent[key_found]
        elif "update" in action:
            if isinstance(node, list):
                node.append(copy.deepcopy(action["update"]))
            elif isinstance(node, dict) and isinstance(action["update"], dict):
                _deep_update(node, action["update"])
            else:
                raise InputError(f"overlay action {number}: can only update objects and arrays")
    return out


def read_spec(path: Path) -> tuple[dict[str, Any], str]:
    """The raw document and its dialect (``3.1``, ``3.0`` or ``2.0``)."""
    text = path.read_text(encoding="utf-8")
    document = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    version = str(document.get("openapi") or document.get("swagger") or "")
    for dialect in ("3.1", "3.0", "2.0"):
        if version.startswith(dialect):
            return document, dialect
    raise InputError(f"{path}: not an OpenAPI 2.0, 3.0 or 3.1 document")


def _downgrade(node: Any, dialect: str) -> Any:
    """A 2020-12 fragment in the schema dialect of OpenAPI 3.0 / Swagger 2.0."""
    if isinstance(node, list):
        return [_downgrade(item, dialect) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("if", "then", "else"):
            raise Unexpressible(f"OpenAPI {dialect} schemas have no if/then")
        if key == "type" and (not isinstance(value, str) or value == "null"):
            raise Unexpressible(f"OpenAPI {dialect} schemas have no null type")
        if key == "not" and value == {"type": "null"}:
            if dialect == "2.0":
                raise Unexpressible("Swagger 2.0 schemas cannot forbid null")
            out["nullable"] = False
        elif key == "not" and dialect == "2.0":
            raise Unexpressible("Swagger 2.0 schemas have no 'not'")
        elif key == "const":
            out["enum"] = [value]
        elif key in ("exclusiveMinimum", "exclusiveMaximum"):
            out["minimum" if key == "exclusiveMinimum" else "maximum"] = value
            out[key] = True
        elif key in ("properties",):
            out[key] = {name: _downgrade(sub, dialect) for name, sub in value.items()}
        else:
            out[key] = _downgrade(value, dialect)
    return out


def _schema_keys(document: dict[str, Any], path: str, method: str, dialect: str) -> list[Any]:
    item = document.get("paths", {}).get(path)
    if not isinstance(item, dict) or "$ref" in item or not isinstance(item.get(method), dict):
        raise Unexpressible(f"operation {method.upper()} {path} is not inline in the spec")
    responses = item[method].get("responses") or {}
    codes = sorted((k for k in responses if re.fullmatch(r"2(\d\d|XX)", str(k))), key=str)
    for code in codes:
        keys: list[Any] = ["paths", path, method, "responses", str(code)]
        response = responses[code]
        ref = response.get("$ref") if isinstance(response, dict) else None
        if isinstance(ref, str) and ref.startswith("#/"):
            keys = [p.replace("~1", "/").replace("~0", "~") for p in ref[2:].split("/")]
            response = document
            for key in keys:
                response = response.get(key) if isinstance(response, dict) else None
        if dialect == "2.0" and isinstance(response, dict) and "schema" in response:
            return [*keys, "schema"]
        content = response.get("content") if isinstance(response, dict) else None
        media_types: dict[str, Any] = content if isinstance(content, dict) else {}
        for media in sorted(media_types, key=lambda m: (m != "application/json", m)):
            entry = media_types[media]
            if (
                "json" in media
                and isinstance(entry, dict)
                and isinstance(entry.get("schema"), dict)
            ):
                return [*keys, "content", media, "schema"]
    raise Unexpressible(f"{method.upper()} {path} declares no JSON success response")


def _constraints(tool: str, items: list[Contract], hints: dict[str, str], dialect: str,
                 result: Exported) -> tuple[dict[str, Any], list[str]]:  # fmt: skip
    if dialect == "3.1":
        schema, skipped = result_schema(tool, items, hints)
        for contract, reason in skipped:
            result.skip(contract, reason)
        ids = schema.pop("x-tracemine-contracts")
        for key in ("$schema", "title"):
            schema.pop(key)
        return schema, ids
    schema, ids = {}, []
    for contract in items:
        try:
            merge(schema, _downgrade(contract_fragment(contract, hints), dialect))
        except Unexpressible as exc:
            result.skip(contract, str(exc))
            continue
        ids.append(contract.id)
    return schema, ids


def _actions(document: dict[str, Any], keys: list[Any], tool: str, constraints: dict[str, Any],
             ids: list[str]) -> list[dict[str, Any]]:  # fmt: skip
    node: Any = document
    for key in keys:
        node = node[key]
    member = {**constraints, "x-tracemine-contracts": sorted(ids)}
    about = f"tracemine: {len(ids)} contracts on the {tool} result"
    extra = {"x-tracemine-tool": tool}
    if "$ref" in node:  # keywords beside a $ref are ignored in 3.0: wrap it instead
        return [
            {"target": jsonpath(keys), "description": about + " (wrapping the $ref)",
             "remove": True, **extra},
            {"target": jsonpath(keys[:-1]), "description": about,
             "update": {keys[-1]: {"allOf": [node, member]}}, **extra},
        ]  # fmt: skip
    if isinstance(node.get("allOf"), list):
        return [{"target": jsonpath([*keys, "allOf"]), "description": about, "update": member,
                 **extra}]  # fmt: skip
    return [{"target": jsonpath(keys), "description": about, "update": {"allOf": [member]},
             **extra}]  # fmt: skip


def overlay_document(
    contracts: list[Contract], source: ContractFile, spec: Path,
    mapping: Path | dict[str, Any] | None = None, extends: str | None = None,
) -> tuple[dict[str, Any], Exported]:  # fmt: skip
    """The Overlay 1.0 document adding ``contracts`` to ``spec``, and what it left out.
    ``extends`` is how the overlay names the spec (default: its file name)."""
    document, dialect = read_spec(spec)
    if isinstance(mapping, Path):
        mapping = read_mapping(mapping)
    grouped = by_tool(contracts)
    tool_map = map_tools([load_spec(spec)], sorted(grouped), mapping)
    result = Exported()
    actions: list[dict[str, Any]] = []
    hints_all = type_hints(source.contracts)
    targets: dict[str, str] = {}
    for tool, items in grouped.items():
        operation = tool_map.tools.get(tool)
        try:
            if operation is None or operation.path is None or operation.method is None:
                raise Unexpressible(f"no operation of the spec maps to tool {tool}")
            keys = _schema_keys(document, operation.path, operation.method, dialect)
            if jsonpath(keys) in targets:
                raise Unexpressible(f"its operation already carries {targets[jsonpath(keys)]}")
        except Unexpressible as exc:
            for contract in items:
                result.skip(contract, str(exc))
            continue
        hints = {path: t for (name, path), t in hints_all.items() if name == tool}
        constraints, ids = _constraints(tool, items, hints, dialect, result)
        if ids:
            targets[jsonpath(keys)] = tool
            actions.extend(_actions(document, keys, tool, constraints, ids))
            result.exported += len(ids)
    title = (document.get("info") or {}).get("title") or spec.name
    overlay = {
        "overlay": OVERLAY_VERSION,
        "info": {"title": f"tracemine contracts for {title}", "version": "1"},
        "extends": extends or spec.name,
        "actions": actions,
    }
    if not actions:
        result.notes.append("no contract maps to a response schema; the overlay has no actions")
    return overlay, result


def export(
    contracts: list[Contract], source: ContractFile, out: Path, options: Options
) -> Exported:
    """Write the overlay (YAML, or JSON when ``out`` ends in ``.json``) to ``out``."""
    if options.spec is None:
        raise InputError("openapi-overlay needs the source spec: give --spec")
    # the spec as seen from the overlay, so tools resolving ``extends`` find it
    extends = Path(os.path.relpath(options.spec.resolve(), out.resolve().parent)).as_posix()
    overlay, result = overlay_document(contracts, source, options.spec, options.mapping, extends)
    if out.suffix == ".json":
        text = json.dumps(overlay, indent=2, ensure_ascii=False) + "\n"
    else:
        text = yaml.safe_dump(overlay, sort_keys=False, allow_unicode=True, width=100)
    result.files[out] = text
    return result
