"""Contract files for the monitor tests, built with the pydantic model so that the file
format the monitor reads stays the one the rest of tracemine writes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tracemine.model.contract import Contract, ContractFile
from tracemine.monitor import Monitor


def contract(kind: str, paths: list[str], tool: str = "get_order", **fields: Any) -> Contract:
    """An accepted contract (``side`` inferred from the first path)."""
    side = fields.pop("side", None) or ("args" if paths and "args" in paths[0] else "result")
    fields.setdefault("status", "accepted")
    return Contract(tool=tool, side=side, kind=kind, paths=paths, **fields)


@pytest.fixture
def write_contracts(tmp_path: Path) -> Callable[..., Path]:
    def write(*contracts: Contract) -> Path:
        path = tmp_path / "contracts.json"
        path.write_text(ContractFile(contracts=list(contracts)).model_dump_json(), "utf-8")
        return path

    return write


@pytest.fixture
def make_monitor(write_contracts: Callable[..., Path]) -> Callable[..., Monitor]:
    def make(*contracts: Contract, include_proposed: bool = False) -> Monitor:
        return Monitor.load(write_contracts(*contracts), include_proposed=include_proposed)

    return make
