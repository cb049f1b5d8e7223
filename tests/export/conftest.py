"""Candidates mined from simulated commerce traces, once per session: the round trips
check exports against the very results the contracts were mined from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tracemine import ingest
from tracemine.mine import mine
from tracemine.model.contract import ContractFile, save_contracts
from tracemine.review import ReviewFile, decide, review_path, save_review
from tracemine.simulate import simulate, write_openapi, write_traces


@dataclass
class Mined:
    runs: list[dict[str, Any]]
    traces: Path
    candidates: Path
    contracts: ContractFile
    spec: Path

    def ok_results(self) -> list[tuple[str, Any]]:
        """(tool, result) of every successful call."""
        return [
            (c["tool"], c["result"]) for r in self.runs for c in r["calls"] if c["status"] == "ok"
        ]


@pytest.fixture(scope="session")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Mined:
    root = tmp_path_factory.mktemp("mined")
    runs = simulate("commerce", tasks=40, seed=1, trials=2)
    traces = write_traces(runs, root / "traces.jsonl", "openai_chat")
    ingest([traces], root / "traces.duckdb")
    # every supported candidate: these tests check what an export says, not what a
    # selection under a false-alarm budget would buy
    contracts = mine(root / "traces.duckdb", crossfit=False)
    candidates = save_contracts(contracts, root / "candidates.json")
    # a reviewer accepts what held out of sample and rejects the rest
    review = ReviewFile()
    held = [c for c in contracts.contracts if c.evidence and c.evidence.heldout_violations == 0]
    failed = [c for c in contracts.contracts if c not in held]
    decide(review, held, "accepted", reviewer="test")
    decide(review, failed, "rejected", reason="violated on held-out tasks", reviewer="test")
    save_review(review, review_path(candidates))
    spec = write_openapi(root / "commerce.openapi.yaml")
    return Mined(runs, Path(traces), candidates, contracts, spec)
