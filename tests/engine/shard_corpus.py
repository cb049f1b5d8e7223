"""Corpora cut into shard files, and what one store of the same files mines: the
reference every sharded mine must equal."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

import duckdb

from tracemine.ingest import ingest, store
from tracemine.ingest.pipeline import ingest_shard
from tracemine.mine import mine
from tracemine.mine.api import MINE_MEMORY_LIMIT, Options, mine_shards
from tracemine.mine.profile.shards import LocalShards
from tracemine.model.contract import ContractFile
from tracemine.simulate import simulate, write_traces

DATA = Path(__file__).parent.parent.parent / "data"
TIMING = ("seconds", "store", "shards")


def simulated_shards(
    folder: Path, suite: str, tasks: int, shares: tuple[float, ...] = (0.6,),
    format: str = "openai_chat",
) -> list[Path]:  # fmt: skip
    """The runs of ``tasks`` simulated tasks in files of whole tasks: the first holds one
    task, the rest are cut at the ``shares`` of the tasks (unequal sizes)."""
    by_task: dict[Any, list[dict]] = {}
    for run in simulate(suite, tasks=tasks, seed=0, trials=3):
        by_task.setdefault(run.get("task_id"), []).append(run)
    names = list(by_task)
    cuts = [0, 1, *(max(2, int(len(names) * s)) for s in shares), len(names)]
    files = []
    for n, (start, end) in enumerate(itertools.pairwise(cuts)):
        path = folder / f"{suite}-{n}.jsonl"
        write_traces([r for name in names[start:end] for r in by_task[name]], path, format)
        files.append(path)
    return files


def flat_shards(folder: Path, source: Path, parts: int) -> list[Path]:
    """The lines of a flat export in ``parts`` files of whole tasks, of unequal sizes."""
    lines: dict[str, list[bytes]] = {}
    with gzip.open(source, "rb") as handle:
        for line in handle:
            lines.setdefault(json.loads(line)["task_id"], []).append(line)
    names = list(lines)
    cuts = [0, 1, *(len(names) * k // (parts + 1) for k in range(2, parts)), len(names)]
    files = []
    for n, (start, end) in enumerate(itertools.pairwise(cuts)):
        path = folder / f"{source.stem.split('.')[0]}-{n}.jsonl"
        path.write_bytes(b"".join(line for name in names[start:end] for line in lines[name]))
        files.append(path)
    return files


def one_store(files: list[Path], db: Path, **settings: Any) -> ContractFile:
    """What one store of ``files`` mines."""
    ingest(files, db)
    return mine(db, **settings)


def in_process(files: list[Path], folder: Path, **settings: Any) -> ContractFile:
    """Each file read into a store of its own and mined as shards in this process."""
    cons = []
    for n, path in enumerate(files):
        db = folder / f"shard-{n}.duckdb"
        ingest_shard(path, db, ingest_id=n + 1, source_file=path.as_posix(),
                     format=_format(path))  # fmt: skip
        cons.append(store.connect(db, memory_limit=MINE_MEMORY_LIMIT))
    client = duckdb.connect()
    try:
        return mine_shards(LocalShards(cons, client_is_store=False), client, "shards",
                           Options.of(**settings))  # fmt: skip
    finally:
        client.close()
        for con in cons:
            con.close()


def _format(path: Path) -> str:
    from tracemine.ingest.detect import detect_format

    return detect_format(path)


def comparable(result: ContractFile) -> dict[str, Any]:
    """The file as JSON, without what names the store or says how long it took."""
    data = json.loads(result.model_dump_json(exclude_none=True))
    data.pop("generated_at", None)
    for name in TIMING:
        data["provenance"].pop(name, None)
    return data
