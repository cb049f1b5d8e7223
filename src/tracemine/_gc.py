"""Reading a large schema document or trace file allocates millions of containers (parsed
documents, flattened nodes, caches, facts, call records). Python's cyclic collector walks
every live container again each time the heap has grown by a quarter, which cost as much as
the work itself (a third of an ingest's time): :func:`paused` switches it off for the
duration. Neither stage builds reference cycles, so reference counting still frees what is
dropped on the way."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic collector off inside the block; back on after it if it was on before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
