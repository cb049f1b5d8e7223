"""Declared constraints → contracts, one feature at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracemine.model.contract import Contract, Source
from tracemine.openapi import declared_contracts, load_spec

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openapi"


def contracts(name: str, tool: str | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    """``(path, kind) -> params`` of the declared contracts of one tool."""
    found: list[Contract] = declared_contracts(load_spec(FIXTURES / name))
    return {(c.paths[0], c.kind.value): c.params for c in found if tool is None or c.tool == tool}


def sources(name: str) -> dict[tuple[str, str, str], Contract]:
    return {
        (c.tool, c.paths[0], c.kind.value): c
        for c in declared_contracts(load_spec(FIXTURES / name))
    }


def test_openapi_30_result_constraints() -> None:
    got = contracts("orders-3.0.yaml", "getOrder")
    assert got[("result.id", "present")] == {}
    assert got[("result.id", "pattern")] == {"regex": "^#W[0-9]{7}$"}
    assert got[("result.status", "one_of")] == {
        "values": ["pending", "shipped", "delivered", "cancelled"]
    }
    assert got[("result.total_cents", "non_negative")] == {}
    assert got[("result.items", "non_empty")] == {}
    assert got[("result.items[*].price", "positive")] == {}  # 3.0 exclusiveMinimum flag
    assert got[("result.items[*].quantity", "type")] == {"type": "integer"}
    assert got[("result.tags[*]", "unique")] == {}
    assert got[("result.tags", "length")] == {"max": 10}
    assert got[("result.created_at", "format")] == {"format": "date-time"}
    # nullable: true → no not_null, the other constraints stay
    assert ("result.note", "not_null") not in got
    assert got[("result.note", "length")] == {"max": 500}
    assert ("result.currency", "present") not in got  # optional


def test_openapi_30_argument_constraints() -> None:
    got = contracts("orders-3.0.yaml")
    assert got[("args.limit", "range")] == {"min": 1, "max": 100}
    assert got[("args.status", "one_of")]["values"][0] == "pending"  # via $ref
    assert ("args.X-Request-Id", "format") not in got  # headers are not tool arguments
    # request body fields sit beside the parameters; the $ref'd path parameter is required
    refund = contracts("orders-3.0.yaml", "createRefund")
    assert refund[("args.order_id", "present")] == {}
    assert refund[("args.amount_cents", "present")] == {}
    assert refund[("args.amount_cents", "range")] == {"min": 1}
    assert refund[("args.reason", "one_of")] == {"values": ["damaged", "late", "other"]}
    assert refund[("result.refund_id", "format")] == {"format": "uuid"}


def test_prose_constraints_the_schema_does_not_state() -> None:
    found = sources("orders-3.0.yaml")
    discount = found[("getOrder", "result.discount_cents", "non_negative")]
    assert discount.sources == [Source.PROSE]
    assert discount.declared and "never negative" in discount.declared["text"]
    currency = found[("getOrder", "result.currency", "format")]
    assert currency.params == {"format": "currency"} and currency.sources == [Source.PROSE]
    assert found[("getOrder", "result.total_cents", "non_negative")].sources == [Source.DECLARED]


def test_swagger_20() -> None:
    got = contracts("petstore-2.0.json")
    assert got[("args.limit", "range")] == {"min": 1, "max": 50}  # #/parameters ref
    assert got[("args.species", "one_of")] == {"values": ["cat", "dog"]}
    assert ("args.Authorization", "present") not in got
    assert got[("result[*].age", "range")] == {"min": 0, "max": 40, "max_exclusive": True}
    assert got[("result[*].id", "present")] == {}  # allOf merged with the ref'd NewPet
    assert got[("result[*].name", "present")] == {}
    assert ("result[*].owner", "not_null") not in got  # x-nullable
    assert got[("result[*].chip", "not_null")] == {}
    pets = contracts("petstore-2.0.json", "addPet")
    assert pets[("args.name", "present")] == {}  # body parameter's required fields
    upload = contracts("petstore-2.0.json", "uploadPhoto")
    assert upload[("args.petId", "non_negative")] == {}
    assert upload[("args.caption", "length")] == {"max": 140}
    assert not [key for key in upload if key[0].startswith("result")]


def test_openapi_31_types_const_and_combinators() -> None:
    got = contracts("catalog-3.1.yaml")
    assert got[("result.price.amount", "positive")] == {}  # 3.1 numeric exclusiveMinimum
    assert got[("result.kind", "one_of")] == {"values": ["product"]}  # const
    assert ("result.rating", "not_null") not in got  # type: [number, "null"]
    assert got[("result.rating", "range")] == {"min": 0, "max": 5}
    assert got[("result.stock", "not_null")] == {} and ("result.stock", "type") not in got
    assert ("result.badge", "not_null") not in got  # oneOf with {type: "null"}
    # the value may be null, so null stays in the set and no `type` is declared: both
    # would otherwise alarm on a legitimate null
    assert got[("result.badge", "one_of")] == {"values": ["new", "sale", None]}
    assert ("result.rating", "type") not in got
    # allOf: Base's required fields join the object's own
    assert got[("result.id", "present")] == {} and got[("result.price", "present")] == {}
    # oneOf: only what every branch guarantees
    assert got[("result.shipping.carrier", "present")] == {}
    assert ("result.shipping.days", "present") not in got
    assert got[("result.shipping.carrier", "one_of")] == {"values": ["ups", "dhl", "pickup"]}
    assert got[("result.shipping.days", "range")] == {"min": 0, "max": 10}
    assert ("result.shipping.tracking", "type") not in got  # in one branch only


def test_ref_with_sibling_description_feeds_prose() -> None:
    found = sources("catalog-3.1.yaml")
    # the $ref target declares not_null already: the prose adds only what is new
    assert found[("getProduct", "result.alt_price", "not_null")].sources == [Source.DECLARED]
    assert ("getProduct", "result.alt_price", "non_empty") not in found  # an object


def test_reference_cycles_terminate() -> None:
    got = contracts("cycle.yaml", "getTree")
    assert got[("result.value", "non_negative")] == {}
    assert got[("result.parent", "type")] == {"type": "object"}  # its own constraints hold
    assert got[("result.children[*]", "type")] == {"type": "object"}
    assert not [path for path, _ in got if path.count(".") > 2]  # and no deeper
    loop = contracts("cycle.yaml", "getLoop")
    assert loop[("result.a", "present")] == {} and loop[("result.b", "present")] == {}


def test_relative_file_refs() -> None:
    got = contracts("relative/main.yaml")
    assert got[("result.balance.amount_cents", "non_negative")] == {}
    assert got[("result.balance.currency", "one_of")] == {"values": ["EUR", "USD"]}


def test_mcp_tools_list() -> None:
    got = contracts("mcp-tools.json", "get_weather")
    assert got[("result.temperature", "present")] == {}
    assert got[("result.humidity", "range")] == {"min": 0, "max": 100}
    assert got[("args.city", "present")] == {} and got[("args.city", "length")] == {"min": 1}
    assert got[("args.units", "one_of")] == {"values": ["metric", "imperial"]}


def test_function_docs_with_response_schema() -> None:
    found = sources("functions.json")
    assert found[("convert_currency", "result.converted", "type")].params == {"type": "number"}
    assert found[("convert_currency", "result.converted", "non_negative")].sources == [Source.PROSE]
    assert found[("convert_currency", "result.rate", "positive")].sources == [Source.DECLARED]
    assert found[("convert_currency", "args.to", "format")].params == {"format": "currency"}


def test_plain_json_schema_is_one_tools_result() -> None:
    got = contracts("search_flights.schema.json", "search_flights")
    assert got[("result.flights", "non_empty")] == {}
    assert got[("result.flights[*].number", "pattern")] == {"regex": "^[A-Z]{2}[0-9]{1,4}$"}
    assert got[("result.flights[*].seats", "non_negative")] == {}


def test_contract_ids_are_stable_and_cite_the_operation_and_the_pointer() -> None:
    first = declared_contracts(load_spec(FIXTURES / "orders-3.0.yaml"))
    again = declared_contracts(load_spec(FIXTURES / "orders-3.0.yaml"))
    assert [c.id for c in first] == [c.id for c in again]
    total = next(
        c for c in first if c.paths == ["result.total_cents"] and c.kind.value == "non_negative"
    )
    assert total.declared == {
        "spec": "orders-3.0.yaml",
        "operation": "getOrder",
        "endpoint": "GET /orders/{order_id}",
        "pointer": "#/components/schemas/Order/properties/total_cents",
    }


def test_declared_descriptions_say_the_constraint_and_where_it_is_declared() -> None:
    got = sources("orders-3.0.yaml")
    status = got[("getOrder", "result.status", "one_of")].description
    assert status == (
        "result.status one of pending, shipped, delivered, cancelled — declared in orders-3.0.yaml"
    )
    assert got[("getOrder", "result.total_cents", "non_negative")].description == (
        "result.total_cents >= 0 — declared in orders-3.0.yaml"
    )
    assert got[("listOrders", "args.limit", "range")].description.startswith(
        "1 <= args.limit <= 100 —"
    )
    prose = [c for c in got.values() if c.sources == [Source.PROSE]]
    assert prose and all("— stated in a description in orders-3.0.yaml" in c.description
                         for c in prose)  # fmt: skip
