"""Cross-fitting by task: propose on K-1 folds of tasks, count on the held-out fold.

Every context runs the same templates: ``all`` proposes the contracts that would be
exported (with parameters fitted on every task), ``train:K`` the ones tested on
``test:K``. A candidate is the set of proposals sharing one stable contract id, so a range
whose bounds differ per fold is still one candidate with K held-out tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
from scipy.stats import beta

from tracemine.mine.conditional import Conditional
from tracemine.mine.context import MineContext
from tracemine.mine.measure import Measure, count_fitted, measure
from tracemine.mine.profile import Survey
from tracemine.mine.relations import Relations
from tracemine.mine.templates import propose
from tracemine.model.contract import Contract


@dataclass
class Shared:
    """What every context of one mine shares: relation pairs and conditional targets."""

    relations: Relations | None = None
    conditional: Conditional | None = None


@dataclass
class Candidate:
    """One contract id across contexts: the every-task proposal and the fold tests."""

    final: Contract | None = None
    proposals: dict[int, Contract] = field(default_factory=dict)
    heldout: dict[int, Measure] = field(default_factory=dict)

    @property
    def heldout_calls(self) -> int:
        return sum(m.checked for m in self.heldout.values())

    @property
    def heldout_violations(self) -> int:
        return sum(m.violations for m in self.heldout.values())

    @property
    def contract(self) -> Contract:
        found = self.final or next(iter(self.proposals.values()))
        return found


def upper_bound(violations: int, checked: int, confidence: float = 0.95) -> float:
    """One-sided Clopper–Pearson upper bound on a violation rate; 1.0 without evidence."""
    if checked <= 0 or violations >= checked:
        return 1.0
    return float(beta.ppf(confidence, violations + 1, checked - violations))


def crossfit(
    con: duckdb.DuckDBPyConnection, contexts: dict[str, MineContext], survey: Survey
) -> dict[str, Candidate]:
    """Propose in ``all`` and every ``train:K`` context; count fold proposals on their
    held-out context (fitted kinds in one SQL pass over all folds)."""
    candidates: dict[str, Candidate] = {}
    for name in sorted(contexts):
        if name != "all" and not name.startswith("train:"):
            continue
        for contract in propose(contexts[name]):
            entry = candidates.setdefault(contract.id, Candidate())
            if name == "all":
                entry.final = contract
            else:
                entry.proposals[int(name.partition(":")[2])] = contract
    fitted: list[tuple[int, int, Contract]] = []
    owners: list[tuple[str, int]] = []
    for cid in sorted(candidates):
        entry = candidates[cid]
        for fold, contract in sorted(entry.proposals.items()):
            found = measure(contract, contexts[f"test:{fold}"])
            if found is None:
                fitted.append((len(fitted), fold, contract))
                owners.append((cid, fold))
            else:
                entry.heldout[fold] = found
    for item, found in count_fitted(con, survey, fitted).items():
        cid, fold = owners[item]
        candidates[cid].heldout[fold] = found
    return candidates
