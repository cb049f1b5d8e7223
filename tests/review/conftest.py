"""Fixtures of the review tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from review_samples import sample_contracts

from tracemine.model.contract import save_contracts


@pytest.fixture
def candidates(tmp_path: Path) -> Path:
    return save_contracts(sample_contracts(), tmp_path / "candidates.json")
