"""The evaluation's parts that need no mining: intervals, the split, alarms and their
comparison, localization, the status-only harness, trace files without a spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracemine.errors import InputError
from tracemine.evaluate import Rate, evaluate, wilson
from tracemine.evaluate.score import (
    Alarm,
    _related,
    localized,
    new_alarms,
    normalize,
    status_alarms,
)
from tracemine.evaluate.split import from_traces, split_tasks
from tracemine.faults import FaultClass, FaultRecord
from tracemine.simulate import simulate, write_traces


def test_wilson_interval() -> None:
    low, high = wilson(0, 100)
    assert low == 0.0 and high == pytest.approx(0.0370, abs=1e-4)
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    assert Rate.of(0, 0).text() == "n/a"
    assert Rate.of(1, 4).text() == "25.0% [4.6, 69.9] (1/4)"


def test_split_is_task_disjoint_and_seeded() -> None:
    runs = simulate("all", tasks=20, seed=1, trials=2)
    split = split_tasks(runs, 0.3, folds=5, seed=4)
    mining = {r["task_id"] for r in split.mining}
    evaluation = {r["task_id"] for r in split.evaluation}
    assert not mining & evaluation
    assert len(evaluation) == split.evaluation_tasks == 6
    assert len(split.mining) + len(split.evaluation) == len(runs)
    again = split_tasks(runs, 0.3, folds=5, seed=4)
    assert [r["run_id"] for r in again.evaluation] == [r["run_id"] for r in split.evaluation]
    with pytest.raises(InputError, match="too few"):
        split_tasks(runs, 0.9, folds=5, seed=4)


def test_new_alarms_compare_as_a_multiset() -> None:
    a = Alarm("violation", "c1", "get_order", (2,), ("result.total",))
    b = Alarm("gap", "unanswered", "get_order", (3,))
    assert new_alarms([a, a, b], [a]) == [a, b]
    assert new_alarms([a], [a, b]) == []


def _record(side: str, path: str, pattern: str, seq: int = 2) -> FaultRecord:
    return FaultRecord(
        fault_id="f1", fault_class=FaultClass.NEGATIVE_QUANTITY, group="semantic", run_id="r",
        task_id="t", call_id="c", seq=seq, tool="get_order", side=side, path=path,
        path_pattern=pattern, before="1", after="-1", detail="",
    )  # fmt: skip


def test_localization_needs_tool_call_and_path() -> None:
    record = _record("result", "result.items[1].quantity", "result.items[*].quantity")
    at = Alarm("violation", "c1", "get_order", (2,), ("result.items[1].quantity",))
    assert localized([at], [record])
    enclosing = Alarm("violation", "c2", "get_order", (2,), ("sum(result.items[*].quantity)",))
    assert localized([enclosing], [record])
    elsewhere = Alarm("violation", "c3", "get_order", (2,), ("result.currency",))
    other_call = Alarm("violation", "c1", "get_order", (5,), ("result.items[1].quantity",))
    assert not localized([elsewhere, other_call], [record])
    status = _record("call", "status", "status")
    assert localized([Alarm("gap", "execution_error", "get_order", (2,))], [status])
    assert normalize('len(result["odd.key"][3])') == "result.odd.key[*]"


def test_status_only_harness_reads_statuses() -> None:
    run = {"run_id": "r", "calls": [
        {"seq": 0, "tool": "search", "status": "tool_error"},
        {"seq": 1, "tool": "search", "status": "ok"},  # a retry with success
        {"seq": 2, "tool": "get", "status": "timeout"},
        {"seq": 3, "tool": "read", "status": "missing"},
        {"seq": 4, "tool": "read", "status": "ok", "result_call_id": "unknown"},
    ]}  # fmt: skip
    found = {(a.name, a.seqs) for a in status_alarms(run)}
    assert found == {("execution_error", (2,)), ("missing", (3,))}


def test_traces_without_a_spec(tmp_path: Path) -> None:
    runs = simulate("commerce", tasks=12, seed=2, trials=2)
    for run in runs[:2]:
        run["task_id"] = None  # counts as its own task, and the report says so
    traces = write_traces(runs, tmp_path / "runs.jsonl", "flat")
    report = evaluate(traces=[traces], out=tmp_path / "out", folds=3, max_faults=4)
    assert report.source.startswith("traces:")
    assert not report.arm("declared").available and "no spec" in report.arm("declared").note
    assert report.arm("mined-no-crossfit").available
    assert any("no task id" in note for note in report.notes)
    assert (tmp_path / "out" / "report.md").is_file()


def test_traces_without_task_ids_are_told_the_task_key_that_groups_them(tmp_path: Path) -> None:
    runs = simulate("commerce", tasks=4, seed=2, trials=2)
    for run in runs:
        run["run_id"], run["task_id"] = f"{run['task_id']}-trial{run['trial']}", None
    traces = write_traces(runs, tmp_path / "runs.jsonl", "flat")
    (note,) = [n for n in from_traces([traces], None).notes if "no task id" in n]
    assert "--task-key 'regex:^(?P<task>.+)-trial\\d+$' gives 4 tasks" in note
    assert "each run its own task" not in note  # what it does already is not a suggestion
    keyed = from_traces([traces], r"regex:^(?P<task>.+)-trial\d+$")
    assert not any("no task id" in n for n in keyed.notes)


def test_needs_one_source(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="either"):
        evaluate(out=tmp_path)


@pytest.mark.parametrize(
    ("contract_path", "fault_path", "related"),
    [
        ("result.variants{*}.price", "result.variants.1270145486.price", True),
        ("result.variants{*}", "result.variants.1270145486.price", True),
        ("result.variants{*}.price", "result.variants.1270145486.cost", False),
        ("result.variants{*}.price", "result.other.1270145486.price", False),
        ("result.items[*].price", "result.items[3].price", True),
    ],
)
def test_a_map_path_localizes_a_fault_in_any_entry(
    contract_path: str, fault_path: str, related: bool
) -> None:
    assert _related(normalize(contract_path), normalize(fault_path)) is related


def test_markdown_report_shows_trace_text_literally() -> None:
    """Tool names and paths come from traces: in report.md they are text, never HTML or a
    table row broken by a newline."""
    from tracemine.evaluate.model import (
        ArmResult,
        Calibration,
        EvaluationReport,
        ToolCalibration,
    )
    from tracemine.evaluate.report import to_markdown

    hostile = '<img src=x onerror="alert(1)">\nget_order'
    calibration = Calibration(
        tools=[ToolCalibration(tool=hostile, predicted=0.01, kept=3, realized=Rate.of(0, 9))],
        realized=Rate.of(0, 9),
    )
    arm = ArmResult(arm="mined-crossfit", description="d", false_alarms=Rate.of(0, 9),
                    run_false_alarms=Rate.of(0, 3), calibration=calibration,
                    noisiest=[{"source": "violation", "id": "c_1", "tool": hostile,
                               "path": "result.<b>x</b>", "alarms": 2}])  # fmt: skip
    report = EvaluationReport(source=f"traces: {hostile}.jsonl", arms=[arm],
                              notes=[f"{hostile} had no task id"])  # fmt: skip
    markdown = to_markdown(report)
    assert "<img" not in markdown and "<b>" not in markdown
    assert '&lt;img src=x onerror="alert(1)"> get_order' in markdown
    for line in markdown.splitlines():
        assert not line.startswith("get_order"), "a newline from a trace split a line"
