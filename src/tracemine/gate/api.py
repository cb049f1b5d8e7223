"""``check``: replay recorded traces through the runtime monitor — a regression gate for CI.

Each run's calls are checked in order and the run is finalized (the completeness gate and
the run-level contracts). The report counts, per tool and per contract, what was checked,
violated and not evaluated; ``failed`` is true when any contract was violated or any run
was incomplete. With an oracle (expected calls and accepted final claims per run or task)
each run is labelled:

    complete-correct   the gate passed, the expected calls were made, the claim is accepted
    complete-wrong     the gate passed, the expected calls were made, the claim is not
    unsafe-complete    the gate passed although expected calls were missing
    safe-incomplete    the gate flagged the run (it would not be reported as done)

>>> report = check(["traces.jsonl"], "contracts.json")  # doctest: +SKIP
>>> report.failed, report.violations  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tracemine.errors import InputError
from tracemine.gate.trials import TrialsReport, judge_trials
from tracemine.ingest import read_traces
from tracemine.monitor import Monitor, RunReplay, replay
from tracemine.monitor._gate import ExpectedError
from tracemine.monitor._load import read_reviewed

LABELS = ("complete-correct", "safe-incomplete", "unsafe-complete", "complete-wrong")
_CLAIM_KEYS = ("final_claim", "final_answer", "final_text")


class ContractSummary(BaseModel):
    tool: str
    contract_id: str
    kind: str
    path: str
    checked: int = 0
    violated: int = 0
    not_evaluated: int = 0
    examples: list[str] = Field(default_factory=list, description="first few, redacted")


class ToolSummary(BaseModel):
    tool: str
    calls: int = 0
    violations: int = 0
    coverage: dict[str, int] = Field(default_factory=dict, description="receipts by coverage")


class RunSummary(BaseModel):
    run_id: str
    task_id: str | None = None
    calls: int = 0
    verdict: str
    gaps: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    violations: list[dict[str, Any]] = Field(default_factory=list)
    call_violations: dict[str, int] = Field(
        default_factory=dict, description="contract id → calls of this run that violated it"
    )
    call_examples: list[str] = Field(default_factory=list, description="first few, redacted")
    label: str | None = None
    label_detail: str = ""


class CheckReport(BaseModel):
    """What ``check`` found, per tool, per contract and per run."""

    traces: list[str]
    contracts_file: str
    enforced: int = Field(0, description="contracts the monitor enforced")
    calls: int = 0
    quarantined: int = 0
    violations: int = 0
    incomplete_runs: int = 0
    tools: list[ToolSummary] = Field(default_factory=list)
    contracts: list[ContractSummary] = Field(default_factory=list)
    runs: list[RunSummary] = Field(default_factory=list)
    labels: dict[str, int] | None = None
    trials: TrialsReport | None = None
    notices: list[str] = Field(
        default_factory=list, description="what the monitor left out, e.g. proposed contracts"
    )

    @property
    def failed(self) -> bool:
        # with trials, a contract noisy between trials of a task fails only when strict
        violations = self.violations if self.trials is None else self.trials.gating_violations
        return bool(violations or self.incomplete_runs)


def check(
    traces: Sequence[str | Path] | str | Path,
    contracts: str | Path,
    *,
    format: str | None = None,
    include_proposed: bool = False,
    oracle: str | Path | None = None,
    trials: bool = False,
    strict: bool = False,
    error_pattern: str | None = None,
    review: str | Path | None = None,
    allow_errors: Sequence[str] = (),
) -> CheckReport:
    """Replay ``traces`` (files in any ingest format) through the contracts at ``contracts``,
    with the decisions of the review file beside them (or of ``review``) applied, as
    ``export`` applies them.
    With ``trials``, runs are grouped by task and contracts whose verdict differs between
    nominal trials are reported (:mod:`tracemine.gate.trials`) and fail the check only when
    ``strict``. Contracts the file marks noisy (mining saw them flip between trials) are
    kept out of the verdict the same way, with or without ``trials``. Tool errors are
    marked as ingest marks them (``error_pattern`` as in :func:`tracemine.ingest`); a call
    that ends in an error ``allow_errors`` expects (``TOOL=REGEX``, as
    :meth:`Monitor.load`'s ``expected_errors``) leaves its run complete: an "order not
    found" is a right answer when the order does not exist."""
    paths = [traces] if isinstance(traces, str | Path) else list(traces)
    # read once: the monitor and the noise marks, with the review decisions applied
    document, applied = read_reviewed(contracts, review)
    for allowed in allow_errors:  # said as the option it came from, before any work
        try:
            ExpectedError.parse(allowed)
        except ValueError as exc:
            raise InputError(f"--allow-error: {exc}") from None
    monitor = Monitor.from_dict(document, include_proposed=include_proposed,
                                origin=str(contracts), reviewed=applied,
                                expected_errors=allow_errors)  # fmt: skip
    if not monitor.contracts and not include_proposed:
        raise InputError(_nothing_enforced(contracts, monitor.ignored_proposed))
    cases = load_oracle(oracle) if oracle is not None else None
    report = CheckReport(traces=[str(p) for p in paths], contracts_file=str(contracts),
                         enforced=len(monitor.contracts))  # fmt: skip
    summaries = {s.id: ContractSummary(tool=s.tool, contract_id=s.id, kind=s.kind,
                                       path=", ".join(p.text for p in s.paths) or "(run)")
                 for s in monitor.contracts if s.kind != "completeness"}  # fmt: skip
    plans = {tool: [s.id for s in monitor.contracts if s.tool == tool] for tool in monitor.tools}
    marked = {cid: ev for cid, ev in noise_marks(document).items() if cid in summaries}
    tools: dict[str, ToolSummary] = {}
    uncaptured: dict[str, int] = {}  # calls whose content the trace did not record, by tool
    grouped: list[tuple[RunReplay, dict[str, Any]]] | None = [] if trials or strict else None
    for path in paths:
        traces_read = read_traces(path, format, error_pattern=error_pattern)
        report.quarantined += len(traces_read.quarantined)
        runs = {run["run_id"]: run for run in traces_read.runs}
        families = {rid: run.get("family") for rid, run in runs.items()}
        for replayed in replay(monitor, traces_read.calls, families=families):
            run = runs.get(replayed.run_id, {})
            run_summary = _run_summary(replayed, run, cases)
            report.runs.append(run_summary)
            if grouped is not None:
                grouped.append((replayed, run))
            for outcome in replayed.calls:
                tool = tools.setdefault(outcome.tool, ToolSummary(tool=outcome.tool))
                tool.calls += 1
                receipt = outcome.receipt
                if outcome.skipped is not None:
                    # made, but what it said was not recorded: not evaluated, not violated
                    tool.coverage["not evaluated"] = tool.coverage.get("not evaluated", 0) + 1
                    uncaptured[outcome.tool] = uncaptured.get(outcome.tool, 0) + 1
                    for cid in plans.get(outcome.tool, []):
                        summaries[cid].not_evaluated += 1
                    continue
                if receipt is None:
                    continue
                tool.coverage[receipt.coverage] = tool.coverage.get(receipt.coverage, 0) + 1
                tool.violations += len(receipt.violations)
                skipped = {u.contract_id for u in receipt.not_evaluated}
                for cid in plans.get(outcome.tool, []):
                    summary = summaries[cid]
                    if cid in skipped:
                        summary.not_evaluated += 1
                    else:
                        summary.checked += 1
                for v in receipt.violations:
                    broken = run_summary.call_violations
                    broken[v.contract_id] = broken.get(v.contract_id, 0) + 1
                    if len(run_summary.call_examples) < 3:
                        run_summary.call_examples.append(
                            f"{outcome.call_id} {outcome.tool}: {v.path} expected {v.expected}, "
                            f"got {v.observed}"[:200]
                        )
                    _count(summaries, v.contract_id, f"{outcome.run_id}/{outcome.call_id}: "
                           f"{v.path} expected {v.expected}, got {v.observed}")  # fmt: skip
            for v in replayed.verdict.violations if replayed.verdict else ():
                if v.kind == "expected_tools":  # the only run-level kind no receipt reports
                    _count(summaries, v.contract_id, f"{replayed.run_id}: {v.tool} called")
    report.notices = [*list(monitor.notices), *_unchecked(uncaptured, summaries, plans)]
    report.calls = sum(t.calls for t in tools.values())
    report.tools = sorted(tools.values(), key=lambda t: t.tool)
    report.contracts = sorted(summaries.values(), key=lambda s: (s.tool, s.kind, s.path))
    report.violations = sum(s.violated for s in report.contracts)
    report.incomplete_runs = sum(1 for r in report.runs if r.verdict != "complete")
    if cases is not None:
        report.labels = {label: sum(r.label == label for r in report.runs) for label in LABELS}
    if grouped is not None or marked:
        report.trials = judge_trials(grouped or [], plans, report.contracts, strict=strict,
                                     marked=marked, measured=grouped is not None)  # fmt: skip
    return report


def _unchecked(
    uncaptured: dict[str, int], summaries: dict[str, ContractSummary], plans: dict[str, list[str]]
) -> list[str]:
    """What the replay could not judge, in words: calls whose content was not recorded,
    and a check in which no contract was checked on any call (a pass that proves nothing)."""
    said = []
    if uncaptured:
        calls = sum(uncaptured.values())
        shown = ", ".join(f"{t} ({n})" for t, n in sorted(uncaptured.items())[:5])
        said.append(
            f"{calls} calls were not evaluated: the traces hold no arguments or no result for "
            f"them (content capture off?): {shown}"
        )
    if summaries and not uncaptured and not any(s.checked for s in summaries.values()):
        said.append(
            "no contract was checked on any call: the traces hold no call of the tools the "
            f"contracts are about ({', '.join(sorted(plans)[:5]) or 'none'})"
        )
    return said


def _nothing_enforced(contracts: str | Path, proposed: int) -> str:
    held = f" ({proposed} proposed)" if proposed else ""
    return (
        f"{contracts}: no accepted contract to enforce{held}; accept some with "
        "`tracemine review accept`, or enforce the proposed ones with --include-proposed"
    )


def noise_marks(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Contract id → evidence, for the contracts a parsed contract file (one the monitor
    accepted) says were noisy when mined: ``flipped_tasks`` in the evidence."""
    marks: dict[str, dict[str, Any]] = {}
    for item in document["contracts"]:
        evidence = item.get("evidence") if isinstance(item, dict) else None
        if isinstance(evidence, dict) and evidence.get("flipped_tasks"):
            marks[str(item.get("id"))] = evidence
    return marks


def _count(summaries: dict[str, ContractSummary], contract_id: str, example: str) -> None:
    summary = summaries.get(contract_id)
    if summary is not None:
        summary.violated += 1
        if len(summary.examples) < 3:
            summary.examples.append(example[:200])


def _run_summary(replayed: RunReplay, run: dict[str, Any], cases: Any) -> RunSummary:
    verdict = replayed.verdict
    assert verdict is not None
    summary = RunSummary(
        run_id=replayed.run_id, task_id=run.get("task_id"), calls=verdict.calls,
        verdict=verdict.verdict, gaps=[g.message for g in verdict.gaps],
        errors=[g.message for g in verdict.errors],
        violations=[v.to_dict() for v in verdict.violations],
    )  # fmt: skip
    if cases is not None:
        case = cases.get(replayed.run_id) or cases.get(str(run.get("task_id")))
        summary.label, summary.label_detail = label_run(replayed, run, case, verdict.ok)
    return summary


def load_oracle(path: str | Path) -> dict[str, dict[str, Any]]:
    """Read an oracle file: ``{"cases": {RUN_OR_TASK_ID: {"expected_calls": [{"tool",
    "arguments"}], "accepted_claims": [...]}}}`` (or a list of cases with ``run_id`` or
    ``task_id``). Arguments given for an expected call must appear in the actual call."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read oracle file: {exc}") from None
    cases = data.get("cases", data) if isinstance(data, dict) else data
    if isinstance(cases, list):
        cases = {str(c.get("run_id") or c.get("task_id")): c for c in cases if isinstance(c, dict)}
    if not isinstance(cases, dict) or not all(isinstance(c, dict) for c in cases.values()):
        raise InputError(f"{path}: oracle must map run or task ids to cases (objects)")
    return cases


def label_run(
    replayed: RunReplay, run: dict[str, Any], case: dict[str, Any] | None, gate_passed: bool
) -> tuple[str | None, str]:
    """One of :data:`LABELS` and why, or ``(None, reason)`` when the oracle has no case."""
    if case is None:
        return None, "no oracle case for this run or task"
    answered = [c for c in replayed.calls if c.receipt is not None and c.status in ("ok", None)]
    missing = []
    for want in case.get("expected_calls") or []:
        args = want.get("arguments") or {}
        if not any(c.tool == want.get("tool") and _contains(c.arguments, args)
                   for c in answered):  # fmt: skip
            missing.append(str(want.get("tool")))
    if not gate_passed:
        detail = "expected calls missing: " + ", ".join(missing) if missing else (
            "the oracle's expected calls were all made (a false alarm?)")  # fmt: skip
        return "safe-incomplete", detail
    if missing:
        return "unsafe-complete", "gate passed without: " + ", ".join(missing)
    accepted = [str(a) for a in case.get("accepted_claims") or []]
    claim = next((run.get("metadata", {}).get(k) for k in _CLAIM_KEYS
                  if isinstance(run.get("metadata", {}).get(k), str)), None)  # fmt: skip
    if not accepted or (claim and any(_norm(a) in _norm(claim) for a in accepted)):
        return "complete-correct", ""
    return "complete-wrong", f"final claim {claim!r:.80} is not among the accepted ones"


def _contains(actual: Any, wanted: dict[str, Any]) -> bool:
    # JSON equality: compare serialised forms so that True and 1 stay apart
    def text(value: Any) -> str:
        return json.dumps(value, sort_keys=True, default=str)

    return isinstance(actual, dict) and all(
        k in actual and text(actual[k]) == text(v) for k, v in wanted.items()
    )


def _norm(text: str) -> str:
    return " ".join(text.lower().split())
