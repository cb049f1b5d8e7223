"""Mining the simulator's suites: what it plants is recovered, with its evidence."""

from __future__ import annotations

from pathlib import Path

from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.simulate import simulate, write_traces


def test_mining_a_simulated_suite(tmp_path: Path) -> None:
    runs = simulate(suite="commerce", tasks=60, seed=3, trials=3)
    trace = write_traces(runs, tmp_path / "commerce.flat.jsonl", "flat")
    db = tmp_path / "sim.duckdb"
    ingest([trace], db)
    result = mine(db, where="run_outcome=success", target_fa=0.05, min_tasks=5)
    assert result.contracts
    kinds = {c.kind.value for c in result.contracts}
    assert {"type", "present"} <= kinds
    for contract in result.contracts:
        assert contract.evidence is not None
        assert contract.evidence.fa_posterior is not None
        assert contract.evidence.family is not None
        assert contract.evidence.tasks >= 5
    # what the tools' kept sets are predicted to cost stays within the budget
    tools = result.provenance["selection"]["tools"]
    assert all(line["predicted_fa"] <= 0.05 + 1e-9 for line in tools.values())
    assert all(line["kept"] for line in tools.values())
