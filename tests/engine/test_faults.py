"""A shard whose worker dies is run again; one whose task fails twice stops the job with
an error naming the shard, and nothing is written as the result."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from killer import KillOnStart
from shard_corpus import comparable, one_store, simulated_shards

from tracemine.engine import mine_sharded
from tracemine.engine.dask import cluster
from tracemine.errors import ShardFailed


def test_a_worker_killed_mid_mine_is_replaced_and_the_result_is_the_same(tmp_path: Path) -> None:
    files = simulated_shards(tmp_path, "commerce", 40)
    expected = one_store(files, tmp_path / "one.duckdb")
    tally = tmp_path / "kills"
    with cluster(2, dashboard=False) as started:
        started.client.register_plugin(KillOnStart("profiles", 1, tally, times=1))
        found = mine_sharded([str(f) for f in files], work=tmp_path / "work",
                             client=started.client)  # fmt: skip
    assert tally.read_text() == "1"
    assert comparable(found.contracts)["contracts"] == comparable(expected)["contracts"]


def test_a_shard_failing_twice_stops_the_job_naming_it(tmp_path: Path) -> None:
    files = simulated_shards(tmp_path, "commerce", 40)
    tally = tmp_path / "kills"
    with cluster(2, dashboard=False) as started:
        # three shards on two workers: the first two (one task, then most) in one store,
        # the last in the second
        started.client.register_plugin(KillOnStart("ingest", 1, tally, times=99))
        named = re.escape(str(files[2]))
        with pytest.raises(ShardFailed, match=rf"ingest of {named} failed twice .*died"):
            mine_sharded([str(f) for f in files], work=tmp_path / "work", client=started.client)
    assert tally.read_text() == "2"
    assert not list((tmp_path / "work" / "shards").glob("00002*.duckdb"))


def test_the_cli_writes_nothing_when_a_shard_fails(tmp_path: Path) -> None:
    """``mine --scheduler`` joins a running cluster; a shard it cannot mine is one line
    on stderr and no contract file."""
    files = simulated_shards(tmp_path, "search", 40)
    out = tmp_path / "contracts.json"
    with cluster(2, dashboard=False) as started:
        started.client.register_plugin(
            KillOnStart("held-out counts", 0, tmp_path / "kills", times=99))  # fmt: skip
        address = started.client.scheduler.address
        done = subprocess.run(
            [sys.executable, "-m", "tracemine", "mine", "--scheduler", address,
             *map(str, files), "--work", str(tmp_path / "work"), "--out", str(out)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    message = done.stderr.strip().splitlines()[-1]
    assert message.startswith("error: held-out counts of ")
    # the first store's task is the one killed; a busy cluster may run the other store's
    # on the same worker, which then dies with it and may be reported first
    assert any(str(f) in message for f in files), message
    assert "Traceback" not in done.stderr
    assert not out.exists()
