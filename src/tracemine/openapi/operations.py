"""Operations of an OpenAPI document, in one shape whatever the version.

Swagger 2.0 is read into the 3.x shape as it goes: a ``body`` parameter becomes the
request body, ``formData`` parameters a form body, inline parameter keywords
(``type``, ``enum``, ``minimum`` …) the parameter's schema, and a response's ``schema``
its JSON content. Nothing is copied: every schema stays a :class:`Loc` into its document,
so ``#/definitions/…`` references resolve as written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracemine.openapi.refs import Loc, Refs, SpecError

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
ARG_LOCATIONS = ("path", "query")
"""Parameter locations that become tool arguments; headers and cookies carry transport
and credentials, which an agent's tool call does not spell out."""

# keywords of a 2.0 non-body parameter that are not schema keywords
_PARAM_ONLY = frozenset({"name", "in", "description", "required", "collectionFormat",
                         "allowEmptyValue", "x-example"})  # fmt: skip


@dataclass(slots=True)
class Param:
    """One declared parameter: where it goes, whether required, its schema."""

    name: str
    location: str
    required: bool
    schema: Loc | None
    description: str = ""


@dataclass(slots=True)
class Operation:
    """One callable thing a document declares: an OpenAPI operation, an MCP tool, a
    function. ``tool`` is the name the document itself gives a tool (MCP, function docs);
    OpenAPI operations are mapped to tools by operationId or a mapping file."""

    spec: str
    pointer: str
    method: str | None = None
    path: str | None = None
    operation_id: str | None = None
    tool: str | None = None
    description: str = ""
    params: list[Param] = field(default_factory=list)
    body: Loc | None = None
    body_required: bool = False
    responses: list[Loc] = field(default_factory=list)
    response_description: str = ""
    has_json_response: bool = False

    @property
    def key(self) -> str:
        """How reports name it: operationId, tool name, or ``METHOD /path``."""
        if self.operation_id or self.tool:
            return str(self.operation_id or self.tool)
        return f"{(self.method or '').upper()} {self.path}"


def openapi_operations(refs: Refs, spec: str, swagger: bool) -> list[Operation]:
    """Every operation under ``paths``, parameters and bodies in the 3.x shape."""
    root = refs.root
    paths = root.node.get("paths")
    if paths is None:
        return []
    if not isinstance(paths, dict):
        raise SpecError(f"{root.where()}/paths: not an object")
    produces = root.node.get("produces") if swagger else None
    out: list[Operation] = []
    for route in paths:
        if not isinstance(route, str) or not route.startswith("/"):
            continue
        item = _deref(root.child("paths", route), refs)
        if not isinstance(item.node, dict):
            continue
        shared = item.node.get("parameters")
        for method in METHODS:
            if not isinstance(item.node.get(method), dict):
                continue
            op_loc = item.child(method)
            op = op_loc.node
            op_id = op.get("operationId")
            operation = Operation(
                spec=spec, pointer=op_loc.pointer, method=method, path=route,
                operation_id=op_id if isinstance(op_id, str) and op_id else None,
                description=str(op.get("description") or op.get("summary") or ""),
            )  # fmt: skip
            params = _parameters(item, shared, op_loc, refs)
            for loc in params:
                _add_parameter(operation, loc, refs, swagger)
            if swagger:
                _swagger_form_body(operation, params)
            elif isinstance(op.get("requestBody"), dict):
                body = _deref(op_loc.child("requestBody"), refs)
                operation.body_required = body.node.get("required") is True
                operation.body = _json_schema(body, refs, form=True)
            _responses(operation, op_loc, refs, swagger, op.get("produces", produces))
            out.append(operation)
    return out


def _deref(loc: Loc, refs: Refs) -> Loc:
    """Follow ``$ref`` objects (parameters, responses, path items) to the real one."""
    seen = 0
    while isinstance(loc.node, dict) and "$ref" in loc.node and seen < 32:
        target = refs.resolve(loc.node["$ref"], loc)
        if target is None:
            return Loc({}, loc.base, loc.pointer)
        loc, seen = target, seen + 1
    return loc


def _parameters(item: Loc, shared: Any, op_loc: Loc, refs: Refs) -> list[Loc]:
    """Path-level parameters overridden by operation-level ones of the same name and place."""
    by_key: dict[tuple[str, str], Loc] = {}
    for owner, listed in ((item, shared), (op_loc, op_loc.node.get("parameters"))):
        if not isinstance(listed, list):
            continue
        for i in range(len(listed)):
            loc = _deref(owner.child("parameters", i), refs)
            p = loc.node
            if isinstance(p, dict) and isinstance(p.get("name"), str):
                by_key[(p["name"], str(p.get("in")))] = loc
    return list(by_key.values())


def _add_parameter(operation: Operation, loc: Loc, refs: Refs, swagger: bool) -> None:
    p = loc.node
    location = str(p.get("in"))
    if swagger and location == "body":
        operation.body = loc.child("schema") if isinstance(p.get("schema"), dict) else None
        operation.body_required = p.get("required") is True
        return
    schema: Loc | None = None
    if isinstance(p.get("schema"), dict):
        schema = loc.child("schema")
    elif isinstance(p.get("content"), dict):
        schema = _json_schema(loc, refs)
    elif swagger:  # the parameter object itself carries the schema keywords
        schema = Loc({k: v for k, v in p.items() if k not in _PARAM_ONLY}, loc.base, loc.pointer)
    operation.params.append(
        Param(
            name=p["name"], location=location,
            required=p.get("required") is True or location == "path",
            schema=schema, description=str(p.get("description") or ""),
        )
    )  # fmt: skip


def _swagger_form_body(operation: Operation, params: list[Loc]) -> None:
    """2.0 ``formData`` parameters are the fields of a form body."""
    form = [p for p in operation.params if p.location == "formData"]
    if not form or operation.body is not None:
        return
    operation.params = [p for p in operation.params if p.location != "formData"]
    schema = {
        "type": "object",
        "properties": {p.name: p.schema.node if p.schema else {} for p in form},
        "required": [p.name for p in form if p.required],
    }
    operation.body = Loc(schema, params[0].base, operation.pointer + "/parameters")


def _json_schema(loc: Loc, refs: Refs, *, form: bool = False) -> Loc | None:
    """The schema of the JSON (or, for request bodies, form) content of a body or response."""
    content = loc.node.get("content")
    if not isinstance(content, dict):
        return None
    kinds = [k for k in content if isinstance(k, str) and isinstance(content[k], dict)]
    chosen = [k for k in kinds if "json" in k.lower()]
    if not chosen and form:
        chosen = [k for k in kinds if "form" in k.lower()]
    if not chosen:
        # generated documents often say */* for what is JSON
        chosen = [k for k in kinds if k == "*/*"]
    for kind in chosen:
        if isinstance(content[kind].get("schema"), dict):
            return loc.child("content", kind, "schema")
    return None


def _responses(op: Operation, op_loc: Loc, refs: Refs, swagger: bool, produces: Any) -> None:
    """The JSON schemas of the 2xx responses (a result can be any one of them)."""
    responses = op_loc.node.get("responses")
    if not isinstance(responses, dict):
        return
    json_ok = not isinstance(produces, list) or any("json" in str(p) for p in produces)
    for code in responses:
        if not str(code).upper().startswith("2"):
            continue
        loc = _deref(op_loc.child("responses", code), refs)
        if not isinstance(loc.node, dict):
            continue
        op.response_description = op.response_description or str(loc.node.get("description", ""))
        if swagger:
            schema = (
                loc.child("schema")
                if json_ok and isinstance(loc.node.get("schema"), dict)
                else None
            )
        else:
            schema = _json_schema(loc, refs)
        if schema is not None:
            op.responses.append(schema)
            op.has_json_response = True
