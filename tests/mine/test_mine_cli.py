"""`tracemine mine` and the mistakes it reports: no task ids, unknown tools, bad filters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from shop_traces import write_shop
from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.errors import InputError
from tracemine.ingest import ingest
from tracemine.mine import mine

runner = CliRunner()


@pytest.fixture(scope="module")
def anonymous(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose runs carry no task id (the task is only in the run id)."""
    folder = tmp_path_factory.mktemp("anonymous")
    db = folder / "anon.duckdb"
    ingest([write_shop(folder / "anon.jsonl", tasks=40, seed=2, task_ids=False)], db)
    return db


def test_without_task_ids_crossfitting_refuses(anonymous: Path) -> None:
    with pytest.raises(InputError, match="--task-key"):
        mine(anonymous)
    result = runner.invoke(app, ["mine", "--db", str(anonymous), "--out", "x.json"])
    assert result.exit_code == 2
    assert "--task-key" in result.output


def test_task_key_or_no_crossfit_lets_it_run(anonymous: Path, tmp_path: Path) -> None:
    keyed = mine(anonymous, task_key=r"regex:^(?P<task>shop-\d+)\.r\d+$", folds=3,
                 target_fa=0.2, min_tasks=3)  # fmt: skip
    assert keyed.provenance["profile"]["tasks"] == 40
    assert keyed.contracts
    out = tmp_path / "plain.json"
    result = runner.invoke(
        app, ["mine", "--db", str(anonymous), "--out", str(out), "--no-crossfit", "--json"]
    )
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    assert written["provenance"]["params"]["crossfit"] is False
    assert json.loads(result.output)["contracts"] == written["contracts"]


def test_summary_table_and_tool_filter(anonymous: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    result = runner.invoke(app, [
        "mine", "--db", str(anonymous), "--out", str(out), "--tool", "refund",
        "--task-key", "regex:^(shop-\\d+)", "--folds", "3", "--target-fa", "0.2",
        "--min-tasks", "3", "--where", "run_outcome=success",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "refund" in result.output and "kept" in result.output
    assert {c["tool"] for c in json.loads(out.read_text())["contracts"]} == {"refund"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--no-crossfit", "--tool", "nope"], "no nominal calls of that tool"),
        (["--no-crossfit", "--where", "colour=blue"], "unknown run field"),
        (["--no-crossfit", "--where", "reward>=high"], "not a number"),
        (["--folds", "500", "--task-key", "regex:^(shop-\\d+)"], "fewer than --folds"),
    ],
)
def test_mistakes_are_one_line_errors(anonymous: Path, options: list[str], message: str) -> None:
    result = runner.invoke(app, ["mine", "--db", str(anonymous), "--out", "x.json", *options])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_missing_store_is_an_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["mine", "--db", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 2
    assert "no such database" in result.output
