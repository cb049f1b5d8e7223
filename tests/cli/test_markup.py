"""Text from traces is shown as written: a tool named ``[/]``, an argument named
``[bold]x[/bold]`` and the pattern ``^[A-Z]{3}$`` are neither rich markup nor a crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tracemine
from tracemine.model.contract import Contract, ContractFile, save_contracts
from tracemine.model.paths import format_path

TOOL = "[/]"
KEY = "[bold]x[/bold]"
PATTERN = "^[A-Z]{3}$"


def _tracemine(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracemine", *args], cwd=cwd, text=True,
                          capture_output=True, env={**os.environ, "COLUMNS": "200"})  # fmt: skip


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("markup")
    lines = [
        {"run_id": f"r{task}-{trial}", "task_id": f"t{task}", "seq": 0, "call_id": "c0",
         "tool": TOOL, "arguments": {KEY: "ABC"}, "result": {"code": "EUR"}, "status": "ok",
         "reward": 1.0}
        for task in range(8) for trial in range(2)
    ]  # fmt: skip
    (root / "traces.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    tracemine.ingest([root / "traces.jsonl"], root / "store.duckdb")
    path = format_path("args", (KEY,))
    pattern = Contract(tool=TOOL, side="args", kind="pattern", paths=[path],
                       params={"regex": PATTERN}, status="accepted",
                       description=f"{path} matches {PATTERN}")  # fmt: skip
    save_contracts(ContractFile(contracts=[pattern]), root / "contracts.json")
    return root


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["stats", "--db", "store.duckdb"], [TOOL]),
        (["mine", "--db", "store.duckdb", "--out", "mined.json", "--min-tasks", "2"], [TOOL]),
        (["review", "list", "-c", "contracts.json"], [TOOL, KEY, PATTERN]),
        (["check", "traces.jsonl", "-c", "contracts.json"], [TOOL]),
    ],
    ids=["stats", "mine", "review list", "check"],
)
def test_trace_text_is_shown_literally(folder: Path, args: list[str], shown: list[str]) -> None:
    done = _tracemine(*args, cwd=folder)
    assert done.returncode == 0, done.stdout + done.stderr
    for text in shown:
        assert text in done.stdout, (text, done.stdout)
