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
    ``client``. Each shard (:mod:`tracemine.engine.plan`) is read into a store of its own
    under ``work``, a folder every worker sees, and profiled there; the client adds the
    profiles up, proposes, and has the held-out counts made shard by shard
    (:mod:`tracemine.mine.profile.shards`). ``settings`` are :func:`tracemine.mine`'s keywords,
    and the contracts are the ones :func:`tracemine.mine` finds in one store of the same
    files with the same seed. Shards are kept in ``work``: mining them again reads nothing
    again. ``progress`` is called with (pass, shards done, shards), ``on_cluster`` with the
    cluster's dashboard link (or None) once it is up. A ``scheduler`` must answer within
    ``connect_timeout`` seconds; a ``tls://`` one needs the client's files in ``tls``.

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
        reports, stores = _ingest(runner, shards, folder, config)
        missing = [path for _, path in stores if not Path(path).exists()]
        if missing:
            raise InputError(
                f"{folder}: the workers wrote {missing[0]} and {len(missing) - 1} more stores "
                "that this machine does not see; --work must be a folder every worker and "
                "the client share"
            )
        groups = _groups(runner, stores, options, config)
        merged = _merge_groups(runner, groups, folder)
        named = [[name for name, _ in group] for group in groups]
        try:
            contracts = mine_shards(engine.DaskShards(runner, merged, config), con,
                                    folder.as_posix(), options)  # fmt: skip
        except duckdb.Error as exc:
            if not ran_out_of_memory(exc):
                raise
            raise out_of_memory("merging the shards' profiles", "", MINE_MEMORY_LIMIT) from None
    together = [names for names in named if len(names) > 1]
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


def _ingest(runner: Any, shards: list[Shard], folder: Path, config: worker.Config
            ) -> tuple[list[FileReport], list[Store]]:  # fmt: skip
    """Read every shard into its store (those already there are kept); a shard with the
    same content as an earlier one is skipped, as one store skips a file read before."""
    paths = [(folder / "shards" / f"{s.index:05d}-{s.key()}.duckdb").as_posix() for s in shards]
    found = runner.run("ingest", worker.ingest, [(s.name, (s, p, config)) for s, p in
                                                 zip(shards, paths, strict=True)])  # fmt: skip
    reports: list[FileReport] = []
    stores: list[Store] = []
    seen: dict[str, str] = {}
    for shard, path, done in zip(shards, paths, found, strict=True):
        if done.file_hash in seen:
            detail = f"same content as {seen[done.file_hash]}; read once"
            reports.append(FileReport(source_file=shard.name, source_format=shard.format,
                                      outcome="skipped", detail=detail))  # fmt: skip
            continue
        seen[done.file_hash] = shard.name
        reports.append(done.report.model_copy(update={"source_file": shard.name}))
        stores.append((shard.name, path))
    return reports, stores


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
