"""Noisy contracts: a verdict that differs between nominal trials of the same task.

An agent run is a sample: the same task run twice may call tools with other arguments or
get other results, and a contract that holds on one trial and breaks on the next says
more about the run-to-run noise than about a regression. ``check(..., trials=True)``
groups the replayed runs by task and, for every contract, compares its verdict across the
nominal trials of each task that exercised it:

- a run *violated* the contract when any of its calls (or the run as a whole) did;
  it *held* when the contract was evaluated on the run and never violated;
- the *flip rate* is the share of pairs of such trials of one task whose verdicts differ,
  over every task with two or more;
- a contract is *noisy* when some task has trials of both verdicts.

A run is nominal unless its outcome says it failed (reward 0 or below, or an outcome
such as ``fail``); runs without a task id cannot be grouped and are counted apart.
Noisy contracts stay out of the failing verdict unless ``strict``.

>>> report = check(["trials.jsonl"], "contracts.json", trials=True)  # doctest: +SKIP
>>> [(n.contract_id, n.flip_rate) for n in report.trials.noisy]  # doctest: +SKIP
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from pydantic import BaseModel, Field

from tracemine.monitor import RunReplay
from tracemine.monitor.trials import flips, is_nominal, verdicts


class NoisyContract(BaseModel):
    tool: str
    contract_id: str
    kind: str
    path: str
    tasks: int = Field(description="tasks with two or more nominal trials exercising it")
    flipped_tasks: int = Field(description="tasks whose trials disagree on it")
    flip_rate: float = Field(description="trial pairs of one task that disagree ÷ all pairs")
    violated_runs: int
    held_runs: int
    examples: list[str] = Field(default_factory=list)
    source: str = Field(
        "trials",
        description="trials: measured on the trials checked; mine: marked noisy in the "
        "contract file when it was mined (its counts are mining's), not seen flipping here",
    )


class TrialsReport(BaseModel):
    """What ``check --trials`` found about verdicts that change between trials."""

    tasks: int = Field(0, description="tasks with two or more nominal trials")
    runs_grouped: int = 0
    runs_not_nominal: int = 0
    runs_without_task: int = 0
    strict: bool = False
    measured: bool = Field(True, description="whether trials were grouped by task and compared")
    noisy: list[NoisyContract] = Field(default_factory=list)
    gating_violations: int = Field(
        0, description="violations that fail the check: all with strict, else the steady ones"
    )


class _Summary(Protocol):
    tool: str
    contract_id: str
    kind: str
    path: str
    violated: int


def judge_trials(
    runs: Sequence[tuple[RunReplay, Mapping[str, Any]]],
    plans: Mapping[str, Sequence[str]],
    summaries: Sequence[_Summary],
    *,
    strict: bool = False,
    marked: Mapping[str, Mapping[str, Any]] | None = None,
    measured: bool = True,
) -> TrialsReport:
    """Group replayed runs (with their run records) by task and find the noisy contracts;
    ``plans`` maps a tool to its contract ids, ``summaries`` are check's per contract.
    ``marked`` (contract id → evidence) are the contracts mining marked noisy: they are
    noisy here too, with mining's counts, unless these trials measured them."""
    report = TrialsReport(strict=strict, measured=measured)
    by_task: dict[str, list[tuple[str, dict[str, bool]]]] = defaultdict(list)
    for replayed, run in runs:
        if not is_nominal(run):
            report.runs_not_nominal += 1
        elif run.get("task_id") is None:
            report.runs_without_task += 1
        else:
            by_task[str(run["task_id"])].append((replayed.run_id, verdicts(replayed, plans)))
    grouped = {task: trials for task, trials in by_task.items() if len(trials) >= 2}
    report.tasks = len(grouped)
    report.runs_grouped = sum(len(trials) for trials in grouped.values())
    described = {s.contract_id: s for s in summaries}
    for cid, tally in flips(grouped).items():
        summary = described.get(cid)
        if not tally.flipped or summary is None:
            continue
        report.noisy.append(
            NoisyContract(
                tool=summary.tool,
                contract_id=cid,
                kind=summary.kind,
                path=summary.path,
                tasks=tally.tasks,
                flipped_tasks=tally.flipped,
                flip_rate=round(tally.rate, 4),
                violated_runs=tally.violated_runs,
                held_runs=tally.held_runs,
                examples=tally.examples,
            )
        )
    seen = {n.contract_id for n in report.noisy}
    for cid, evidence in (marked or {}).items():
        summary = described.get(cid)
        if cid in seen or summary is None:
            continue
        report.noisy.append(
            NoisyContract(
                tool=summary.tool, contract_id=cid, kind=summary.kind, path=summary.path,
                tasks=int(evidence.get("trial_tasks") or 0),
                flipped_tasks=int(evidence.get("flipped_tasks") or 0),
                flip_rate=float(evidence.get("flip_rate") or 0.0),
                violated_runs=0, held_runs=0, source="mine",
            )
        )  # fmt: skip
    report.noisy.sort(key=lambda n: (-n.flip_rate, n.tool, n.contract_id))
    noisy = {n.contract_id for n in report.noisy}
    report.gating_violations = sum(
        s.violated for s in summaries if strict or s.contract_id not in noisy
    )
    return report


def noisy_notes(trials: TrialsReport | None) -> dict[str, str]:
    """Contract id → why it does not fail the check, for the noisy contracts kept out of
    the verdict (none when there are no trials or they are strict)."""
    if trials is None or trials.strict:
        return {}
    return {
        n.contract_id: f"noisy between trials{' when mined' if n.source == 'mine' else ''}: "
        f"verdict flips in {n.flipped_tasks} of {n.tasks} tasks (flip rate "
        f"{n.flip_rate:.0%}); kept out of the verdict"
        for n in trials.noisy
    }
