"""Cross-fitting by task: propose on K-1 folds of tasks, count on the held-out fold.

Every context runs the same templates: ``all`` proposes the contracts that would be
exported (with parameters fitted on every task), ``train:K`` the ones tested on
``test:K``. A candidate is the set of proposals sharing one stable contract id, so a range
whose bounds differ per fold is still one candidate with K held-out tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from tracemine.mine.evidence.kept_counts import kept_counts
from tracemine.mine.evidence.pooling import effective
from tracemine.mine.profile.aggregates import Survey
from tracemine.mine.profile.shards import Shards
from tracemine.mine.propose.conditional import Conditional
from tracemine.mine.propose.context import MineContext
from tracemine.mine.propose.measure import Measure, add_measures, count_fitted, measure, parent_path
from tracemine.mine.propose.relations import Relations
from tracemine.mine.propose.templates import propose
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
    units: dict[int, tuple[float, float]] = field(default_factory=dict)
    """Per held-out fold, (checked, violations) in tasks (:func:`pooling.effective`)."""
    tool_calls: dict[int, int] = field(default_factory=dict)
    """Per held-out fold, the tool's calls there: how much of the tool a contract checks."""
    claim: str | None = None
    """The value type, when a structural kind makes a value claim (:func:`schema.value_claim`)."""
    members: tuple[str, ...] = ()
    """A schema's members: the ids of the structural candidates it covers."""
    fallback: str | None = None
    """A full schema's shape (:mod:`tracemine.mine.evidence.schema`): the id of the weaker
    schema selection offers where this one is left out."""

    @property
    def heldout_tasks(self) -> float:
        return sum(n for n, _ in self.units.values())

    @property
    def heldout_task_violations(self) -> float:
        return sum(k for _, k in self.units.values())

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


@lru_cache(maxsize=1 << 16)  # one per candidate, most of them on a few (0, n)
def upper_bound(violations: float, checked: float, confidence: float = 0.95) -> float:
    """One-sided Clopper–Pearson upper bound on a violation rate; 1.0 without evidence.
    Counts may be fractional (tasks counted from scaled calls)."""
    if checked <= 0 or violations >= checked:
        return 1.0
    from scipy.stats import beta  # scipy.stats costs a second: not on every CLI start

    return float(beta.ppf(confidence, violations + 1, checked - violations))


def lower_bound(violations: float, checked: float, confidence: float = 0.95) -> float:
    """One-sided Clopper–Pearson lower bound on a violation rate; 0.0 without a violation.
    Counts may be fractional, as in :func:`upper_bound`."""
    if checked <= 0 or violations <= 0:
        return 0.0
    if violations >= checked:
        return float((1.0 - confidence) ** (1.0 / checked))
    from scipy.stats import beta

    return float(beta.ppf(1.0 - confidence, violations, checked - violations + 1))


def crossfit(
    shards: Shards, contexts: dict[str, MineContext], survey: Survey,
    assignment: Mapping[str, int] | None = None,
) -> dict[str, Candidate]:  # fmt: skip
    """Propose in ``all`` and every ``train:K`` context; count fold proposals on their
    held-out context (fitted kinds in one SQL pass over all folds in each shard). With
    one store and its fold ``assignment``, the fitted kinds' counts are kept in the store
    and reused by the next mine where they still hold (:mod:`.kept_counts`)."""
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
    if not fitted:
        counted: list[dict[int, Measure]] = []
    elif shards.client_is_store and assignment is not None:
        counted = shards.map(kept_counts, survey, fitted, assignment, label="held-out counts")
    else:
        counted = shards.map(count_fitted, survey, fitted, label="held-out counts")
    for item, found in add_measures(counted).items():
        cid, fold = owners[item]
        candidates[cid].heldout[fold] = found
    busiest: dict[tuple[str, str], tuple[int, int]] = {}
    for entry in candidates.values():
        for fold, found in entry.heldout.items():
            ctx = contexts[f"test:{fold}"]
            tasks, calls = _per_task(entry.contract, ctx, busiest)
            entry.units[fold] = effective(found.checked, found.violations, tasks, calls)
            entry.tool_calls[fold] = ctx.tool_calls.get(entry.contract.tool, 0)
    return candidates


def _per_task(
    contract: Contract, ctx: MineContext, busiest: dict[tuple[str, str], tuple[int, int]]
) -> tuple[int, int]:
    """(tasks, calls) where ``contract`` is checked in ``ctx``: its path's profile, else
    its parent's (``present``), else the tool's busiest path (memoized in ``busiest``)."""
    side = contract.side.value
    path = contract.paths[0] if contract.paths else ""
    for where in (path, parent_path(path)):
        found = ctx.paths.get((contract.tool, side, where or ""))
        if found is not None and found["calls"]:
            return found.tasks, int(found["calls"])
    key = (ctx.name, contract.tool)
    if key not in busiest:
        best = max(ctx.profiles(contract.tool), key=lambda p: p["calls"], default=None)
        busiest[key] = (best.tasks, int(best["calls"])) if best is not None else (0, 0)
    return busiest[key]
