"""``mine --workers`` / ``--scheduler``: the options, the progress and the summary of a
mine spread over a Dask cluster (:func:`tracemine.mine_sharded`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from tracemine.cli._common import console, err_console, printable, run
from tracemine.engine.address import CONNECT_TIMEOUT
from tracemine.errors import InputError

if TYPE_CHECKING:
    from tracemine.engine import ShardedMine

WorkersOption = Annotated[
    int | None,
    typer.Option("--workers", metavar="N", min=1, show_default=False,
                 help="Mine TRACES on a local Dask cluster of N worker processes."),
]  # fmt: skip
SchedulerOption = Annotated[
    str | None,
    typer.Option("--scheduler", metavar="ADDRESS", show_default=False,
                 help="Mine TRACES on the Dask cluster at ADDRESS (tcp://host:8786)."),
]  # fmt: skip
ConnectTimeoutOption = Annotated[
    float,
    typer.Option("--join-timeout", metavar="SECONDS",
                 help="With --scheduler: seconds to wait for it to connect and answer."),
]  # fmt: skip
TlsCaOption = Annotated[
    str | None,
    typer.Option("--tls-ca-file", metavar="FILE", show_default=False,
                 help="With a tls:// --scheduler: the CA certificate to trust (PEM)."),
]  # fmt: skip
TlsCertOption = Annotated[
    str | None,
    typer.Option("--tls-cert", metavar="FILE", show_default=False,
                 help="With a tls:// --scheduler: this client's certificate (PEM)."),
]  # fmt: skip
TlsKeyOption = Annotated[
    str | None,
    typer.Option("--tls-key", metavar="FILE", show_default=False,
                 help="With a tls:// --scheduler: the key of --tls-cert, if not inside it."),
]  # fmt: skip
WorkOption = Annotated[
    Path,
    typer.Option("--work", metavar="DIR",
                 help="With TRACES: where shard stores go; every worker must see it."),
]  # fmt: skip
WorkerMemoryOption = Annotated[
    str | None,
    typer.Option("--memory", metavar="SIZE", show_default=False,
                 help="With --workers: each worker's memory cap (1GB); Dask's default else."),
]  # fmt: skip


def check_sharded(sources: list[str] | None, workers: int | None, scheduler: str | None) -> bool:
    """Whether this mine is spread over workers; a half-given one is a mistake."""
    if scheduler is not None and not scheduler.strip():
        # an unset variable in ``--scheduler "$DASK_SCHEDULER"``: never a local mine instead
        _fail("--scheduler is empty: give the scheduler's address (tcp://host:8786), or "
              "--workers N for a local cluster")  # fmt: skip
    cluster = workers is not None or scheduler is not None
    with_traces = bool(sources)
    if cluster and not with_traces:
        _fail("--workers and --scheduler mine trace files: name them (paths, folders, "
              "globs or URLs) after the options")  # fmt: skip
    if with_traces and not cluster:
        _fail(
            "trace files are mined across workers: give --workers N or --scheduler "
            "ADDRESS, or read them into a store with `tracemine ingest`, then mine --db"
        )
    if workers is not None and scheduler is not None:
        _fail("give --workers (a local cluster) or --scheduler (an existing one), not both")
    return cluster


def _fail(message: str) -> None:
    run(_raise, message)


def _raise(message: str) -> None:
    raise InputError(message)


def run_sharded(
    sources: list[str], work: Path, workers: int | None, scheduler: str | None,
    worker_memory: str | None, settings: dict[str, Any],
    connect_timeout: float = CONNECT_TIMEOUT,
    tls: tuple[str | None, str | None, str | None] = (None, None, None),
) -> ShardedMine:  # fmt: skip
    from tracemine.engine import Tls, mine_sharded

    show = err_console.is_terminal
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=err_console, transient=True, disable=not show) as bar:  # fmt: skip
        tasks: dict[str, TaskID] = {}

        def progress(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(f"{label} (shards)", total=total)
            bar.update(tasks[label], completed=done)

        def said(link: str | None) -> None:
            if link:
                err_console.print(f"Dask dashboard: {link}", markup=False)

        return run(mine_sharded, sources, work=work, workers=workers, scheduler=scheduler,
                   worker_memory=worker_memory, progress=progress, on_cluster=said,
                   connect_timeout=connect_timeout, tls=Tls(*tls), **settings)  # fmt: skip


def render_shards(found: ShardedMine) -> None:
    report = found.ingest
    read, stored = report.total("units_read"), report.total("units_stored")
    quarantined = report.total("units_quarantined")
    console.print(
        f"{found.shards} shards in {printable(report.db)}: records read {read} = stored "
        f"{stored} + quarantined {quarantined}; {report.total('calls')} calls"
    )
    for line in report.files:
        if line.outcome == "skipped" or line.units_quarantined or line.items_quarantined:
            why = line.detail or (f"{line.units_quarantined} records and "
                                  f"{line.items_quarantined} items quarantined")  # fmt: skip
            console.print(printable(f"  {line.source_file}: {why}", markup=False), markup=False)
    for group in found.groups:
        console.print("  mined as one store (they share runs or tasks): "
                      + printable(", ".join(group), markup=False),
                      markup=False)  # fmt: skip
