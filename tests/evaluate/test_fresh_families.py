"""Fresh-task calibration per contract family on a real corpus (AgentDojo's ground truth):
the report's counts are recomputed here from the task split and the monitor alone, from
the contract file the evaluation wrote, without the scorer's alarms."""

from __future__ import annotations

import math
from collections import defaultdict
from html import escape
from pathlib import Path
from typing import Any

import pytest

from tracemine.evaluate import EvaluationReport, evaluate
from tracemine.evaluate.families import _Tally
from tracemine.evaluate.model import FamilyRow
from tracemine.evaluate.split import from_traces, split_tasks
from tracemine.mine.evidence.pooling import family_of
from tracemine.model.contract import load_contracts
from tracemine.monitor import Monitor, replay

TRACE = Path(__file__).resolve().parents[2] / "data/agentdojo/agentdojo.jsonl.gz"
# a loose budget and support keep contracts that do alarm on fresh tasks, call-level and
# run-level, so the counts below are not all zero
SETTINGS: dict[str, Any] = {"target_fa": 0.2, "min_tasks": 2, "max_faults": 2, "seed": 0}


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[EvaluationReport, Path]:
    out = tmp_path_factory.mktemp("fresh")
    return evaluate(traces=[TRACE], out=out, **SETTINGS), out


def _expected(out: Path) -> dict[str, dict[str, Any]]:
    """Per family: contracts, summed price x calls, (contract, call) and (contract, task)
    units and how many of them a violation of the contract named."""
    runs = from_traces([TRACE], None).runs
    evaluation = split_tasks(runs, 0.3, 5, SETTINGS["seed"]).evaluation
    contracts = load_contracts(out / "contracts" / "mined-crossfit.json")
    monitor = Monitor.from_dict(contracts.model_dump(mode="json"), include_proposed=True)
    enforced = {spec.id for spec in monitor.contracts}
    calls = [{**call, "run_id": run["run_id"]} for run in evaluation for call in run["calls"]]
    task = {run["run_id"]: run["task_id"] for run in evaluation}
    seq_of = {(c["run_id"], c.get("result_call_id") or c.get("call_id")): c["seq"] for c in calls}
    broken: set[tuple[str, str, int]] = set()  # contract, run, seq
    for replayed in replay(monitor, calls):
        for outcome in replayed.calls:
            for v in outcome.receipt.violations if outcome.receipt else ():
                broken.add((v.contract_id, replayed.run_id, outcome.seq))
        assert replayed.verdict is not None
        for v in replayed.verdict.violations:
            if (replayed.run_id, v.call_id) in seq_of:
                broken.add((v.contract_id, replayed.run_id, seq_of[(replayed.run_id, v.call_id)]))
    # a schema's members are priced at nothing under it: their violations are the schema's
    schemas = {c.id for c in contracts.contracts if c.kind == "schema" and c.id in enforced}
    for c in contracts.contracts:
        if c.folded_into in schemas:
            broken |= {(c.folded_into, run, seq) for cid, run, seq in broken if cid == c.id}
    out_rows: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"contracts": 0, "price": 0.0, "calls": [0, 0], "tasks": [0, 0]}
    )
    for contract in contracts.contracts:
        if contract.id not in enforced or contract.kind == "completeness":
            continue  # the gate is no priced contract
        if contract.folded_into in schemas:
            continue
        share = contract.evidence.fa_share if contract.evidence else None
        family = (contract.evidence.family if contract.evidence else None) or family_of(contract)
        row = out_rows[family if share is not None else "(no price)"]
        own = [c for c in calls if c["tool"] == contract.tool]
        hit = [c for c in own if (contract.id, c["run_id"], c["seq"]) in broken]
        row["contracts"] += 1
        row["price"] += (share or 0.0) * len(own)
        row["calls"][0] += len(hit)
        row["calls"][1] += len(own)
        row["tasks"][0] += len({task[c["run_id"]] for c in hit})
        row["tasks"][1] += len({task[c["run_id"]] for c in own})
    return dict(out_rows)


def test_family_counts_are_the_monitors(evaluated: tuple[EvaluationReport, Path]) -> None:
    report, out = evaluated
    families = report.arm("mined-crossfit").families
    assert families is not None
    expected = _expected(out)
    assert sorted(row.family for row in families.families) == sorted(expected)
    for row in families.families:
        want = expected[row.family]
        assert row.contracts == want["contracts"], row.family
        assert [row.calls.k, row.calls.n] == want["calls"], row.family
        assert [row.tasks.k, row.tasks.n] == want["tasks"], row.family
        if row.family != "(no price)" and want["calls"][1]:
            assert row.predicted == pytest.approx(want["price"] / want["calls"][1])
            assert row.over_price == (row.calls.k / row.calls.n > row.predicted)
            # the chance of as many alarms at the price, by hand: P(X >= k), X ~ Bin(n, p)
            n, k, p = row.calls.n, row.calls.k, row.predicted
            by_hand = 1.0 - sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k))
            assert row.chance == pytest.approx(by_hand, abs=1e-9), row.family
            assert row.beyond_chance == (by_hand < 0.05)
    # false alarms did happen, on call-level and run-level families, in fewer tasks than calls
    alarmed = {row.family for row in families.families if row.calls.k}
    assert any(name.endswith("/run") for name in alarmed)
    assert any(not name.endswith("/run") for name in alarmed)
    priced = [row for row in families.families if row.family != "(no price)"]
    assert families.priced.calls.k == sum(row.calls.k for row in priced)
    assert families.priced.calls.n == sum(row.calls.n for row in priced)
    assert families.priced.tasks.n < families.priced.calls.n
    over = [row.family for row in families.families if row.over_price]
    assert all(name in families.note for name in over)
    assert all(row.over_price for row in families.families if row.beyond_chance)


def test_family_table_in_every_rendering(evaluated: tuple[EvaluationReport, Path]) -> None:
    report, out = evaluated
    families = report.arm("mined-crossfit").families
    assert families is not None
    row = next(r for r in families.families if r.calls.k)
    markdown = (out / "report.md").read_text()
    assert "## Fresh-task calibration per contract family" in markdown
    shown = escape(row.family, quote=False)  # "tasks<=10": both renderings escape "<"
    assert f"| {shown} | {row.contracts} |" in markdown and row.calls.text(2) in markdown
    html = (out / "report.html").read_text()
    assert "<h2>Fresh-task calibration per contract family</h2>" in html
    assert f"<td>{shown}</td>" in html
    again = EvaluationReport.model_validate_json((out / "report.json").read_text())
    assert again.arm("mined-crossfit").families == families
    # only the cross-fitted arm's prices are checked: the other arms carry none
    assert all(arm.families is None for arm in report.arms if arm.arm != "mined-crossfit")


def test_one_alarm_over_a_small_price_is_chance_and_several_are_not() -> None:
    def row(alarms: int) -> FamilyRow:
        tally = _Tally(contracts=76, price=0.00084 * 341, shares=0.0)
        tally.calls, tally.tasks = [alarms, 341], [alarms, 330]
        return tally.row("schema/result", priced=True)

    one, three = row(1), row(3)
    assert one.over_price and three.over_price  # 0.29 % and 0.88 % against 0.084 %
    assert one.chance == pytest.approx(1 - (1 - 0.00084) ** 341)  # about one in four
    assert not one.beyond_chance
    assert three.beyond_chance and three.chance is not None and three.chance < 0.01
    assert row(0).chance == 1.0 and not row(0).over_price
    unpriced = _Tally(contracts=2, calls=[1, 10], tasks=[1, 5]).row("(no price)", priced=False)
    assert unpriced.chance is None and not unpriced.beyond_chance
