"""The monitor every integration test checks through."""

from __future__ import annotations

import pytest
from integration_calls import order_monitor

from tracemine.monitor import Monitor


@pytest.fixture
def monitor() -> Monitor:
    return order_monitor()
