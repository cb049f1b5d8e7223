"""Verdicts across the trials of one task: which runs are nominal, what each run said of
each contract it exercised, and how those verdicts differ between trials of a task.

Both sides of noise use it: mining marks a contract noisy when its held-out verdicts flip
(:mod:`tracemine.mine.evidence.noise`), and ``check --trials`` reports the contracts whose verdicts
flip on the trials checked (:mod:`tracemine.gate.trials`). Standard library only, like the
rest of the monitor: it reads what :func:`~tracemine.monitor.replay` returns.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracemine.monitor._replay import RunReplay

_FAILED_OUTCOMES = frozenset(
    {"fail", "failed", "failure", "false", "0", "error", "incorrect", "wrong"}
)


def is_nominal(run: Mapping[str, Any]) -> bool:
    """False when the run's reward or outcome says it failed."""
    reward = run.get("reward")
    if isinstance(reward, int | float) and reward <= 0:
        return False
    outcome = run.get("run_outcome")
    return not (isinstance(outcome, str) and outcome.strip().lower() in _FAILED_OUTCOMES)


def verdicts(replayed: RunReplay, plans: Mapping[str, Sequence[str]]) -> dict[str, bool]:
    """Contract id → violated (True) or held (False), for the contracts the run exercised."""
    out: dict[str, bool] = {}
    for outcome in replayed.calls:
        receipt = outcome.receipt
        if receipt is None:
            continue
        skipped = {u.contract_id for u in receipt.not_evaluated}
        for cid in plans.get(outcome.tool, ()):
            if cid not in skipped:
                out.setdefault(cid, False)
        for v in receipt.violations:
            out[v.contract_id] = True
    for v in replayed.verdict.violations if replayed.verdict else ():
        out[v.contract_id] = True
    return out


@dataclass
class Flips:
    """One contract's verdicts across the trials of each task: tasks with two or more
    trials exercising it, tasks whose trials disagree, pairs of trials of one task and
    pairs that differ, runs violated and held, and a few examples."""

    tasks: int = 0
    flipped: int = 0
    pairs: int = 0
    differing: int = 0
    violated_runs: int = 0
    held_runs: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Pairs of trials of one task that disagree, over all such pairs."""
        return self.differing / self.pairs if self.pairs else 0.0


def flips(grouped: Mapping[str, Sequence[tuple[str, Mapping[str, bool]]]]) -> dict[str, Flips]:
    """Per contract id, how its verdicts differ between trials: ``grouped`` maps a task to
    its runs' (run id, contract id → violated) pairs. A task counts for a contract when
    two or more of its trials exercised it."""
    tallies: dict[str, Flips] = defaultdict(Flips)
    for task, trials in sorted(grouped.items()):
        contracts = {cid for _, seen in trials for cid in seen}
        for cid in sorted(contracts):
            broke = [rid for rid, seen in trials if seen.get(cid) is True]
            held = [rid for rid, seen in trials if seen.get(cid) is False]
            n = len(broke) + len(held)
            if n < 2:
                continue
            tally = tallies[cid]
            tally.tasks += 1
            tally.pairs += n * (n - 1) // 2
            tally.differing += len(broke) * len(held)
            tally.violated_runs += len(broke)
            tally.held_runs += len(held)
            if broke and held:
                tally.flipped += 1
                if len(tally.examples) < 3:
                    tally.examples.append(f"task {task}: violated in {', '.join(broke[:3])}; "
                                          f"held in {', '.join(held[:3])}")  # fmt: skip
    return dict(tallies)
