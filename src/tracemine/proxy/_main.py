"""What ``tracemine mcp wrap`` and ``replay`` do once their options are read: shared by
the typer command line and by ``python -m tracemine.proxy``, the standard-library entry
point that starts in a fraction of the time (a 2026-07-28 client gives ``server/discover``
ten seconds, which importing the whole command line can take on a loaded machine)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from tracemine.monitor import Monitor
from tracemine.proxy._advertise import load_advertised
from tracemine.proxy._checker import PREFIX
from tracemine.proxy._http import HttpProxy
from tracemine.proxy._replay import Recording, ReplayServer
from tracemine.proxy._stdio import Proxy, ProxyError


def wrap(
    command: Sequence[str],
    *,
    contracts: str | Path | None = None,
    record: str | Path | None = None,
    task: str | None = None,
    task_key: str = "task_id",
    note: bool = False,
    include_proposed: bool = False,
    http: str | None = None,
    listen: str = "127.0.0.1:8765",
    advertise: str | Path | None = None,
    log: TextIO | None = None,
) -> int:
    """Run the proxy (stdio for ``command``, HTTP for ``http``); its exit code. A user's
    mistake raises a :class:`~tracemine.errors.TracemineError` with a one-line message."""
    log = log if log is not None else sys.stderr
    monitor = None
    if contracts is not None:
        monitor = Monitor.load(contracts, include_proposed=include_proposed)
        for notice in monitor.notices:
            log.write(f"{PREFIX}{notice}\n")
    schemas = load_advertised(advertise) if advertise is not None else None
    if http is not None:
        if command:
            raise ProxyError("give a server command or --http URL, not both")
        return HttpProxy(http, listen, monitor=monitor, record=record, task=task,
                         task_key=task_key, note=note, advertise=schemas,
                         log=log).serve()  # fmt: skip
    return Proxy(command, monitor=monitor, record=record, task=task, task_key=task_key,
                 note=note, advertise=schemas, log=log).run()  # fmt: skip


def replay(path: str | Path) -> int:
    """Serve the recording at ``path`` on stdin/stdout until the client closes."""
    ReplayServer(Recording.load(path)).serve()
    return 0
