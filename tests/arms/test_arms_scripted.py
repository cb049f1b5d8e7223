"""`tracemine arms` with the scripted agent, as a user runs it, and the labels recomputed
here from nothing but the files the command wrote."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tracemine.cli import app
from tracemine.gate import LABELS, label_run
from tracemine.ingest import read_traces
from tracemine.monitor import Monitor, read_document, replay

MAIN_ARMS = ("status-only", "guarded", "guarded-no-recovery")


def tracemine(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracemine", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        timeout=900,
    )


def recomputed_labels(out: Path) -> dict[str, dict[str, str]]:
    """Arm → run id → label, from traces/, oracle.json and the contract files alone: the
    gate of a guarded arm is its contracts' verdict on the calls read back."""
    oracle = json.loads((out / "oracle.json").read_text())["cases"]
    labels: dict[str, dict[str, str]] = {}
    for arm in MAIN_ARMS:
        traces = read_traces(out / "traces" / f"{arm}.jsonl")
        runs = {run["run_id"]: run for run in traces.runs}
        first = next(iter(runs.values()))["metadata"]
        contracts = first.get("contracts")
        document = (
            read_document(out / contracts)
            if contracts
            else {"schema_version": "1", "contracts": []}
        )
        monitor = Monitor.from_dict(document, include_proposed=True)
        families = {rid: run.get("family") for rid, run in runs.items()}
        labels[arm] = {}
        for replayed in replay(monitor, traces.calls, families=families):
            run = runs[replayed.run_id]
            meta = run["metadata"]
            assert replayed.verdict is not None
            passed = meta["agent_end"] == "done" and (arm == "status-only" or replayed.verdict.ok)
            label, _ = label_run(replayed, run, oracle[meta["case"]], passed)
            assert label is not None
            labels[arm][replayed.run_id] = label
        assert set(labels[arm]) == set(runs), "every run has calls to replay"
    return labels


def check_must_show(out: Path, tasks: int) -> dict[str, Any]:
    report = json.loads((out / "report.json").read_text())
    assert set(MAIN_ARMS) <= set(report["arms"])
    for arm in MAIN_ARMS:
        assert set(report["arms"][arm]["labels"]) == set(LABELS)
        assert report["arms"][arm]["runs"] == tasks
    assert report["arms"]["guarded"]["labels"]["unsafe-complete"] == 0
    assert report["mismatches"] == []  # what each run recorded is what its files say
    assert set(report["quarantined"].values()) == {0}  # every line of every trace was read
    labels = recomputed_labels(out)
    for arm in MAIN_ARMS:
        counts = {label: list(labels[arm].values()).count(label) for label in LABELS}
        assert counts == report["arms"][arm]["labels"], arm
    schedule = json.loads((out / "schedule.json").read_text())["cases"]
    clean = [case for case, entry in schedule.items() if entry["fault"] is None]
    faulty = [case for case in schedule if case not in clean]
    assert clean and faulty
    for arm in MAIN_ARMS:
        for case in clean:
            assert labels[arm][f"{case}.{arm}"] == "complete-correct", (arm, case)
    check_paired(report, labels)
    return report


def check_paired(report: dict[str, Any], labels: dict[str, dict[str, str]]) -> None:
    """Each paired completion difference, recounted from the labels, with its exact
    McNemar p-value computed here from the binomial distribution."""
    schedule = {r["case"]: r["fault_class"] for r in report["runs"]}
    for pair in report["paired"]:
        if pair["outcome"] != "completion" or not {pair["arm"], pair["versus"]} <= set(labels):
            continue
        cases = [c for c, f in schedule.items() if pair["cases"] == "all" or f != "clean"]
        done = {arm: {c for c in cases if labels[arm][f"{c}.{arm}"] == "complete-correct"}
                for arm in (pair["arm"], pair["versus"])}  # fmt: skip
        b = len(done[pair["arm"]] - done[pair["versus"]])
        c = len(done[pair["versus"]] - done[pair["arm"]])
        assert (pair["only_arm"], pair["only_versus"], pair["n"]) == (b, c, len(cases))
        n = b + c
        tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n if n else 0.5
        assert pair["p_value"] == pytest.approx(min(1.0, 2 * tail))


@pytest.mark.slow
def test_commerce_40_scripted_must_show(tmp_path: Path) -> None:
    out = tmp_path / "arms"
    result = tracemine(
        "arms", "--suite", "commerce", "--tasks", "40", "--agent", "scripted", "--out", str(out)
    )
    assert result.returncode == 0, result.stderr
    assert "scripted agent" in result.stdout
    report = check_must_show(out, 40)
    # what the experiment is for: without receipts some faults are passed off as done
    assert report["arms"]["status-only"]["false_completion"]["k"] > 0
    for name in ("report.md", "report.html"):
        assert (out / name).is_file()


def test_commerce_10_scripted(tmp_path: Path) -> None:
    out = tmp_path / "arms"
    result = tracemine(
        "arms",
        "--suite",
        "commerce",
        "--tasks",
        "10",
        "--train-tasks",
        "80",
        "--out",
        str(out),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    report = check_must_show(out, 10)
    assert json.loads(result.stdout)["arms"] == report["arms"]
    faulty = [r for r in report["runs"] if r["fault_class"] != "clean"]
    guarded = {r["case"]: r for r in faulty if r["arm"] == "guarded"}
    control = {r["case"]: r for r in faulty if r["arm"] == "guarded-no-recovery"}
    # the recovery tools the receipt names are what the guarded arm recovers with
    assert sum(r["recovery_attempts"] for r in guarded.values()) > 0
    recovered = [
        c
        for c, r in guarded.items()
        if r["label"] == "complete-correct" and control[c]["label"] == "safe-incomplete"
    ]
    assert recovered
    html = (out / "report.html").read_text()
    assert "http" not in html.replace("http://www.w3.org/2000/svg", "")  # nothing fetched
    svg = ET.fromstring(html[html.index("<svg") : html.index("</svg>") + 6])
    assert len(svg.findall("{http://www.w3.org/2000/svg}rect")) > len(report["arms"])
    # every arm of a case ran in a recorded order, with one seed for the case
    orders = json.loads((out / "schedule.json").read_text())["cases"]
    for run in read_traces(out / "traces" / "guarded.jsonl").runs:
        meta = run["metadata"]
        assert meta["arm_order"] == orders[meta["case"]]["arm_order"]
        assert meta["seed"] == orders[meta["case"]]["seed"]


def test_completeness_faults_are_refused_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["arms", "--faults", "missing_result", "--out", str(tmp_path / "x")]
    )
    assert result.exit_code == 2
    assert "missing_result" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()  # refused before any mining


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda c: c.pop("request"), "cases[0].request: Field required"),
        (lambda c: c["fixtures"][0].update(tool="nope"), "cases[0].fixtures[0].tool: 'nope'"),
        (lambda c: c.update(accepted_claims="yes"), "cases[0].accepted_claims"),
    ],
)
def test_a_bad_cases_file_is_one_line_naming_the_field(
    tmp_path: Path, change: Any, said: str
) -> None:
    case = {
        "id": "c1",
        "request": "Total of #W1?",
        "tools": [{"name": "get_order"}],
        "fixtures": [{"tool": "get_order", "arguments": {}, "result": {"total": 1}}],
        "accepted_claims": ["1"],
    }
    change(case)
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"cases": [case]}))
    (tmp_path / "c.json").write_text(json.dumps({"schema_version": "1", "contracts": []}))
    result = CliRunner().invoke(
        app,
        [
            "arms",
            "--cases",
            str(cases),
            "--contracts",
            str(tmp_path / "c.json"),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2, result.output
    assert said in result.output and str(cases) in " ".join(result.output.split())
    assert len(result.output.strip().splitlines()) <= 2  # one message, wrapped at most once
