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
from tracemine.simulate import simulate, write_traces

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


@pytest.fixture(scope="module")
def otlp_without_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An OTLP export whose runs carry no task id: only the conversation id
    (``gen_ai.conversation.id``) says which task a run was, ``<task>-trial<n>``."""
    folder = tmp_path_factory.mktemp("otlp")
    runs = [
        {**run, "run_id": f"conv-{run['task_id']}-trial{run['trial']}", "task_id": None,
         "trial": None}
        for run in simulate("commerce", tasks=12, seed=3, trials=3)
    ]  # fmt: skip
    db = folder / "otlp.duckdb"
    ingest([write_traces(runs, folder / "export.otlp.jsonl", "otlp")], db)
    return db


def test_without_task_ids_mine_suggests_the_task_key_that_works(otlp_without_tasks: Path) -> None:
    result = runner.invoke(app, ["mine", "--db", str(otlp_without_tasks), "--out", "x.json"])
    assert result.exit_code == 2
    said = result.output
    assert (
        "--task-key 'regex:^(?P<task>.+)-trial\\d+$' gives 12 tasks (about 3 runs a task)" in said
    )
    # each run alone is offered too, after the grouping key, and said for what it is
    assert "gives 36 tasks (each run its own task)" in said.split("12 tasks")[1]
    spec = said.split("--task-key '")[1].split("'")[0]
    mined = mine(otlp_without_tasks, task_key=spec, folds=3, target_fa=0.2, min_tasks=3)
    assert mined.provenance["profile"]["tasks"] == 12


def test_a_task_key_that_finds_nothing_suggests_one(anonymous: Path) -> None:
    result = runner.invoke(app, ["mine", "--db", str(anonymous), "--task-key", "task.name"])
    assert result.exit_code == 2
    assert "finds no task id" in result.output
    assert "--task-key 'regex:^(?P<task>.+)\\.r\\d+$' gives 40 tasks" in result.output


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
        "--task-key", "regex:^(?P<task>shop-\\d+)", "--folds", "3", "--target-fa", "0.2",
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
        (["--folds", "500", "--task-key", "regex:^(?P<task>shop-\\d+)"], "fewer than --folds"),
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


def test_ingest_of_runs_without_task_ids_says_which_task_key_works(tmp_path: Path) -> None:
    """Ingest says it at once, with the same suggestions mining would give; a task key
    given at ingest silences it."""
    runs = [
        {**run, "run_id": f"conv-{run['task_id']}-trial{run['trial']}", "task_id": None,
         "trial": None}
        for run in simulate("commerce", tasks=5, seed=4, trials=2)
    ]  # fmt: skip
    trace = write_traces(runs, tmp_path / "export.jsonl", "flat")
    result = runner.invoke(app, ["ingest", str(trace), "--db", str(tmp_path / "a.duckdb")])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "--task-key 'regex:^(?P<task>.+)-trial\\d+$' gives 5 tasks (about 2 runs a task)" in said
    report = ingest([trace], tmp_path / "b.duckdb")
    assert report.task_key_suggestions[0].startswith("--task-key 'regex:")
    keyed = ingest([trace], tmp_path / "c.duckdb", task_key=r"regex:^conv-(?P<task>.+)-trial\d+$")
    assert keyed.task_key_suggestions == [] and keyed.total("runs_without_task") == 0
