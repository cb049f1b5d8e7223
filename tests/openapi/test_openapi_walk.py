"""The walker copies a subtree it has met before instead of walking it again: the facts of
an operation must not depend on which operations were walked before it, wherever the
``MAX_NODES`` cap falls."""

from __future__ import annotations

import gc
import weakref
from dataclasses import astuple, fields
from pathlib import Path
from typing import Any

import pytest

from tracemine.openapi import declared, declared_contracts, load_spec
from tracemine.openapi.declared import Coverage, operation_facts
from tracemine.openapi.nodes import Node

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openapi"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _document() -> dict[str, Any]:
    leaf = {
        "type": "object",
        "required": ["id"],
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "n": {"type": "integer", "minimum": 0, "description": "never negative"},
        },
    }
    mid = {
        "type": "object",
        "properties": {
            "a": _ref("Leaf"),
            "b": _ref("Leaf"),
            "list": {"type": "array", "items": _ref("Leaf"), "minItems": 1},
        },
    }
    top = {
        "type": "object",
        "properties": {"m1": _ref("Mid"), "m2": _ref("Mid"), "again": _ref("Top")},
    }
    results: list[dict[str, Any]] = [
        _ref("Top"),
        {"type": "array", "items": _ref("Mid")},
        {"allOf": [_ref("Mid"), {"required": ["a"]}]},
    ]
    for pad in range(6):
        properties: dict[str, Any] = {f"pad{j}": {"type": "string"} for j in range(pad)}
        properties["top"] = _ref("Top")
        properties["mid"] = _ref("Mid")
        results.append({"type": "object", "properties": properties})
    paths = {}
    for i, schema in enumerate(results):
        paths[f"/r{i}"] = {
            "get": {
                "operationId": f"op{i}",
                "parameters": [
                    {"$ref": "#/components/parameters/limit"},
                    {"name": "filter", "in": "query", "schema": _ref("Mid")},
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": schema}},
                    }
                },
            }
        }
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": paths,
        "components": {
            "schemas": {"Leaf": leaf, "Mid": mid, "Top": top},
            "parameters": {
                "limit": {
                    "name": "limit",
                    "in": "query",
                    "required": True,
                    "schema": {"type": "integer", "minimum": 1, "maximum": 50},
                }
            },
        },
    }


class _Forgetful(dict):
    """A subtree memo that keeps nothing, so every subtree is walked afresh."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def _facts(
    spec: Any, index: int, memo: bool = True
) -> tuple[list[tuple[Any, ...]], tuple[Any, ...]]:
    if not memo:
        for side in ("args", "result"):
            spec.refs.flat_cache[("subtrees", side)] = _Forgetful()
    coverage = Coverage()
    facts = operation_facts(spec.operations[index], spec.refs, coverage)
    return [astuple(f) for f in facts], astuple(coverage)


@pytest.mark.parametrize("cap", [2, 3, 5, 8, 13, 21, 1000])
def test_facts_do_not_depend_on_what_was_walked_before(
    cap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(declared, "MAX_NODES", cap)
    count = len(load_spec(_document()).operations)
    # the baseline: each operation in a document of its own, no subtree copied
    alone = [_facts(load_spec(_document()), i, memo=False) for i in range(count)]
    shared = load_spec(_document())
    in_order = [_facts(shared, i) for i in range(count)]
    backwards = load_spec(_document())
    reversed_order = [_facts(backwards, i) for i in reversed(range(count))][::-1]
    assert in_order == alone
    assert reversed_order == alone
    if cap == 1000:
        assert any(path.startswith("result.m1.a") for _, path, *_ in alone[0][0])


def test_a_document_goes_with_its_last_reference() -> None:
    spec = load_spec(FIXTURES / "cycle.yaml")
    declared_contracts(spec)
    refs = weakref.ref(spec.refs)
    gc.disable()
    try:
        del spec  # no reference cycle keeps it for the cyclic collector
        assert refs() is None
    finally:
        gc.enable()


def test_the_collector_is_left_as_it_was() -> None:
    assert gc.isenabled()
    declared_contracts(load_spec(FIXTURES / "orders-3.0.yaml"))
    assert gc.isenabled()
    gc.disable()
    try:
        declared_contracts(load_spec(FIXTURES / "orders-3.0.yaml"))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_copied_node_keeps_every_field_but_the_memo() -> None:
    # Node.copy passes the fields by position: a field added or moved must not shift them
    node = Node(**{f.name: object() for f in fields(Node)})
    copy = node.copy()
    assert copy.memo is None
    for f in fields(Node):
        if f.name != "memo":
            assert getattr(copy, f.name) is getattr(node, f.name), f.name
