"""The results file every benchmark writes with ``--json PATH``: one shape for all of them,
so that ``benchmarks/report.py`` renders ``docs/performance.md`` and the README's figures
table from what was measured, never from figures typed by hand.

A benchmark makes a ``Run`` when it starts (the machine's load average then) and calls
``Run.write`` at the end with its tables (rows of figures, as printed) and its headline:
one entry per figure the README shows, each with its unit, the size it was measured at,
the target, whether the target was met, and the same-run baseline and ratio where the
benchmark has one. The file holds, besides, the machine (cores, memory, load average at
start and end), the versions (tracemine, Python, DuckDB, polars), the command line and the
time of the measurement.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

SCHEMA = 1
PACKAGES = ("tracemine", "duckdb", "polars")


def _memory_gb() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (AttributeError, ValueError, OSError):
        return None


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def headline(what: str, figure: float, unit: str, *, size: str, target: str, met: bool | None,
             baseline: float | None = None, baseline_what: str | None = None,
             ratio: float | None = None) -> dict[str, Any]:  # fmt: skip
    """One figure for the README's table: ``what`` was measured, at ``size``, against
    ``target`` (its words, e.g. "<= 60 s"); ``met`` is the benchmark's own verdict."""
    entry: dict[str, Any] = {"what": what, "figure": figure, "unit": unit, "size": size,
                             "target": target, "met": met}  # fmt: skip
    if baseline is not None:
        entry.update(baseline=baseline, baseline_what=baseline_what, ratio=ratio)
    return entry


# options whose value is a place on the measuring machine: left out of the recorded command
LOCAL_OPTIONS = ("--json", "--workdir", "--keep")


def local_free(args: list[str]) -> list[str]:
    """The arguments without the options that name a local file or folder (and their
    values), so a committed result says how to re-run it, not where it was run."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in LOCAL_OPTIONS:
            skip = True
        elif not arg.startswith(tuple(f"{o}=" for o in LOCAL_OPTIONS)):
            kept.append(arg)
    return kept


class Run:
    """One benchmark run: started when made, written by ``write``."""

    def __init__(self, benchmark: str, argv: list[str] | None = None) -> None:
        self.benchmark = benchmark
        self.argv = list(sys.argv if argv is None else argv)
        self.started = time.time()
        self.load_start = _load()

    def document(self, tables: dict[str, list[dict[str, Any]]],
                 headlines: list[dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
        script = Path(self.argv[0]).name if self.argv else f"{self.benchmark}.py"
        return {
            "schema": SCHEMA,
            "benchmark": self.benchmark,
            "command": " ".join(["python", f"benchmarks/{script}", *local_free(self.argv[1:])]),
            "measured": datetime.fromtimestamp(self.started, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seconds": round(time.time() - self.started, 1),
            "machine": {
                "platform": platform.platform(),
                "machine": platform.machine(),
                "cores": os.cpu_count(),
                "memory_gb": _memory_gb(),
                "load_average_start": self.load_start,
                "load_average_end": _load(),
            },
            "versions": {"python": platform.python_version()}
            | {name: _version(name) for name in PACKAGES},
            "headline": headlines,
            "tables": tables,
        }

    def write(self, path: Path | None, tables: dict[str, list[dict[str, Any]]],
              headlines: list[dict[str, Any]]) -> None:  # fmt: skip
        """Write the results to ``path`` (nothing when it is None, i.e. no ``--json``)."""
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.document(tables, headlines), indent=2, ensure_ascii=False)
        path.write_text(text + "\n", encoding="utf-8")
        print(f"results written to {path}", flush=True)
