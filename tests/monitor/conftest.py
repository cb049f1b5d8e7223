"""Contract files for the monitor tests, built with the pydantic model so that the file
format the monitor reads stays the one the rest of tracemine writes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tracemine.model.contract import Contract, ContractFile
from tracemine.monitor import Monitor


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
