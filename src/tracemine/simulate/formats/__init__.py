"""Writers of runs (see :mod:`tracemine.simulate`) to trace files ingest reads: one module a
format, each with ``write_run(run) -> list[dict]`` giving the file's units for one run.

Runs read back by :func:`tracemine.ingest.read_traces` and regrouped by
:func:`runs_from_records` write again, so the fault injector reuses these writers.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tracemine._atomic import write_atomic
from tracemine.errors import InputError
from tracemine.simulate.formats import (
    anthropic,
    braintrust,
    flat,
    langfuse,
    langsmith,
    mcp,
    openai_chat,
    otlp,
    phoenix,
    weave,
)

FORMATS: dict[str, Callable[[dict[str, Any]], list[dict[str, Any]]]] = {
    "openai_chat": openai_chat.write_run,
    "otlp": otlp.write_run,
    "flat": flat.write_run,
    "phoenix": phoenix.write_run,
    "langsmith": langsmith.write_run,
    "anthropic": anthropic.write_run,
    "mcp": mcp.write_run,
    "braintrust": braintrust.write_run,
    "weave": weave.write_run,
    "langfuse": langfuse.write_run,
}
_RUN_KEYS = ("task_id", "trial", "family", "reward", "run_outcome")


def dump_line(unit: Any) -> str:
    """One JSONL line: compact, keys in the order built, non-ASCII kept."""
    return json.dumps(unit, ensure_ascii=False, separators=(",", ":"), default=str)


def write_traces(runs: Iterable[dict[str, Any]], path: str | Path, format: str) -> Path:
    """Write ``runs`` to ``path`` as JSONL in ``format`` (one of :data:`FORMATS`); a path
    ending in ``.gz`` is gzip-compressed with a fixed header, so the same runs always give
    the same bytes."""
    writer = FORMATS.get(format)
    if writer is None:
        raise InputError(f"unknown trace format {format!r}; choose one of: {', '.join(FORMATS)}")
    buffer = io.StringIO()
    for run in runs:
        for unit in writer(run):
            buffer.write(dump_line(unit))
            buffer.write("\n")
    return write_text(buffer.getvalue(), path)


def write_text(text: str, path: str | Path) -> Path:
    """Write ``text`` as UTF-8; a path ending in ``.gz`` is compressed with mtime 0 and no
    file name in the header, so the bytes depend on the content only."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    if target.name.endswith(".gz"):
        out = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
            gz.write(data)
        data = out.getvalue()
    write_atomic(target, data)
    return target


def runs_from_records(
    runs: Iterable[dict[str, Any]], calls: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Group normalized call records (as :func:`tracemine.ingest.read_traces` gives them)
    into runs the writers take, in the order the runs were first seen."""
    by_run: dict[str, dict[str, Any]] = {}
    for record in runs:
        run = {"run_id": record["run_id"], **{k: record.get(k) for k in _RUN_KEYS}}
        metadata = record.get("metadata") or {}
        for key in _RUN_KEYS:
            # formats without a place for them keep these in run metadata (OTLP attributes)
            if run[key] is None:
                run[key] = metadata.get(f"tracemine.{key}")
        for key in ("instruction", "final_text", "started_at", "ended_at"):
            if isinstance(metadata.get(key), str):
                run[key] = metadata[key]
        run["calls"] = []
        by_run[record["run_id"]] = run
    for call in calls:
        run = by_run.setdefault(call["run_id"], {"run_id": call["run_id"], "calls": []})
        run["calls"].append(dict(call))
    for run in by_run.values():
        run["calls"].sort(key=lambda c: c.get("seq") if c.get("seq") is not None else 0)
    return list(by_run.values())
