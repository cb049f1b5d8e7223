"""Mining the stores of a corpus' shards finds, byte for byte, what one store of the same
files finds: every shard step's merge is exact (tracemine.mine.profile.shards). In process, so
each suite and option costs seconds; tests/engine/test_sharded.py does it on Dask."""

from __future__ import annotations

from pathlib import Path

import pytest
from shard_corpus import DATA, comparable, flat_shards, in_process, one_store, simulated_shards


@pytest.mark.parametrize(
    ("suite", "tasks", "settings"),
    [
        ("all", 60, {"run_level": True}),
        ("search", 100, {}),
        ("travel", 40, {"folds": 3, "budget": False}),
        ("offers", 150, {"seed": 3}),
    ],
)
def test_simulated_shards_mine_what_one_store_mines(
    tmp_path: Path, suite: str, tasks: int, settings: dict
) -> None:
    files = simulated_shards(tmp_path, suite, tasks, shares=(0.3, 0.7))
    expected = comparable(one_store(files, tmp_path / "one.duckdb", **settings))
    found = comparable(in_process(files, tmp_path, **settings))
    assert found["contracts"] == expected["contracts"]
    assert len(found["contracts"]) > 20
    expected["provenance"]["profile"].pop("per")  # shards keep their profiles per fold
    assert found["provenance"]["profile"].pop("per") == "fold"
    assert found["provenance"] == expected["provenance"]


@pytest.mark.parametrize("suite", ["bfcl", "agentdojo"])
def test_real_suites_cut_into_shards_mine_the_same(tmp_path: Path, suite: str) -> None:
    """BFCL's results key objects by ids (maps are decided across shards); AgentDojo's
    tools have a handful of calls each."""
    files = flat_shards(tmp_path, DATA / suite / f"{suite}.jsonl.gz", parts=3)
    expected = comparable(one_store(files, tmp_path / "one.duckdb", run_level=True))
    found = comparable(in_process(files, tmp_path, run_level=True))
    assert found["contracts"] == expected["contracts"]
    if suite == "bfcl":
        assert found["provenance"]["profile"]["maps"]
    assert found["provenance"]["profile"]["maps"] == expected["provenance"]["profile"]["maps"]
    assert found["provenance"]["selection"] == expected["provenance"]["selection"]
