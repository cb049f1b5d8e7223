"""The monitor runs inside agent processes: importing it must stay light."""

from __future__ import annotations

import subprocess
import sys

import tracemine.monitor

HEAVY = ("duckdb", "polars", "sklearn", "numpy", "pandas", "pydantic", "pyarrow", "typer")


def test_importing_the_monitor_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, tracemine.monitor, tracemine.monitor.hooks\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_public_names() -> None:
    assert sorted(tracemine.monitor.__all__) == sorted(
        name
        for name in dir(tracemine.monitor)
        if not name.startswith("_") and name not in ("annotations", "hooks")
    )
