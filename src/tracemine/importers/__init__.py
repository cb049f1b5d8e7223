"""Importers of public benchmark suites: replay each task's ground-truth tool calls
against the suite's own deterministic tools and write flat JSONL traces that
``tracemine ingest`` reads.

- ``agentdojo``: AgentDojo's user tasks (optional extra ``tracemine[agentdojo]``);
- ``bfcl``: the Berkeley Function Calling Leaderboard's multi-turn entries, plus the
  function docs with response schemas as a declared source for ``tracemine merge``.

The suites' packages are optional: each importer is imported only when asked for.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from tracemine.errors import InputError
from tracemine.importers._common import ImportReport

SUITES = ("agentdojo", "bfcl")

__all__ = ["SUITES", "ImportReport", "import_suite"]


def import_suite(
    suite: str, out: str | Path, *, limit: int | None = None, compress: bool = False
) -> ImportReport:
    """Import ``suite`` (one of :data:`SUITES`) into the folder ``out``; at most ``limit``
    tasks from each of its task suites."""
    if suite not in SUITES:
        raise InputError(f"unknown suite {suite!r}; choose one of: {', '.join(SUITES)}")
    if limit is not None and limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}")
    module = importlib.import_module(f"tracemine.importers.{suite}")
    function = getattr(module, f"import_{suite}")
    report: ImportReport = function(out, limit=limit, compress=compress)
    return report
