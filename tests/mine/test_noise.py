"""Noisy contracts in the evidence: a bound fitted on the other folds that one trial of a
held-out task breaks and the other keeps is marked with its flip rate; a contract every
trial keeps is marked steady; without cross-fitting nothing is held out to judge."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.model.contract import Contract, ContractFile, Kind
from tracemine.review import contracts_frame


def _store(tmp_path: Path) -> Path:
    lines = []
    for task in range(16):
        for trial in range(2):
            price = 100 + task + trial
            if task == 5 and trial == 1:
                price = 90_000  # one trial of one task quotes far above every other task
            run = f"t{task}.r{trial}"
            lines.append({"run_id": run, "task_id": f"t{task}", "trial": trial, "reward": 1.0,
                          "seq": 0, "call_id": f"{run}-0", "tool": "quote", "status": "ok",
                          "arguments": {"sku": f"s{task}"},
                          "result": {"sku": f"s{task}", "price": price}})  # fmt: skip
    trace = tmp_path / "quotes.jsonl"
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    ingest([trace], tmp_path / "quotes.duckdb")
    return tmp_path / "quotes.duckdb"


def _find(found: ContractFile, kind: Kind, path: str) -> Contract:
    (contract,) = [c for c in found.contracts if c.kind == kind and c.paths == [path]]
    return contract


def test_a_bound_one_trial_breaks_is_marked_noisy(tmp_path: Path) -> None:
    found = mine(_store(tmp_path), folds=4, target_fa=0.5, min_tasks=3, budget=False)
    noisy = _find(found, Kind.RANGE, "result.price").evidence
    assert noisy is not None and noisy.heldout_violations == 1
    assert (noisy.trial_tasks, noisy.flipped_tasks, noisy.flip_rate) == (16, 1, round(1 / 16, 4))
    steady = _find(found, Kind.TYPE, "result.price").evidence
    assert steady is not None
    assert (steady.trial_tasks, steady.flipped_tasks, steady.flip_rate) == (16, 0, 0.0)
    frame = contracts_frame(found)  # a reviewer filters the noisy ones
    assert frame.filter(pl.col("flipped_tasks") > 0)["id"].to_list() == [
        _find(found, Kind.RANGE, "result.price").id
    ]


def test_nothing_is_marked_without_cross_fitting(tmp_path: Path) -> None:
    found = mine(_store(tmp_path), crossfit=False, min_tasks=3)
    evidence = _find(found, Kind.TYPE, "result.price").evidence
    assert evidence is not None and evidence.flip_rate is None and evidence.trial_tasks is None


def test_mine_says_how_many_are_noisy(tmp_path: Path) -> None:
    db = _store(tmp_path)
    args = ["mine", "--db", str(db), "--out", str(tmp_path / "c.json"), "--folds", "4",
            "--target-fa", "0.5", "--min-tasks", "3", "--all-eligible"]  # fmt: skip
    done = CliRunner().invoke(app, args, env={"COLUMNS": "120"})
    assert done.exit_code == 0, done.output
    assert "1 noisy: verdict differs between trials of a held-out task" in done.output
