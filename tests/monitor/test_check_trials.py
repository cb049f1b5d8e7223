"""`check --trials`: a contract whose verdict differs between nominal trials of one task is
reported with its flip rate and kept out of the failing verdict unless ``--strict``."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from monitor_contracts import contract

from tracemine.gate import check, junit_xml

ORDER = {"order_id": "#W1", "items": [{"sku": "a"}], "total": 12.5}


def trial(run: str, task: str | None, result: dict[str, Any], **run_fields: Any) -> dict[str, Any]:
    line = {"run_id": run, "tool": "get_order", "call_id": "c1", "arguments": {"order_id": "#W1"},
            "result": result, "status": "ok", **run_fields}  # fmt: skip
    if task is not None:
        line["task_id"] = task
    return line


NOISY = [  # task t1: the order's items are empty in one trial of three
    trial("t1-a", "t1", ORDER),
    trial("t1-b", "t1", ORDER),
    trial("t1-c", "t1", {**ORDER, "items": []}),
    trial("t2-a", "t2", ORDER),
    trial("t2-b", "t2", ORDER),
    trial("t3-a", "t3", {**ORDER, "items": []}, reward=0.0),  # failed: not a nominal trial
    trial("t3-b", "t3", ORDER),
    trial("lone", None, ORDER),
]
STEADY = [  # the total is negative in every trial of task t4: a regression, not noise
    trial("t4-a", "t4", {**ORDER, "total": -1}),
    trial("t4-b", "t4", {**ORDER, "total": -1}),
]


@pytest.fixture
def contracts(write_contracts: Any) -> Path:
    return write_contracts(
        contract("non_empty", ["result.items"], id="c_items"),
        contract("non_negative", ["result.total"], id="c_total"),
    )


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return path


def test_a_flipping_contract_is_reported_and_kept_out_of_the_verdict(
    tmp_path: Path, contracts: Path
) -> None:
    traces = write(tmp_path / "trials.jsonl", NOISY)
    assert check(traces, contracts).failed  # without --trials the flip fails the check
    report = check(traces, contracts, trials=True)
    assert report.trials is not None
    (noisy,) = report.trials.noisy
    assert (noisy.contract_id, noisy.tool, noisy.kind) == ("c_items", "get_order", "non_empty")
    # t1: 3 trials, 2 of 3 pairs disagree; t2: 1 pair, agreeing; t3 has one nominal trial
    assert (noisy.tasks, noisy.flipped_tasks, noisy.flip_rate) == (2, 1, 0.5)
    assert (noisy.violated_runs, noisy.held_runs) == (1, 4)
    assert noisy.examples == ["task t1: violated in t1-c; held in t1-a, t1-b"]
    assert (report.trials.tasks, report.trials.runs_grouped) == (2, 5)
    assert (report.trials.runs_not_nominal, report.trials.runs_without_task) == (1, 1)
    assert report.violations == 2 and report.trials.gating_violations == 0
    assert not report.failed
    assert check(traces, contracts, trials=True, strict=True).failed


def test_a_contract_broken_in_every_trial_still_fails(tmp_path: Path, contracts: Path) -> None:
    traces = write(tmp_path / "trials.jsonl", NOISY + STEADY)
    report = check(traces, contracts, trials=True)
    assert report.trials is not None
    assert [n.contract_id for n in report.trials.noisy] == ["c_items"]
    assert report.trials.gating_violations == 2 and report.failed


def test_junit_marks_a_noisy_contract_skipped_unless_strict(
    tmp_path: Path, contracts: Path
) -> None:
    traces = write(tmp_path / "trials.jsonl", NOISY)

    def items_case(**options: bool) -> ET.Element:
        root = ET.fromstring(junit_xml(check(traces, contracts, **options)))
        suite = root.find("testsuite[@name='contracts']")
        assert suite is not None
        case = next(c for c in suite if "c_items" in c.get("name", ""))
        return case

    case = items_case(trials=True)
    assert case.find("failure") is None
    skipped = case.find("skipped")
    assert skipped is not None and "flip rate 50%" in skipped.get("message", "")
    assert items_case(trials=True, strict=True).find("failure") is not None


def _tracemine(*args: Any, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tracemine", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env={"COLUMNS": "200", "PATH": ""})  # fmt: skip


def test_cli_reports_the_flip_rate_and_exits_by_strictness(tmp_path: Path, contracts: Path) -> None:
    traces = write(tmp_path / "trials.jsonl", NOISY)
    done = _tracemine("check", traces, "--contracts", contracts, "--trials", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "noisy contracts (verdict differs between trials of a task)" in done.stdout
    assert "c_items" in done.stdout and "50%" in done.stdout
    assert "1 noisy contracts kept out of the verdict (--strict counts them)" in done.stdout
    strict = _tracemine("check", traces, "-c", contracts, "--trials", "--strict", cwd=tmp_path)
    assert strict.returncode == 1
    as_json = _tracemine("check", traces, "-c", contracts, "--trials", "--json", cwd=tmp_path)
    assert json.loads(as_json.stdout)["trials"]["noisy"][0]["flip_rate"] == 0.5


def test_a_contract_mining_marked_noisy_is_kept_out_of_the_verdict_without_trials(
    tmp_path: Path, write_contracts: Any
) -> None:
    """The file says mining saw ``c_items`` flip between trials: a single run breaking it
    does not fail the check, with or without ``--trials``; ``--strict`` counts it; a
    steady contract still fails."""
    from tracemine.model.contract import Evidence

    marks = Evidence(tasks=9, trial_tasks=6, flipped_tasks=2, flip_rate=0.25)
    contracts = write_contracts(
        contract("non_empty", ["result.items"], id="c_items", evidence=marks),
        contract("non_negative", ["result.total"], id="c_total"),
    )
    one = write(tmp_path / "one.jsonl", [trial("r1", "t1", {**ORDER, "items": []})])
    report = check(one, contracts)
    assert report.violations == 1 and not report.failed
    assert report.trials is not None and not report.trials.measured
    (noisy,) = report.trials.noisy
    assert (noisy.contract_id, noisy.source, noisy.tasks, noisy.flipped_tasks) == (
        "c_items", "mine", 6, 2)  # fmt: skip
    assert check(one, contracts, strict=True).failed
    assert check(one, contracts, trials=True).trials.noisy[0].source == "mine"  # type: ignore[union-attr]
    root = ET.fromstring(junit_xml(report))
    case = next(c for c in root.iter("testcase") if "c_items" in c.get("name", ""))
    skipped = case.find("skipped")
    assert skipped is not None and "when mined" in skipped.get("message", "")
    steady = write(tmp_path / "steady.jsonl", [trial("r2", "t2", {**ORDER, "total": -1})])
    assert check(steady, contracts).failed
    done = _tracemine("check", one, "--contracts", contracts, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    said = " ".join(done.stdout.split())
    assert "marked noisy when mined" in said and "trials: 0 nominal runs" not in said
