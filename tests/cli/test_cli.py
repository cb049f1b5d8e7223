"""The command line, run as a user runs it: a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracemine.cli import app

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ingest"


def tracemine(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracemine", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        # a bare environment, but the source tree the tests import, where one is given
        env={
            "COLUMNS": "200",
            "PATH": "",
            "NO_COLOR": "1",
            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
        },
    )


def _commands() -> list[str]:
    return sorted(c.name or c.callback.__name__ for c in app.registered_commands)  # type: ignore[union-attr]


def test_help_lists_every_command() -> None:
    result = tracemine("--help")
    assert result.returncode == 0
    for name in _commands():
        assert name in result.stdout
    assert {"ingest", "stats"} <= set(_commands())


@pytest.mark.parametrize("command", _commands())
def test_every_command_has_help_text(command: str) -> None:
    registered = next(c for c in app.registered_commands if (c.name or "") == command)
    doc = (registered.help or (registered.callback.__doc__ if registered.callback else "")) or ""
    assert doc.strip(), f"`tracemine {command}` has no help text"
    result = tracemine(command, "--help")
    assert result.returncode == 0
    assert doc.strip().splitlines()[0][:30] in " ".join(result.stdout.split())


def test_ingest_then_stats(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    source = FIXTURES / "flat" / "basic.jsonl"
    result = tracemine("ingest", str(source), "--db", str(db), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    f = report["files"][0]
    assert f["units_read"] == f["units_stored"] + f["units_quarantined"] == 6
    table = tracemine("ingest", str(source), "--db", str(db))
    assert table.returncode == 0 and "already ingested" in table.stdout
    stats = tracemine("stats", "--db", str(db), "--json")
    assert stats.returncode == 0
    assert json.loads(stats.stdout)["calls"] == f["calls"]
    human = tracemine("stats", "--db", str(db))
    assert "get_order" in human.stdout and "quarantine" in human.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ingest", "missing.jsonl", "--db", "x.duckdb"], "missing.jsonl: no such file"),
        (["ingest", "{flat}", "--db", "x.duckdb", "--format", "xml"], "unknown format 'xml'"),
        (
            ["ingest", "{flat}", "--db", "x.duckdb", "--task-key", "regex:("],
            "invalid regular expression",
        ),
        (["stats", "--db", "nothing.duckdb"], "no such database"),
        (["stats", "--db", "{flat}"], "basic.jsonl: not a DuckDB database"),
        (["simulate", "--out", "{flat}/traces"], "basic.jsonl/traces: Not a directory"),
        (["mine", "--db", "x.duckdb", "--out", "{flat}/c.json"], "exists and is not a folder"),
    ],
)
def test_user_mistakes_exit_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    args = [a.replace("{flat}", str(FIXTURES / "flat" / "basic.jsonl")) for a in args]
    result = tracemine(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert message in " ".join(result.stderr.split())
    assert len(result.stderr.strip().splitlines()) <= 2


def test_version_names_the_package_and_the_contract_schema() -> None:
    from importlib.metadata import version

    from tracemine.model.contract import SCHEMA_VERSION

    for flag in ("--version", "-V"):
        result = tracemine(flag)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split()[:2] == ["tracemine", version("tracemine")]
        assert f"schema_version {SCHEMA_VERSION}" in result.stdout


def test_the_command_line_starts_without_scipy_or_sklearn() -> None:
    """Every command, ``--help`` too, starts a fresh interpreter: scipy and scikit-learn
    (a second between them) load only when mining reaches a fit that needs them."""
    code = "import sys, tracemine.cli\nprint(sorted(m for m in ('scipy', 'sklearn') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
