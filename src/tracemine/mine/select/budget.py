"""Selection: which cross-fitted candidates a tool keeps, within its false-alarm budget.

The user's ``target_fa`` is a promise per nominal call: at most that share of a tool's
calls raise any alarm from the tool's whole kept set. Selection keeps that promise in
three steps.

1. **Eligible**: proposed on every task, supported by ``min_tasks`` distinct tasks and
   proposed in ``min_folds`` folds (a contract that only some folds propose is fitted to
   them).
2. **Priced**: each eligible candidate's false-alarm rate is its posterior mean under its
   family's pooled prior (:mod:`tracemine.mine.evidence.pooling`, held-out counts in
   tasks), never below what its own held-out record shows (the one-sided 95 % lower
   bound of its violations over its held-out tasks), times the share of the tool's calls
   it checks. Summing these over a set bounds the expected share of calls alarmed (alarms
   of one call overlap; they never add more than the sum).
3. **Bought**: per tool, greedily, the candidate with the most estimated detection not yet
   caught (:mod:`tracemine.mine.evidence.detect`) per unit of price, while the sum stays within
   ``target_fa``. A candidate that catches only what the chosen ones catch is dropped as
   redundant; one the sampled faults never reached is added last, cheapest first, while
   the budget lasts.

Per tool and side, the structural candidates held on every task are one candidate, the
tool's schema (:mod:`tracemine.mine.evidence.schema`), priced from the pooled schema records and
bought like the others, by what it catches per unit of price; it is eligible below
``min_tasks`` and in fewer folds, since its price comes from the pool. The members
it covers are not priced or bought on their own while it is bought: they are kept with
``folded_into`` naming it. A schema over the budget is not kept; its shape (the types,
and only the keys naming the record asked for: :mod:`tracemine.mine.evidence.schema`)
and the members the shape leaves out are then candidates, and if the shape is left out
too, its members, each priced by its kind's pool, bought with what is left.

A kept contract another kept contract implies (``positive`` ⇒ ``non_negative`` …) stays
in the file with ``implied_by`` naming the stronger one — only where the stronger one
rejects every value the weaker one rejects (:mod:`tracemine.mine.select.implied`), so a range
never hides the ``type`` that catches a string or a null.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tracemine.mine.evidence.crossfit import Candidate, lower_bound, upper_bound
from tracemine.mine.evidence.detect import ToolFaults
from tracemine.mine.evidence.pooling import Prior, family_of, fit_families
from tracemine.mine.select.describe import describe, sort_key
from tracemine.mine.select.implied import mark_implied
from tracemine.model.contract import Contract, Counterexample, Evidence, Kind

CONFIDENCE = 0.95
MAX_COUNTEREXAMPLES = 3
STRUCTURAL = frozenset({Kind.PRESENT, Kind.NOT_NULL, Kind.TYPE, Kind.NON_EMPTY, Kind.UNIQUE})


@dataclass
class Settings:
    folds: int
    target_fa: float
    min_tasks: int
    min_folds: int
    crossfit: bool
    budget: bool = True
    max_per_tool: int | None = None
    """At most this many contracts a tool keeps besides its schemas (None: no cap)."""


@dataclass
class Priced:
    """One eligible candidate as selection sees it."""

    cid: str
    contract: Contract
    evidence: Evidence
    price: float
    catches: set[int] = field(default_factory=set)


@dataclass
class Selection:
    kept: list[Contract]
    summary: dict[str, dict[str, int]]
    tools: dict[str, dict[str, Any]]
    families: dict[str, dict[str, float]]


def select(
    candidates: dict[str, Candidate],
    settings: Settings,
    calls: Callable[[list[int]], dict[int, dict]],
    tool_sizes: dict[str, tuple[int, int]],
    faults: dict[str, ToolFaults],
) -> Selection:
    """Kept contracts (with evidence and descriptions), per tool the candidates kept and
    dropped, what was predicted and why a tool got nothing, and the fitted families.
    ``calls`` resolves call keys of counterexamples; ``tool_sizes`` is (calls, tasks)
    per tool; ``faults`` what :func:`tracemine.mine.evidence.detect.estimate` found."""
    keys = [k for c in candidates.values() for m in c.heldout.values() for _, k, _ in m.examples]
    known = calls(sorted(set(keys)))

    def example(key: int, shown: str) -> Counterexample | None:
        return Counterexample(**known[key], observed=shown) if key in known else None

    priors = pool(candidates)
    summary: dict[str, dict[str, int]] = {}
    eligible: dict[str, list[Priced]] = {}
    folded = {member for entry in candidates.values() for member in entry.members}
    members: dict[str, Contract] = {}
    alone: dict[str, Priced] = {}  # a member as its own candidate, if its schema is too dear
    shapes: dict[str, Priced] = {}  # a schema's shape, offered only if the schema is left out
    weak = {entry.fallback for entry in candidates.values() if entry.fallback}
    for cid in sorted(candidates):
        entry = candidates[cid]
        tool = entry.contract.tool
        counts = summary.setdefault(tool, {"candidates": 0, "kept": 0, "dropped": 0})
        counts["candidates"] += 1
        evidence = build_evidence(entry, settings, example, priors)
        if cid in folded:
            if entry.final is None:
                continue
            if _eligible(evidence, settings):
                alone[cid] = Priced(cid, entry.final, evidence, evidence.fa_share or 0.0)
            elif settings.crossfit and evidence.tasks < settings.min_tasks:
                # below --min-tasks a member is offered alone as its schema is: priced
                # from its kind's pool, since its own few tasks cannot price it
                pooled = build_evidence(entry, settings, example, priors, pooled=True)
                if pooled.fa_share is not None:
                    alone[cid] = Priced(cid, entry.final, pooled, pooled.fa_share)
            # kept under its schema, spending nothing itself
            share = 0.0 if evidence.fa_share is not None else None
            folded_evidence = evidence.model_copy(update={"fa_share": share})
            members[cid] = entry.final.model_copy(update={"evidence": folded_evidence})
            continue
        if cid in weak:
            if entry.final is not None:
                shapes[cid] = Priced(cid, entry.final, evidence, evidence.fa_share or 0.0)
            continue
        schema = entry.contract.kind == Kind.SCHEMA
        if entry.final is None or not (schema or _eligible(evidence, settings)):
            continue
        priced = Priced(cid, entry.final, evidence, evidence.fa_share or 0.0)
        eligible.setdefault(tool, []).append(priced)
    kept: list[Contract] = []
    tools: dict[str, dict[str, Any]] = {}
    for tool in sorted(set(summary) | set(tool_sizes)):
        found = faults.get(tool, ToolFaults())
        options = eligible.get(tool, [])
        for option in options:
            option.catches = found.catches.get(option.cid, set())
            option.evidence.detection = round(found.detection([option.cid]), 4) \
                if settings.crossfit else None  # fmt: skip
        spend = settings.crossfit and settings.budget
        chosen = buy(options, found, settings.target_fa) if spend else options
        capped: list[Priced] = []
        if spend:
            chosen = _members_alone(chosen, options, candidates, alone, shapes, found,
                                    settings)  # fmt: skip
            chosen, capped = cap(chosen, settings.max_per_tool)
        added = 0
        for option in chosen:
            update = {"evidence": option.evidence, "description": describe(option.contract)}
            kept.append(option.contract.model_copy(update=update))
            for member in candidates[option.cid].members:
                update = {"folded_into": option.cid, "description": describe(members[member])}
                kept.append(members[member].model_copy(update=update))
                added += 1
        counts = summary.setdefault(tool, {"candidates": 0, "kept": 0, "dropped": 0})
        counts["kept"] = len(chosen) + added
        counts["folded"] = added
        counts["dropped"] = counts["candidates"] - counts["kept"]
        size = tool_sizes.get(tool, (0, 0))
        tools[tool] = _tool_line(tool, size, options, chosen, found, settings, priors)
        if added:
            tools[tool]["folded"] = added
        if capped:
            tools[tool]["capped"] = _capped_line(capped, chosen, found, settings)
        if spend:
            left = _schemas_left_out(options, chosen, candidates, shapes, settings, priors)
            if left:
                tools[tool]["schemas_left_out"] = left
    families = {name: {"a": round(p.a, 6), "b": round(p.b, 6), "mean": round(p.mean, 6),
                       "members": p.members} for name, p in priors.items()}  # fmt: skip
    return Selection(
        sorted(mark_implied(kept), key=sort_key), dict(sorted(summary.items())),
        tools, families,
    )  # fmt: skip


def pool(candidates: dict[str, Candidate]) -> dict[str, Prior]:
    """Each family's prior, fitted on the held-out tasks of every candidate a training
    fold proposed — those that then broke on some task too. Only they show how a kind
    fails out of sample: a parameter-free candidate that held on every task has, by
    construction, no held-out violation at all."""
    counts: dict[str, list[tuple[float, float]]] = {}
    for _, entry in sorted(candidates.items()):  # by id: the sums do not follow the input
        if entry.heldout_tasks > 0:
            family = family_of(entry.contract, entry.claim)
            counts.setdefault(family, []).append(
                (entry.heldout_task_violations, entry.heldout_tasks)
            )
    return fit_families(counts)


def _eligible(evidence: Evidence, settings: Settings) -> bool:
    if evidence.tasks < settings.min_tasks:
        return False
    if not settings.crossfit:
        return True
    return evidence.folds_proposed >= settings.min_folds and bool(evidence.heldout_tasks)


def _members_alone(
    chosen: list[Priced],
    options: list[Priced],
    candidates: dict[str, Candidate],
    alone: dict[str, Priced],
    shapes: dict[str, Priced],
    faults: ToolFaults,
    settings: Settings,
) -> list[Priced]:
    """``chosen``, and then, for each schema it left out (dearer than what it adds), its
    shape (the schema without the keys that do not name the record asked for) and the
    members the shape leaves out, as candidates of their own, bought with what the budget
    has left; and for a shape left out too, its members on their own, priced by their
    kinds' pools as before there were schemas."""
    taken = {o.cid for o in chosen}
    left_out = {o.cid for o in options if o.contract.kind == Kind.SCHEMA and o.cid not in taken}
    offered = [shapes[f] for cid in sorted(left_out)
               if (f := candidates[cid].fallback) is not None and f in shapes]  # fmt: skip
    covered = {m for o in offered for m in candidates[o.cid].members}
    more = [alone[m] for cid in sorted(left_out) for m in candidates[cid].members
            if m in alone and m not in covered]  # fmt: skip
    if not offered and not more:
        return chosen

    def again(chosen: list[Priced], extra: list[Priced]) -> list[Priced]:
        taken = {o.cid for o in chosen}
        rest = [o for o in options if o.cid not in taken and o.cid not in left_out]
        return buy(rest + extra, faults, settings.target_fa, chosen)

    chosen = again(chosen, _reached(offered + more, faults))
    taken = {o.cid for o in chosen}
    missed = [alone[m] for o in offered if o.cid not in taken
              for m in candidates[o.cid].members if m in alone]  # fmt: skip
    if not missed:
        return chosen
    return again(chosen, [o for o in more if o.cid not in taken] + _reached(missed, faults))


def _reached(options: list[Priced], faults: ToolFaults) -> list[Priced]:
    """``options`` with what each catches of the sampled faults and its detection."""
    for option in options:
        option.catches = faults.catches.get(option.cid, set())
        option.evidence.detection = round(faults.detection([option.cid]), 4)
    return options


MAX_PER_TOOL = 50
"""The most contracts one tool keeps besides its schemas (a schema and the members folded
into it are not counted): past a few dozen, a tool's set is a profile to read, not contracts to
review. Set from the mined suites, where no budgeted tool keeps more than a dozen; a tool
of thousands of paths buys hundreds of near-free per-path claims."""
CAPPED_SHOWN = 20
"""Ids of dropped contracts named in the provenance (the count is always given)."""


def cap(chosen: list[Priced], limit: int | None) -> tuple[list[Priced], list[Priced]]:
    """``chosen`` (in the order they were bought: most detection per unit of price first,
    then the free ones cheapest first) with at most ``limit`` contracts besides the
    tool's schemas, which are always kept (each is one item however many paths it
    covers); and what was cut."""
    if limit is None:
        return chosen, []
    kept: list[Priced] = []
    cut: list[Priced] = []
    others = 0
    for option in chosen:
        if option.contract.kind == Kind.SCHEMA:
            kept.append(option)
        elif others < limit:
            kept.append(option)
            others += 1
        else:
            cut.append(option)
    return kept, cut


def _capped_line(
    capped: list[Priced], chosen: list[Priced], faults: ToolFaults, settings: Settings
) -> dict[str, Any]:
    """What the cap dropped: how many, the price they would have spent, the detection the
    kept set loses without them, and the first of their ids in the order they were bought."""
    kept = [o.cid for o in chosen]
    lost = faults.detection(kept + [o.cid for o in capped]) - faults.detection(kept)
    return {
        "rule": f"at most {settings.max_per_tool} contracts besides the schemas, in the "
        "order bought (most estimated detection per unit of price first)",
        "dropped": len(capped),
        "predicted_fa": round(sum(o.price for o in capped), 6),
        "detection_lost": round(lost, 4),
        "ids": [o.cid for o in capped[:CAPPED_SHOWN]],
    }


def buy(
    options: list[Priced], faults: ToolFaults, budget: float, first: list[Priced] | None = None
) -> list[Priced]:
    """The greedy purchase: ``first`` in its order, each while ``budget`` lasts; then
    most new detection per unit of price first (lazily re-evaluated: a candidate's gain
    only shrinks as others are bought), then candidates the sampled faults never reached,
    cheapest first, while ``budget`` lasts."""
    floor = budget * 1e-3  # a free contract still ranks by what it catches
    caught: set[int] = set()
    spent = 0.0
    chosen: list[Priced] = []
    for option in first or ():
        if spent + option.price <= budget:
            chosen.append(option)
            spent += option.price
            caught |= option.catches

    def gain(option: Priced) -> float:
        return sum(faults.weights[i] for i in option.catches - caught)

    heap = [(-gain(o) / max(o.price, floor), o.price, o.cid, n)
            for n, o in enumerate(options) if o.catches]  # fmt: skip
    heapq.heapify(heap)
    while heap:
        _, price, cid, n = heapq.heappop(heap)
        option = options[n]
        if spent + price > budget:
            continue
        now = gain(option)
        if now <= 1e-12:
            continue  # redundant: what it catches is caught already
        score = -now / max(price, floor)
        if heap and score > heap[0][0]:
            heapq.heappush(heap, (score, price, cid, n))
            continue
        chosen.append(option)
        spent += price
        caught |= option.catches
    for option in sorted((o for o in options if not o.catches), key=lambda o: (o.price, o.cid)):
        if spent + option.price <= budget:
            chosen.append(option)
            spent += option.price
    return chosen


def build_evidence(
    entry: Candidate,
    settings: Settings,
    example: Callable[[int, str], Counterexample | None],
    priors: dict[str, Prior] | None = None,
    pooled: bool = False,
) -> Evidence:
    """The evidence of a candidate; ``example(key, shown)`` turns a held-out violation
    into a counterexample (None: the key is unknown). Call-level and run-level selection
    share it, so both report support, bounds and posteriors the same way."""
    support = entry.final.evidence if entry.final and entry.final.evidence else Evidence()
    if not settings.crossfit:
        return Evidence(calls=support.calls, tasks=support.tasks,
                        unseen_mass=support.unseen_mass, confidence=CONFIDENCE)  # fmt: skip
    examples: list[Counterexample] = []
    for fold in sorted(entry.heldout):
        for _, key, shown in entry.heldout[fold].examples:
            if len(examples) >= MAX_COUNTEREXAMPLES:
                break
            found = example(key, shown)
            if found is not None:
                examples.append(found)
    n, k = entry.heldout_tasks, entry.heldout_task_violations
    evidence = Evidence(
        calls=support.calls,
        tasks=support.tasks,
        unseen_mass=support.unseen_mass,
        folds=settings.folds,
        folds_proposed=len(entry.proposals),
        heldout_calls=entry.heldout_calls,
        heldout_violations=entry.heldout_violations,
        heldout_tasks=round(n, 3),
        heldout_task_violations=round(k, 3),
        fa_upper=round(upper_bound(k, n, CONFIDENCE), 6),
        confidence=CONFIDENCE,
        counterexamples=examples,
    )
    family = family_of(entry.final, entry.claim) if entry.final is not None else None
    prior = (priors or {}).get(family or "")
    # a schema is priced from its pool even without a held-out record of its own (a tool
    # of two tasks): that is how it reaches tools below --min-tasks
    whole = entry.final is not None and entry.final.kind == Kind.SCHEMA
    if prior is not None and (n > 0 or whole or pooled):
        floor = tail_floor(entry.final, support.tasks, entry.claim)
        # the pool prices a member near its family when the family's spread is not
        # identified (a + b at its upper bound), whatever the member's own record says;
        # a contract that broke on 1 of its 3 held-out tasks is not a 0.4 % contract, so
        # its price is at least what its own record shows at the stated confidence
        mean = max(prior.posterior_mean(k, n), floor, lower_bound(k, n, CONFIDENCE))
        tool_calls = sum(entry.tool_calls.get(f, 0) for f in entry.heldout)
        checks = tool_calls and (n > 0 or not pooled)  # no record of its own: every call
        share = min(entry.heldout_calls / tool_calls, 1.0) if checks else 1.0
        evidence.family = family
        evidence.fa_posterior = round(mean, 6)
        evidence.fa_share = round(mean * share, 6)
    return evidence


TAIL_KINDS = frozenset({
    Kind.RANGE, Kind.LENGTH, Kind.POSITIVE, Kind.UNIQUE, Kind.ONE_OF, Kind.CONST,
    Kind.PATTERN, Kind.LE, Kind.LT, Kind.SHARES_TOKEN, Kind.RATIO,
})  # fmt: skip
"""Kinds a fresh task breaks with a value the mined ones never showed: a new extreme, a
zero, a repeat, a new category, two numbers in the other order, a query whose answer
shares none of its words, a new ratio. (``non_negative`` is not
one: a negative amount is a fault far more often than a new value; and an order between
a list's length and a count, ``len(result.items) <= args.limit``, is the tool's promise,
and so is ``page_full``, that a page holds what the limit and the count allow.)"""
TAIL_WEIGHT = 0.25
"""A tail kind seen to hold on m tasks is priced at least ``TAIL_WEIGHT / (m + 2)``: a
quarter of Laplace's rule of succession. Family pooling alone predicted 0.05% for ranges
and signs that fresh simulated tasks broke at 1-7% after 24-40 mined tasks; at a tenth, a
range on booking totals in several currencies (22 tasks) and a set of four currency codes
(21 tasks) still alarmed on 12-14% of fresh calls of their tools."""


def tail_floor(contract: Contract | None, tasks: int, claim: str | None = None) -> float:
    """The least false-alarm rate a contract of a tail kind, or a value claim of a
    structural kind (``claim``: an empty string or list of matches is a new value, as a
    new extreme is), is priced at."""
    if contract is None:
        return 0.0
    if claim is not None:
        return TAIL_WEIGHT / (tasks + 2)
    if contract.kind not in TAIL_KINDS:
        return 0.0
    if contract.kind in (Kind.LE, Kind.LT) and any(p.startswith("len(") for p in contract.paths):
        return 0.0
    unseen = contract.evidence.unseen_mass if contract.evidence else None
    if unseen:  # a literal set: the Good-Turing chance of a new value is a direct estimate
        return max(TAIL_WEIGHT / (tasks + 2), unseen)
    return TAIL_WEIGHT / (tasks + 2)


def _tool_line(
    tool: str,
    size: tuple[int, int],
    options: list[Priced],
    chosen: list[Priced],
    faults: ToolFaults,
    settings: Settings,
    priors: dict[str, Prior],
) -> dict[str, Any]:
    """What the tool was predicted to cost and catch, and, when it kept nothing, why."""
    calls, tasks = size
    line: dict[str, Any] = {"calls": calls, "tasks": tasks, "eligible": len(options),
                            "kept": len(chosen)}  # fmt: skip
    if settings.crossfit:
        line["predicted_fa"] = round(sum(o.price for o in chosen), 6)
        line["predicted_detection"] = round(faults.detection(o.cid for o in chosen), 4)
        line["faults_sampled"] = len(faults.weights)
    if not chosen:
        line["why"] = why_nothing(tool, size, options, faults, settings, priors)
    return line


def _schemas_left_out(
    options: list[Priced],
    chosen: list[Priced],
    candidates: dict[str, Candidate],
    shapes: dict[str, Priced],
    settings: Settings,
    priors: dict[str, Prior],
) -> list[dict[str, Any]]:
    """Each schema of the tool that the budget left out, its shape too: the side, what it
    was priced at and from which pool, and why it was not bought, so a tool without its
    structure says so."""
    taken = {o.cid for o in chosen}
    out = []
    for option in options:
        if option.contract.kind != Kind.SCHEMA or option.cid in taken:
            continue
        shape = shapes.get(candidates[option.cid].fallback or "")
        if shape is not None and shape.cid in taken:
            continue
        family = option.evidence.family or ""
        prior = priors.get(family)
        line: dict[str, Any] = {"side": option.contract.side.value, "id": option.cid,
                                "price": round(option.price, 6), "family": family}  # fmt: skip
        if prior is not None:
            line["pooled_mean"] = round(prior.mean, 6)
            line["pooled_over"] = prior.members
        tiers = [option] + ([shape] if shape is not None else [])
        if shape is not None:
            line["shape_price"] = round(shape.price, 6)
        if min(t.price for t in tiers) > settings.target_fa:
            line["reason"] = f"priced over --target-fa {settings.target_fa:g}" + (
                ", its shape too" if shape is not None else "")  # fmt: skip
        elif not any(t.catches for t in tiers):
            line["reason"] = "catches none of the faults sampled for this tool"
        else:
            line["reason"] = ("within --target-fa alone, but the budget went to contracts "
                              "catching more sampled faults per unit of price")  # fmt: skip
        members = set(candidates[option.cid].members)
        line["members_kept_alone"] = sum(1 for o in chosen if o.cid in members)
        out.append(line)
    return out


def why_nothing(
    tool: str,
    size: tuple[int, int],
    options: list[Priced],
    faults: ToolFaults,
    settings: Settings,
    priors: dict[str, Prior],
) -> str:
    """One line saying why ``tool`` kept no contract."""
    calls, tasks = size
    head = f"{tool}: {calls} calls over {tasks} tasks"
    if tasks < settings.min_tasks:
        return f"{head}; contracts need --min-tasks {settings.min_tasks} tasks of support"
    if not options:
        folds = f" in {settings.min_folds} of {settings.folds} folds" if settings.crossfit else ""
        return f"{head}; no candidate held on every task{folds}"
    cheapest = min(options, key=lambda o: o.price)
    if cheapest.price > settings.target_fa:
        return (
            f"{head}; the cheapest candidate predicts {cheapest.price:.1%} false alarms, over "
            f"--target-fa {settings.target_fa:g}; {_needs(options, settings, priors)}"
        )
    if not faults.weights:
        return f"{head}; no fault of the library fits its sampled results"
    return f"{head}; no candidate within --target-fa {settings.target_fa:g} catches a fault"


def _needs(options: list[Priced], settings: Settings, priors: dict[str, Prior]) -> str:
    """About how many tasks the tool's structural and value contracts would need."""
    needs: dict[bool, int] = {}
    for option in options:
        prior = priors.get(option.evidence.family or "")
        if prior is None:
            continue
        structural = option.contract.kind in STRUCTURAL
        n = prior.tasks_needed(settings.target_fa)
        needs[structural] = min(needs.get(structural, n), n)
    parts = [f"{'structural' if s else 'value'} contracts need about {n} tasks"
             for s, n in sorted(needs.items(), reverse=True)]  # fmt: skip
    return "; ".join(parts) or "more tasks are needed"
