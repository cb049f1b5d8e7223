"""Run-level templates: each takes the facts of the nominal runs and the runs of one
context, and proposes contracts, each with a *judge* that says, for any run, whether the
contract applies to it and whether it holds — so a proposal made on the training folds is
tested on the held-out fold by the very function that proposed it.

    requires_prior  B only after a successful A (an earlier turn), optionally with B's
                    identifier argument equal to that A's
    provenance      every value of B.args.x (each element of B.args.x[*]) equals a value at
                    A.y of an earlier ok A call
    bounded_by      every number at B.args.x is at most a number at A.y of an earlier ok A
                    call, for names with affinity (an amount within a total)
    call_cap        at most max + headroom calls of a tool per run
    expected_tools  per family: tools every run calls with success, tools none calls

The semantics are those of the monitor's run checks (``tracemine.monitor``): B calls of
any status are judged, sources are calls that ended ok, a B call without the argument
holds a provenance contract vacuously.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tracemine.mine.runs.facts import RunCall, RunInfo, ValueFacts, before
from tracemine.model.contract import Contract, Evidence, Kind, Side
from tracemine.model.paths import selects_many

MIN_DISTINCT_VALUES = 3
"""A provenance (or same-id) contract needs this many distinct matched values across its
runs: a constant (a currency every task uses, a page size of 10) matches by chance."""
CAP_HEADROOM = 0.5
"""A call cap is the observed maximum plus this share of it (at least one call), so a
legitimate retry does not alarm."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A contract judged on one run: broken or not, the value it matched (for variety),
    the first offending call and what was seen there."""

    violated: bool
    value: Any = None
    call: RunCall | None = None
    observed: str = ""


Judge = Callable[[RunInfo], Outcome | None]
Proposal = tuple[Contract, Judge]


@dataclass
class Facts:
    """Judged once over every nominal run: outcomes of the parameter-free candidates."""

    runs: dict[str, RunInfo]
    fixed: dict[tuple[Any, ...], tuple[Contract, dict[str, Outcome]]] = field(default_factory=dict)


def _contract(tool: str, kind: Kind, paths: list[str], params: dict[str, Any]) -> Contract:
    return Contract(tool=tool, side=Side.RUN, kind=kind, paths=paths, params=params)


def build_facts(runs: dict[str, RunInfo], values: ValueFacts) -> Facts:
    """Judge every requires_prior, provenance and bounded_by candidate on every run."""
    facts = Facts(runs)
    priors = _priors(runs)
    for (b, a), outcomes in priors.items():
        facts.fixed[("prior", b, a)] = (_contract(b, Kind.REQUIRES_PRIOR, [], {"tool": a}),
                                        outcomes)  # fmt: skip
    bounded = _provenance(runs, values, values.bounds, "{x} above every earlier {a} {y}")
    for (b, x, a, y), outcomes in bounded.items():
        source = {"from_tool": a, "from_path": y}
        facts.fixed[("bound", b, x, a, y)] = (_contract(b, Kind.BOUNDED_BY, [x], source), outcomes)
    for (b, x, a, y), outcomes in _provenance(runs, values, values.sources).items():
        source = {"from_tool": a, "from_path": y}
        facts.fixed[("prov", b, x, a, y)] = (_contract(b, Kind.PROVENANCE, [x], source), outcomes)
        plain = priors.get((b, a))
        identifier = all(isinstance(o.value, str) for o in outcomes.values())
        if plain is None or not identifier or not y.startswith("args.") or selects_many(y):
            continue
        same: dict[str, Outcome] = {}
        for run_id, first in plain.items():
            link = outcomes.get(run_id)
            worst = first if first.violated or link is None else link
            same[run_id] = Outcome(worst.violated, link.value if link else None, worst.call,
                                   worst.observed)  # fmt: skip
        params = {"tool": a, "same": [x, y]}
        facts.fixed[("same", b, x, a, y)] = (_contract(b, Kind.REQUIRES_PRIOR, [], params), same)
    return facts


def _priors(runs: dict[str, RunInfo]) -> dict[tuple[str, str], dict[str, Outcome]]:
    """Per (B, A) seen at least once with an ok A before B's first call: per run with B,
    whether B's first call (so every B call) had one."""
    firsts: dict[str, dict[str, RunCall]] = {}
    pairs: set[tuple[str, str]] = set()
    for run in runs.values():
        first: dict[str, RunCall] = {}
        for call in run.calls:
            first.setdefault(call.tool, call)
        firsts[run.run_id] = first
        for b, fb in first.items():
            pairs.update((b, c.tool) for c in run.calls if c.ok and c.tool != b and before(c, fb))
    out: dict[tuple[str, str], dict[str, Outcome]] = {}
    for b, a in sorted(pairs):
        judged = out.setdefault((b, a), {})
        for run in runs.values():
            first_b = firsts[run.run_id].get(b)
            if first_b is None:
                continue
            fb = first_b
            held = any(c.ok and c.tool == a and before(c, fb) for c in run.calls)
            seen = "" if held else f"no earlier successful {a} call"
            judged[run.run_id] = Outcome(not held, None, fb, seen)
    return out


def _provenance(
    runs: dict[str, RunInfo],
    facts: ValueFacts,
    sources: dict[tuple[int, str], set[tuple[str, str]]],
    broken_text: str = "{x} matches no earlier {a} {y}",
) -> dict[tuple[str, str, str, str], dict[str, Outcome]]:
    """Per (B, x, A, y) found in ``sources`` at least once: per run where B has a value
    at x, whether every such value had an earlier ok A call's y among its ``sources``
    (an equal value for provenance, a value at least as large for a bound)."""
    rows: dict[tuple[str, str], list[tuple[str, RunCall, Any, set[tuple[str, str]]]]] = {}
    tools = {call.key: (run.run_id, call) for run in runs.values() for call in run.calls}
    for (key, path), value in facts.values.items():
        run_id, call = tools[key]
        found = sources.get((key, path), set())
        rows.setdefault((call.tool, path), []).append((run_id, call, value, found))
    out: dict[tuple[str, str, str, str], dict[str, Outcome]] = {}
    for (b, x), items in sorted(rows.items()):
        items.sort(key=lambda item: (item[0], item[1].seq))
        for a, y in sorted(set().union(*(found for *_, found in items))):
            judged = out.setdefault((b, x, a, y), {})
            for run_id, call, value, found in items:
                if run_id in judged and judged[run_id].violated:
                    continue  # the run is already broken at an earlier call
                broken = (a, y) not in found
                seen = broken_text.format(x=x, a=a, y=y) if broken else ""
                if run_id not in judged or broken:
                    judged[run_id] = Outcome(broken, value, call, seen)
    return out


def fixed(facts: Facts, runs: list[RunInfo], min_support: int) -> list[Proposal]:
    """The parameter-free candidates that hold on every run of the context."""
    out: list[Proposal] = []
    for key in sorted(facts.fixed):
        contract, outcomes = facts.fixed[key]
        judged = [(run, o) for run in runs if (o := outcomes.get(run.run_id)) is not None]
        tasks = {run.task for run, _ in judged}
        if not judged or len(tasks) < min_support or any(o.violated for _, o in judged):
            continue
        if key[0] in ("prov", "same", "bound"):
            varied = {_hashable(o.value) for _, o in judged}
            if len(varied) < MIN_DISTINCT_VALUES:
                continue
        proposal = contract.model_copy(update={"evidence": Evidence(calls=len(judged),
                                                                    tasks=len(tasks))})  # fmt: skip
        out.append((proposal, _lookup(outcomes)))
    return out


def _lookup(outcomes: dict[str, Outcome]) -> Judge:
    def judge(run: RunInfo) -> Outcome | None:
        return outcomes.get(run.run_id)

    return judge


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | tuple | int | float) else repr(value)


def call_caps(facts: Facts, runs: list[RunInfo], min_support: int) -> list[Proposal]:
    """``call_cap`` per tool: the most calls one run made, plus headroom."""
    most: dict[str, int] = {}
    tasks: dict[str, set[str]] = {}
    for run in runs:
        counts: dict[str, int] = {}
        for call in run.calls:
            counts[call.tool] = counts.get(call.tool, 0) + 1
        for tool, n in counts.items():
            most[tool] = max(most.get(tool, 0), n)
            tasks.setdefault(tool, set()).add(run.task)
    out: list[Proposal] = []
    for tool in sorted(most):
        if len(tasks[tool]) < min_support:
            continue
        cap = most[tool] + max(1, math.ceil(most[tool] * CAP_HEADROOM))
        contract = _contract(tool, Kind.CALL_CAP, [], {"max": cap})
        contract.evidence = Evidence(calls=sum(1 for r in runs if any(c.tool == tool
                                                                      for c in r.calls)),
                                     tasks=len(tasks[tool]))  # fmt: skip
        out.append((contract, _cap_judge(tool, cap)))
    return out


def _cap_judge(tool: str, cap: int) -> Judge:
    def judge(run: RunInfo) -> Outcome | None:
        mine = [c for c in run.calls if c.tool == tool]
        if not mine:
            return None
        over = len(mine) > cap
        return Outcome(over, None, mine[cap] if over else mine[0], f"{len(mine)} calls")

    return judge


def expected_tools(facts: Facts, runs: list[RunInfo], min_support: int) -> list[Proposal]:
    """``expected_tools`` per family: required = called with success in every run of the
    family; forbidden = never called there, though runs of other families that share a
    tool with it call it (so another domain's tools are not listed)."""
    families: dict[str, list[RunInfo]] = {}
    for run in runs:
        if run.family is not None:
            families.setdefault(run.family, []).append(run)
    out: list[Proposal] = []
    for family in sorted(families):
        members = families[family]
        tasks = {run.task for run in members}
        if len(tasks) < min_support:
            continue
        required = set.intersection(*({c.tool for c in r.calls if c.ok} for r in members))
        used = {c.tool for r in members for c in r.calls}
        near: set[str] = set()
        for run in runs:
            tools = {c.tool for c in run.calls}
            if run.family != family and tools & used:
                near |= tools
        forbidden = near - used
        if not required and not forbidden:
            continue
        params = {"family": family, "required": sorted(required), "forbidden": sorted(forbidden)}
        contract = _contract("*", Kind.EXPECTED_TOOLS, [], params)
        contract.evidence = Evidence(calls=len(members), tasks=len(tasks))
        out.append((contract, _expected_judge(family, required, forbidden)))
    return out


def _expected_judge(family: str, required: set[str], forbidden: set[str]) -> Judge:
    def judge(run: RunInfo) -> Outcome | None:
        if run.family != family:
            return None
        done = {c.tool for c in run.calls if c.ok}
        missing = sorted(required - done)
        called = [c for c in run.calls if c.tool in forbidden]
        if called:
            return Outcome(True, None, called[0], f"{called[0].tool} called")
        if missing:
            return Outcome(True, None, None, f"never called {', '.join(missing)} with success")
        return Outcome(False)

    return judge


TEMPLATES: tuple[Callable[[Facts, list[RunInfo], int], list[Proposal]], ...] = (
    fixed,
    call_caps,
    expected_tools,
)


def propose_runs(facts: Facts, runs: list[RunInfo], min_support: int) -> list[Proposal]:
    """Every run-level template's proposals for the runs of one context."""
    return [proposal for template in TEMPLATES for proposal in template(facts, runs, min_support)]
