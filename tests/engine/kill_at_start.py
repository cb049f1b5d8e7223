"""A worker preload: the worker kills itself (SIGKILL) while it starts, as many times as
``TRACEMINE_TEST_KILLS`` says over all workers (counted in ``TRACEMINE_TEST_TALLY``)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any


def dask_setup(worker: Any) -> None:
    tally = Path(os.environ["TRACEMINE_TEST_TALLY"])
    done = int(tally.read_text()) if tally.exists() else 0
    if done < int(os.environ["TRACEMINE_TEST_KILLS"]):
        tally.write_text(str(done + 1))
        os.kill(os.getpid(), signal.SIGKILL)
