"""What the tests of the module targets (``deepeval``, ``inspect``) share: the demo's
contracts exported through the CLI, the module loaded from its file, the demo's runs."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from tracemine import read_traces

ROOT = Path(__file__).parents[2]
DEMO = ROOT / "mined_contracts" / "merged.json"
TRACES = ROOT / "data" / "all.otlp.jsonl.gz"


def load_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"generated_{abs(hash(path))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def export_demo(format: str, out: Path) -> dict[str, Any]:
    """``tracemine export`` of the demo's contracts (proposed ones too) as a user runs it;
    the module and its data file beside it are the files it writes."""
    done = subprocess.run(
        [sys.executable, "-m", "tracemine", "export", "-c", str(DEMO), "-f", format,
         "-o", str(out), "--include-proposed", "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["files"] == [str(out), str(out.with_suffix(".json"))]
    assert report["format"] == format
    return report


@cache
def demo_runs() -> list[list[dict[str, Any]]]:
    """The demo's recorded runs, each a list of call records in ``seq`` order."""
    by_run: dict[str, list[dict[str, Any]]] = {}
    for call in read_traces(TRACES).calls:
        by_run.setdefault(str(call["run_id"]), []).append(call)
    return [sorted(calls, key=lambda c: c["seq"]) for calls in by_run.values()]
