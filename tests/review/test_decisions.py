"""Decisions: recorded by id, kept in YAML, re-applied after re-mining, stale when the
evidence changed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from review_samples import evidence, sample_contracts

from tracemine.errors import ContractFileError, InputError
from tracemine.model.contract import Contract, ContractFile
from tracemine.review import (
    ReviewFile,
    apply_review,
    decide,
    filter_contracts,
    find_contracts,
    is_stale,
    load_review,
    load_reviewed,
    review_path,
    save_review,
)

AT = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_review_file_sits_beside_the_contracts() -> None:
    assert review_path("mined_contracts/candidates.json") == Path(
        "mined_contracts/candidates.review.yaml"
    )


def test_decisions_round_trip_through_yaml(tmp_path: Path) -> None:
    contracts = sample_contracts()
    review = ReviewFile(contracts="candidates.json")
    decide(review, contracts.contracts[:2], "accepted", reviewer="ana", at=AT)
    decide(review, contracts.contracts[2:3], "muted", reason="flaky upstream", reviewer="bo", at=AT)
    path = save_review(review, tmp_path / "c.review.yaml")
    text = path.read_text()
    assert "flaky upstream" in text and "tool: get_order" in text
    assert load_review(path) == review


def test_reject_and_mute_need_a_reason() -> None:
    contracts = sample_contracts().contracts
    for status in ("rejected", "muted"):
        with pytest.raises(InputError, match="needs a reason"):
            decide(ReviewFile(), contracts, status, reviewer="x")
    with pytest.raises(InputError):
        decide(ReviewFile(), contracts, "proposed", reviewer="x")


def test_remining_applies_decisions_and_flags_changed_evidence() -> None:
    first = sample_contracts()
    review = ReviewFile()
    decide(review, first.contracts, "accepted", reviewer="ana", at=AT)
    # re-mined: the range's bounds moved, the type gained support (not a change worth a
    # second look), the present contract disappeared
    again = sample_contracts()
    range_ = again.contracts[1]
    range_.params = {"min": 0, "max": 1200}
    again.contracts[0].evidence = evidence(90)
    removed = again.contracts.pop(2)
    assert range_.id == first.contracts[1].id  # ids do not depend on parameter values
    reviewed = apply_review(again, review)
    assert {c.status.value for c in reviewed.contracts} == {"accepted"}
    info = reviewed.provenance["review"]
    assert info["stale"] == [range_.id] and info["orphaned"] == [removed.id]
    assert [c.id for c in filter_contracts(reviewed, stale=True)] == [range_.id]
    assert not is_stale(reviewed.contracts[0])
    assert again.contracts[1].status.value == "proposed", "the input is not modified"


def test_filters() -> None:
    contracts = sample_contracts()
    assert len(filter_contracts(contracts, tool="search")) == 2
    assert len(filter_contracts(contracts, kind=["range", "type"])) == 2
    assert len(filter_contracts(contracts, source="declared")) == 2
    assert len(filter_contracts(contracts, label="none")) == 4
    assert len(filter_contracts(contracts, label=["declared+observed", "none"])) == 5
    assert len(filter_contracts(contracts, status="proposed", tool="get_order")) == 4
    with pytest.raises(InputError, match="--kind bogus"):
        filter_contracts(contracts, kind="bogus")


def test_find_by_prefix() -> None:
    contracts = ContractFile(contracts=[Contract(id="c_aa1", tool="t", side="result",
                                                 kind="present", paths=["result.a"]),
                                        Contract(id="c_aa2", tool="t", side="result",
                                                 kind="present", paths=["result.b"])])  # fmt: skip
    assert [c.id for c in find_contracts(contracts, ["c_aa2"])] == ["c_aa2"]
    with pytest.raises(InputError, match="matches 2 contracts"):
        find_contracts(contracts, ["c_aa"])
    with pytest.raises(InputError, match="matches no contract"):
        find_contracts(contracts, ["c_zz"])


def test_load_reviewed_and_bad_review_files(candidates: Path) -> None:
    _, review, path = load_reviewed(candidates)
    assert path == review_path(candidates) and not review.decisions
    path.write_text("schema_version: '7'\ndecisions: {}\n")
    with pytest.raises(ContractFileError, match="version '7'"):
        load_reviewed(candidates)
    path.write_text("schema_version: '1'\ndecisions:\n  c_1: {status: maybe}\n")
    with pytest.raises(ContractFileError, match=r"decisions\.c_1\.status"):
        load_reviewed(candidates)
