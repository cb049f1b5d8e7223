"""``mine_sharded``: trace files in, contracts out, the work spread over a cluster."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb

from tracemine.engine import worker
from tracemine.engine.address import CONNECT_TIMEOUT, Tls, check_address
from tracemine.engine.plan import SHARD_BYTES, Shard, plan
from tracemine.errors import InputError, StoreError
from tracemine.ingest.pipeline import FileReport, IngestReport
from tracemine.ingest.store import out_of_memory, parse_size, ran_out_of_memory
from tracemine.mine.api import MINE_MEMORY_LIMIT, Options, mine_shards
from tracemine.mine.profile.shards import Setup
from tracemine.model.contract import ContractFile

Progress = Callable[[str, int, int], None]
STORE_BYTES = 512_000_000
"""Consecutive shards are read into one store of up to about this many bytes of traces."""


@dataclass
class ShardedMine:
    """What :func:`mine_sharded` did: the contracts, what ingest read in every shard (the
    counts add up: ``units_read == units_stored + units_quarantined``), how the shards
    were grouped, and the cluster's dashboard."""

    contracts: ContractFile
    ingest: IngestReport
    shards: int
    groups: list[list[str]]
    dashboard: str | None = None


def mine_sharded(
    sources: Sequence[str | Path],
    *,
    work: str | Path,
    workers: int | None = None,
    scheduler: str | None = None,
    client: Any = None,
    worker_memory: str | None = None,
    shard_bytes: int = SHARD_BYTES,
    store_bytes: int = STORE_BYTES,
    format: str | None = None,
    progress: Progress | None = None,
    dashboard: bool = True,
    on_cluster: Callable[[str | None], None] | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
    tls: Tls | None = None,
    **settings: Any,
) -> ShardedMine:
    """Mine the trace files ``sources`` (paths, folders, globs or fsspec URLs) on a Dask
    cluster: ``workers`` local processes, the scheduler at ``scheduler``, or an existing
    ``client``. The shards (:mod:`tracemine.engine.plan`) are read, consecutive ones
    together, into as few stores under ``work`` (a folder every worker sees) as keep
    every worker thread busy and each within ``store_bytes`` of traces (:func:`batches`),
    and profiled there; the client adds the profiles up, proposes, and has the held-out
    counts made store by store (:mod:`tracemine.mine.profile.shards`). ``settings`` are
    :func:`tracemine.mine`'s keywords, and the contracts are the ones
    :func:`tracemine.mine` finds in one store of the same files with the same seed.
    Stores are kept in ``work``: mining them again on as many worker threads reads
    nothing again. ``progress`` is called with (pass, stores done, stores),
    ``on_cluster`` with the cluster's dashboard link (or None) once it is up. A
    ``scheduler`` must answer within ``connect_timeout`` seconds; a ``tls://`` one needs
    the client's files in ``tls``.

    >>> found = mine_sharded(["s3://traces/"], work="/shared/tm", workers=8)  # doctest: +SKIP
    >>> found.contracts.contracts[0].description  # doctest: +SKIP
    """
    from tracemine.engine import dask as engine

    engine.require()
    if not sources:
        raise InputError("no trace files given to mine")
    options = Options.of(**settings)
    if scheduler and client is None:
        check_address(scheduler, tls)  # before any file is read: a typo is said at once
    folder = Path(work)
    shards = plan([str(s) for s in sources], format=format, shard_bytes=shard_bytes)
    folder.mkdir(parents=True, exist_ok=True)
    con = _client_store(folder / "mine.duckdb")  # taken first: one mine a work folder
    with ExitStack() as stack:
        stack.callback(con.close)
        worker.clear_unfinished(folder)
        link, threads = None, None
        if client is None:
            joined = engine.cluster(workers, scheduler, worker_memory, dashboard=dashboard,
                                    connect_timeout=connect_timeout, tls=tls)  # fmt: skip
            started = stack.enter_context(joined)
            client, link = started.client, started.dashboard
            if scheduler is None:  # workers of this machine share its cores
                threads = max((os.cpu_count() or 1) // (workers or 1), 1)
        if on_cluster:
            on_cluster(link)
        runner = engine.DaskEngine(client, progress)
        config = worker.Config(memory=_mine_memory(worker_memory), threads=threads)
        shards = _number_lines(runner, shards)
        reports, stores, held = _ingest(runner, shards, folder, config, store_bytes)
        missing = [path for _, path in stores if not Path(path).exists()]
        if missing:
            raise InputError(
                f"{folder}: the workers wrote {missing[0]} and {len(missing) - 1} more stores "
                "that this machine does not see; --work must be a folder every worker and "
                "the client share"
            )
        groups = _groups(runner, stores, options, config)
        merged = _merge_groups(runner, groups, folder)
        named = [[name for _, path in group for name in held[path]] for group in groups]
        try:
            contracts = mine_shards(engine.DaskShards(runner, merged, config), con,
                                    folder.as_posix(), options)  # fmt: skip
        except duckdb.Error as exc:
            if not ran_out_of_memory(exc):
                raise
            raise out_of_memory("merging the shards' profiles", "", MINE_MEMORY_LIMIT) from None
    together = [names for names, group in zip(named, groups, strict=True) if len(group) > 1]
    contracts.provenance["shards"] = {"count": len(shards), "stores": len(merged),
                                      "merged": together}  # fmt: skip
    report = IngestReport(db=folder.as_posix(), files=reports)
    return ShardedMine(contracts, report, len(shards), together, link)


def _client_store(path: Path) -> duckdb.DuckDBPyConnection:
    """The client's database: the shards' profiles added up, and what a re-mine reuses."""
    try:
        return duckdb.connect(str(path), config={"memory_limit": MINE_MEMORY_LIMIT or "1GB"})
    except duckdb.Error as exc:  # another mine holds it, or it is not a database
        raise StoreError(
            f"{path}: cannot open the mine's own database (is another mine "
            f"using this --work folder?): {exc}"
        ) from None


def _mine_memory(worker_memory: str | None) -> str | None:
    """DuckDB's cap in a worker: the miner's, or less when the worker's own cap is small
    (DuckDB's buffers are not all a process holds)."""
    own = parse_size(worker_memory) if worker_memory else None
    if own is None:
        return MINE_MEMORY_LIMIT
    default = parse_size(MINE_MEMORY_LIMIT or "1GB") or 10**9
    return f"{min(default, int(own * 0.45)) // 10**6}MB"


def _number_lines(runner: Any, shards: list[Shard]) -> list[Shard]:
    """Give every byte range after a file's first the number of its first line: one
    more than the line ends of the ranges before it."""
    counted = [s for s in shards if not s.whole]
    if not counted:
        return shards
    ends = runner.run("counting lines", worker.count_lines,
                      [(s.name, (s.url, s.start, s.end)) for s in counted])  # fmt: skip
    lines = dict(zip((s.index for s in counted), ends, strict=True))
    out: list[Shard] = []
    for shard in shards:
        if not shard.whole and shard.start > 0:
            before = out[-1]  # the range ending where this one starts
            shard = replace(shard, first_line=(before.first_line or 1) + lines[before.index])
        out.append(shard)
    return out


def batches(shards: list[Shard], slots: int, store_bytes: int = STORE_BYTES) -> list[list[Shard]]:
    """``shards`` cut, in order, into runs of consecutive shards of about equal bytes, one
    store each: as few as keep every one of ``slots`` worker threads busy and each store
    within ``store_bytes`` (a multiple of ``slots`` of them, never more than the shards;
    one that unequal shards fill past ``store_bytes`` is cut again, and a shard larger
    than that is a store alone). Every pass of a mine runs a task per store and opens
    it, whatever it holds: twenty small stores on two workers cost half as much again
    as two large ones."""
    if not shards:
        return []
    slots = max(slots, 1)
    sizes = [max(s.length, 1) for s in shards]
    total = sum(sizes)
    rounds = -(-total // (slots * store_bytes))
    count = min(len(shards), slots * rounds)
    out: list[list[Shard]] = [[] for _ in range(count)]
    done = 0
    for shard, size in zip(shards, sizes, strict=True):
        out[min((2 * done + size) * count // (2 * total), count - 1)].append(shard)  # its middle
        done += size
    cut: list[list[Shard]] = []
    for group in out:  # unequal shards can fill one past the size: cut it again
        held = store_bytes
        for shard in group:
            if held + max(shard.length, 1) > store_bytes:
                cut.append([])
                held = 0
            cut[-1].append(shard)
            held += max(shard.length, 1)
    return cut


def _copies(runner: Any, shards: list[Shard]) -> dict[int, Shard]:
    """The shards whose bytes are those of an earlier shard, each with that shard. Only
    shards of one length are compared (all, when a listing gave no size)."""
    lengths = [s.length for s in shards]
    unknown = 0 in lengths
    suspects = [s for s in shards if unknown or lengths.count(s.length) > 1]
    if not suspects:
        return {}
    hashes = runner.run("comparing shards", worker.content_hash,
                        [(s.name, (s.url, s.start, s.end)) for s in suspects])  # fmt: skip
    first: dict[str, Shard] = {}
    copies: dict[int, Shard] = {}
    for shard, digest in zip(suspects, hashes, strict=True):
        earlier = first.setdefault(digest, shard)
        if earlier is not shard:
            copies[shard.index] = earlier
    return copies


def _ingest(runner: Any, shards: list[Shard], folder: Path, config: worker.Config,
            store_bytes: int = STORE_BYTES,
            ) -> tuple[list[FileReport], list[Store], dict[str, list[str]]]:  # fmt: skip
    """Read the shards into stores of consecutive ones (:func:`batches`; those already
    there are kept); a shard with the same content as an earlier one is skipped, as one
    store skips a file read before. Also the shards each store holds, by its path."""
    copies = _copies(runner, shards)
    read = [s for s in shards if s.index not in copies]
    groups = batches(read, runner.slots(), store_bytes)
    paths = [(folder / "shards" / _store_name(group)).as_posix() for group in groups]
    found = runner.run(
        "ingest",
        worker.ingest,
        [(_named(group), (group, p, config)) for group, p in zip(groups, paths, strict=True)],
    )
    done = {s.index: r for group, rs in zip(groups, found, strict=True)
            for s, r in zip(group, rs, strict=True)}  # fmt: skip
    reports: list[FileReport] = []
    for shard in shards:
        if shard.index in copies:
            detail = f"same content as {copies[shard.index].name}; read once"
            reports.append(FileReport(source_file=shard.name, source_format=shard.format,
                                      outcome="skipped", detail=detail))  # fmt: skip
        else:
            reports.append(done[shard.index].model_copy(update={"source_file": shard.name}))
    stores = [(_named(group), p) for group, p in zip(groups, paths, strict=True)]
    return reports, stores, {p: [s.name for s in g] for g, p in zip(groups, paths, strict=True)}


def _store_name(group: list[Shard]) -> str:
    """A store's file: its first shard's place, and the shards it holds (their files'
    versions, ranges, formats and ingest ids)."""
    if len(group) == 1:
        return f"{group[0].index:05d}-{group[0].key()}.duckdb"
    digest = hashlib.sha256("|".join(s.key() for s in group).encode()).hexdigest()[:16]
    return f"{group[0].index:05d}+{len(group) - 1}-{digest}.duckdb"


def _named(group: list[Shard]) -> str:
    return " + ".join(s.name for s in group)


Store = tuple[str, str]
"""A store of the mine: (what it holds, its path)."""


def _groups(runner: Any, stores: list[Store], options: Options,
            config: worker.Config) -> list[list[Store]]:  # fmt: skip
    """The stores, grouped in shard order: stores that share a run or a task are mined
    as one (a task must lie in one store for its counts to add up)."""
    keys = runner.run("nominal calls", _keys, [(n, (p,)) for n, p in stores],
                      shared=(list(options.filters), options.task_key, config))  # fmt: skip
    parent = list(range(len(stores)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for kind in (0, 1):  # runs, then tasks
        owner: dict[int, int] = {}
        for i, found in enumerate(keys):
            for h in found[kind]:
                a, b = root(owner.setdefault(h, i)), root(i)
                parent[max(a, b)] = min(a, b)
    grouped: dict[int, list[Store]] = {}
    for i, entry in enumerate(stores):
        grouped.setdefault(root(i), []).append(entry)
    return list(grouped.values())


def _keys(filters: list, task_key: str | None, config: worker.Config, path: str
          ) -> tuple[set[int], set[int]]:  # fmt: skip
    return worker.run_step(path, Setup(), worker.shard_keys, (filters, task_key), config)


def _merge_groups(runner: Any, groups: list[list[Store]], folder: Path) -> list[Store]:
    """One store per group: a group of one is its store; a larger one is merged into a
    store of its own, in the order of its shards."""
    out: list[Store] = []
    calls = []
    for group in groups:
        if len(group) == 1:
            out.append(group[0])
            continue
        members = [p for _, p in group]
        digest = hashlib.sha256("|".join(members).encode()).hexdigest()[:16]
        name = f"{Path(members[0]).stem}+{len(group) - 1}-{digest}.duckdb"
        path = (folder / "groups" / name).as_posix()
        out.append((" + ".join(name for name, _ in group), path))
        calls.append((group[0][0], (path, members)))
    if calls:
        (folder / "groups").mkdir(parents=True, exist_ok=True)
        runner.run("merging shards that share tasks", worker.merge, calls)
    return out


__all__ = ["ShardedMine", "mine_sharded"]
