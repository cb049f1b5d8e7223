"""`tracemine validate-contracts`: check a contract file against the format."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from tracemine.cli._common import JsonOption, console, print_json, run
from tracemine.model.contract import SCHEMA_VERSION, contract_file_schema, load_contracts

ORDER = 40


def validate_contracts_command(
    path: Annotated[
        Path | None, typer.Argument(metavar="FILE", help="Contract file (JSON) to check.")
    ] = None,
    schema: Annotated[
        bool,
        typer.Option("--schema", metavar="", help="Print the JSON Schema of the format instead."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Check a contract file: its schema_version, every field, each kind's parameters and
    paths. Exit code 2 names the first problems. With --schema, print the format's JSON
    Schema (as committed in schemas/contracts.schema.json)."""
    if schema:
        print_json(schema_text())
        return
    if path is None:
        raise typer.BadParameter("give a contract file, or --schema")
    contracts = run(load_contracts, path)
    run(_compiles, path)
    kinds = Counter(c.kind.value for c in contracts.contracts)
    statuses = Counter(c.status.value for c in contracts.contracts)
    if as_json:
        summary = {"file": str(path), "valid": True, "schema_version": SCHEMA_VERSION,
                   "contracts": len(contracts.contracts), "kinds": dict(kinds),
                   "statuses": dict(statuses)}  # fmt: skip
        print_json(json.dumps(summary, indent=2))
        return
    tools = len({c.tool for c in contracts.contracts})
    by_status = ", ".join(f"{n} {s}" for s, n in statuses.most_common()) or "none"
    console.print(
        f"{path}: valid contract file (version {SCHEMA_VERSION}): "
        f"{len(contracts.contracts)} contracts on {tools} tools ({by_status})",
        soft_wrap=True,
        markup=False,
    )


def _compiles(path: Path) -> None:
    """Valid means the monitor can use it: its own reading of every contract, and every
    contract it would enforce compiled (a bound no double can hold passes the model)."""
    from tracemine.monitor import Monitor, read_document

    Monitor.from_dict(read_document(path), include_proposed=True, origin=str(path))


def schema_text() -> str:
    """The committed form of the contract file's JSON Schema."""
    return json.dumps(contract_file_schema(), indent=2, ensure_ascii=False) + "\n"


def register(app: typer.Typer) -> None:
    app.command("validate-contracts")(validate_contracts_command)
