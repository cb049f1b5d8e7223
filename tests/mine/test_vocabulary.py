"""The vocabulary for faults that keep a result's shape: ``shares_token`` (a result that
speaks of what was asked), ``ratio`` (a number in a fixed unit of another) and
``page_full`` (a page as long as the limit and the count allow). Each is mined where it
held on every task, not where it did not, and priced by its family."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.mine.select.describe import describe
from tracemine.model.contract import Contract, Kind

CITIES = ("Lisbon", "Porto", "Gare de Lyon", "Madrid", "Sevilla", "Berlin", "Hamburg", "Nice")


def _calls(rng: random.Random, task: int) -> list[tuple[str, dict, Any]]:
    city = CITIES[task % len(CITIES)]
    place = f"Paris-{city.replace(' ', '-')}" if " " in city else f"cityName: {city}"
    amount = rng.randint(1, 900)
    limit = rng.choice((5, 10, 20))
    total = rng.randint(0, 30)
    page = rng.randint(1, 3)
    start = (page - 1) * limit
    shown = max(min(limit, total - start), 0)
    return [
        # planted: the place names the query; the other string is some other record's
        ("find_place", {"query": city},
         {"name": place, "operator": rng.choice(("RENFE", "SNCF", "DB", "CP")) + str(task)}),
        # planted: amount_cents is a hundred times amount; fee varies from call to call
        ("quote", {"amount": amount},
         {"amount_cents": amount * 100, "fee_amount": rng.randint(1, 99)}),
        # planted: a page is full unless it is the last; the ragged tool cuts pages at will
        ("list_items", {"limit": limit, "page": page},
         {"total": total, "items": [{"n": i} for i in range(shown)]}),
        ("list_ragged", {"limit": limit},
         {"total": total, "items": [{"n": i} for i in range(rng.randint(0, min(limit, total)))]}),
    ]  # fmt: skip


def _write(path: Path, tasks: int, seed: int = 0) -> Path:
    lines = []
    for task in range(tasks):
        base = _calls(random.Random(f"{seed}-{task}"), task)
        for trial in range(2):
            run_id = f"t{task:03d}.r{trial}"
            for seq, (tool, args, result) in enumerate(base):
                lines.append({"run_id": run_id, "task_id": f"t{task:03d}", "tool": tool,
                              "call_id": f"{run_id}.c{seq}", "seq": seq, "arguments": args,
                              "result": result, "status": "ok"})  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> list[Contract]:
    root = tmp_path_factory.mktemp("vocabulary")
    db = root / "v.duckdb"
    ingest([_write(root / "v.jsonl", 40)], db)
    return mine(db, min_tasks=5, budget=False).contracts


def _of(contracts: list[Contract], kind: Kind, tool: str) -> list[Contract]:
    return [c for c in contracts if c.kind == kind and c.tool == tool]


def test_a_result_naming_the_query_shares_a_word_with_it(mined: list[Contract]) -> None:
    (found,) = _of(mined, Kind.SHARES_TOKEN, "find_place")
    assert found.paths == ["result.name", "args.query"]
    assert describe(found) == "result.name shares a word with args.query"
    evidence = found.evidence
    assert evidence is not None and evidence.family == "shares_token/result"
    assert evidence.heldout_task_violations == 0 and evidence.fa_posterior is not None
    # the operator's name shares no word with the query: no contract for it
    assert not [c for c in mined if c.kind == Kind.SHARES_TOKEN and "operator" in c.paths[0]]


def test_a_fixed_unit_is_a_ratio_and_a_varying_fee_is_not(mined: list[Contract]) -> None:
    (found,) = _of(mined, Kind.RATIO, "quote")
    assert found.paths == ["result.amount_cents", "args.amount"]
    assert found.params["ratio"] == pytest.approx(100, rel=1e-3)
    assert 0 < found.params["tolerance"] < 0.02
    assert describe(found).startswith("result.amount_cents == 100 × args.amount (± ")
    assert found.evidence is not None and found.evidence.family == "ratio/result"
    assert not [c for c in mined if c.kind == Kind.RATIO and "fee_amount" in c.paths]


def test_a_full_page_is_mined_with_its_page_argument_and_a_ragged_one_is_not(
    mined: list[Contract],
) -> None:
    (found,) = _of(mined, Kind.PAGE_FULL, "list_items")
    assert found.paths == ["len(result.items)", "result.total", "args.limit"]
    assert found.params == {"page": "args.page"}
    assert describe(found) == ("len(result.items) == min(args.limit, result.total - "
                               "(args.page - 1) × args.limit): a page is full unless it is "
                               "the last")  # fmt: skip
    assert not _of(mined, Kind.PAGE_FULL, "list_ragged")


def test_the_mined_vocabulary_catches_the_faults_it_is_for(mined: list[Contract], tmp_path) -> None:
    from tracemine.model.contract import ContractFile, ContractStatus
    from tracemine.monitor import Monitor

    chosen = [c.model_copy(update={"status": ContractStatus.ACCEPTED}) for c in mined
              if c.kind in (Kind.SHARES_TOKEN, Kind.RATIO, Kind.PAGE_FULL)]  # fmt: skip
    path = tmp_path / "c.json"
    path.write_text(ContractFile(contracts=chosen).model_dump_json(), "utf-8")
    monitor = Monitor.load(path)
    assert monitor.check("find_place", {"query": "Gare de Lyon"},
                         {"name": "Paris-Gare-de-Lyon", "operator": "SNCF"}).ok  # fmt: skip
    other = monitor.check("find_place", {"query": "Lisbon"}, {"name": "cityName: Porto"})
    assert [v.kind for v in other.violations] == ["shares_token"]
    assert monitor.check("quote", {"amount": 12}, {"amount_cents": 1200}).ok
    scaled = monitor.check("quote", {"amount": 12}, {"amount_cents": 120000})
    assert [v.kind for v in scaled.violations] == ["ratio"]
    page = {"total": 23, "items": [{"n": i} for i in range(10)]}
    assert monitor.check("list_items", {"limit": 10, "page": 2}, page).ok
    last = {"total": 23, "items": [{"n": i} for i in range(3)]}
    assert monitor.check("list_items", {"limit": 10, "page": 3}, last).ok
    cut = monitor.check("list_items", {"limit": 10, "page": 2}, last)
    assert [v.kind for v in cut.violations] == ["page_full"]


def test_the_vocabulary_exports_natively_and_says_why_json_schema_cannot(
    mined: list[Contract], tmp_path: Path
) -> None:
    from tracemine.export import export_contracts
    from tracemine.model.contract import ContractFile
    from tracemine.monitor import Monitor

    new = [c for c in mined if c.kind in (Kind.SHARES_TOKEN, Kind.RATIO, Kind.PAGE_FULL)]
    source = ContractFile(contracts=new)
    native = export_contracts(source, "native", tmp_path / "native.json", include_proposed=True)
    assert native.exported == len(new) == 3
    monitor = Monitor.load(tmp_path / "native.json", include_proposed=True)
    assert not monitor.check("quote", {"amount": 3}, {"amount_cents": 3}).ok
    schemas = export_contracts(source, "jsonschema", tmp_path / "js", include_proposed=True)
    reasons = {u.kind: u.reason for u in schemas.unexpressed}
    assert set(reasons) == {"shares_token", "ratio", "page_full"}
    assert all("JSON Schema constrains one value" in r for r in reasons.values())


def test_mining_a_part_of_the_tasks_at_a_time_finds_the_same_vocabulary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import duckdb

    from tracemine.mine.profile import aggregates as profile_module

    trace = _write(tmp_path / "v.jsonl", 30, seed=1)
    whole, split = tmp_path / "whole.duckdb", tmp_path / "split.duckdb"
    ingest([trace], whole)
    ingest([trace], split)

    def snapshot(db: Path) -> list[dict]:
        found = mine(db, folds=3, min_tasks=3, budget=False).contracts
        return [c.model_dump(mode="json") for c in found
                if c.kind in (Kind.SHARES_TOKEN, Kind.RATIO, Kind.PAGE_FULL)]  # fmt: skip

    expected = snapshot(whole)
    monkeypatch.setattr(profile_module, "PART_CALLS", 40)
    found = snapshot(split)
    con = duckdb.connect(str(split), read_only=True)
    try:
        parts = con.execute("SELECT count(DISTINCT part) FROM tm_calls").fetchall()[0][0]
    finally:
        con.close()
    assert parts > 2
    assert {c["kind"] for c in expected} == {"shares_token", "ratio", "page_full"}
    assert found == expected
