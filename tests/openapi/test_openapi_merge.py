"""Merge labels, from mined evidence alone and from a store. Candidates are written by
hand: the tests pin the merge, not the miner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tracemine.errors import ContractFileError
from tracemine.ingest import ingest
from tracemine.model.contract import (
    Contract,
    ContractFile,
    Evidence,
    Kind,
    MergeLabel,
    Side,
    Source,
    contract_id,
    declared_id,
    repeated_id,
)
from tracemine.openapi import declared_contracts, label_counts, load_spec, map_tools, merge

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openapi"
TOOL = "get_order"


def mined(path: str, kind: Kind, params: dict[str, Any] | None = None, **evidence: Any) -> Contract:
    return Contract(
        tool=TOOL, side=Side.RESULT, kind=kind, paths=[path], params=params or {},
        evidence=Evidence(calls=40, tasks=8, **evidence),
    )  # fmt: skip


def declared() -> list[Contract]:
    spec = load_spec(FIXTURES / "orders-3.0.yaml")
    return declared_contracts(spec, map_tools([spec], [TOOL]).tools)


def find(merged: ContractFile, path: str, kind: Kind) -> list[Contract]:
    return [c for c in merged.contracts if c.paths == [path] and c.kind == kind]


CANDIDATES = ContractFile(
    contracts=[
        mined("result.total_cents", Kind.RANGE, {"min": 0, "max": 500}),
        mined("result.status", Kind.ONE_OF, {"values": ["pending", "shipped"]}),
        mined("result.id", Kind.PATTERN, {"regex": "^#W[0-9]{7}$"}),
        mined("result.items", Kind.NON_EMPTY),
        mined("result.items[*].quantity", Kind.RANGE, {"min": -2, "max": 5}),
        mined("result.loyalty_points", Kind.NON_NEGATIVE),
    ]
)


def test_labels_from_mined_evidence_alone() -> None:
    merged = merge(CANDIDATES, declared())
    (total,) = find(merged, "result.total_cents", Kind.RANGE)
    assert total.label == MergeLabel.OBSERVED_TIGHTER
    assert total.sources == [Source.MINED, Source.DECLARED]
    assert total.declared and total.declared["kind"] == "non_negative"
    assert not find(merged, "result.total_cents", Kind.NON_NEGATIVE)  # absorbed
    (status,) = find(merged, "result.status", Kind.ONE_OF)
    assert status.label == MergeLabel.OBSERVED_TIGHTER  # an enum subset
    assert status.params == {"values": ["pending", "shipped"]}
    assert find(merged, "result.id", Kind.PATTERN)[0].label == MergeLabel.DECLARED_OBSERVED
    assert find(merged, "result.items", Kind.NON_EMPTY)[0].label == MergeLabel.DECLARED_OBSERVED
    # mined range reaching below the declared minimum: the spec is contradicted
    by_source = {tuple(c.sources): c for c in find(merged, "result.items[*].quantity", Kind.RANGE)}
    assert by_source[(Source.MINED,)].label == MergeLabel.OBSERVED_VIOLATES_DECLARED
    (violated,) = find(merged, "result.items[*].quantity", Kind.NON_NEGATIVE)
    assert violated.label == MergeLabel.OBSERVED_VIOLATES_DECLARED
    assert violated.evidence and "mined range" in violated.evidence.counterexamples[0].observed
    assert (
        find(merged, "result.loyalty_points", Kind.NON_NEGATIVE)[0].label
        == MergeLabel.OBSERVED_ONLY
    )
    # declared, and nothing speaks to it: kept, labelled
    (unique,) = find(merged, "result.tags[*]", Kind.UNIQUE)
    assert unique.label == MergeLabel.DECLARED_UNEXERCISED and unique.sources == [Source.DECLARED]
    counts = label_counts(merged.contracts)
    assert set(counts) == {label.value for label in MergeLabel}
    assert all(counts[label.value] for label in MergeLabel)
    assert all(c.label is not None for c in merged.contracts)


def test_equal_mined_contract_with_heldout_violations_contradicts() -> None:
    candidates = ContractFile(
        contracts=[mined("result.total_cents", Kind.NON_NEGATIVE, heldout_violations=2)]
    )
    merged = merge(candidates, declared())
    labels = {
        tuple(c.sources): c.label for c in find(merged, "result.total_cents", Kind.NON_NEGATIVE)
    }
    assert labels[(Source.DECLARED,)] == MergeLabel.OBSERVED_VIOLATES_DECLARED


def test_merging_a_merged_file_starts_from_its_mined_contracts() -> None:
    once = merge(CANDIDATES, declared())
    twice = merge(once, declared())
    assert [(c.id, c.label, c.sources) for c in once.contracts] == [
        (c.id, c.label, c.sources) for c in twice.contracts
    ]


def order(**overrides: Any) -> dict[str, Any]:
    body = {
        "id": "#W0000001", "status": "pending", "total_cents": 1200,
        "items": [{"sku": "a", "quantity": 1, "price": 3.5}], "tags": ["x", "y"],
    }  # fmt: skip
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not None}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    results = [
        order(),
        order(status="shipped", items=[{"sku": "b", "quantity": -1, "price": 2.0}]),
        order(id="#W0000003", total_cents=None),  # a required field absent
        order(tags=["x", "x"]),
    ]
    lines = [
        json.dumps({"task_id": f"t{i}", "calls": [{"index": 0, "name": TOOL, "ok": True,
                    "arguments": {"order_id": r.get("id", "#W0000009")}, "result": r}]})
        for i, r in enumerate(results)
    ]  # fmt: skip
    traces = tmp_path / "traces.jsonl"
    traces.write_text("\n".join(lines) + "\n")
    db = tmp_path / "traces.duckdb"
    ingest([traces], db)
    return db


def test_labels_from_the_store(store: Path) -> None:
    merged = merge(ContractFile(), declared(), db=store)
    (quantity,) = find(merged, "result.items[*].quantity", Kind.NON_NEGATIVE)
    assert quantity.label == MergeLabel.OBSERVED_VIOLATES_DECLARED
    assert quantity.evidence and quantity.evidence.counterexamples[0].observed == "integer -1"
    assert quantity.evidence.counterexamples[0].task_id == "t1"
    (present,) = find(merged, "result.total_cents", Kind.PRESENT)
    assert present.label == MergeLabel.OBSERVED_VIOLATES_DECLARED
    assert present.evidence and present.evidence.counterexamples[0].observed == "absent in 1 of 1"
    (unique,) = find(merged, "result.tags[*]", Kind.UNIQUE)
    assert unique.label == MergeLabel.OBSERVED_VIOLATES_DECLARED
    (status,) = find(merged, "result.status", Kind.ONE_OF)
    assert status.label == MergeLabel.DECLARED_UNEXERCISED  # some declared values never seen
    assert status.declared and status.declared["unseen"] == ["delivered", "cancelled"]
    (pattern,) = find(merged, "result.id", Kind.PATTERN)
    assert pattern.label == MergeLabel.DECLARED_OBSERVED
    assert pattern.evidence and pattern.evidence.calls == 4 and pattern.evidence.tasks == 4
    (note,) = find(merged, "result.note", Kind.LENGTH)  # never present in the traces
    assert note.label == MergeLabel.DECLARED_UNEXERCISED
    assert note.declared and note.declared["unexercised"] == "no trace reached this path"
    (order_id,) = find(merged, "args.order_id", Kind.PATTERN)
    assert order_id.label == MergeLabel.DECLARED_OBSERVED


def test_store_overrides_a_calibrated_mined_bound(store: Path) -> None:
    # a mined bound wider than the declared one is not proof: the store shows none below 0
    candidates = ContractFile(
        contracts=[mined("result.total_cents", Kind.RANGE, {"min": -50, "max": 2000})]
    )
    merged = merge(candidates, declared(), db=store)
    (total,) = find(merged, "result.total_cents", Kind.NON_NEGATIVE)
    assert total.label == MergeLabel.DECLARED_OBSERVED


def assert_ids_unique(merged: ContractFile) -> None:
    ids = [c.id for c in merged.contracts]
    assert repeated_id(ids) is None, repeated_id(ids)


@pytest.mark.parametrize(
    "kept",
    [
        # the traces show a value the stale enum lacks: both stay, the spec contradicted
        mined("result.status", Kind.ONE_OF, {"values": ["delivered", "placed", "shipped"]}),
        # a mined bound looser than the declared one absorbs nothing: both stay
        mined("result.note", Kind.LENGTH, {"max": 900}),
        # another id shape than the declared pattern
        mined("result.id", Kind.PATTERN, {"regex": "^#W[0-9]+$"}),
        # saying what the spec says, but violated out of sample: the spec is contradicted
        mined("result.total_cents", Kind.NON_NEGATIVE, heldout_violations=2),
    ],
    ids=["one_of-conflict", "length-looser", "pattern-other", "equal-but-violated"],
)
def test_a_declaration_kept_beside_a_mined_contract_has_its_own_id(kept: Contract) -> None:
    merged = merge(ContractFile(contracts=[kept]), declared())
    assert_ids_unique(merged)
    same = find(merged, kept.paths[0], kept.kind)
    by_source = {tuple(c.sources): c for c in same}
    assert set(by_source) == {(Source.MINED,), (Source.DECLARED,)}
    assert by_source[(Source.MINED,)].id == kept.id == contract_id(kept)  # mined ids stay
    stale = by_source[(Source.DECLARED,)]
    assert stale.id == declared_id(stale) != kept.id


def test_ids_survive_a_remine_that_sees_one_more_value() -> None:
    def merged_ids(values: list[str]) -> tuple[str, str]:
        status = mined("result.status", Kind.ONE_OF, {"values": values})
        merged = merge(ContractFile(contracts=[status]), declared())
        by_source = {tuple(c.sources): c.id for c in find(merged, "result.status", Kind.ONE_OF)}
        return by_source[(Source.MINED,)], by_source[(Source.DECLARED,)]

    mined_at, declared_at = merged_ids(["delivered", "placed"])
    assert mined_at != declared_at
    assert merged_ids(["delivered", "placed", "returned"]) == (mined_at, declared_at)


def test_a_declaration_contradicted_by_the_store_has_its_own_id(store: Path) -> None:
    # the store holds quantity -1: the declared minimum is violated, while the mined
    # non_negative (from other traces) says the same as the spec
    quantity = mined("result.items[*].quantity", Kind.NON_NEGATIVE)
    merged = merge(ContractFile(contracts=[quantity]), declared(), db=store)
    assert_ids_unique(merged)
    labels = {c.id: (c.sources, c.label) for c in find(merged, quantity.paths[0], quantity.kind)}
    assert labels[quantity.id] == ([Source.MINED], MergeLabel.OBSERVED_ONLY)
    assert len(labels) == 2


OTHER_SPEC = """\
openapi: 3.0.3
info: {title: Orders v2, version: "2.0"}
paths:
  /orders/{order_id}:
    get:
      operationId: getOrder
      responses:
        "200":
          description: The order.
          content:
            application/json:
              schema:
                type: object
                properties:
                  status: {type: string, enum: [placed, shipped, delivered, returned]}
                  total_cents: {type: integer, minimum: 0}
"""


def test_two_specs_declaring_one_path_keep_both_declarations(tmp_path: Path) -> None:
    other = tmp_path / "orders-v2.yaml"
    other.write_text(OTHER_SPEC)
    spec = load_spec(other)
    second = declared_contracts(spec, map_tools([spec], [TOOL]).tools)
    first = declared()
    merged = merge(ContractFile(), [*first, *second])
    assert_ids_unique(merged)
    enums = find(merged, "result.status", Kind.ONE_OF)
    assert sorted(sorted(c.params["values"]) for c in enums) == [
        ["cancelled", "delivered", "pending", "shipped"],
        ["delivered", "placed", "returned", "shipped"],
    ]
    # the first spec's declaration keeps the id a review file knows it by
    (kept,) = [c for c in first if c.paths == ["result.status"] and c.kind == Kind.ONE_OF]
    assert {c.id for c in enums} == {kept.id, declared_id(enums[1])}
    assert next(c for c in enums if c.id == kept.id).params == kept.params
    # both specs saying total_cents is non-negative is one declaration
    assert len(find(merged, "result.total_cents", Kind.NON_NEGATIVE)) == 1


def test_candidates_repeating_an_id_are_refused() -> None:
    # a contract added by hand under the id of a mined one: which would a decision mean?
    status = mined("result.status", Kind.ONE_OF, {"values": ["pending", "shipped"]})
    by_hand = status.model_copy(update={"params": {"values": ["shipped"]}})
    candidates = ContractFile(contracts=[status, mined("result.items", Kind.NON_EMPTY), by_hand])
    with pytest.raises(ContractFileError) as raised:
        merge(candidates, declared())
    assert str(raised.value) == (
        f"candidates: contract id {status.id} is repeated: contracts[0] and contracts[2]"
    )


def test_a_null_where_a_type_is_declared_contradicts_it(tmp_path: Path) -> None:
    """A tool that answers ``null`` where its declaration says an object (BFCL's file
    tools declare ``{"type": "dict", "properties": {}}`` and return nothing): the monitor
    rejects the null, so the merge must not call the type unexercised."""
    lines = [
        json.dumps({"task_id": f"t{i}", "calls": [{"index": 0, "name": "touch", "ok": True,
                    "arguments": {"file_name": f"f{i}"}, "result": None}]})
        for i in range(3)
    ]  # fmt: skip
    traces = tmp_path / "traces.jsonl"
    traces.write_text("\n".join(lines) + "\n")
    ingest([traces], tmp_path / "traces.duckdb")

    def typed(wanted: Any) -> Contract:
        return Contract(tool="touch", side=Side.RESULT, kind=Kind.TYPE, paths=["result"],
                        params={"type": wanted}, sources=[Source.DECLARED])  # fmt: skip

    merged = merge(ContractFile(), [typed("object")], db=tmp_path / "traces.duckdb")
    (declared_type,) = merged.contracts
    assert declared_type.label == MergeLabel.OBSERVED_VIOLATES_DECLARED
    assert declared_type.evidence and declared_type.evidence.counterexamples[0].observed == "null"
    nullable = merge(ContractFile(), [typed(["object", "null"])], db=tmp_path / "traces.duckdb")
    assert nullable.contracts[0].label == MergeLabel.DECLARED_OBSERVED
