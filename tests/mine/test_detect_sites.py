"""The detection estimate re-checks only the candidates that read the sites a fault
changed: the places a fault changes, the candidates they reach, and the same catches as
a monitor of every candidate checking every faulty copy."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from tracemine.faults import variants
from tracemine.ingest import ingest
from tracemine.ingest.store import connect
from tracemine.mine import mine
from tracemine.mine.evidence.detect import CALL_CLASSES, MAX_SITES, Readers, changed, estimate
from tracemine.mine.profile.shards import LocalShards
from tracemine.model.contract import Contract, ContractFile, Kind, Predicate, Side
from tracemine.monitor import Monitor
from tracemine.simulate import simulate, write_traces


def test_changed_names_the_deepest_places_that_differ() -> None:
    before = ({"id": 1}, {"items": [{"price": 1}, {"price": 2}], "total": 3, "x": "a"}, False)
    after = ({"id": 1}, {"items": [{"price": 1}, {"price": -2}], "total": 3, "y": "a"}, False)
    assert sorted(changed(before, after), key=str) == sorted(
        [("result", "items", 1, "price"), ("result", "x"), ("result", "y")], key=str
    )
    shorter = (before[0], {**before[1], "items": [{"price": 1}]}, False)
    assert changed(before, shorter) == [("result", "items")]
    assert changed(before, (before[0], "<html>", False)) == [("result",)]
    assert changed(before, (before[0], {**before[1], "total": 3.0}, False)) == [("result", "total")]


def _contract(kind: Kind, *paths: str, **extra: object) -> Contract:
    return Contract(tool="t", side=Side.RESULT, kind=kind, paths=list(paths), **extra)


def test_a_place_reaches_the_paths_at_above_and_below_it() -> None:
    contracts = [
        _contract(Kind.NON_NEGATIVE, "result.items[*].price"),  # 0: at
        _contract(Kind.NON_EMPTY, "result.items"),  # 1: above
        _contract(Kind.LENGTH, "len(result.items)", params={"min": 1, "max": 9}),  # 2: above
        _contract(Kind.NON_NEGATIVE, "result.total"),  # 3: elsewhere
        _contract(Kind.NOT_NULL, "result.rooms{*}.rate"),  # 4: a map's entries
        _contract(Kind.NOT_NULL, "result.total",
                  when=Predicate(path="result.items[*].price", op="present")),  # 5: condition
    ]  # fmt: skip
    document = ContractFile(contracts=contracts).model_dump(mode="json", exclude_none=True)
    readers = Readers(contracts, document)
    assert readers.reading("t", [("result", "items", 3, "price")]) == {0, 1, 2, 5}
    assert readers.reading("t", [("result", "items")]) == {0, 1, 2, 5}
    assert readers.reading("t", [("result", "rooms", "R-17", "rate")]) == {4}
    assert readers.reading("t", [("result",)]) == {0, 1, 2, 3, 4, 5}
    assert readers.reading("t", [("args", "id")]) == set()
    assert readers.reading("other", [("result",)]) == set()


def test_catches_are_those_of_a_monitor_of_every_candidate(tmp_path: Path) -> None:
    runs = simulate("commerce", tasks=30, seed=4, trials=2)
    trace = write_traces(runs, tmp_path / "runs.jsonl", "flat")
    db = tmp_path / "runs.duckdb"
    ingest([trace], db)
    result = mine(db, budget=False, max_per_tool=None)
    candidates = [c for c in result.contracts if c.side != Side.RUN and c.kind != Kind.SCHEMA]
    candidates = [c.model_copy(update={"folded_into": None, "implied_by": None})
                  for c in candidates]  # fmt: skip
    with closing(connect(db, read_only=True)) as con:
        shards = LocalShards([con], client_is_store=True)
        found = estimate(shards, candidates, seed=0)
        from tracemine.mine.evidence.detect import merge_samples, sample_calls

        rows = merge_samples(shards.map(sample_calls, 0, label="sample"))
    # the reference: one monitor of every candidate, every faulty copy checked in full
    import json

    tools = {c.tool for c in candidates}
    sampled = []
    for tool, task, _, arguments, value, _ in rows:
        if tool in tools:
            call = {"tool": tool, "call_id": f"c{len(sampled)}", "seq": 0, "status": "ok",
                    "arguments": json.loads(arguments), "result": json.loads(value)}  # fmt: skip
            sampled.append({"run_id": f"s{len(sampled)}", "task_id": task, "calls": [call]})
    document = ContractFile(contracts=candidates).model_dump(mode="json", exclude_none=True)
    monitor = Monitor.from_dict(document, include_proposed=True)

    def broken(run: dict) -> set[str]:
        call = run["calls"][0]
        receipt = monitor.check(call["tool"], call["arguments"], call["result"])
        return {v.contract_id for v in receipt.violations}

    nominal = [broken(run) for run in sampled]
    expected: dict[str, dict[str, set[int]]] = {}
    numbers: dict[str, int] = {}
    for index, _, faulty in variants(sampled, CALL_CLASSES, max_sites=MAX_SITES, seed=0):
        tool = sampled[index]["calls"][0]["tool"]
        number = numbers.get(tool, 0)
        numbers[tool] = number + 1
        for cid in broken(faulty) - nominal[index]:
            expected.setdefault(tool, {}).setdefault(cid, set()).add(number)
    assert sum(len(v) for v in expected.values()) > 20  # faults were caught at all
    for tool in tools:
        assert found[tool].catches == expected.get(tool, {}), tool
        assert len(found[tool].weights) == numbers.get(tool, 0)
