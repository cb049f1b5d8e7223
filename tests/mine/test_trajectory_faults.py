"""Injected run-level faults are caught by the monitor with the mined contract file, and the
verdict (or receipt) names the call and the missing or broken link."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_trajectory import mined_suite

from tracemine.faults import FaultRecord, inject
from tracemine.gate import check
from tracemine.ingest import read_traces
from tracemine.model.contract import ContractFile, Kind
from tracemine.monitor import Monitor, RunReplay, replay
from tracemine.simulate import simulate, write_traces

Suite = tuple[ContractFile, Path]
NOMINAL = [r for r in simulate("commerce", tasks=24, seed=5) if r["run_outcome"] == "success"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return mined_suite(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def monitor(suite: Suite) -> Monitor:
    return Monitor.load(suite[1], include_proposed=True)


def replayed(monitor: Monitor, runs: list[dict[str, Any]], folder: Path) -> dict[str, RunReplay]:
    """Each run written as a trace, read back and replayed as ``tracemine check`` does."""
    traces = read_traces(write_traces(runs, folder / "faulty.jsonl", "flat"))
    families = {run["run_id"]: run.get("family") for run in traces.runs}
    return {r.run_id: r for r in replay(monitor, traces.calls, families=families)}


def gaps(found: RunReplay) -> set[tuple[str, str | None]]:
    assert found.verdict is not None
    return {(gap.code, gap.call_id) for gap in found.verdict.gaps}


def violations(found: RunReplay) -> list[Any]:
    """Run-level violations of the verdict and every violation a receipt reported."""
    assert found.verdict is not None
    out = list(found.verdict.violations)
    out += [v for call in found.calls if call.receipt for v in call.receipt.violations]
    return out


def _unanswered(found: RunReplay, record: FaultRecord) -> bool:
    return ("unanswered", record.call_id) in gaps(found)


def _mismatched(found: RunReplay, record: FaultRecord) -> bool:
    unknown = {cid for code, cid in gaps(found) if code == "unknown_id"}
    return _unanswered(found, record) and bool(unknown)


def _duplicate(found: RunReplay, record: FaultRecord) -> bool:
    return ("duplicate_id", record.call_id) in gaps(found)


def _surfaced(found: RunReplay, record: FaultRecord) -> bool:
    assert found.verdict is not None
    return any(e.call_id == record.call_id for e in found.verdict.errors)


def _reordered(found: RunReplay, record: FaultRecord) -> bool:
    return any(v.call_id == record.call_id for v in violations(found))


@pytest.mark.parametrize(
    ("fault", "detected"),
    [
        ("missing_result", _unanswered),
        ("mismatched_call_id", _mismatched),
        ("duplicate_call_id", _duplicate),
        ("execution_error", _surfaced),
    ],
)
def test_completeness_faults_are_named_by_the_gate(
    monitor: Monitor,
    tmp_path: Path,
    fault: str,
    detected: Callable[[RunReplay, FaultRecord], bool],
) -> None:
    faulty, truth = inject(NOMINAL, [fault], rate=1.0, seed=2)
    assert len({r.run_id for r in truth}) > len(NOMINAL) // 2  # some runs have no site
    found = replayed(monitor, faulty, tmp_path)
    missed = [r.detail for r in truth if not detected(found[r.run_id], r)]
    assert not missed
    for record in truth:
        verdict = found[record.run_id].verdict
        assert verdict is not None
        if fault != "execution_error":
            assert verdict.verdict == "incomplete"


def test_an_unretried_execution_error_makes_the_run_incomplete(
    monitor: Monitor, tmp_path: Path
) -> None:
    faulty, truth = inject(NOMINAL, ["execution_error"], rate=1.0, seed=2)
    found = replayed(monitor, faulty, tmp_path)
    for record in truth:
        run = next(r for r in faulty if r["run_id"] == record.run_id)
        retried = any(c["tool"] == record.tool and c["status"] == "ok"
                      for c in run["calls"][record.seq + 1 :])  # fmt: skip
        verdict = found[record.run_id].verdict
        assert verdict is not None
        assert verdict.complete == retried, record.detail


def test_swapped_results_are_caught_on_the_calls_they_reached(
    monitor: Monitor, tmp_path: Path
) -> None:
    """A harness pairing results by position: each call keeps its id but gets the other's
    result. The ids are right, so the gate passes; the contents are wrong."""
    faulty, truth = inject(NOMINAL, ["reordered_results"], rate=1.0, seed=2)
    found = replayed(monitor, faulty, tmp_path)
    by_fault: dict[str, list[FaultRecord]] = {}
    for record in truth:
        by_fault.setdefault(record.fault_id, []).append(record)
    missed = [
        records[0].detail
        for records in by_fault.values()
        if not any(_reordered(found[r.run_id], r) for r in records)
    ]
    assert not missed


def test_results_in_another_order_with_their_own_ids_are_fine(monitor: Monitor) -> None:
    """Parallel calls answered out of order, each under its own id: not a violation."""
    run = next(r for r in NOMINAL if any(c["parallel_index"] for c in r["calls"]))
    recorder = monitor.start_run(run["run_id"], family=run["family"], declared=True)
    pending = []
    for call in run["calls"]:
        recorder.record_call(call["call_id"], call["tool"], call["arguments"])
        pending.append(call)
        if (
            call["parallel_index"] is None
            or call is run["calls"][-1]
            or (run["calls"][call["seq"] + 1]["turn"] != call["turn"])
        ):
            for done in reversed(pending):  # the turn's results, last issued first
                receipt = monitor.check(done["tool"], done["arguments"], done["result"],
                                        call_id=done["call_id"], run=recorder,
                                        status=done["status"])  # fmt: skip
                assert receipt.ok, receipt.violations
            pending = []
    verdict = monitor.finalize(recorder)
    assert verdict.complete and verdict.ok, (verdict.gaps, verdict.violations)


def test_refund_sized_from_the_order_id_breaks_provenance(
    monitor: Monitor, suite: Suite, tmp_path: Path
) -> None:
    refunds = [r for r in NOMINAL if any(c["tool"] == "create_refund" for c in r["calls"])]
    faulty, truth = inject(refunds, ["amount_from_id"], rate=1.0, seed=4)
    assert len(truth) == len(refunds) > 5
    found = replayed(monitor, faulty, tmp_path)
    for record in truth:
        assert record.tool == "create_refund" and record.path == "args.amount_cents"
        broken = [v for v in found[record.run_id].verdict.violations  # type: ignore[union-attr]
                  if v.kind == "provenance" and v.path == "args.amount_cents"]  # fmt: skip
        assert broken, record.detail
        assert {v.call_id for v in broken} == {record.call_id}
        assert any("get_order result.total_cents" in v.expected for v in broken)
    report = check([tmp_path / "faulty.jsonl"], suite[1], include_proposed=True)
    assert report.failed
    link = next(c for c in report.contracts if c.kind == "provenance"
                and c.path == "args.amount_cents" and c.violated)  # fmt: skip
    assert link.violated >= len(truth)


def test_a_value_carried_over_from_another_task_breaks_the_link(
    monitor: Monitor, suite: Suite, tmp_path: Path
) -> None:
    """``stale_value`` on a source a provenance contract reads (``get_order``'s total, id,
    currency …): the later call that took the value no longer matches it."""
    links: dict[tuple[str, str], set[str]] = {}
    for c in suite[0].contracts:
        if c.kind == Kind.PROVENANCE and "[*]" not in c.params["from_path"]:
            links.setdefault((c.params["from_tool"], c.params["from_path"]), set()).add(c.tool)
    picked: dict[str, tuple[dict[str, Any], FaultRecord]] = {}
    for seed in range(12):
        faulty, truth = inject(NOMINAL, ["stale_value"], rate=1.0, seed=seed)
        runs = {r["run_id"]: r for r in faulty}
        for record in truth:
            readers = links.get((record.tool, record.path), set())
            run = runs[record.run_id]
            later = [c for c in run["calls"][record.seq + 1 :] if c["tool"] in readers]
            if later and record.run_id not in picked:
                picked[record.run_id] = (run, record)
    assert len(picked) >= 5
    found = replayed(monitor, [run for run, _ in picked.values()], tmp_path)
    for run_id, (run, record) in picked.items():
        named = f"{record.tool} {record.path}"
        broken = [v for v in found[run_id].verdict.violations  # type: ignore[union-attr]
                  if v.kind in ("provenance", "requires_prior") and named in v.expected]  # fmt: skip
        assert broken, (record.path, record.detail)
        readers = links[(record.tool, record.path)]
        assert {v.call_id for v in broken} <= {c["call_id"] for c in run["calls"]
                                               if c["tool"] in readers}  # fmt: skip
