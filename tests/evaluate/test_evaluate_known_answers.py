"""Scoring on a hand-made case whose answers are known exactly: five nominal calls of which
one is a false alarm, two negative quantities a ``non_negative`` contract catches, two
emptied searches nothing can see; the oracle's filtering, selection efficiency and the
per-tool calibration on the same case.

The case, call by call (``get_order`` contracts: quantities non-negative, status open or
delivered; nothing on ``search``):

    run a   get_order  qty 2, delivered      ok
            get_order  qty 1, open           ok
            search     one hit               ok
    run b   get_order  qty 3, lost           the one false alarm (status)
            search     one hit               ok
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tracemine.evaluate.api import _score
from tracemine.evaluate.arms import Arm
from tracemine.evaluate.calibrate import calibrate, predictions
from tracemine.evaluate.model import ArmResult, EvaluationReport, Rate
from tracemine.evaluate.oracle import PEEKING, efficiency, peeking_arm, selection_efficiency
from tracemine.evaluate.report import write_reports
from tracemine.evaluate.score import replay_runs
from tracemine.faults import FaultClass, FaultRecord
from tracemine.model.contract import Contract, ContractFile
from tracemine.monitor import Monitor

QUANTITY = Contract(tool="get_order", side="result", kind="non_negative",
                    paths=["result.items[*].quantity"], status="accepted")  # fmt: skip
STATUS = Contract(tool="get_order", side="result", kind="one_of", paths=["result.status"],
                  params={"values": ["open", "delivered"]}, status="accepted")  # fmt: skip
Faulted = dict[FaultClass, tuple[list[dict[str, Any]], dict[str, list[FaultRecord]]]]


def _call(seq: int, tool: str, result: dict[str, Any]) -> dict[str, Any]:
    return {"seq": seq, "call_id": f"c{seq}", "tool": tool, "arguments": {"q": "x"},
            "status": "ok", "result": result}  # fmt: skip


def _order(quantity: int, status: str) -> dict[str, Any]:
    return {"status": status, "items": [{"sku": "A", "quantity": quantity}]}


NOMINAL = [
    {"run_id": "a", "task_id": "t1", "calls": [
        _call(0, "get_order", _order(2, "delivered")),
        _call(1, "get_order", _order(1, "open")),
        _call(2, "search", {"hits": [{"id": "h1"}]}),
    ]},
    {"run_id": "b", "task_id": "t2", "calls": [
        _call(0, "get_order", _order(3, "lost")),
        _call(1, "search", {"hits": [{"id": "h2"}]}),
    ]},
]  # fmt: skip


def _fault(run: dict[str, Any], cls: FaultClass, seq: int, path: str, pattern: str) -> FaultRecord:
    return FaultRecord(
        fault_id=f"{cls.value}-{run['run_id']}", fault_class=cls, group=cls.group.value,
        run_id=run["run_id"], task_id=run["task_id"], call_id=f"c{seq}", seq=seq,
        tool=run["calls"][seq]["tool"], side="result", path=path, path_pattern=pattern,
        before=None, after=None, detail=cls.value,
    )  # fmt: skip


def _faulted() -> Faulted:
    """Each nominal run once per class, with one fault: a negative quantity in its first
    ``get_order``, and an emptied ``search`` (no contract looks at search)."""
    negative, empty = copy.deepcopy(NOMINAL), copy.deepcopy(NOMINAL)
    negative[0]["calls"][0]["result"]["items"][0]["quantity"] = -2
    negative[1]["calls"][0]["result"]["items"][0]["quantity"] = -3
    empty[0]["calls"][2]["result"]["hits"] = []
    empty[1]["calls"][1]["result"]["hits"] = []
    nq, em = FaultClass.NEGATIVE_QUANTITY, FaultClass.EMPTY_MATCH
    return {
        nq: (negative, {run["run_id"]: [_fault(run, nq, 0, "result.items[0].quantity",
                                               "result.items[*].quantity")]
                        for run in negative}),
        em: (empty, {"a": [_fault(empty[0], em, 2, "result.hits", "result.hits")],
                     "b": [_fault(empty[1], em, 1, "result.hits", "result.hits")]}),
    }  # fmt: skip


def _arm(name: str, *contracts: Contract, provenance: dict[str, Any] | None = None) -> Arm:
    file = ContractFile(contracts=list(contracts), provenance=provenance or {})
    return Arm(name, Monitor.from_dict(file.model_dump(mode="json"), include_proposed=True), file)


def test_scoring_counts_detection_and_false_alarms_exactly() -> None:
    result = _score(_arm("declared", QUANTITY, STATUS), NOMINAL, _faulted())
    assert result.contracts == 2
    assert (result.false_alarms.k, result.false_alarms.n) == (1, 5)
    assert result.false_alarms.rate == 0.2
    assert result.false_alarms.low == pytest.approx(0.03622, abs=1e-5)
    assert result.false_alarms.high == pytest.approx(0.62447, abs=1e-5)
    assert (result.run_false_alarms.k, result.run_false_alarms.n) == (1, 2)
    negative = result.row(FaultClass.NEGATIVE_QUANTITY.value)
    empty = result.row(FaultClass.EMPTY_MATCH.value)
    assert negative is not None and empty is not None
    assert (negative.injected, negative.detection.k, negative.detection.rate) == (2, 2, 1.0)
    assert (negative.localization.k, negative.localization.n) == (2, 2)
    assert (empty.injected, empty.detection.k, empty.detection.rate) == (2, 0, 0.0)
    assert len(empty.examples) == 2
    assert result.detection_covered == 0.5
    assert result.noisiest == [{"source": "violation", "id": STATUS.id, "tool": "get_order",
                                "path": "result.status", "alarms": 1}]  # fmt: skip
    assert result.calibration is None  # only the cross-fitted arms are calibrated


def test_nominal_alarms_name_the_one_call() -> None:
    alarms = replay_runs(_arm("declared", QUANTITY, STATUS), NOMINAL)
    assert alarms["a"] == []
    assert [(a.source, a.name, a.seqs) for a in alarms["b"]] == [("violation", STATUS.id, (0,))]


def test_status_only_sees_none_of_it() -> None:
    result = _score(Arm("status-only", None, status_only=True), NOMINAL, _faulted())
    assert (result.false_alarms.k, result.false_alarms.n) == (0, 5)
    assert [row.detection.k for row in result.classes] == [0, 0]
    assert result.detection_covered == 0.0


def test_oracle_drops_what_alarms_on_nominal_runs_and_keeps_the_rest() -> None:
    arms = [_arm("mined-no-crossfit", QUANTITY, STATUS)]
    oracle = peeking_arm(arms, NOMINAL)
    assert oracle.name == PEEKING and oracle.available and oracle.contracts is not None
    assert [c.id for c in oracle.contracts.contracts] == [QUANTITY.id]
    assert oracle.contracts.provenance["oracle"]["dropped"] == [STATUS.id]
    assert "1 of 2" in oracle.note
    result = _score(oracle, NOMINAL, _faulted())
    assert (result.false_alarms.k, result.false_alarms.n) == (0, 5)
    negative = result.row(FaultClass.NEGATIVE_QUANTITY.value)
    assert negative is not None and negative.detection.k == 2


def test_oracle_wakes_a_hidden_contract_and_judges_it_too() -> None:
    # positive alarms on quantity 0; the non_negative it hid then holds, so it is kept
    positive = Contract(tool="get_order", side="result", kind="positive",
                        paths=["result.items[*].quantity"], status="accepted")  # fmt: skip
    hidden = Contract(tool="get_order", side="result", kind="non_negative",
                      paths=["result.items[*].quantity"], status="accepted",
                      implied_by=positive.id)  # fmt: skip
    runs = copy.deepcopy(NOMINAL)
    runs[0]["calls"][1]["result"]["items"][0]["quantity"] = 0
    oracle = peeking_arm([_arm("mined-no-crossfit", positive, hidden, STATUS)], runs)
    assert oracle.contracts is not None and oracle.monitor is not None
    assert [c.id for c in oracle.contracts.contracts] == [hidden.id]
    assert len(oracle.monitor.contracts) == 1


def test_oracle_without_its_base_arm() -> None:
    oracle = peeking_arm([Arm("mined-no-crossfit", None, note="not built: no tasks")], NOMINAL)
    assert not oracle.available and "not built: no tasks" in oracle.note


def test_selection_efficiency_divides_by_the_oracle() -> None:
    assert efficiency(0.6, 0.8) == pytest.approx(0.75)
    assert efficiency(0.9, 0.6) == pytest.approx(1.5)  # more than the oracle: noisier
    assert efficiency(None, 0.8) is None and efficiency(0.5, 0.0) is None
    assert efficiency(0.5, None) is None

    def arm(name: str, detection: float | None) -> ArmResult:
        return ArmResult(arm=name, description="", false_alarms=Rate.of(0, 0),
                         run_false_alarms=Rate.of(0, 0), detection_covered=detection)  # fmt: skip

    arms = [arm("status-only", 0.2), arm("merged", 0.6), arm(PEEKING, 0.8)]
    selection_efficiency(arms)
    assert [a.selection_efficiency for a in arms] == [pytest.approx(0.25), pytest.approx(0.75), 1.0]
    without = [arm("merged", 0.6)]
    selection_efficiency(without)
    assert without[0].selection_efficiency is None


SELECTION = {"selection": {"tools": {
    "get_order": {"calls": 40, "tasks": 9, "kept": 2, "predicted_fa": 0.25},
    "search": {"calls": 30, "tasks": 9, "kept": 0, "predicted_fa": 0.0},
    "create_refund": {"calls": 5, "tasks": 2, "kept": 1, "predicted_fa": 0.008},
    "fetch_policy": {"calls": 5, "tasks": 2, "kept": 1, "predicted_fa": "high"},
}}}  # fmt: skip


def test_calibration_per_tool_overall_and_binned() -> None:
    arm = _arm("mined-crossfit", QUANTITY, STATUS, provenance=SELECTION)
    result = _score(arm, NOMINAL, _faulted())
    calibration = result.calibration
    assert calibration is not None
    tools = {row.tool: row for row in calibration.tools}
    assert list(tools) == ["create_refund", "fetch_policy", "get_order", "search"]
    assert (tools["get_order"].predicted, tools["get_order"].kept) == (0.25, 2)
    assert (tools["get_order"].realized.k, tools["get_order"].realized.n) == (1, 3)
    assert (tools["search"].realized.k, tools["search"].realized.n) == (0, 2)
    assert tools["create_refund"].realized.n == 0 and tools["create_refund"].realized.rate is None
    assert tools["fetch_policy"].predicted is None  # not a number: no prediction
    # the per-tool counts add up to the arm's false alarms
    assert sum(row.realized.k for row in calibration.tools) == result.false_alarms.k
    assert calibration.predicted == pytest.approx((0.25 * 3 + 0.0 * 2) / 5)
    assert (calibration.realized.k, calibration.realized.n) == (1, 5)
    bins = {b.label: b for b in calibration.bins}
    assert (bins["0"].tools, bins["0"].realized.k, bins["0"].realized.n) == (1, 0, 2)
    assert bins["0"].predicted == 0.0
    assert (bins["> 2%"].tools, bins["> 2%"].realized.k, bins["> 2%"].realized.n) == (1, 1, 3)
    assert bins["> 2%"].predicted == 0.25
    assert bins["(0.5%, 1%]"].tools == 1 and bins["(0.5%, 1%]"].predicted is None
    assert bins["(0, 0.5%]"].tools == 0 and bins["(1%, 2%]"].tools == 0


def test_calibration_without_predictions_says_so() -> None:
    alarms = replay_runs(_arm("merged", QUANTITY, STATUS), NOMINAL)
    calibration = calibrate(ContractFile(), NOMINAL, alarms)
    assert "no predicted false-alarm rates" in calibration.note
    assert [row.predicted for row in calibration.tools] == [None, None]
    assert calibration.predicted is None and calibration.realized.n == 0
    assert predictions(None) == {}
    odd = ContractFile(provenance={"selection": {"tools": ["get_order"]}})
    assert predictions(odd) == {}
    partial = ContractFile(provenance={"selection": {"tools": {"get_order": {"calls": 3}}}})
    assert predictions(partial) == {"get_order": {"predicted": None, "kept": None}}
    calibration = calibrate(partial, NOMINAL, alarms)
    assert "2 tools with nominal calls have no prediction" in calibration.note


def test_report_renders_efficiency_and_calibration(tmp_path: Path) -> None:
    faulted = _faulted()
    crossfit = _score(_arm("mined-crossfit", QUANTITY, provenance=SELECTION), NOMINAL, faulted)
    oracle = _score(peeking_arm([_arm("mined-no-crossfit", QUANTITY, STATUS)], NOMINAL),
                    NOMINAL, faulted)  # fmt: skip
    report = EvaluationReport(source="hand-made", arms=[crossfit, oracle])
    selection_efficiency(report.arms)
    assert crossfit.selection_efficiency == 1.0  # the same contract, the same detection
    paths = write_reports(report, tmp_path)
    markdown = paths["markdown"].read_text()
    assert "selection efficiency" in markdown and "| 100% |" in markdown
    assert "## Calibration: predicted against realized false alarms" in markdown
    assert "| get_order | 2 | 25.00% | 0.00% [0.00, 56.15] (0/3) | 3 |" in markdown
    assert "| fetch_policy | 1 | no prediction | n/a | 0 |" in markdown
    assert "| > 2% | 1 | 3 | 25.00% | 0.00% [0.00, 56.15] (0/3) |" in markdown
    html = paths["html"].read_text()
    svgs = re.findall(r"<svg.*?</svg>", html, flags=re.S)
    assert len(svgs) == 1  # the reliability plot (detection is a heat table)
    plot = ElementTree.fromstring(svgs[0])  # well-formed, and draws the diagonal
    assert any(el.get("stroke-dasharray") for el in plot.iter("{http://www.w3.org/2000/svg}line"))
    assert "<script" not in html and "http://" not in html.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    again = EvaluationReport.model_validate(json.loads(paths["json"].read_text()))
    assert again.arms[0].calibration == crossfit.calibration
    assert again.arms[0].selection_efficiency == 1.0
