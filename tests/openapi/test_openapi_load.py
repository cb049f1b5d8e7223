"""Loading declared-schema documents: every kind, every version, and documents that
cannot be used failing with one clear line that names the file (and the pointer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracemine.errors import InputError
from tracemine.openapi import SpecError, load_spec, map_tools, read_mapping

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openapi"


@pytest.mark.parametrize(
    ("name", "kind", "keys"),
    [
        (
            "orders-3.0.yaml",
            "openapi-3.0",
            ["getOrder", "listOrders", "createRefund", "listCategories"],
        ),
        ("petstore-2.0.json", "swagger-2.0", ["listPets", "addPet", "uploadPhoto"]),
        ("catalog-3.1.yaml", "openapi-3.1", ["getProduct"]),
        ("relative/main.yaml", "openapi-3.0", ["getBalance"]),
        ("mcp-tools.json", "mcp", ["get_weather", "ping"]),
        ("functions.json", "functions", ["convert_currency"]),
        ("search_flights.schema.json", "json-schema", ["search_flights"]),
    ],
)
def test_kinds_and_operations(name: str, kind: str, keys: list[str]) -> None:
    spec = load_spec(FIXTURES / name)
    assert spec.kind == kind
    assert [op.key for op in spec.operations] == keys


def test_operations_in_one_shape() -> None:
    spec = load_spec(FIXTURES / "orders-3.0.yaml")
    refund = next(op for op in spec.operations if op.key == "createRefund")
    assert (refund.method, refund.path) == ("post", "/orders/{order_id}/refunds")
    assert [(p.name, p.location, p.required) for p in refund.params] == [("order_id", "path", True)]
    assert refund.body is not None and refund.body_required
    listing = next(op for op in spec.operations if op.key == "listOrders")
    # the charset parameter of the media type does not hide JSON; 404 is not a result
    assert listing.has_json_response and len(listing.responses) == 1


def test_swagger_body_and_form_parameters_become_bodies() -> None:
    spec = load_spec(FIXTURES / "petstore-2.0.json")
    add, upload = spec.operations[1], spec.operations[2]
    assert add.body is not None and add.body.pointer.endswith("/parameters/0/schema")
    assert upload.body is not None and set(upload.body.node["properties"]) == {"caption", "file"}
    assert [p.name for p in upload.params] == ["petId"]
    assert upload.responses == []  # 204: no content


def test_parsed_documents_are_accepted(tmp_path: Path) -> None:
    spec = load_spec({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}, name="x")
    assert spec.kind == "mcp" and spec.operations[0].tool == "t"


def test_broken_local_ref_names_file_pointer_and_ref() -> None:
    spec = load_spec(FIXTURES / "broken-ref.yaml")
    from tracemine.openapi import declared_contracts

    with pytest.raises(SpecError) as info:
        declared_contracts(spec)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("broken-ref.yaml#/paths/~1things/get/responses/200/")
    assert "'#/components/schemas/Thing'" in message and "points to nothing" in message


def test_broken_file_ref_names_the_missing_file() -> None:
    from tracemine.openapi import declared_contracts

    with pytest.raises(SpecError, match=r"missing/things\.yaml#/Thing.*no file things\.yaml"):
        declared_contracts(load_spec(FIXTURES / "broken-file-ref.yaml"))


def test_yaml_that_is_not_openapi() -> None:
    with pytest.raises(
        SpecError, match=r"not-openapi\.yaml: not a schema document .*keys: services"
    ):
        load_spec(FIXTURES / "not-openapi.yaml")


def test_broken_yaml_names_line() -> None:
    with pytest.raises(SpecError, match=r"broken\.yaml: not valid YAML: line \d+, column \d+"):
        load_spec(FIXTURES / "broken.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"openapi": "4.0.0", "paths": {}}', "unsupported OpenAPI version '4.0.0'"),
        ("[1, 2, 3]", "the document is a list"),
        ("{not json", "not valid JSON"),
    ],
)
def test_unusable_documents(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "doc.json"
    path.write_text(text)
    with pytest.raises(SpecError, match=message):
        load_spec(path)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_spec(tmp_path / "nowhere.yaml")


def test_mapping_by_operation_id_file_and_normalised_name() -> None:
    specs = [load_spec(FIXTURES / "orders-3.0.yaml")]
    mapping = read_mapping(FIXTURES / "tools.map.yaml")
    tool_map = map_tools(
        specs, ["get_order", "list_orders", "refund", "listcategories", "fly"], mapping
    )
    assert {t: op.key for t, op in tool_map.tools.items()} == {
        "get_order": "getOrder",
        "list_orders": "listOrders",
        "refund": "createRefund",
        "listcategories": "listCategories",
    }
    assert tool_map.unmapped_tools == ["fly"]
    assert tool_map.unmapped_operations == []
    unmapped = map_tools(specs, ["get_order"]).unmapped_operations
    assert unmapped == ["orders-3.0.yaml: listOrders", "orders-3.0.yaml: createRefund",
                        "orders-3.0.yaml: listCategories"]  # fmt: skip


def test_mapping_to_an_unknown_operation_is_an_error() -> None:
    specs = [load_spec(FIXTURES / "orders-3.0.yaml")]
    with pytest.raises(SpecError, match="no operation 'nope'"):
        map_tools(specs, ["x"], {"x": "nope"})
    with pytest.raises(SpecError, match="no operation DELETE /orders"):
        map_tools(specs, ["x"], {"x": "DELETE /orders"})


def test_yaml_dates_stay_strings_and_status_codes_may_be_integers(tmp_path: Path) -> None:
    from tracemine.openapi import declared_contracts

    path = tmp_path / "dates.yaml"
    path.write_text(
        "openapi: 3.0.0\npaths:\n  /d:\n    get:\n      operationId: d\n      responses:\n"
        "        200:\n          description: ok\n          content:\n            application/json:\n"
        "              schema: {type: string, enum: [2024-01-01, 2024-12-31]}\n"
    )
    (one_of,) = [c for c in declared_contracts(load_spec(path)) if c.kind.value == "one_of"]
    assert one_of.params == {"values": ["2024-01-01", "2024-12-31"]}
