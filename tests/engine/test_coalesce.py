"""The stores of a sharded mine are joined into about one per worker thread, in shard
order and of similar sizes."""

from __future__ import annotations

from pathlib import Path

from tracemine.engine.api import _coalesce


def _groups(folder: Path, sizes: list[list[int]]) -> list[list[tuple[str, str]]]:
    out = []
    for g, group in enumerate(sizes):
        members = []
        for m, size in enumerate(group):
            path = folder / f"{g}-{m}.duckdb"
            path.write_bytes(b"x" * size)
            members.append((path.stem, path.as_posix()))
        out.append(members)
    return out


def test_groups_are_joined_in_order_into_one_a_slot(tmp_path: Path) -> None:
    groups = _groups(tmp_path, [[100], [100], [50, 50], [100], [10], [90]])
    joined = _coalesce(groups, 3)
    assert len(joined) == 3
    # in shard order, nothing lost, and a group of shards sharing tasks stays whole
    assert [s for g in joined for s in g] == [s for g in groups for s in g]
    assert [[n for n, _ in g] for g in joined] == [
        ["0-0", "1-0"], ["2-0", "2-1", "3-0"], ["4-0", "5-0"]]
    sizes = [sum(Path(p).stat().st_size for _, p in g) for g in joined]
    assert max(sizes) <= 2 * min(sizes)


def test_no_more_groups_than_slots_are_left_as_they_are(tmp_path: Path) -> None:
    groups = _groups(tmp_path, [[10], [20, 30]])
    assert _coalesce(groups, 2) == groups
    assert _coalesce(groups, 8) == groups
