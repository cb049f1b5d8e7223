"""A worker that dies while a pass's shared arguments are scattered to it fails the
scatter, not a task: Dask reruns tasks, not what the client sends. The pass is started
again for the shards not done, and the contracts are those of one store."""

from __future__ import annotations

from pathlib import Path

import pytest
from killer import KillOnReceive
from shard_corpus import comparable, one_store, simulated_shards

from tracemine.engine import mine_sharded
from tracemine.engine.dask import cluster
from tracemine.errors import ShardFailed


def test_a_worker_killed_as_the_shared_arguments_reach_it(tmp_path: Path) -> None:
    files = simulated_shards(tmp_path, "commerce", 40)
    expected = one_store(files, tmp_path / "one.duckdb")
    tally = tmp_path / "kills"
    with cluster(2, dashboard=False) as started:
        started.client.register_plugin(KillOnReceive("tracemine-nominal-calls-", tally, 1))
        found = mine_sharded([str(f) for f in files], work=tmp_path / "work",
                             client=started.client)  # fmt: skip
    assert tally.read_text() == "1"  # the kill happened, in the scatter
    assert comparable(found.contracts)["contracts"] == comparable(expected)["contracts"]


def test_a_pass_lost_every_try_stops_the_job_naming_it(tmp_path: Path) -> None:
    files = simulated_shards(tmp_path, "commerce", 40)
    tally = tmp_path / "kills"
    with cluster(2, dashboard=False) as started:
        started.client.register_plugin(KillOnReceive("tracemine-nominal-calls-", tally, 99))
        with pytest.raises(
            ShardFailed, match=r"nominal calls of .* was lost by the cluster 3 times"
        ):
            mine_sharded([str(f) for f in files], work=tmp_path / "work", client=started.client)
    assert int(tally.read_text()) >= 3
    assert not (tmp_path / "work" / "contracts.json").exists()
