"""Conditional targets past a size are read on a sample of their tasks, the same sample
in one store and in shards, so the client's memory does not grow with the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
from shard_corpus import comparable, in_process, one_store, simulated_shards

from tracemine.mine.propose import conditional


def test_a_sampled_target_is_the_same_in_one_store_and_in_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conditional, "SAMPLE_CALLS", 20)
    files = simulated_shards(tmp_path, "all", 45, shares=(0.3, 0.7))
    expected = one_store(files, tmp_path / "one.duckdb", folds=5)
    (tmp_path / "shards").mkdir()
    found = in_process(files, tmp_path / "shards", folds=5)
    a, b = comparable(found), comparable(expected)
    assert a["contracts"] == b["contracts"]
    sample = b["provenance"]["profile"]["conditional_sample"]
    assert sample == a["provenance"]["profile"]["conditional_sample"]
    assert sample["calls"] == 20 and sample["targets"]
    for target in sample["targets"]:
        # about 20 calls read of a target checked on more
        assert 0 < target["share"] < 1 and 0 < target["calls"] < 4 * 20
