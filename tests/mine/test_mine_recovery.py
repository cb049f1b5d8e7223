"""What the shop traces plant is mined back, and what they hide is not."""

from __future__ import annotations

from pathlib import Path

import pytest
from shop_traces import write_shop

from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.model.contract import ContractFile, Kind


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("shop")
    db = folder / "shop.duckdb"
    ingest([write_shop(folder / "shop.jsonl", tasks=200, seed=1)], db)
    return db


@pytest.fixture(scope="module")
def mined(store: Path) -> ContractFile:
    # what the templates recover and cross-fitting holds, before a budget is spent on it
    return mine(store, where="run_outcome=success", budget=False)


def described(result: ContractFile, tool: str) -> dict[str, object]:
    return {c.description: c for c in result.contracts if c.tool == tool}


def test_non_negative_amounts_and_positive_quantities(mined: ContractFile) -> None:
    orders = described(mined, "get_order")
    assert "result.total_cents >= 0" in orders
    assert "result.items[*].amount_cents >= 0" in orders
    assert "result.items[*].quantity > 0" in orders


def test_id_echo_totals_and_limits(mined: ContractFile) -> None:
    orders = described(mined, "get_order")
    assert "result.order_id == args.order_id" in orders
    assert "result.items[*].order_id == args.order_id" in orders
    assert "sum(result.items[*].amount_cents) == result.total_cents (± 0.01)" in orders
    search = described(mined, "search_orders")
    assert "len(result.orders) <= args.limit" in search
    assert "result.orders[*].status == args.status" in search
    assert "result.amount_cents == args.amount_cents" in described(mined, "refund")


def test_enums_shapes_and_formats(mined: ContractFile) -> None:
    orders = described(mined, "get_order")
    assert 'result.currency in ["EUR", "USD"]' in orders
    assert 'result.status in ["delivered", "pending", "shipped"]' in orders
    assert "result.order_id matches ^#W[0-9]{7}$" in orders
    assert "result.items[*].sku matches ^SKU-[0-9]{5}$" in orders
    assert "result.created_at is a date-time" in orders
    refund = described(mined, "refund")
    assert "result.refund_id is a uuid" in refund
    assert 'result.status == "accepted"' in refund


def test_non_empty_only_where_a_match_exists(mined: ContractFile) -> None:
    search = described(mined, "search_orders")
    assert 'result.orders is not empty when args.status == "open"' in search
    assert "result.orders is not empty" not in search


def test_personal_values_are_never_literals(mined: ContractFile) -> None:
    for contract in mined.contracts:
        if "customer" in contract.paths[0]:
            assert contract.kind not in (Kind.ONE_OF, Kind.CONST), contract.description
    assert "result.customer.email is a email" in described(mined, "get_order")


def test_implied_contracts_point_to_the_stronger_one(mined: ContractFile) -> None:
    by_id = {c.id: c for c in mined.contracts}
    orders = described(mined, "get_order")
    weak = orders["result.items[*].amount_cents >= 0"]
    assert weak.implied_by in by_id
    assert by_id[weak.implied_by].kind == Kind.RANGE
    assert all(c.implied_by is None or c.implied_by in by_id for c in mined.contracts)


def test_failed_calls_and_failed_runs_are_not_nominal(store: Path, mined: ContractFile) -> None:
    # tool_error results carry total_cents -1 and failed runs negative totals
    everything = mine(store, budget=False)
    assert "result.total_cents >= 0" not in described(everything, "get_order")
    assert "result.total_cents >= 0" in described(mined, "get_order")


def test_evidence_counts_tasks_and_bounds_false_alarms(mined: ContractFile) -> None:
    for contract in mined.contracts:
        evidence = contract.evidence
        assert evidence is not None
        assert evidence.tasks >= 5
        assert evidence.folds == 5 and evidence.folds_proposed >= 4
        assert evidence.heldout_calls >= evidence.heldout_violations
        # held-out evidence is counted in tasks: never more than the calls, nor the tasks
        assert evidence.heldout_tasks is not None
        assert evidence.heldout_tasks <= min(evidence.heldout_calls, 200) + 1e-6


def test_profiles_are_reused_and_ids_survive_another_split(
    store: Path, mined: ContractFile
) -> None:
    mine(store, where="run_outcome=success", seed=3)  # builds the profiles if another test
    other = mine(store, where="run_outcome=success", seed=4, folds=4, budget=False)
    assert other.provenance["profile"]["reused"] is True
    shared = {c.id for c in other.contracts} & {c.id for c in mined.contracts}
    assert len(shared) >= 0.9 * len(mined.contracts)


def test_profile_fingerprint_names_the_files_not_the_hour(tmp_path: Path) -> None:
    """The same files read into a new store give the same fingerprint (re-running a
    pipeline rewrites nothing needlessly); other content or a re-read file does not."""
    from tracemine.ingest import store as stores
    from tracemine.mine.profile.aggregates import fingerprint

    def printed(db: Path) -> str:
        con = stores.connect(db, read_only=True)
        try:
            return fingerprint(con, [], None)
        finally:
            con.close()

    traces = write_shop(tmp_path / "a.jsonl", tasks=4, seed=1)
    ingest([traces], tmp_path / "one.duckdb")
    ingest([traces], tmp_path / "two.duckdb")
    assert printed(tmp_path / "one.duckdb") == printed(tmp_path / "two.duckdb")
    ingest([write_shop(tmp_path / "b.jsonl", tasks=4, seed=2)], tmp_path / "three.duckdb")
    assert printed(tmp_path / "three.duckdb") != printed(tmp_path / "one.duckdb")
    before = printed(tmp_path / "two.duckdb")
    ingest([traces], tmp_path / "two.duckdb", replace=True)
    assert printed(tmp_path / "two.duckdb") != before
