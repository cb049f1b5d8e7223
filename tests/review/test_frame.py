"""The polars view and the charts the notebook shows."""

from __future__ import annotations

from review_samples import sample_contracts

from tracemine.review import (
    contracts_frame,
    coverage_chart,
    evidence_frame,
    summarise,
    support_chart,
)
from tracemine.review.frame import SCHEMA


def test_frame_has_one_row_per_contract() -> None:
    contracts = sample_contracts()
    frame = contracts_frame(contracts)
    assert frame.columns == list(SCHEMA) and len(frame) == len(contracts.contracts)
    row = frame.filter(frame["kind"] == "present").row(0, named=True)
    assert row["source"] == "mined+declared" and row["label"] == "declared+observed"
    assert frame.filter(frame["run_level"])["kind"].to_list() == ["call_cap"]
    assert contracts_frame([]).is_empty()


def test_summaries_count_statuses() -> None:
    frame = contracts_frame(sample_contracts())
    by_tool = summarise(frame, "tool")
    assert by_tool["tool"].to_list() == ["get_order", "search"]
    assert by_tool["proposed"].to_list() == [4, 2]
    assert summarise(frame, ["source", "label"])["contracts"].sum() == len(frame)
    assert summarise(frame.head(0), "tool").is_empty()


def test_evidence_and_charts() -> None:
    contracts = sample_contracts()
    examples = evidence_frame(contracts.contracts[1])
    assert examples["observed"].to_list() == ["-1"]
    assert evidence_frame(contracts.contracts[3]).is_empty()
    frame = contracts_frame(contracts)
    assert support_chart(frame).to_dict()["mark"]["type"] == "circle"
    assert coverage_chart(frame).to_dict()["mark"]["type"] == "bar"
