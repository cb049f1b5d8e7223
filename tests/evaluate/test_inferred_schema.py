"""The ``inferred-schema`` arm on hand-made runs whose answers are known: what GenSON
infers, which calls a schema error names and where, and that it is judged as every other
arm is (tool errors are no false alarm, results as text read as values)."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tracemine.evaluate.api import _score
from tracemine.evaluate.arms import _schema_arm
from tracemine.evaluate.score import localized, new_alarms, replay_runs
from tracemine.evaluate.text import as_text
from tracemine.faults import FaultClass, FaultRecord


def _call(seq: int, tool: str, result: Any, status: str = "ok") -> dict[str, Any]:
    return {"seq": seq, "call_id": f"c{seq}", "tool": tool, "arguments": {"order_id": "#W1"},
            "status": status, "result": result}  # fmt: skip


def _order(quantity: int, note: str | None = None) -> dict[str, Any]:
    order: dict[str, Any] = {"status": "open", "items": [{"sku": "A", "quantity": quantity}]}
    if note is not None:
        order["note"] = note
    return order


MINING = [
    {"run_id": "m1", "task_id": "t1", "calls": [_call(0, "get_order", _order(2, "x"))]},
    {"run_id": "m2", "task_id": "t2", "calls": [_call(0, "get_order", _order(1))]},
]
EVALUATION = [
    {"run_id": "e1", "task_id": "t3", "calls": [
        _call(0, "get_order", _order(4)),
        # an error payload under status ok: the monitor reads it as a tool error
        _call(1, "get_order", {"error": "order not found"}),
        _call(2, "get_order", _order(3)),
    ]},
]  # fmt: skip


@pytest.fixture()
def arm(tmp_path: Path) -> Any:
    return _schema_arm(MINING, tmp_path)


def test_schema_is_what_every_mining_call_showed(arm: Any, tmp_path: Path) -> None:
    result = arm.schemas.schemas[("get_order", "result")]
    assert result["required"] == ["items", "status"]  # note was seen once: optional
    assert result["properties"]["items"]["items"]["properties"]["quantity"] == {"type": "integer"}
    assert arm.schemas.schemas[("get_order", "args")]["required"] == ["order_id"]
    saved = json.loads((tmp_path / "inferred-schema.json").read_text())
    assert saved["tools"]["get_order"]["result"] == result
    assert saved["dialect"] == "https://json-schema.org/draft/2020-12/schema"
    assert arm.size == 2 and "2 schemas" in arm.note


def test_nominal_calls_and_a_tool_error_raise_no_schema_alarm(arm: Any) -> None:
    found = replay_runs(arm, EVALUATION)["e1"]
    assert [a for a in found if a.source == "violation"] == []
    # the same runs with results as content text are read as the values
    assert replay_runs(arm, as_text(EVALUATION)) == {"e1": found}


def _record(cls: FaultClass, path: str, pattern: str) -> FaultRecord:
    return FaultRecord(
        fault_id=cls.value, fault_class=cls, group=cls.group.value, run_id="e1", task_id="t3",
        call_id="c2", seq=2, tool="get_order", side="result", path=path, path_pattern=pattern,
        before=None, after=None, detail=cls.value,
    )  # fmt: skip


def test_a_fault_is_an_alarm_at_its_call_and_path(arm: Any) -> None:
    nominal = replay_runs(arm, EVALUATION)
    null, omitted = copy.deepcopy(EVALUATION), copy.deepcopy(EVALUATION)
    null[0]["calls"][2]["result"]["items"][0]["quantity"] = None
    del omitted[0]["calls"][2]["result"]["status"]
    cases = [
        (null, "inferred-schema:result:type", "result.items[0].quantity",
         _record(FaultClass.FIELD_NULL, "result.items[0].quantity", "result.items[*].quantity")),
        (omitted, "inferred-schema:result:required", "result.status",
         _record(FaultClass.FIELD_OMITTED, "result.status", "result.status")),
    ]  # fmt: skip
    for runs, name, path, record in cases:
        found = new_alarms(replay_runs(arm, runs)["e1"], nominal["e1"])
        assert [(a.name, a.tool, a.seqs, a.paths) for a in found] == [
            (name, "get_order", (2,), (path,))
        ]
        assert localized(found, [record])


def test_scored_like_the_other_arms(arm: Any) -> None:
    faulted = copy.deepcopy(EVALUATION)
    faulted[0]["calls"][0]["result"] = "<html><body>502 Bad Gateway</body></html>"
    record = _record(FaultClass.HTML_ERROR_PAGE, "result", "result")
    record = record.model_copy(update={"seq": 0, "call_id": "c0"})
    result = _score(arm, EVALUATION, {FaultClass.HTML_ERROR_PAGE: (faulted, {"e1": [record]})})
    assert result.available and result.contracts == 2
    assert (result.false_alarms.k, result.false_alarms.n) == (0, 3)
    row = result.row(FaultClass.HTML_ERROR_PAGE.value)
    assert row is not None and (row.detection.k, row.localization.k) == (1, 1)
    assert result.text is not None and result.text.agreement.rate == 1.0


def test_without_genson_the_arm_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "genson", None)  # how Python marks a module absent
    arm = _schema_arm(MINING, tmp_path)
    assert not arm.available and "GenSON is not installed" in arm.note
    assert "tracemine[dev]" in arm.note
    result = _score(arm, EVALUATION, {})
    assert not result.available and result.note == arm.note
    assert not (tmp_path / "inferred-schema.json").exists()
