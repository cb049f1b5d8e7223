"""What the suite importers share: the report, the optional-package check, the frozen
clock, the fixed-hash-seed worker process, JSON conversion and the deterministic writer.

A replay is byte-identical across runs only if nothing in it depends on the wall clock or
on Python's string hash seed (the suites' tools build sets of names and ids). The clock is
frozen by swapping the ``datetime`` module the tools' modules imported; the hash seed can
only be set before the interpreter starts, so an import run without ``PYTHONHASHSEED=0``
re-runs itself in a child process that has it.
"""

from __future__ import annotations

import datetime as datetime_module
import importlib.util
import io
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from tracemine._atomic import write_atomic
from tracemine.errors import InputError
from tracemine.simulate.formats import dump_line, write_text
from tracemine.simulate.formats import flat as flat_format

HASH_SEED = "0"
# the flat writer invents one second per call when a run has no timing; a replay has no
# meaningful timing, so those fields are left out rather than made up
_SYNTHETIC_TIMING = ("started_at", "ended_at", "duration_ms")
_EXTRA_CALL_KEYS = ("server", "arguments_error")


class ImportReport(BaseModel):
    """What one import wrote."""

    suite: str
    files: list[str]
    tasks: int
    runs: int
    calls: int
    tool_errors: int
    tools: int
    outcomes: dict[str, int] = {}
    seconds: float = 0.0


def require(module: str, hint: str) -> None:
    """Raise a one-line :class:`InputError` with ``hint`` when ``module`` is not installed."""
    if importlib.util.find_spec(module) is None:
        raise InputError(f"the optional package {module!r} is not installed; {hint}")


def hash_seed_fixed() -> bool:
    return os.environ.get("PYTHONHASHSEED") == HASH_SEED


def run_in_worker(suite: str, out: Path, args: Sequence[str]) -> ImportReport:
    """Run ``python -m tracemine.importers SUITE --out OUT ARGS`` with the hash seed fixed,
    and return the report it prints as its last line."""
    env = {**os.environ, "PYTHONHASHSEED": HASH_SEED}
    command = [sys.executable, "-m", "tracemine.importers", suite, "--out", str(out), *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        return ImportReport.model_validate_json(lines[-1])
    errors = [line for line in done.stderr.strip().splitlines() if line.strip()]
    last = errors[-1] if errors else f"exit code {done.returncode}"
    if done.returncode == 2 and last.startswith("error: "):
        raise InputError(last.removeprefix("error: "))
    raise RuntimeError(f"the {suite} import failed in its worker process: {last}")


def frozen_datetime(instant: datetime_module.datetime) -> ModuleType:
    """A stand-in for the ``datetime`` module whose ``datetime.now()`` (and ``today``,
    ``utcnow``, ``date.today``) always give ``instant``; everything else is the real
    module's, and every value it builds is a plain ``datetime``/``date``."""

    class FrozenDateTime(datetime_module.datetime):
        # every other constructor (fromisoformat, strptime …) builds through cls(...):
        # hand back plain datetimes, which YAML, pydantic and equality treat as usual
        def __new__(cls, *args: Any, **kwargs: Any) -> datetime_module.datetime:  # type: ignore[misc]
            return datetime_module.datetime(*args, **kwargs)

        @classmethod
        def now(cls, tz: datetime_module.tzinfo | None = None) -> datetime_module.datetime:  # type: ignore[override]
            if tz is None:
                return instant
            return instant.replace(tzinfo=datetime_module.UTC).astimezone(tz)

        @classmethod
        def today(cls) -> datetime_module.datetime:  # type: ignore[override]
            return instant

        @classmethod
        def utcnow(cls) -> datetime_module.datetime:  # type: ignore[override]
            return instant

    class FrozenDate(datetime_module.date):
        def __new__(cls, *args: Any, **kwargs: Any) -> datetime_module.date:  # type: ignore[misc]
            return datetime_module.date(*args, **kwargs)

        @classmethod
        def today(cls) -> datetime_module.date:  # type: ignore[override]
            return instant.date()

    shim = ModuleType("datetime")
    shim.__dict__.update(vars(datetime_module))
    shim.datetime = FrozenDateTime  # type: ignore[attr-defined]
    shim.date = FrozenDate  # type: ignore[attr-defined]
    return shim


@contextmanager
def frozen_clock(prefix: str, instant: datetime_module.datetime) -> Iterator[None]:
    """Freeze the clock for every loaded module under ``prefix`` that reads the time
    through ``import datetime``; restored on exit."""
    shim = frozen_datetime(instant)
    patched = [
        module
        for name, module in sorted(sys.modules.items())
        if (name == prefix or name.startswith(prefix + "."))
        and getattr(module, "datetime", None) is datetime_module
    ]
    for module in patched:
        module.datetime = shim  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for module in patched:
            module.datetime = datetime_module  # type: ignore[attr-defined]


def jsonable(value: Any) -> Any:
    """A JSON value for anything a tool returns: pydantic models dumped in JSON mode,
    datetimes as ISO strings, sets as lists; non-finite floats, which JSON cannot carry,
    as their text."""
    return _finite(to_jsonable_python(value, fallback=str))


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema with its local ``#/$defs/...`` references replaced by the definitions,
    so it stands alone inside a larger document; a reference to a definition being
    inlined (a recursive model) is left as it is."""
    defs = schema.get("$defs", {})

    def walk(node: Any, inside: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, inside) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in defs and name not in inside:
                siblings = {k: walk(v, inside) for k, v in node.items() if k != "$ref"}
                return {**walk(defs[name], (*inside, name)), **siblings}
        return {key: walk(value, inside) for key, value in node.items() if key != "$defs"}

    return walk(schema, ())


def write_runs(runs: Iterable[dict[str, Any]], path: Path) -> Path:
    """Write runs as flat JSONL (one call a line, see :mod:`tracemine.simulate.formats.flat`);
    a ``.gz`` path is compressed with a fixed header, so the same runs give the same bytes."""
    buffer = io.StringIO()
    for run in runs:
        for call, line in zip(run["calls"], flat_format.write_run(run), strict=True):
            for key in _SYNTHETIC_TIMING:
                line.pop(key, None)
            # fields of the normalized record the flat writer leaves out
            for key in _EXTRA_CALL_KEYS:
                if call.get(key) is not None:
                    line[key] = call[key]
            buffer.write(dump_line(line))
            buffer.write("\n")
    write_text(buffer.getvalue(), path)
    return path


def write_json(document: Any, path: Path) -> Path:
    """Write a JSON document, keys in the order given, one space of indent."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(document, ensure_ascii=False, indent=1) + "\n")
    return path


def summarize(
    suite: str, files: list[Path], runs: list[dict[str, Any]], seconds: float
) -> ImportReport:
    """Count what a list of runs holds."""
    calls = [call for run in runs for call in run["calls"]]
    outcomes: dict[str, int] = {}
    for run in runs:
        if run.get("run_outcome") is not None:
            outcomes[run["run_outcome"]] = outcomes.get(run["run_outcome"], 0) + 1
    return ImportReport(
        suite=suite,
        files=[path.as_posix() for path in files],
        tasks=len({run["task_id"] for run in runs}),
        runs=len(runs),
        calls=len(calls),
        tool_errors=sum(1 for call in calls if call["status"] != "ok"),
        tools=len({call["tool"] for call in calls}),
        outcomes=dict(sorted(outcomes.items())),
        seconds=round(seconds, 2),
    )


def trace_path(out: Path, suite: str, compress: bool) -> Path:
    return out / f"{suite}.jsonl{'.gz' if compress else ''}"
