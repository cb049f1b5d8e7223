"""`tracemine review` as a user runs it: subprocesses, decisions landing in the file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.review import load_review, review_path


def _review(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tracemine", "review", *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def _in_process(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["review", *args])
    return result.exit_code, result.output


@pytest.mark.slow
def test_list_accept_reject_mute_show(candidates: Path) -> None:
    # each command once as a subprocess, as a user runs it; the rest in process
    c = ["--contracts", str(candidates)]
    listed = _review("list", *c, "--tool", "get_order", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert len(rows) == 4 and {r["tool"] for r in rows} == {"get_order"}
    range_id = next(r["id"] for r in rows if r["kind"] == "range")

    accepted = _review("accept", *c, "--tool", "get_order", "--source", "declared",
                       "--reviewer", "ana")  # fmt: skip
    assert accepted.returncode == 0 and "accepted 2 contracts" in accepted.stdout
    code, output = _in_process("reject", *c, range_id[:8], "--reviewer", "ana")
    assert code == 2 and "needs a reason" in output
    rejected = _review("reject", *c, range_id[:8], "--reason", "bounds too tight")
    assert rejected.returncode == 0, rejected.stderr
    assert f"  {range_id}  get_order · range · " in rejected.stdout  # what it took, named
    muted = _review("mute", *c, "--kind", "call_cap", "--reason", "caps vary by plan")
    assert muted.returncode == 0, muted.stderr
    assert muted.stdout.count(" · call_cap · ") == 1, muted.stdout

    decisions = load_review(review_path(candidates)).decisions
    assert sorted(d.status.value for d in decisions.values()) == [
        "accepted", "accepted", "muted", "rejected"]  # fmt: skip
    assert decisions[range_id].reason == "bounds too tight"

    shown = _review("show", *c, range_id)
    assert shown.returncode == 0 and "counterexample" in shown.stdout
    assert "rejected" in shown.stdout
    code, output = _in_process("list", *c, "--status", "muted")
    assert code == 0 and "call_cap" in output


def test_user_mistakes_are_one_line_errors(candidates: Path) -> None:
    c = ["--contracts", str(candidates)]
    for args, message in [
        (["accept", *c], "name contract or item ids or give a filter"),
        (["list", *c, "--kind", "bogus"], "--kind bogus"),
        (["show", *c, "c_nope"], "matches no contract"),
        (["list", "--contracts", str(candidates.parent / "missing.json")], "cannot read"),
    ]:
        code, output = _in_process(*args)
        assert code == 2, args
        assert message in output and "Traceback" not in output
