"""Shards are read into few stores of consecutive shards: as many as keep the workers
busy and each store within its size, and a shard whose bytes are an earlier one's is
read once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracemine.engine import api
from tracemine.engine.api import batches
from tracemine.engine.plan import Shard, plan


def _shards(*sizes: int) -> list[Shard]:
    return [Shard(n, f"part-{n}.jsonl", "flat", size, "t") for n, size in enumerate(sizes)]


def _indexes(groups: list[list[Shard]]) -> list[list[int]]:
    return [[s.index for s in group] for group in groups]


def test_twenty_equal_shards_on_two_workers_are_two_stores_in_order() -> None:
    assert _indexes(batches(_shards(*[100] * 20), 2)) == [list(range(10)), list(range(10, 20))]


def test_stores_stay_within_their_size_a_multiple_of_the_workers() -> None:
    found = batches(_shards(*[100] * 20), 2, store_bytes=500)  # 2,000 bytes: 4 stores
    assert _indexes(found) == [list(range(k, k + 5)) for k in range(0, 20, 5)]
    assert _indexes(batches(_shards(100, 100, 100), 8)) == [[0], [1], [2]]


def test_stores_hold_about_equal_bytes() -> None:
    # a shard goes with the store its middle byte falls in
    assert _indexes(batches(_shards(10, 500, 400), 2)) == [[0, 1], [2]]
    assert _indexes(batches(_shards(900, 10, 10, 10, 10), 2)) == [[0], [1, 2, 3, 4]]


class _Runner:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def slots(self) -> int:
        return 2

    def run(self, label: str, function: Any, calls: list, shared: tuple = ()) -> list:
        self.asked += [name for name, _ in calls]
        return [function(*shared, *args) for _, args in calls]


def test_only_shards_of_one_length_are_compared_and_a_copy_is_read_once(tmp_path: Path) -> None:
    a, b, c, d = (tmp_path / f"{n}.jsonl" for n in "abcd")
    a.write_text('{"x": 1}\n')
    b.write_text('{"x": 2, "y": 3}\n')
    c.write_text('{"x": 1}\n')
    d.write_text('{"x": 4}\n')  # as long as a and c, other bytes
    shards = plan([str(p) for p in (a, b, c, d)], format="flat")
    runner = _Runner()
    copies = api._copies(runner, shards)
    assert sorted(runner.asked) == sorted(map(str, (a, c, d)))
    assert {k: v.url for k, v in copies.items()} == {2: str(a)}


def test_a_store_unequal_shards_fill_past_its_size_is_cut_again() -> None:
    # 4 stores of 25 bytes asked; the middles put 1 and 2 in one store, past 25 bytes
    assert _indexes(batches(_shards(40, 20, 20, 20), 2, store_bytes=25)) == [[0], [1], [2], [3]]
    assert _indexes(batches(_shards(40, 20, 20, 20), 2, store_bytes=1)) == [[0], [1], [2], [3]]
