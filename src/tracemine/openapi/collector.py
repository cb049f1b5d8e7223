"""Reading a schema document allocates millions of containers that all stay alive until the
document is done with (the parsed document, flattened nodes, caches, facts). Python's cyclic
collector walks every live container again each time the heap has grown by a quarter, which
on a large document cost as much as the work itself: :func:`paused` switches it off for the
duration. Nothing here builds reference cycles, so reference counting still frees what is
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
