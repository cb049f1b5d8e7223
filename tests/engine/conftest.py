"""One local Dask cluster of two workers for the tests of a module that asks for it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    from tracemine.engine.dask import cluster

    with cluster(2, dashboard=False) as started:
        yield started.client
