"""`evaluate` end to end on a small simulated suite: every arm scores every fault class,
rates are rates, the status-only harness sees statuses only, the report files exist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracemine.evaluate import EvaluationReport, evaluate
from tracemine.faults import FaultClass, FaultGroup

ARMS = ["status-only", "declared", "inferred-schema", "mined-no-crossfit", "mined-crossfit", "merged",
        "oracle-peeking"]  # fmt: skip
STATUS_CLASSES = {FaultClass.MISSING_RESULT.value, FaultClass.EXECUTION_ERROR.value}


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[EvaluationReport, Path]:
    out = tmp_path_factory.mktemp("evaluate")
    report = evaluate(suite="commerce", tasks=30, trials=2, max_faults=12, seed=3, out=out)
    return report, out


def test_every_arm_scores_every_fault_class(evaluated: tuple[EvaluationReport, Path]) -> None:
    report, _ = evaluated
    assert [arm.arm for arm in report.arms] == ARMS
    for arm in report.arms:
        assert arm.available, arm.note
        assert [row.fault_class for row in arm.classes] == [c.value for c in FaultClass]
    assert report.tasks["mining"] + report.tasks["evaluation"] == 30
    assert report.settings["include_proposed"] is True


def test_rates_are_rates(evaluated: tuple[EvaluationReport, Path]) -> None:
    report, _ = evaluated
    for arm in report.arms:
        rates = [arm.false_alarms, arm.run_false_alarms]
        rates += [r for row in arm.classes for r in (row.detection, row.localization)]
        for rate in rates:
            assert 0 <= rate.k <= rate.n
            if rate.n:
                assert rate.low is not None and rate.high is not None and rate.rate is not None
                assert 0.0 <= rate.low <= rate.rate <= rate.high <= 1.0
            else:
                assert rate.rate is None
        for row in arm.classes:
            assert row.localization.n == row.detection.k  # localized among the detected
        if arm.detection_covered is not None:
            assert 0.0 <= arm.detection_covered <= 1.0


def test_status_only_sees_statuses_only(evaluated: tuple[EvaluationReport, Path]) -> None:
    report, _ = evaluated
    status_only = report.arm("status-only")
    assert status_only.contracts == 0
    for row in status_only.classes:
        if row.fault_class not in STATUS_CLASSES:
            assert row.detection.k == 0, row.fault_class
    missing = status_only.row(FaultClass.MISSING_RESULT.value)
    assert missing is not None and missing.injected > 0 and missing.detection.rate == 1.0
    # the completeness gate of every monitor arm sees ids as well as statuses
    gate = report.arm("mined-crossfit").row(FaultClass.DUPLICATE_CALL_ID.value)
    assert gate is not None and gate.injected > 0 and gate.detection.rate == 1.0
    groups = {row.fault_class: row.group for row in status_only.classes}
    assert {groups[c] for c in STATUS_CLASSES} == {FaultGroup.COMPLETENESS.value}


def test_report_files(evaluated: tuple[EvaluationReport, Path]) -> None:
    report, out = evaluated
    for name in ("report.md", "report.html", "report.json"):
        assert (out / name).is_file()
    again = EvaluationReport.model_validate(json.loads((out / "report.json").read_text()))
    assert again.arm("merged").classes == report.arm("merged").classes
    markdown = (out / "report.md").read_text()
    assert "| negative_quantity |" in markdown and "include_proposed=True" in markdown
    html = (out / "report.html").read_text()
    assert "<svg" in html and "<table>" in html and "merged" in html
    for arm in ("declared", "mined-no-crossfit", "mined-crossfit", "merged", "oracle-peeking"):
        assert (out / "contracts" / f"{arm}.json").is_file()
    assert report.outputs["json"].endswith("report.json")
    assert "## Calibration: predicted against realized false alarms" in markdown
    assert "selection efficiency" in markdown and "PEEKS" in markdown


def test_oracle_and_calibration(evaluated: tuple[EvaluationReport, Path]) -> None:
    report, _ = evaluated
    oracle = report.arm("oracle-peeking")
    assert oracle.available and "peeks" in oracle.note
    assert oracle.selection_efficiency == 1.0
    # what raised no violation on the nominal runs can only leave gate gaps there
    assert oracle.false_alarms.k <= report.arm("mined-no-crossfit").false_alarms.k
    for name in ("mined-crossfit", "merged"):
        calibration = report.arm(name).calibration
        assert calibration is not None
        assert sum(t.realized.n for t in calibration.tools) == report.calls["evaluation"]
        assert sum(t.realized.k for t in calibration.tools) == report.arm(name).false_alarms.k
    assert report.arm("declared").calibration is None


def test_results_as_content_text_are_judged_as_their_values(
    evaluated: tuple[EvaluationReport, Path],
) -> None:
    """An agent loop hands the monitor the tool message's text, not the parsed value: every
    arm must give each call, nominal or faulted, the verdict it gives the value."""
    report, out = evaluated
    assert report.arm("status-only").text is None
    for name in ("declared", "mined-no-crossfit", "mined-crossfit", "merged", "oracle-peeking"):
        text = report.arm(name).text
        assert text is not None, name
        assert text.agreement.n > report.calls["evaluation"], name  # faulted calls too
        assert text.agreement.k == text.agreement.n, name
        assert text.false_alarms.k == report.arm(name).false_alarms.k, name
    assert "## Results given as content text" in (out / "report.md").read_text()
