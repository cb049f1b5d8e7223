"""Exports a person reads and moves: the JSON Schema export says what it could not
express by kind (each contract with --verbose), and the pytest module is a page of code
with its contracts in a file beside it, finding its traces from its own location."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.export import export_contracts

from helpers import INNER_PYTEST


def _pytest(module: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TRACEMINE_TRACES"}
    return subprocess.run(
        [*INNER_PYTEST, "-W", "default",
         "--rootdir", str(module.parent), str(module)],
        cwd=cwd, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip


def test_jsonschema_export_summarises_what_it_cannot_express(mined: Any, tmp_path: Path) -> None:
    args = ["export", "-c", str(mined.candidates), "-f", "jsonschema", "-o", str(tmp_path)]
    runner = CliRunner()
    report = export_contracts(mined.candidates, "jsonschema", tmp_path, write=False)
    kinds = {u.kind for u in report.unexpressed}
    assert len(report.unexpressed) > len(kinds) > 1  # several contracts share a kind
    short = runner.invoke(app, args, env={"COLUMNS": "100"})
    assert short.exit_code == 0, short.output
    assert "by kind (--verbose lists each)" in short.output
    assert not [u.id for u in report.unexpressed if u.id in short.output]
    assert len(short.output.splitlines()) < len(report.unexpressed)
    rows = [line.split() for line in short.output.splitlines()]
    assert kinds <= {row[0] for row in rows if row}
    # the full list, as a terminal of 300 columns shows it (a subprocess: the width is
    # read when the console starts)
    every = subprocess.run([sys.executable, "-m", "tracemine", *args, "--verbose"],
                           env={**os.environ, "COLUMNS": "300"}, capture_output=True,
                           text=True, timeout=300)  # fmt: skip
    assert every.returncode == 0, every.stderr
    assert all(u.id in every.stdout for u in report.unexpressed)


def test_pytest_module_keeps_its_data_beside_it_and_moves(mined: Any, tmp_path: Path) -> None:
    written = tmp_path / "written" / "test_replay.py"
    report = export_contracts(mined.candidates, "pytest", written, traces=[mined.traces])
    data = written.with_name("test_replay.json")
    assert report.files == [str(written), str(data)] and data.is_file()
    source = written.read_text("utf-8")
    assert len(source) < 8000 and max(len(line) for line in source.splitlines()) < 120
    # moved, with its data, somewhere else; run from yet another folder
    moved = tmp_path / "elsewhere" / "deeper"
    moved.mkdir(parents=True)
    for path in (written, data):
        shutil.move(path, moved / path.name)
    (tmp_path / "cwd").mkdir()
    done = _pytest(moved / written.name, cwd=tmp_path / "cwd")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"{len(mined.runs)} passed" in done.stdout
    # and when its traces are gone: a failing test that names where it looked, not a
    # collection error
    copy = tmp_path / "alone"
    shutil.copytree(moved, copy)
    module = copy / written.name
    gone = "TRACES = [('gone/traces.jsonl', '/gone/traces.jsonl')]"
    module.write_text(re.sub(r"^TRACES = .*$", gone, source, flags=re.M), "utf-8")
    lost = _pytest(module, cwd=copy)
    assert lost.returncode == 1, lost.stdout[-2000:]
    assert "trace file not found at" in lost.stdout and "1 failed" in lost.stdout
