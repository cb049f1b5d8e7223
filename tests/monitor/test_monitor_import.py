"""The monitor runs inside agent processes: importing it must stay light."""

from __future__ import annotations

import tracemine.monitor

from helpers import heavy_imports, public_names


def test_importing_the_monitor_loads_no_heavy_dependency() -> None:
    assert (
        heavy_imports("tracemine.monitor, tracemine.monitor.hooks, tracemine.monitor.trials") == []
    )


def test_public_names() -> None:
    assert sorted(tracemine.monitor.__all__) == public_names(tracemine.monitor, "hooks", "trials")
