"""Run-level contracts, mined with the same task-disjoint cross-fitting as call-level ones.

The unit is a run: a candidate is proposed on the runs of the training folds' tasks (no
violation, support in at least ``FOLD_SUPPORT`` tasks), tested on the held-out fold's runs,
and kept when proposed in ``min_folds`` folds, supported by ``min_tasks`` distinct tasks
and the posterior mean of its violation rate *per run*, pooled over its kind
(:mod:`tracemine.mine.evidence.pooling`, held-out runs counted in tasks), is at most
``target_fa``. In the evidence, ``calls`` and ``heldout_calls`` count runs.

``completeness`` (every call answered exactly once under its own id, no unknown or
duplicate ids, every execution error retried with success) is not mined: the monitor's
gate always applies it. It is reported with its evidence: the nominal runs it was checked
on, fold by fold, and the ones that broke it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import duckdb

from tracemine.mine.evidence.crossfit import Candidate, upper_bound
from tracemine.mine.evidence.pooling import effective
from tracemine.mine.profile.shards import Shards
from tracemine.mine.propose.measure import Measure
from tracemine.mine.runs.facts import RunCall, RunInfo, ValueFacts, load_runs, load_values
from tracemine.mine.runs.templates import Judge, Outcome, build_facts, propose_runs
from tracemine.mine.select.budget import (
    CONFIDENCE,
    MAX_COUNTEREXAMPLES,
    Settings,
    _eligible,
    build_evidence,
    pool,
)
from tracemine.model.contract import Contract, Counterexample, Evidence, Kind, Side

ERROR_STATUSES = frozenset(("tool_error", "protocol_error", "timeout", "cancelled", "denied"))


def read_runs(
    con: duckdb.DuckDBPyConnection, tasks: list[str]
) -> tuple[dict[str, RunInfo], ValueFacts]:
    """Shard step: the shard's nominal runs of ``tasks`` and their argument values."""
    runs = load_runs(con, tasks)
    try:
        return runs, load_values(con)
    finally:
        con.unregister("_tm_rl_calls")


def merge_facts(
    shards: list[tuple[dict[str, RunInfo], ValueFacts]],
) -> tuple[dict[str, RunInfo], ValueFacts]:
    """The shards' runs (in run id order, as one store lists them) and value facts."""
    if len(shards) == 1:
        return shards[0]
    runs = {run_id: run for found, _ in shards for run_id, run in found.items()}
    merged = ValueFacts({}, {}, {})
    for _, facts in shards:
        merged.values.update(facts.values)
        merged.sources.update(facts.sources)
        merged.bounds.update(facts.bounds)
    return dict(sorted(runs.items())), merged


def mine_runs(
    shards: Shards,
    assignment: dict[str, int],
    settings: Settings,
    min_support: int,
    tools: Sequence[str] | None = None,
) -> tuple[list[Contract], dict[str, dict[str, int]]]:
    """Kept run-level contracts (completeness first) and, per kind, how many candidates
    were kept and dropped. ``assignment`` maps each task to its fold (all 0 without
    cross-fitting). With ``tools``, only contracts of those tools: no run-wide ones."""
    runs, values = merge_facts(shards.map(read_runs, list(assignment), label="runs"))
    facts = build_facts(runs, values)
    by_fold: dict[int, list[RunInfo]] = {}
    for run in runs.values():
        by_fold.setdefault(assignment[run.task], []).append(run)
    folds = settings.folds if settings.crossfit else 0
    candidates: dict[str, Candidate] = {}
    judges: dict[str, Judge] = {}
    for fold in [None, *range(folds)]:
        train = [r for r in runs.values() if fold is None or assignment[r.task] != fold]
        for contract, judge in propose_runs(facts, train, min_support):
            if tools and contract.tool not in tools:
                continue
            entry = candidates.setdefault(contract.id, Candidate())
            if fold is None:
                entry.final, judges[contract.id] = contract, judge
            else:
                entry.proposals[fold] = contract
                held = by_fold.get(fold, [])
                found = entry.heldout[fold] = _measure(judge, held)
                tasks = len({run.task for run in held})
                entry.units[fold] = effective(found.checked, found.violations, tasks, len(held))
    calls = {c.key: (run, c) for run in runs.values() for c in run.calls}
    kept: list[Contract] = [] if tools else [completeness(runs, by_fold, settings, calls)]
    summary: dict[str, dict[str, int]] = {}
    priors = pool(candidates)
    for cid in sorted(candidates):
        entry = candidates[cid]
        counts = summary.setdefault(entry.contract.kind.value,
                                    {"candidates": 0, "kept": 0, "dropped": 0})  # fmt: skip
        counts["candidates"] += 1
        evidence = build_evidence(
            entry,
            settings,
            lambda key, shown: _example(calls, key, shown) if key in calls else None,
            priors,
        )
        if entry.final is None or not _keeps(evidence, settings):
            counts["dropped"] += 1
            continue
        counts["kept"] += 1
        update = {"evidence": evidence, "description": describe_run(entry.final)}
        kept.append(entry.final.model_copy(update=update))
    return _link_implied(kept), dict(sorted(summary.items()))


def _keeps(evidence: Evidence, settings: Settings) -> bool:
    """A run-level contract is judged per run, alone: its pooled posterior mean rate of
    alarming on a new task's run is at most the target."""
    if not _eligible(evidence, settings):
        return False
    return not settings.crossfit or (
        evidence.fa_posterior is not None and evidence.fa_posterior <= settings.target_fa
    )


def _measure(judge: Judge, runs: list[RunInfo]) -> Measure:
    found = Measure()
    for run in runs:
        outcome = judge(run)
        if outcome is None:
            continue
        found.checked += 1
        if outcome.violated:
            found.violations += 1
            key = outcome.call.key if outcome.call else _first_key(run)
            found.examples.append(((), key, outcome.observed))  # runs come in run id order
    return found


def _first_key(run: RunInfo) -> int:
    return run.calls[0].key if run.calls else -1


def _example(calls: dict[int, tuple[RunInfo, RunCall]], key: int, shown: str) -> Counterexample:
    run, call = calls[key]
    task = None if run.task.startswith("run:") else run.task
    return Counterexample(run_id=run.run_id, task_id=task, call_id=call.call_id, seq=call.seq,
                          observed=shown)  # fmt: skip


# -- completeness --------------------------------------------------------------------------


def gate(run: RunInfo) -> Outcome:
    """The monitor's completeness gate on a stored run: the first call that breaks it."""
    ids: dict[str, int] = {}
    for call in run.calls:
        if call.call_id is not None:
            ids[call.call_id] = ids.get(call.call_id, 0) + 1
    for position, call in enumerate(run.calls):
        if call.status == "missing":
            return Outcome(True, None, call, "never answered")
        if call.result_call_id is not None and call.result_call_id != call.call_id:
            return Outcome(True, None, call, "answered under another id")
        if call.call_id is not None and ids[call.call_id] > 1:
            return Outcome(True, None, call, "call id used by more than one call")
        if call.status in ERROR_STATUSES and not any(
            later.tool == call.tool and later.status not in ERROR_STATUSES | {"missing"}
            for later in run.calls[position + 1 :]
        ):
            return Outcome(True, None, call, f"{call.status}, not retried with success")
    return Outcome(False)


def completeness(
    runs: dict[str, RunInfo],
    by_fold: dict[int, list[RunInfo]],
    settings: Settings,
    calls: dict[int, tuple[RunInfo, RunCall]],
) -> Contract:
    """The always-on completeness contract, with the nominal runs as its evidence (each
    run is in exactly one held-out fold, so held-out counts are every run)."""
    found = Measure()
    for fold in sorted(by_fold):
        measured = _measure(gate, by_fold[fold])
        found.checked += measured.checked
        found.violations += measured.violations
        found.examples += measured.examples
    examples = [_example(calls, k, s) for _, k, s in found.examples if k in calls]
    evidence = Evidence(
        calls=found.checked - found.violations,
        tasks=len({run.task for run in runs.values()}),
        folds=settings.folds if settings.crossfit else 0,
        folds_proposed=settings.folds if settings.crossfit else 0,
        heldout_calls=found.checked,
        heldout_violations=found.violations,
        fa_upper=round(upper_bound(found.violations, found.checked, CONFIDENCE), 6),
        confidence=CONFIDENCE,
        counterexamples=examples[:MAX_COUNTEREXAMPLES],
    )
    contract = Contract(tool="*", side=Side.RUN, kind=Kind.COMPLETENESS, paths=[])
    return contract.model_copy(update={"evidence": evidence,
                                       "description": describe_run(contract)})  # fmt: skip


# -- descriptions and implied links --------------------------------------------------------


def describe_run(contract: Contract) -> str:
    """What a run-level contract says, for a reviewer."""
    params = contract.params
    if contract.kind == Kind.REQUIRES_PRIOR:
        text = f"{contract.tool} only after a successful {params['tool']}"
        same = params.get("same")
        return text + (f" with {same[1]} == this {same[0]}" if same else "")
    if contract.kind == Kind.PROVENANCE:
        return f"{contract.tool}.{contract.paths[0]} from an earlier " \
               f"{params['from_tool']}.{params['from_path']}"  # fmt: skip
    if contract.kind == Kind.BOUNDED_BY:
        return f"{contract.tool}.{contract.paths[0]} <= an earlier " \
               f"{params['from_tool']}.{params['from_path']}"  # fmt: skip
    if contract.kind == Kind.CALL_CAP:
        return f"at most {params['max']} {contract.tool} calls per run"
    if contract.kind == Kind.EXPECTED_TOOLS:
        need = ", ".join(params.get("required", [])) or "nothing"
        never = ", ".join(params.get("forbidden", [])) or "nothing"
        return f"runs of {params.get('family')} call {need}; never {never}"
    return "every call answered exactly once under its own id; no unknown or duplicate ids"


def _link_implied(contracts: list[Contract]) -> list[Contract]:
    """A plain ``requires_prior`` kept beside one with ``same`` for the same two tools is
    implied by it, and a ``bounded_by`` by the ``provenance`` of the same argument from the
    same earlier path (an equal value is within the bound); order: completeness, then by
    kind, tool, paths and parameters."""
    strong = {
        (c.tool, c.params["tool"]): c.id
        for c in contracts
        if c.kind == Kind.REQUIRES_PRIOR and c.params.get("same")
    }
    equal = {
        (c.tool, c.paths[0], c.params["from_tool"], c.params["from_path"]): c.id
        for c in contracts
        if c.kind == Kind.PROVENANCE
    }
    out = []
    for c in contracts:
        link = None
        if c.kind == Kind.REQUIRES_PRIOR and not c.params.get("same"):
            link = strong.get((c.tool, c.params["tool"]))
        elif c.kind == Kind.BOUNDED_BY:
            link = equal.get((c.tool, c.paths[0], c.params["from_tool"], c.params["from_path"]))
        out.append(c.model_copy(update={"implied_by": link}) if link else c)
    order = list(Kind)
    return sorted(out, key=lambda c: (order.index(c.kind), c.tool, c.paths,
                                      json.dumps(c.params, sort_keys=True)))  # fmt: skip
