"""A Dask worker plugin that kills its worker's process when a chosen task starts."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin


class KillOnStart(WorkerPlugin):
    """Kill the worker (SIGKILL, as the kernel's out-of-memory killer would) when the
    task of pass ``label`` for the ``index``-th store starts, at most ``times`` times over
    the whole cluster (counted in the file ``tally``, which workers share)."""

    name = "tracemine-test-kill"

    def __init__(self, label: str, index: int, tally: Path, times: int) -> None:
        self.prefix = f"tracemine-{label.replace(' ', '-')}-"
        self.suffix = f"-{index}"
        self.tally = str(tally)
        self.times = times

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        name = str(key)
        if finish != "executing" or not name.startswith(self.prefix):
            return
        if not name.endswith(self.suffix):
            return
        tally = Path(self.tally)
        done = int(tally.read_text()) if tally.exists() else 0
        if done >= self.times:
            return
        tally.write_text(str(done + 1))
        os.kill(os.getpid(), signal.SIGKILL)


KILL_AT_START = Path(__file__).with_name("kill_at_start.py")
"""A worker preload (``distributed.worker.preload``) that kills the worker while it
starts, at most ``TRACEMINE_TEST_KILLS`` times, counted in ``TRACEMINE_TEST_TALLY``."""


class KillOnReceive(WorkerPlugin):
    """Kill the worker (SIGKILL) when data under a key starting with ``prefix`` reaches it
    (scattered to it, or copied from a peer), at most ``times`` times over the whole
    cluster (counted in ``tally``): the worker dies in the middle of the client's
    ``scatter``, before it has answered."""

    name = "tracemine-test-kill-on-receive"

    def __init__(self, prefix: str, tally: Path, times: int) -> None:
        self.prefix = prefix
        self.tally = str(tally)
        self.times = times

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish != "memory" or start == "executing" or not str(key).startswith(self.prefix):
            return
        tally = Path(self.tally)
        done = int(tally.read_text()) if tally.exists() else 0
        if done >= self.times:
            return
        tally.write_text(str(done + 1))
        os.kill(os.getpid(), signal.SIGKILL)
