"""What a newcomer meets in the first hour: ``check`` reads what ``ingest`` reads, a
``--task-key`` regex that cannot name a task is refused, and one option has one name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracemine.model.contract import Contract, ContractFile, Kind, Side, save_contracts

FLAT = Path(__file__).parent.parent / "fixtures" / "ingest" / "flat" / "basic.jsonl"
OPENAPI = Path(__file__).parent.parent / "fixtures" / "openapi"


def tracemine(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracemine", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"})  # fmt: skip


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """A folder of runs as an agent loop leaves it: traces in sub-folders, and a file
    beside them that is no trace."""
    folder = tmp_path / "mcp_runs"
    (folder / "day2").mkdir(parents=True)
    (folder / "day1.jsonl").write_text(FLAT.read_text("utf-8"), "utf-8")
    (folder / "day2" / "more.jsonl").write_text(FLAT.read_text("utf-8"), "utf-8")
    (folder / "README.json").write_text('{"about": "these runs"}\n', "utf-8")
    contract = Contract(tool="get_order", side=Side.RESULT, kind=Kind.NON_EMPTY,
                        paths=["result.order_id"], status="accepted")  # fmt: skip
    save_contracts(ContractFile(contracts=[contract]), tmp_path / "contracts.json")
    return folder


def _calls(done: subprocess.CompletedProcess[str]) -> int:
    assert done.returncode in (0, 1), done.stderr
    return int(json.loads(done.stdout)["calls"])


def test_check_reads_folders_and_globs_as_ingest_does(runs: Path) -> None:
    root = runs.parent
    named = _calls(tracemine("check", runs / "day1.jsonl", runs / "day2" / "more.jsonl",
                             "-c", "contracts.json", "--json", cwd=root))  # fmt: skip
    folder = tracemine("check", "mcp_runs", "-c", "contracts.json", "--json", cwd=root)
    assert _calls(folder) == named > 0
    assert "README.json" in folder.stderr  # passed over, and said
    quoted = tracemine("check", "mcp_runs/**/*.jsonl", "-c", "contracts.json", "--json", cwd=root)
    assert _calls(quoted) == named
    stored = tracemine("ingest", "mcp_runs/*.jsonl", "--db", "t.duckdb", "--json", cwd=root)
    assert stored.returncode == 0, stored.stderr
    assert [f["source_file"] for f in json.loads(stored.stdout)["files"]] == ["mcp_runs/day1.jsonl"]
    none = tracemine("check", "mcp_runs/*.otlp", "-c", "contracts.json", cwd=root)
    assert none.returncode == 2 and "Traceback" not in none.stderr
    assert none.stderr.strip() == "error: mcp_runs/*.otlp: no file or folder matches this pattern"


@pytest.mark.parametrize("command", ["ingest", "mine"])
def test_a_task_key_regex_without_a_task_group_is_refused(runs: Path, command: str) -> None:
    args = [command, "mcp_runs/day1.jsonl"] if command == "ingest" else [command]
    done = tracemine(*args, "--db", "t.duckdb", "--task-key", r"regex:^r\d", cwd=runs.parent)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "--task-key 'regex:^r\\d'" in line and "(?P<task>" in line
    assert not (runs.parent / "t.duckdb").exists()  # refused before anything was read


def test_merge_and_export_name_the_mapping_alike(tmp_path: Path) -> None:
    contract = Contract(tool="get_order", side=Side.RESULT, kind=Kind.RANGE,
                        paths=["result.total_cents"], params={"min": 0, "max": 900})  # fmt: skip
    save_contracts(ContractFile(contracts=[contract]), tmp_path / "candidates.json")
    mapping = tmp_path / "map.yaml"
    mapping.write_text("get_order: getOrder\n", "utf-8")
    merge = ["merge", "--candidates", "candidates.json", "--spec", OPENAPI / "orders-3.0.yaml",
             "--out", "merged.json", "--json"]  # fmt: skip
    done = tracemine(*merge, "--mapping", mapping, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tools"] == {"get_order": "getOrder"}
    old = tracemine(*merge, "--map", mapping, cwd=tmp_path)  # the old name, for a release
    assert old.returncode == 0 and json.loads(old.stdout)["tools"] == {"get_order": "getOrder"}
    shown = tracemine("merge", "--help", cwd=tmp_path).stdout
    assert "--mapping" in shown and "--map " not in shown
    assert "--mapping" in tracemine("export", "--help", cwd=tmp_path).stdout
