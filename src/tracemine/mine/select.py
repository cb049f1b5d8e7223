"""Selection: which candidates survive cross-fitting, and which are implied by others.

A candidate is kept when every task proposes it (``all``), enough folds proposed it, its
support counts enough distinct tasks, and the upper confidence bound on its held-out
violation rate is under the target false-alarm rate. A kept contract that a stronger kept
contract implies (``positive`` ⇒ ``non_negative``, ``non_empty`` ⇒ ``present`` …) stays
in the file with ``implied_by`` naming the stronger one, for review to fold away.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tracemine.mine.crossfit import Candidate, upper_bound
from tracemine.mine.describe import describe, sort_key
from tracemine.mine.formats import FORMAT_NAMES
from tracemine.model.contract import Contract, Counterexample, Evidence, Kind

CONFIDENCE = 0.95
MAX_COUNTEREXAMPLES = 3


@dataclass
class Settings:
    folds: int
    target_fa: float
    min_tasks: int
    min_folds: int
    crossfit: bool


def select(
    candidates: dict[str, Candidate],
    settings: Settings,
    calls: Callable[[list[int]], dict[int, dict]],
) -> tuple[list[Contract], dict[str, dict[str, int]]]:
    """Kept contracts (with evidence and descriptions) and, per tool, how many
    candidates were kept and dropped. ``calls`` resolves call keys of counterexamples."""
    kept: list[Contract] = []
    summary: dict[str, dict[str, int]] = {}
    keys = [k for c in candidates.values() for m in c.heldout.values() for k, _ in m.examples]
    known = calls(sorted(set(keys)))
    for cid in sorted(candidates):
        entry = candidates[cid]
        contract = entry.final
        tool = entry.contract.tool
        counts = summary.setdefault(tool, {"candidates": 0, "kept": 0, "dropped": 0})
        counts["candidates"] += 1
        evidence = build_evidence(
            entry,
            settings,
            lambda key, shown: (
                Counterexample(**known[key], observed=shown) if key in known else None
            ),
        )
        if contract is None or not _keeps(evidence, settings):
            counts["dropped"] += 1
            continue
        counts["kept"] += 1
        kept.append(contract.model_copy(update={"evidence": evidence,
                                                "description": describe(contract)}))  # fmt: skip
    return sorted(mark_implied(kept), key=sort_key), dict(sorted(summary.items()))


def _keeps(evidence: Evidence, settings: Settings) -> bool:
    if evidence.tasks < settings.min_tasks:
        return False
    if not settings.crossfit:
        return True
    return (
        evidence.folds_proposed >= settings.min_folds
        and evidence.fa_upper is not None
        and evidence.fa_upper <= settings.target_fa
    )


def build_evidence(
    entry: Candidate,
    settings: Settings,
    example: Callable[[int, str], Counterexample | None],
) -> Evidence:
    """The evidence of a selected candidate; ``example(key, shown)`` turns a held-out
    violation into a counterexample (None: the key is unknown). Call-level and run-level
    selection share it, so both report support and bounds the same way."""
    support = entry.final.evidence if entry.final and entry.final.evidence else Evidence()
    if not settings.crossfit:
        return Evidence(calls=support.calls, tasks=support.tasks, confidence=CONFIDENCE)
    examples: list[Counterexample] = []
    for fold in sorted(entry.heldout):
        for key, shown in entry.heldout[fold].examples:
            if len(examples) >= MAX_COUNTEREXAMPLES:
                break
            found = example(key, shown)
            if found is not None:
                examples.append(found)
    return Evidence(
        calls=support.calls,
        tasks=support.tasks,
        folds=settings.folds,
        folds_proposed=len(entry.proposals),
        heldout_calls=entry.heldout_calls,
        heldout_violations=entry.heldout_violations,
        fa_upper=round(upper_bound(entry.heldout_violations, entry.heldout_calls, CONFIDENCE), 6),
        confidence=CONFIDENCE,
        counterexamples=examples,
    )


# -- implied contracts -------------------------------------------------------------------

_STRONGER: dict[Kind, tuple[Kind, ...]] = {
    # weaker kind: stronger kinds on the same path that may imply it, strongest first.
    # Nothing implies `present`: every other unary kind holds vacuously where the path is
    # absent, so hiding `present` behind one would let an omitted field through.
    Kind.NON_NEGATIVE: (Kind.RANGE, Kind.POSITIVE),
    Kind.POSITIVE: (Kind.RANGE,),
    Kind.NOT_NULL: (Kind.CONST, Kind.ONE_OF, Kind.PATTERN, Kind.FORMAT, Kind.RANGE, Kind.TYPE),
    Kind.TYPE: (Kind.CONST, Kind.ONE_OF, Kind.PATTERN, Kind.FORMAT, Kind.RANGE),
    Kind.ONE_OF: (Kind.CONST,),
    Kind.FORMAT: (Kind.CONST, Kind.ONE_OF),
    Kind.NON_EMPTY: (Kind.LENGTH, Kind.PATTERN),
    Kind.LE: (Kind.LT,),
}


def implies(strong: Contract, weak: Contract) -> bool:
    """Whether ``strong`` holding means ``weak`` holds (same tool, path and condition)."""
    if (strong.tool, strong.side, strong.when) != (weak.tool, weak.side, weak.when):
        return False
    if strong.kind == Kind.LT and weak.kind == Kind.LE:
        return strong.paths == weak.paths
    if strong.paths != weak.paths or strong.kind not in _STRONGER.get(weak.kind, ()):
        return False
    params = strong.params
    if strong.kind == Kind.RANGE:
        low = params.get("min")
        if low is None:
            return weak.kind in (Kind.TYPE, Kind.NOT_NULL)
        if weak.kind == Kind.NON_NEGATIVE:
            return low >= 0
        if weak.kind == Kind.POSITIVE:
            return low > 0
        return weak.kind in (Kind.TYPE, Kind.NOT_NULL) and weak.params.get("type") != "integer"
    if strong.kind == Kind.LENGTH:
        return (params.get("min") or 0) >= 1
    if weak.kind == Kind.TYPE:
        if strong.kind in (Kind.PATTERN, Kind.FORMAT):
            return weak.params.get("type") == "string"
        return True
    if weak.kind == Kind.FORMAT and strong.kind in (Kind.CONST, Kind.ONE_OF):
        return weak.params.get("format") in FORMAT_NAMES and _all_formatted(strong, weak)
    return True


def _all_formatted(strong: Contract, weak: Contract) -> bool:
    from tracemine.mine.formats import CURRENCIES

    values = strong.params.get("values", [strong.params.get("value")])
    if weak.params.get("format") == "currency":
        return all(v in CURRENCIES for v in values)
    return False


def mark_implied(contracts: list[Contract]) -> list[Contract]:
    """Set ``implied_by`` on each contract a stronger kept contract implies (the
    strongest, by the order of ``_STRONGER``)."""
    by_scope: dict[tuple, list[Contract]] = {}
    for contract in contracts:
        by_scope.setdefault((contract.tool, contract.side, contract.paths[0]), []).append(contract)
    out = []
    for contract in contracts:
        order = (*_STRONGER.get(contract.kind, ()), Kind.LT)
        stronger = [
            other for other in by_scope[(contract.tool, contract.side, contract.paths[0])]
            if other is not contract and other.kind in order and implies(other, contract)
        ]  # fmt: skip
        stronger.sort(key=lambda other: (order.index(other.kind), other.id))
        implied_by = stronger[0].id if stronger else None
        out.append(contract.model_copy(update={"implied_by": implied_by}))
    return out
