"""One id, one contract: every reader of a contract file refuses a file that gives two
contracts the same id, since decisions, receipts and ``implied_by`` name contracts by id."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tracemine.errors import ContractFileError
from tracemine.model.contract import (
    Contract,
    ContractFile,
    Kind,
    Side,
    Source,
    load_contracts,
    parse_contracts,
)


def _status(values: list[str], *sources: Source) -> Contract:
    return Contract(tool="get_order", side=Side.RESULT, kind=Kind.ONE_OF,
                    paths=["result.status"], params={"values": values},
                    sources=list(sources) or [Source.MINED])  # fmt: skip


def repeating_document() -> dict[str, Any]:
    """Five contracts; the mined enum at 1 and a declared enum at 3 share one id, as
    ``tracemine merge`` wrote them before ids covered declarations."""
    filler = [
        Contract(tool="get_order", side=Side.RESULT, kind=Kind.PRESENT, paths=[f"result.{name}"])
        for name in ("id", "total", "items")
    ]
    mined = _status(["delivered", "placed", "shipped"])
    stale = _status(["shipped", "delivered", "cancelled"], Source.DECLARED)
    stale.id = mined.id
    document = ContractFile(contracts=[filler[0], mined, filler[1], stale, filler[2]])
    return document.model_dump(mode="json")


def test_parse_contracts_refuses_a_repeated_id() -> None:
    data = repeating_document()
    cid = data["contracts"][1]["id"]
    with pytest.raises(ContractFileError) as raised:
        parse_contracts(data, origin="merged.json")
    assert str(raised.value) == (
        f"merged.json: contract id {cid} is repeated: contracts[1] and contracts[3]"
    )


def test_load_contracts_refuses_a_repeated_id(tmp_path: Path) -> None:
    path = tmp_path / "merged.json"
    path.write_text(json.dumps(repeating_document()))
    with pytest.raises(ContractFileError, match=r"merged\.json: contract id c_\w+ is repeated"):
        load_contracts(path)


def test_validate_contracts_names_the_id_and_both_positions(tmp_path: Path) -> None:
    data = repeating_document()
    path = tmp_path / "merged.json"
    path.write_text(json.dumps(data))
    done = subprocess.run([sys.executable, "-m", "tracemine", "validate-contracts", str(path)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2, done.stdout
    assert "valid contract file" not in done.stdout and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    cid = data["contracts"][1]["id"]
    assert f"contract id {cid} is repeated" in line
    assert "contracts[1]" in line and "contracts[3]" in line
