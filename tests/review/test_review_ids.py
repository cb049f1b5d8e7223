"""Decisions about a merged file whose stale declared enum and mined enum once shared an
id: a reviewer's decision lands on the one of the two it was made on."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tracemine.model.contract import (
    Contract,
    ContractFile,
    Evidence,
    Kind,
    Side,
    Source,
    save_contracts,
)
from tracemine.openapi import declared_contracts, load_spec, map_tools, merge
from tracemine.review import ReviewFile, apply_review, decide, load_reviewed, save_review

SPEC = Path(__file__).parents[1] / "fixtures" / "openapi" / "orders-3.0.yaml"
AT = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def merged_enums() -> tuple[ContractFile, Contract, Contract]:
    """The merge of a mined status enum the spec's enum lacks a value of: the file, the
    mined enum and the declared one."""
    spec = load_spec(SPEC)
    mined = Contract(tool="get_order", side=Side.RESULT, kind=Kind.ONE_OF,
                     paths=["result.status"], params={"values": ["delivered", "placed"]},
                     evidence=Evidence(calls=40, tasks=8))  # fmt: skip
    declared = declared_contracts(spec, map_tools([spec], ["get_order"]).tools)
    merged = merge(ContractFile(contracts=[mined]), declared)
    enums = {tuple(c.sources): c for c in merged.contracts if c.paths == ["result.status"]
             and c.kind == Kind.ONE_OF}  # fmt: skip
    return merged, enums[(Source.MINED,)], enums[(Source.DECLARED,)]


def decided_under_the_shared_id(stale: Contract, shared: str) -> ReviewFile:
    """A review file as written when both enums had ``shared``: ``review reject`` found
    the declared one under it and recorded that one's evidence."""
    review = ReviewFile()
    decide(review, [stale.model_copy(update={"id": shared})], "rejected",
           reason="predates placed", reviewer="ana", at=AT)  # fmt: skip
    return review


def test_a_decision_on_the_declaration_follows_it_to_its_own_id() -> None:
    merged, mined, stale = merged_enums()
    review = decided_under_the_shared_id(stale, mined.id)
    reviewed = apply_review(merged, review)
    status = {c.id: c.status.value for c in reviewed.contracts}
    assert status[stale.id] == "rejected"
    assert status[mined.id] == "proposed"  # the mined enum is left to review
    assert reviewed.provenance["review"]["moved"] == {mined.id: stale.id}
    assert reviewed.provenance["review"]["orphaned"] == []


def test_a_decision_on_the_mined_contract_stays_with_it() -> None:
    merged, mined, stale = merged_enums()
    review = ReviewFile()
    decide(review, [mined], "accepted", reviewer="ana", at=AT)
    status = {c.id: c.status.value for c in apply_review(merged, review).contracts}
    assert status == {**status, mined.id: "accepted", stale.id: "proposed"}


def test_the_moved_decision_is_saved_under_the_new_id(tmp_path: Path) -> None:
    merged, mined, stale = merged_enums()
    path = save_contracts(merged, tmp_path / "merged.json")
    save_review(decided_under_the_shared_id(stale, mined.id), tmp_path / "merged.review.yaml")
    reviewed, review, where = load_reviewed(path)
    decide(review, [next(c for c in reviewed.contracts if c.id == mined.id)], "accepted")
    save_review(review, where)
    again, review, _ = load_reviewed(path)
    assert set(review.decisions) == {mined.id, stale.id}
    status = {c.id: c.status.value for c in again.contracts}
    assert (status[mined.id], status[stale.id]) == ("accepted", "rejected")
