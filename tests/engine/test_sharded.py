"""A corpus mined across two Dask workers gives the contracts one store of its files
gives, byte for byte (timings and the store's name aside), however it is cut: shards of
unequal size, a shard of one task, tasks and runs that span shards, byte ranges of one
file, files in an fsspec filesystem, shards with unreadable lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
from shard_corpus import comparable, one_store, simulated_shards

from tracemine.engine import mine_sharded
from tracemine.ingest import ingest
from tracemine.simulate import simulate, write_traces


def _sharded(sources: list, work: Path, client: Any, **settings: Any) -> Any:
    return mine_sharded([str(s) for s in sources], work=work, client=client, **settings)


def _same(found: Any, expected: Any, whole_files: bool = True) -> None:
    a, b = comparable(found), comparable(expected)
    assert a["contracts"] == b["contracts"]
    assert len(a["contracts"]) > 20
    for side in (a, b):
        side["provenance"]["profile"].pop("per")
        if not whole_files:  # the fingerprint names the files read, and ranges are read apart
            side["provenance"]["profile"].pop("fingerprint")
    assert a["provenance"] == b["provenance"]


def test_two_workers_mine_what_one_store_mines(tmp_path: Path, dask_client: Any) -> None:
    files = simulated_shards(tmp_path, "all", 60, shares=(0.25, 0.8))
    single = tmp_path / "one.duckdb"
    expected = one_store(files, single, folds=5, run_level=True)
    found = _sharded(files, tmp_path / "work", dask_client, folds=5, run_level=True)
    _same(found.contracts, expected)
    assert found.shards == len(files) == 4 and not found.groups
    con = duckdb.connect(str(single), read_only=True)
    try:
        read = con.execute("SELECT sum(units_read), sum(calls_stored) FROM ingests").fetchall()[0]
    finally:
        con.close()
    assert (found.ingest.total("units_read"), found.ingest.total("calls")) == read
    assert found.ingest.total("units_read") == (
        found.ingest.total("units_stored") + found.ingest.total("units_quarantined")
    )
    # the shards are kept: mining again reads nothing again
    again = _sharded(files, tmp_path / "work", dask_client, folds=5, run_level=True)
    assert comparable(again.contracts)["contracts"] == comparable(expected)["contracts"]


def test_tasks_and_runs_across_shards_are_mined_as_one_store(
    tmp_path: Path, dask_client: Any
) -> None:
    """Trials of every task in two files, and one run's calls in two more: each pair is
    merged into one store (a task's counts must lie in one store to add up)."""
    runs = simulate("all", tasks=45, seed=0, trials=3)
    early, late = tmp_path / "trials-0-1.jsonl", tmp_path / "trial-2.jsonl"
    cut = [r for r in runs if r["task_id"] < "search"]  # commerce tasks: in both files
    write_traces([r for r in cut if r["trial"] < 2], early, "flat")
    write_traces([r for r in cut if r["trial"] == 2], late, "flat")
    rest = tmp_path / "rest.flat.jsonl"
    write_traces([r for r in runs if r["task_id"] >= "search"], rest, "flat")
    lines = rest.read_bytes().splitlines(keepends=True)
    head, tail = tmp_path / "rest-a.jsonl", tmp_path / "rest-b.jsonl"
    # one run's calls on both sides of the cut, and that run's outcome only in the second
    middle = len(lines) // 2
    first_run = json.loads(lines[middle])["run_id"]
    moved = [json.loads(line) for line in lines[: middle + 1]]
    for record in moved:
        if record["run_id"] == first_run:
            record.pop("run_outcome", None)
    head.write_text("".join(json.dumps(r) + "\n" for r in moved))
    tail.write_bytes(b"".join(lines[middle + 1 :]))
    files = [early, late, head, tail]
    expected = one_store(files, tmp_path / "one.duckdb", where="run_outcome=success")
    # a store a shard, as when each is too large to share one
    found = _sharded(files, tmp_path / "work", dask_client, where="run_outcome=success",
                     store_bytes=1)  # fmt: skip
    assert sorted(map(sorted, found.groups)) == sorted(
        [sorted(map(str, (early, late))), sorted(map(str, (head, tail)))]
    )
    _same(found.contracts, expected)


def test_byte_ranges_of_one_file_mine_and_number_lines_as_one_store(
    tmp_path: Path, dask_client: Any
) -> None:
    """A file of whole conversations cut at line ends: run ids made from line numbers and
    a bad line deep in the file say the lines one store says."""
    source = tmp_path / "big.jsonl"
    write_traces(simulate("all", tasks=60, seed=1, trials=3), source, "openai_chat")
    lines = [json.loads(line) for line in source.read_bytes().splitlines()]
    text = []
    for number, record in enumerate(lines):
        record.pop("run_id")  # the run is named after the file and its line
        text.append(json.dumps(record))
        if number == 140:
            text.append('{"messages": [truncated')
    source.write_text("\n".join(text) + "\n")
    single = tmp_path / "one.duckdb"
    expected = one_store([source], single)
    found = _sharded([source], tmp_path / "work", dask_client,
                     shard_bytes=source.stat().st_size // 4)  # fmt: skip
    assert found.shards >= 4
    _same(found.contracts, expected, whole_files=False)
    quarantined = [(f.units_quarantined, f.units_read) for f in found.ingest.files]
    assert sum(q for q, _ in quarantined) == 1 and sum(r for _, r in quarantined) == len(text)
    con = duckdb.connect(str(single), read_only=True)
    try:
        want = con.execute("SELECT source_line FROM quarantine").fetchall()
        runs = con.execute("SELECT count(*) FROM runs WHERE run_id LIKE 'big.jsonl:%'").fetchall()
    finally:
        con.close()
    assert want == [(142,)] and runs[0][0] == len(lines)
    stores = sorted((tmp_path / "work" / "shards").glob("*.duckdb"))
    seen = []
    for path in stores:
        con = duckdb.connect(str(path), read_only=True)
        try:
            seen += con.execute("SELECT source_line FROM quarantine").fetchall()
        finally:
            con.close()
    assert seen == want


def test_shards_read_through_fsspec_urls(tmp_path: Path, dask_client: Any) -> None:
    """A glob URL names the files; workers read them through fsspec."""
    files = simulated_shards(tmp_path, "search", 40)
    urls = [f"file://{f.resolve().as_posix()}" for f in files]
    expected = one_store(files, tmp_path / "one.duckdb")
    found = _sharded([f"file://{tmp_path.resolve().as_posix()}/search-*.jsonl"],
                     tmp_path / "work", dask_client)  # fmt: skip
    assert [f.source_file for f in found.ingest.files] == urls
    assert comparable(found.contracts)["contracts"] == comparable(expected)["contracts"]


def test_shards_in_memory_filesystem(tmp_path: Path) -> None:
    """memory:// is this process's: the workers are threads of it."""
    import fsspec
    from distributed import Client

    files = simulated_shards(tmp_path, "travel", 40)
    memory = fsspec.filesystem("memory")
    for path in files:
        memory.pipe(f"/corpus/{path.name}", path.read_bytes())
    expected = one_store(files, tmp_path / "one.duckdb")
    with Client(processes=False, n_workers=2, threads_per_worker=1,
                dashboard_address=":0") as client:  # fmt: skip
        found = _sharded(["memory://corpus/"], tmp_path / "work", client)
    assert [f.source_file for f in found.ingest.files] == [
        f"memory:///corpus/{p.name}" for p in files]  # fmt: skip
    assert comparable(found.contracts)["contracts"] == comparable(expected)["contracts"]
    memory.rm("/corpus", recursive=True)


def test_unreadable_lines_are_quarantined_and_counted(tmp_path: Path, dask_client: Any) -> None:
    files = simulated_shards(tmp_path, "commerce", 40)
    broken = files[1]
    broken.write_bytes(broken.read_bytes() + b'{"task_id": "x", "messages": [\n\xff\xfe\n')
    expected_report = ingest(files, tmp_path / "one.duckdb")
    expected = one_store(files, tmp_path / "again.duckdb")
    found = _sharded(files, tmp_path / "work", dask_client)
    for name in ("units_read", "units_stored", "units_quarantined", "items_quarantined"):
        assert found.ingest.total(name) == expected_report.total(name)
    assert found.ingest.total("units_quarantined") == 2
    assert comparable(found.contracts)["contracts"] == comparable(expected)["contracts"]
