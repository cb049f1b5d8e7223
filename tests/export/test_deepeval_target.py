"""``export --format deepeval``: the generated metric, run by the real DeepEval on test cases
built from the demo's recorded runs, gives the verdict ``tracemine check`` gives them,
and a violating call fails DeepEval's own ``assert_test`` and ``evaluate``."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")  # documented; offline either way
deepeval = pytest.importorskip("deepeval")
import generated_module  # noqa: E402
from deepeval.test_case import LLMTestCase, ToolCall  # noqa: E402
from generated_module import DEMO, export_demo, load_module  # noqa: E402

from tracemine.monitor import Monitor, replay  # noqa: E402


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, dict[str, Any]]:
    out = tmp_path_factory.mktemp("deepeval") / "tracemine_metric.py"
    report = export_demo("deepeval", out)
    return load_module(out), report


@pytest.fixture(scope="module")
def demo_runs() -> list[list[dict[str, Any]]]:
    return generated_module.demo_runs()


def case_of(calls: list[dict[str, Any]]) -> LLMTestCase:
    return LLMTestCase(
        input="a task", actual_output="done",
        tools_called=[ToolCall(name=c["tool"], input_parameters=c["arguments"],
                               output=None if c["status"] == "missing" else c["result"])
                      for c in calls],
    )  # fmt: skip


def test_every_contract_goes_out(exported: tuple[ModuleType, dict[str, Any]]) -> None:
    _, report = exported
    assert report["format"] == "deepeval"
    assert report["exported"] == report["selected"] > 0
    assert report["unexpressed"] == []


def test_the_metric_agrees_with_check_on_the_demo_runs(
    exported: tuple[ModuleType, dict[str, Any]], demo_runs: list[list[dict[str, Any]]]
) -> None:
    module, _ = exported
    metric = module.ToolContracts()
    monitor = Monitor.load(DEMO.with_name("contracts.json"), include_proposed=True)
    failing = 0
    for calls in demo_runs:
        if any(c["status"] != "ok" for c in calls):
            continue  # a ToolCall has no status: an error is only what its output says
        (expected,) = replay(monitor, calls)
        ids = {v.contract_id for o in expected.calls if o.receipt for v in o.receipt.violations}
        ids |= {v.contract_id for v in expected.verdict.violations}
        score = metric.measure(case_of(calls))
        clean = not ids and not expected.verdict.gaps
        assert (score == 1.0) == clean, (calls[0]["run_id"], metric.reason)
        assert metric.is_successful() == clean
        assert {i for i in ids if i not in metric.reason} == set(), metric.reason
        failing += not clean
    assert 0 < failing < len(demo_runs), "the demo runs hold clean and failing ones"


def test_a_violating_call_fails_assert_test_and_evaluate(
    exported: tuple[ModuleType, dict[str, Any]], demo_runs: list[list[dict[str, Any]]],
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    module, _ = exported
    monkeypatch.chdir(tmp_path)  # DeepEval keeps its cache in the working directory
    metric = module.ToolContracts()
    clean = next(calls for calls in demo_runs
                 if all(c["status"] == "ok" and isinstance(c["result"], dict) for c in calls)
                 and metric.measure(case_of(calls)) == 1.0)  # fmt: skip
    deepeval.assert_test(case_of(clean), [module.ToolContracts()])
    broken = copy.deepcopy(clean)
    target = broken[0]["result"]
    key = next(k for k, v in target.items() if isinstance(v, str))
    target[key] = 12345  # the wrong_type fault
    with pytest.raises(AssertionError, match=r"c_[0-9a-f]{12}"):
        deepeval.assert_test(case_of(broken), [module.ToolContracts()])
    result = deepeval.evaluate([case_of(clean), case_of(broken)], [module.ToolContracts()])
    assert [t.success for t in result.test_results] == [True, False]


def test_a_call_without_output_leaves_the_run_incomplete(
    exported: tuple[ModuleType, dict[str, Any]],
) -> None:
    module, _ = exported
    metric = module.ToolContracts()
    case = LLMTestCase(input="x", actual_output="y",
                       tools_called=[ToolCall(name="get_order", input_parameters={"order_id": "A"})])  # fmt: skip
    assert metric.measure(case) < 1.0
    assert "run incomplete" in metric.reason
    empty = metric.measure(LLMTestCase(input="x", actual_output="y", tools_called=[]))
    assert empty == 1.0, metric.reason


def test_the_module_names_its_data_file_safely(tmp_path: Path) -> None:
    from tracemine.export import export_contracts

    out = tmp_path / 'o\'dd "name"\n.py'
    report = export_contracts(DEMO, "deepeval", out, include_proposed=True)
    assert any("name it like a module" in note for note in report.notes)
    module = load_module(out)
    assert out.with_suffix(".json").resolve() == module.CONTRACTS
    assert module.ToolContracts().monitor.tools
