"""The contract file format: its published JSON Schema, and errors that name the file and
the field.

The committed schema is refreshed with
``TRACEMINE_UPDATE_GOLDEN=1 pytest tests/export/test_contract_file.py`` (or
``tracemine validate-contracts --schema > schemas/contracts.schema.json``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from tracemine.cli.validate_contracts import schema_text
from tracemine.errors import ContractFileError
from tracemine.model.contract import Contract, ContractFile, load_contracts, save_contracts

SCHEMA = Path(__file__).parents[2] / "schemas" / "contracts.schema.json"
UPDATE = __import__("os").environ.get("TRACEMINE_UPDATE_GOLDEN") == "1"


def _file() -> ContractFile:
    return ContractFile(contracts=[
        Contract(tool="get_order", side="result", kind="range", paths=["result.total"],
                 params={"min": 0}),
        Contract(tool="get_order", side="result", kind="pattern", paths=["result.order_id"],
                 params={"regex": "^#W[0-9]{7}$"}, when={"path": "args.x", "op": "present"}),
        Contract(tool="create_refund", side="run", kind="bounded_by",
                 paths=["args.amount_cents"],
                 params={"from_tool": "get_order", "from_path": "result.total_cents"}),
    ])  # fmt: skip


def test_committed_schema_is_what_the_model_generates() -> None:
    if UPDATE:
        SCHEMA.write_text(schema_text(), encoding="utf-8")
    assert SCHEMA.read_text(encoding="utf-8") == schema_text(), (
        "schemas/contracts.schema.json is out of date; refresh it with "
        "TRACEMINE_UPDATE_GOLDEN=1 pytest tests/export/test_contract_file.py"
    )
    schema = json.loads(SCHEMA.read_text())
    Draft202012Validator.check_schema(schema)
    Draft202012Validator(schema).validate(_file().model_dump(mode="json"))


def test_schema_states_each_kinds_params() -> None:
    schema = json.loads(SCHEMA.read_text())
    document = _file().model_dump(mode="json")
    document["contracts"][1]["params"] = {}
    errors = list(Draft202012Validator(schema).iter_errors(document))
    assert any("'regex' is a required property" in e.message for e in errors)
    document["contracts"][2]["params"] = {"from_tool": "get_order"}
    errors = list(Draft202012Validator(schema).iter_errors(document))
    assert any("'from_path' is a required property" in e.message for e in errors)


def test_round_trip(tmp_path: Path) -> None:
    original = _file()
    assert load_contracts(save_contracts(original, tmp_path / "c.json")) == original


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(schema_version="3"), "schema_version '3' is not supported"),
        (lambda d: d.pop("schema_version"), "no schema_version"),
        (lambda d: d["contracts"][0].update(kind="nope"), "contracts[0] (c_"),
        (lambda d: d["contracts"][0]["params"].clear(), "params: {} is not valid"),
        (lambda d: d["contracts"][1]["params"].clear(), "'regex' is a required property"),
        (lambda d: d["contracts"][0].update(paths=["total"]), "must start with args or result"),
        (lambda d: d["contracts"][1]["when"].update(op="~"), "contracts[1] (c_"),
        (lambda d: d["contracts"][0].update(colour="red"), "colour: Extra inputs"),
        (lambda d: d["contracts"][2]["params"].pop("from_path"), "contracts[2] (c_"),
        (
            lambda d: d["contracts"][2].update(paths=["args.a", "args.b"]),
            "paths: ['args.a', 'args.b'] is too long (kind bounded_by)",
        ),
    ],
)
def test_invalid_files_name_the_file_and_field(change, message, tmp_path: Path) -> None:
    document = _file().model_dump(mode="json")
    change(document)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ContractFileError) as caught:
        load_contracts(path)
    text = str(caught.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text


def test_not_json(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text("{oops")
    with pytest.raises(ContractFileError, match="not JSON"):
        load_contracts(path)


def test_validate_contracts_cli(tmp_path: Path) -> None:
    good = save_contracts(_file(), tmp_path / "good.json")
    done = subprocess.run([sys.executable, "-m", "tracemine", "validate-contracts", str(good)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0 and "valid contract file" in done.stdout
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema_version": "9", "contracts": []}))
    done = subprocess.run([sys.executable, "-m", "tracemine", "validate-contracts", str(bad)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert "schema_version '9' is not supported" in done.stderr and "Traceback" not in done.stderr
