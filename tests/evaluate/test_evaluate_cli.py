"""`tracemine evaluate` and `python -m tracemine.cli._demo` as a user runs them: subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}


def test_evaluate_command(tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = subprocess.run(
        [sys.executable, "-m", "tracemine", "evaluate", "--suite", "commerce", "--tasks", "24",
         "--trials", "2", "--max-faults", "8", "--out", str(out), "--json"],
        capture_output=True, text=True, env=_env(), timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["arms"][0]["arm"] == "status-only"
    assert all(len(arm["classes"]) == 18 for arm in report["arms"])
    assert (out / "report.html").is_file() and (out / "report.md").is_file()


def test_evaluate_refuses_two_sources(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tracemine", "evaluate", "--suite", "commerce", "--traces",
         str(tmp_path / "t.jsonl"), "--out", str(tmp_path)],
        capture_output=True, text=True, env=_env(), timeout=120,
    )  # fmt: skip
    assert result.returncode == 2
    assert "either" in result.stderr


@pytest.mark.slow
def test_demo_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "mined_contracts"
    # every stage as `make demo` runs it, but the last evaluates 40 simulated tasks, not
    # 300: at 300 it is more than half the demo's time, and test_evaluate_command (with
    # the heavy dominance tests) covers evaluate itself
    demo = (
        "import sys\nfrom tracemine.cli import _demo\n"
        "(args,) = [a for _, a in _demo.STAGES if a[0] == 'evaluate']\n"
        "args[args.index('--tasks') + 1] = '40'\n"
        "sys.exit(_demo.main(sys.argv[1:]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", demo, "--data", str(ROOT / "data"), "--out", str(out)],
        capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "demo finished" in result.stdout and "Traceback" not in result.stderr
    for name in ("candidates.json", "merged.json", "contracts.json", "report/report.html"):
        assert (out / name).is_file(), name
    assert any((out / "jsonschema").iterdir())
