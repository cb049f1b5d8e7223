"""A small fixed trace set pins the exact candidate set (ids, parameters, conditions,
implied links and evidence). Refresh with TRACEMINE_UPDATE_GOLDEN=1 after an intended
change, and review the diff."""

from __future__ import annotations

from pathlib import Path

from tracemine.ingest import ingest
from tracemine.mine import mine

from helpers import assert_golden

FIXTURE = Path(__file__).parent.parent / "fixtures" / "mine" / "shop_small.jsonl"


def test_small_shop_matches_golden(tmp_path: Path) -> None:
    db = tmp_path / "small.duckdb"
    ingest([FIXTURE], db)
    result = mine(db, folds=3, target_fa=0.2, min_tasks=3, where="run_outcome=success")
    snapshot = {
        "summary": result.provenance["summary"],
        "contracts": [
            c.model_dump(mode="json", include={"id", "tool", "side", "kind", "paths", "params",
                                               "when", "description", "implied_by", "folded_into",
                                               "evidence"})
            for c in result.contracts
        ],
    }  # fmt: skip
    assert_golden(snapshot, FIXTURE.with_name("shop_small.golden.json"))
    again = mine(db, folds=3, target_fa=0.2, min_tasks=3, where="run_outcome=success")
    assert [c.id for c in again.contracts] == [c.id for c in result.contracts]
