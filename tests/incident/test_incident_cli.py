"""`tracemine incident` on the command line: exit 0 with the files written, 1 when no
contract separates the run, 2 for a user's mistake."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import tracemine

REPLICAS = Path(__file__).parents[2] / "data" / "incidents"


def _tracemine(*args: Any, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracemine", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env={"COLUMNS": "200", "PATH": ""})  # fmt: skip


@pytest.mark.parametrize(("replica", "code", "says"), [
    ("payout_off_file", 0, "separates: create_payout.args.account from an earlier get_vendor"),
    ("refund_unbounded", 0, "separates: create_refund.args.amount_cents <= an earlier "
                            "get_order.result.total_cents (bounded_by, 12 tasks)"),
])  # fmt: skip
def test_incident_command(tmp_path: Path, replica: str, code: int, says: str) -> None:
    tracemine.ingest([REPLICAS / replica / "nominal.jsonl"], tmp_path / "good.duckdb")
    done = _tracemine("incident", REPLICAS / replica / "incident.jsonl", "--run", "incident",
                      "--db", "good.duckdb", "--out", "out", cwd=tmp_path)  # fmt: skip
    assert done.returncode == code, done.stdout + done.stderr
    assert says in done.stdout
    assert (tmp_path / "out" / "incident.json").is_file()


def test_a_run_nothing_separates_exits_1(tmp_path: Path) -> None:
    """A known-good run handed in as the failing one: every contract holds on it."""
    nominal = REPLICAS / "refund_unbounded" / "nominal.jsonl"
    tracemine.ingest([nominal], tmp_path / "good.duckdb")
    lines = [line for line in nominal.read_text().splitlines() if "-t03-1" in line]
    (tmp_path / "good.jsonl").write_text("\n".join(lines) + "\n")
    done = _tracemine("incident", "good.jsonl", "--run", "refund_unbounded-t03-1",
                      "--db", "good.duckdb", "--out", "out", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no contract of the vocabulary separates this run" in done.stdout
    assert "separates:" not in done.stdout


def test_an_unknown_run_is_one_line_and_exit_2(tmp_path: Path) -> None:
    tracemine.ingest([REPLICAS / "payout_off_file" / "nominal.jsonl"], tmp_path / "good.duckdb")
    done = _tracemine("incident", REPLICAS / "payout_off_file" / "incident.jsonl", "--run", "r9",
                      "--db", "good.duckdb", "--out", "out", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert "no run 'r9' (runs in the file: incident)" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
