"""Helpers shared by the tests: golden files and reading a fixture through ingest.

Golden files sit beside their inputs (``x.jsonl`` → ``x.golden.json``). To refresh them
after an intended change: ``TRACEMINE_UPDATE_GOLDEN=1 pytest tests/...`` and review the diff.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import types
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tracemine.ingest import ingest

UPDATE = os.environ.get("TRACEMINE_UPDATE_GOLDEN") == "1"
FOREIGN_PLUGINS = ("deepeval", "asyncio", "rerunfailures", "repeat")
"""pytest plugins that packages of the dev environment install, which this suite leaves out"""
INNER_PYTEST = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                *(arg for name in FOREIGN_PLUGINS for arg in ("-p", f"no:{name}")))  # fmt: skip
"""The command a test runs a generated test module with: without those plugins, whose
loading took longer than the module's tests (3 s a run) and whose warnings are not ours."""


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def read_units(reader: Any, *units: Any) -> Any:
    """Feed ``units`` to a reader as ingest does, a line each, then finish it: a unit the
    reader refuses whole (``BadRecord``) is quarantined with its reason. The sink."""
    from tracemine.ingest.readers.base import BadRecord, Sink

    sink = Sink()
    for line, unit in enumerate(units, 1):
        try:
            reader.feed(unit, line, sink)
        except BadRecord as exc:
            sink.quarantine(line, None, str(exc), unit)
    reader.finish(sink)
    return sink


def write_jsonl(path: Path, units: list[Any]) -> Path:
    """``units`` as JSON lines at ``path``."""
    path.write_text("".join(json.dumps(u) + "\n" for u in units), encoding="utf-8")
    return path


def assert_golden(actual: Any, golden: Path) -> None:
    """Compare ``actual`` (JSON-able) with the golden file, or write it when refreshing."""
    text = json.dumps(_jsonable(actual), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if UPDATE or not golden.exists():
        if not UPDATE:
            raise AssertionError(
                f"{golden} does not exist; run with TRACEMINE_UPDATE_GOLDEN=1 to create it"
            )
        golden.write_text(text, encoding="utf-8")
        return
    expected = golden.read_text(encoding="utf-8")
    assert json.loads(text) == json.loads(expected), f"output differs from {golden}"


def ingest_snapshot(
    path: Path, db: Path, *, format: str | None = None, task_key: str | None = None
) -> dict[str, Any]:
    """Ingest one file with record validation on and return what the store holds, in a
    stable JSON-able shape (no call keys, ingest ids or timings)."""
    report = ingest([path], db, format=format, task_key=task_key, validate=True)
    (file_report,) = report.files
    assert file_report.units_read == file_report.units_stored + file_report.units_quarantined
    con = duckdb.connect(str(db), read_only=True)
    try:
        calls = _rows(
            con,
            "SELECT * EXCLUDE (call_key, ingest_id, source_file) FROM calls "
            "ORDER BY run_id, seq, call_key",
        )
        for call in calls:
            for name in ("arguments", "result"):
                if call[name] is not None:
                    call[name] = json.loads(call[name])
        runs = _rows(con, "SELECT * EXCLUDE (ingest_id, source_file) FROM runs ORDER BY run_id")
        for run in runs:
            run["metadata"] = json.loads(run["metadata"])
        quarantine = _rows(
            con,
            "SELECT source_line, source_pointer, level, reason FROM quarantine "
            "ORDER BY source_line, source_pointer",
        )
    finally:
        con.close()
    counts = file_report.model_dump(exclude={"seconds", "source_file", "detail", "outcome"})
    return {"counts": counts, "runs": runs, "calls": calls, "quarantine": quarantine}


def store_calls(folder: Path, calls: list[tuple[str, str, dict[str, Any], Any]]) -> Path:
    """A store of one-call runs, each ``(task, tool, arguments, result)`` with status ok,
    ingested from flat lines in ``folder``."""
    lines = [
        {"run_id": f"r{i}", "task_id": task, "seq": 0, "tool": tool, "call_id": f"c{i}",
         "arguments": arguments, "result": result, "status": "ok"}
        for i, (task, tool, arguments, result) in enumerate(calls)
    ]  # fmt: skip
    write_jsonl(folder / "calls.jsonl", lines)
    ingest([folder / "calls.jsonl"], folder / "store.duckdb")
    return folder / "store.duckdb"


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


HEAVY = ("duckdb", "polars", "sklearn", "numpy", "pandas", "pydantic", "pyarrow", "typer")


def heavy_imports(module: str, *more: str) -> list[str]:
    """The heavy libraries (:data:`HEAVY` and ``more``) a fresh interpreter has loaded
    after importing ``module``."""
    code = (
        f"import sys, {module}\nprint(','.join(m for m in {(*HEAVY, *more)!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [name for name in out.stdout.strip().split(",") if name]


def public_names(module: types.ModuleType, *submodules: str) -> list[str]:
    """The names a module binds that are not private, its imported submodules excepted.
    pytest rewrites the asserts of every module of a distribution that registers a plugin
    (tracemine's cassette fixture), and that binds names starting with ``@``."""
    skip = {"annotations", *submodules}
    return sorted(name for name in dir(module) if name[0] not in "_@" and name not in skip)


def load_example(name: str) -> types.ModuleType:
    """A fresh module object of ``examples/<name>.py``."""
    path = Path(__file__).parents[1] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """A folder ``build`` fills once per test run, shared by the xdist workers: each worker's
    base temp sits in one folder of the run, where the first worker to ask builds it under a
    lock while the others wait. Read it only; a test that writes works on a copy."""
    base = factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, done = root / name, root / f"{name}.built"
    try:
        import fcntl
    except ImportError:  # no flock (Windows): each worker builds its own
        fcntl = None
        folder, done = base / name, base / f"{name}.built"
    with (root / f"{name}.lock").open("w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way
            folder.mkdir()
            build(folder)
            done.touch()
    return folder
