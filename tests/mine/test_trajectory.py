"""Run-level contracts mined from the simulator: the planted dependencies come back with
cross-fitted evidence, constants and parallel calls make no link, and nominal runs of new
tasks raise no more alarms than the target rate."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tracemine.gate import check
from tracemine.ingest import ingest
from tracemine.mine import mine
from tracemine.model.contract import Contract, ContractFile, Kind, load_contracts, save_contracts
from tracemine.simulate import simulate, write_traces

TARGET = 0.1
MIN_TASKS = 5


@cache
def mined_suite(root: Path) -> tuple[ContractFile, Path]:
    """Contracts mined from 60 simulated commerce tasks (three trials each), and the
    contract file they were saved to (beside the store). Cached: the fault tests reuse it."""
    folder = root / "trajectory"
    folder.mkdir(exist_ok=True)
    trace = write_traces(simulate("commerce", tasks=60, seed=0), folder / "c.jsonl", "flat")
    ingest([trace], folder / "c.duckdb")
    found = mine(folder / "c.duckdb", where="run_outcome=success", target_fa=TARGET,
                 min_tasks=MIN_TASKS, run_level=True)  # fmt: skip
    return found, save_contracts(found, folder / "contracts.json")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[ContractFile, Path]:
    return mined_suite(tmp_path_factory.getbasetemp())


def run_level(contracts: ContractFile) -> list[Contract]:
    return [c for c in contracts.contracts if c.side.value == "run"]


def find(contracts: ContractFile, kind: Kind, of: str, **params: Any) -> Contract | None:
    """The run-level contract of ``kind`` on tool ``of`` whose params match (None: absent)."""
    for c in run_level(contracts):
        if c.kind == kind and c.tool == of and all(c.params.get(k) == v for k, v in params.items()):
            return c
    return None


def test_planted_dependencies_are_recovered(suite: tuple[ContractFile, Path]) -> None:
    contracts, _ = suite
    same = find(contracts, Kind.REQUIRES_PRIOR, "create_refund", tool="get_order",
                same=["args.order_id", "args.order_id"])  # fmt: skip
    plain = find(contracts, Kind.REQUIRES_PRIOR, "create_refund", tool="get_order", same=None)
    assert same is not None and plain is not None and plain.implied_by == same.id
    amount = find(contracts, Kind.PROVENANCE, "create_refund", from_tool="get_order",
                  from_path="result.total_cents")  # fmt: skip
    assert amount is not None and amount.paths == ["args.amount_cents"]
    order = find(contracts, Kind.PROVENANCE, "create_refund", from_tool="get_order",
                 from_path="args.order_id")  # fmt: skip
    assert order is not None and order.paths == ["args.order_id"]
    cap = find(contracts, Kind.CALL_CAP, "create_refund")
    assert cap is not None and cap.params["max"] == 2  # one refund a run, room for a retry
    retried = find(contracts, Kind.CALL_CAP, "get_order")
    assert retried is not None and retried.params["max"] >= 3  # retries were seen
    refund = find(contracts, Kind.EXPECTED_TOOLS, "*", family="commerce.refund")
    assert refund is not None
    assert {"get_order", "create_refund"} <= set(refund.params["required"])
    assert "list_items" in refund.params["forbidden"]


def test_run_level_evidence_is_cross_fitted(suite: tuple[ContractFile, Path]) -> None:
    contracts, path = suite
    assert load_contracts(path).contracts == contracts.contracts  # the file format holds them
    found = run_level(contracts)
    assert {c.kind for c in found} == {Kind.COMPLETENESS, Kind.REQUIRES_PRIOR, Kind.PROVENANCE,
                                       Kind.BOUNDED_BY, Kind.CALL_CAP,
                                       Kind.EXPECTED_TOOLS}  # fmt: skip
    runs = contracts.provenance["profile"]["runs"]
    for c in found:
        e = c.evidence
        assert e is not None and e.folds == 5 and e.fa_upper is not None, c.description
        assert e.tasks >= MIN_TASKS, c.description
        if c.kind != Kind.COMPLETENESS:  # judged by its kind's pooled posterior, per run
            assert e.fa_posterior is not None and e.family == f"{c.kind.value}/run"
        assert e.folds_proposed >= 4 and e.heldout_calls > 0, c.description
    gate = next(c for c in found if c.kind == Kind.COMPLETENESS)
    assert gate.evidence is not None and gate.evidence.heldout_calls == runs
    assert gate.evidence.heldout_violations == 0
    summary = contracts.provenance["run_summary"]
    assert summary["provenance"]["kept"] >= 2


def test_contract_ids_are_stable_across_reruns(suite: tuple[ContractFile, Path]) -> None:
    """Other folds, other fitted caps: the same ids, so review decisions carry over."""
    contracts, path = suite
    again = mine(path.with_name("c.duckdb"), where="run_outcome=success",
                 target_fa=TARGET, min_tasks=MIN_TASKS, seed=1, run_level=True)  # fmt: skip
    wanted = {c.id for c in run_level(contracts)
              if c.kind in (Kind.COMPLETENESS, Kind.PROVENANCE, Kind.CALL_CAP)}  # fmt: skip
    assert wanted and wanted <= {c.id for c in run_level(again)}


def test_off_unless_asked_and_only_the_tools_asked_for(suite: tuple[ContractFile, Path]) -> None:
    store = suite[1].with_name("c.duckdb")
    assert not run_level(mine(store, where="run_outcome=success", min_tasks=MIN_TASKS))
    some = mine(store, where="run_outcome=success", target_fa=TARGET, min_tasks=MIN_TASKS,
                tools=["create_refund"], run_level=True)  # fmt: skip
    assert run_level(some) and {c.tool for c in some.contracts} == {"create_refund"}


def test_no_false_alarms_on_new_tasks(suite: tuple[ContractFile, Path], tmp_path: Path) -> None:
    contracts, _ = suite
    only_runs = save_contracts(
        contracts.model_copy(update={"contracts": run_level(contracts)}), tmp_path / "runs.json"
    )
    fresh = [r for r in simulate("commerce", tasks=40, seed=11) if r["run_outcome"] == "success"]
    trace = write_traces(fresh, tmp_path / "fresh.jsonl", "flat")
    report = check([trace], only_runs, include_proposed=True)
    alarmed = [r for r in report.runs if r.verdict != "complete" or r.violations]
    assert len(report.runs) == len(fresh) > 80
    assert len(alarmed) / len(report.runs) <= TARGET, [r.gaps + r.violations for r in alarmed]


def _line(run: str, task: str, trial: int, seq: int, turn: int, tool: str, args: dict,
          result: dict) -> dict:  # fmt: skip
    return {"run_id": run, "task_id": task, "trial": trial, "family": "pay", "reward": 1.0,
            "run_outcome": "success", "seq": seq, "turn": turn, "call_id": f"{run}-{seq}",
            "tool": tool, "arguments": args, "result": result, "status": "ok"}  # fmt: skip


def test_constants_and_parallel_calls_make_no_link(tmp_path: Path) -> None:
    """``pay.args.currency`` always equals ``lookup.result.currency`` — but it is "USD"
    in every task; ``audit`` and ``log`` are issued together, in either order."""
    lines = []
    for task in range(16):
        for trial in range(2):
            run, ref = f"t{task}.r{trial}", f"R-{task * 7919 % 1000:03d}"
            lines.append(_line(run, f"t{task}", trial, 0, 0, "lookup", {"q": task},
                               {"ref": ref, "currency": "USD"}))  # fmt: skip
            lines.append(_line(run, f"t{task}", trial, 1, 1, "pay",
                               {"ref": ref, "currency": "USD"}, {"ok": True}))  # fmt: skip
            pair = [("audit", {"ref": ref}), ("log", {"ref": ref})]
            for seq, (tool, args) in enumerate(pair if trial == 0 else pair[::-1], start=2):
                lines.append(_line(run, f"t{task}", trial, seq, 2, tool, args, {"ok": True}))
    trace = tmp_path / "pay.jsonl"
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    ingest([trace], tmp_path / "pay.duckdb")
    found = mine(tmp_path / "pay.duckdb", folds=4, target_fa=0.2, min_tasks=5, run_level=True)
    links = {(c.tool, c.paths[0] if c.paths else "", c.params.get("from_tool") or
              c.params.get("tool"), c.params.get("from_path") or "")
             for c in run_level(found) if c.kind in (Kind.PROVENANCE, Kind.REQUIRES_PRIOR)}  # fmt: skip
    assert ("pay", "args.ref", "lookup", "result.ref") in links
    assert ("audit", "args.ref", "pay", "args.ref") in links
    assert not any(path == "args.currency" for _, path, _, _ in links)
    assert not any({tool, source} == {"audit", "log"} for tool, _, source, _ in links)


def test_bounds_and_selected_elements_are_mined(tmp_path: Path) -> None:
    """A refund within the order total, recipients chosen among the customers a search
    returned: ``bounded_by`` and provenance over ``args.to[*]``. A number bounded only by
    chance (a page size below an unrelated count, an item count below the total) makes no
    bound."""
    lines = []
    everyone = [f"c{n:02d}@example.com" for n in range(30)]
    for task in range(16):
        for trial in range(2):
            run, t = f"t{task}.r{trial}", f"t{task}"
            total = 1000 + 250 * task + 10 * trial
            amount = total * (1 + (task + trial) % 4) // 4
            chosen = everyone[task : task + 2 + task % 3]
            calls = [
                ("list_customers", {"page_size": 5 + task % 3},
                 {"customers": everyone, "count": 30}),
                ("get_order", {"order_id": f"o{task}"}, {"total_cents": total, "items": 3}),
                ("search", {"segment": f"s{task}"}, {"emails": chosen}),
                ("create_refund", {"order_id": f"o{task}", "amount_cents": amount}, {"ok": True}),
                ("send", {"to": chosen}, {"sent": len(chosen)}),
            ]  # fmt: skip
            for seq, (tool, args, result) in enumerate(calls):
                lines.append(_line(run, t, trial, seq, seq, tool, args, result))
    trace = tmp_path / "shop.jsonl"
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    ingest([trace], tmp_path / "shop.duckdb")
    found = mine(tmp_path / "shop.duckdb", folds=4, target_fa=0.2, min_tasks=5, run_level=True)
    bounds = {(c.tool, c.paths[0], c.params["from_tool"], c.params["from_path"])
              for c in run_level(found) if c.kind == Kind.BOUNDED_BY}  # fmt: skip
    assert bounds == {("create_refund", "args.amount_cents", "get_order", "result.total_cents")}
    (bound,) = [c for c in run_level(found) if c.kind == Kind.BOUNDED_BY]
    assert bound.description == (
        "create_refund.args.amount_cents <= an earlier get_order.result.total_cents"
    )
    assert bound.implied_by is None and bound.evidence is not None
    assert bound.evidence.family == "bounded_by/run" and bound.evidence.heldout_calls > 0
    sources = {(c.params["from_tool"], c.params["from_path"])
               for c in run_level(found) if c.kind == Kind.PROVENANCE and c.tool == "send"
               and c.paths == ["args.to[*]"]}  # fmt: skip
    assert sources == {("search", "result.emails[*]"), ("list_customers", "result.customers[*]")}


def test_a_bound_is_implied_by_the_provenance_of_the_same_value(tmp_path: Path) -> None:
    """A refund of the whole total is also within it: the bound hides behind provenance."""
    lines = []
    for task in range(12):
        for trial in range(2):
            run, t, total = f"t{task}.r{trial}", f"t{task}", 1000 + 130 * task + trial
            lines.append(_line(run, t, trial, 0, 0, "get_order", {"order_id": f"o{task}"},
                               {"total_cents": total}))  # fmt: skip
            lines.append(_line(run, t, trial, 1, 1, "create_refund", {"amount_cents": total},
                               {"ok": True}))  # fmt: skip
    trace = tmp_path / "whole.jsonl"
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    ingest([trace], tmp_path / "whole.duckdb")
    found = run_level(mine(tmp_path / "whole.duckdb", folds=4, target_fa=0.2, min_tasks=5,
                           run_level=True))  # fmt: skip
    (equal,) = [c for c in found if c.kind == Kind.PROVENANCE]
    (bound,) = [c for c in found if c.kind == Kind.BOUNDED_BY]
    assert bound.implied_by == equal.id and equal.paths == bound.paths
