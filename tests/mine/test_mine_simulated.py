"""Mining the simulator's suites: what it plants is recovered and held-out bounds hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracemine.ingest import ingest
from tracemine.mine import mine

simulate = pytest.importorskip("tracemine.simulate")


def test_mining_a_simulated_suite(tmp_path: Path) -> None:
    runs = simulate.simulate(suite="commerce", tasks=60, seed=3, trials=3)
    trace = simulate.write_traces(runs, tmp_path / "commerce.flat.jsonl", "flat")
    db = tmp_path / "sim.duckdb"
    ingest([trace], db)
    result = mine(db, where="run_outcome=success", target_fa=0.05, min_tasks=5)
    assert result.contracts
    kinds = {c.kind.value for c in result.contracts}
    assert {"type", "present"} <= kinds
    for contract in result.contracts:
        assert contract.evidence is not None
        assert contract.evidence.fa_upper is not None
        assert contract.evidence.fa_upper <= 0.05
        assert contract.evidence.tasks >= 5
