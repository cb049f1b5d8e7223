"""Fresh-task calibration per contract family: the price mining put on each kept contract
against how often it alarmed on the nominal calls of evaluation tasks it never saw.

Selection prices a contract by its family (:func:`tracemine.mine.evidence.pooling.family_of`:
kind × side × value type …): ``evidence.fa_share`` is the false-alarm share it is expected
to add per call of its tool on a new task, and a tool's ``predicted_fa`` is the sum of
its contracts' shares. Per family, over the contracts the arm's monitor enforced:

- **calls**: one unit per contract and nominal evaluation call of its tool; a unit is
  realized as a false alarm when a violation of that contract names that call (in its
  receipt, or a run-level violation carrying its call id);
- **tasks**: one unit per contract and evaluation task that called its tool; realized
  when any call of the task is;
- **predicted**: the call-weighted mean ``fa_share`` of the family's contracts.

A tool's schema is priced as one contract and its members (``folded_into`` it) at nothing,
so a member's violations are the schema's: a schema's units are realized when any of its
members (or itself) names the call, and the members are no row of their own. A contract
is in the family selection priced it by (``evidence.family``: a value claim's own, such as
``non_empty/result/string/value``), else in its kind's.

Units of one call under several contracts are not independent, so the Wilson interval of a
family is narrower than its evidence. A family realized above its price (``over_price``)
is weighed by ``chance``: how often calls breaking at the price would give as many alarms
(binomial in the call units). One alarm where the price expects 0.3 happens one time in
four; below ``REFUTED`` (``beyond_chance``) the price is wrong. Alarms that cluster in a
task make the binomial chance smaller than the truth, so that flag is, if anything,
raised too readily. Enforced contracts without a price (declared, unpriced) are one row
of their own; the completeness gate is left out (its gaps are in the arm's false alarms,
not a family's).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tracemine.evaluate.model import FamilyCalibration, FamilyRow, Rate
from tracemine.evaluate.score import Alarm
from tracemine.mine.evidence.pooling import family_of
from tracemine.model.contract import Contract, Kind

UNPRICED = "(no price)"
"""The row of enforced contracts that carry no ``fa_share``."""
FRESH = ("mined-crossfit",)
"""The arms whose contracts were priced by a cross-fitted selection."""


REFUTED = 0.05
"""A family is over its price beyond chance when calls breaking at its price would give
as many alarms less often than this."""


def at_least(k: int, n: int, rate: float) -> float:
    """P(X ≥ k) for X ~ Binomial(n, rate): how often a price gives k or more alarms."""
    if k <= 0:
        return 1.0
    from scipy.stats import binom  # a second to import: not on every start of the CLI

    return float(binom.sf(k - 1, n, min(max(rate, 0.0), 1.0)))


@dataclass(slots=True)
class _Tally:
    contracts: int = 0
    price: float = 0.0  # sum of fa_share x calls, for the call-weighted mean
    shares: float = 0.0  # sum of fa_share: the plain mean where no call was checked
    calls: list[int] = field(default_factory=lambda: [0, 0])  # violated, units
    tasks: list[int] = field(default_factory=lambda: [0, 0])

    def row(self, family: str, priced: bool) -> FamilyRow:
        calls, tasks = Rate.of(*self.calls), Rate.of(*self.tasks)
        predicted = None
        if priced and self.contracts:
            units = self.calls[1]
            predicted = self.price / units if units else self.shares / self.contracts
        over = predicted is not None and calls.rate is not None and calls.rate > predicted
        chance = refuted = None
        if predicted is not None and self.calls[1]:
            chance = at_least(self.calls[0], self.calls[1], predicted)
            refuted = chance < REFUTED
        return FamilyRow(family=family, contracts=self.contracts, predicted=predicted,
                         calls=calls, tasks=tasks, over_price=over, chance=chance,
                         beyond_chance=bool(refuted))  # fmt: skip

    def add(self, other: _Tally) -> None:
        self.contracts += other.contracts
        self.price += other.price
        self.shares += other.shares
        for mine, theirs in ((self.calls, other.calls), (self.tasks, other.tasks)):
            mine[0] += theirs[0]
            mine[1] += theirs[1]


def violated_calls(nominal: dict[str, list[Alarm]]) -> dict[str, set[tuple[str, int]]]:
    """Per contract id, the ``(run id, call position)`` its violations name."""
    out: dict[str, set[tuple[str, int]]] = {}
    for run_id, alarms in nominal.items():
        for alarm in alarms:
            if alarm.source in ("violation", "run"):
                out.setdefault(alarm.name, set()).update((run_id, s) for s in alarm.seqs)
    return out


def priced_family(contract: Contract) -> str:
    """The family selection priced ``contract`` by, or its kind's when it says none."""
    named = contract.evidence.family if contract.evidence else None
    return named or family_of(contract)


def family_calibration(
    contracts: Iterable[Contract], runs: list[dict[str, Any]], nominal: dict[str, list[Alarm]]
) -> FamilyCalibration:
    """Predicted against realized false alarms per family of the enforced ``contracts``
    on the nominal evaluation ``runs`` (replayed into ``nominal``)."""
    calls: dict[str, list[tuple[str, int, str]]] = {}  # tool -> (run, position, task)
    for run in runs:
        for position, call in enumerate(run["calls"]):
            seq = call["seq"] if isinstance(call.get("seq"), int) else position
            calls.setdefault(str(call.get("tool")), []).append(
                (run["run_id"], seq, str(run["task_id"]))
            )
    violated = violated_calls(nominal)
    contracts = list(contracts)
    schemas = {c.id for c in contracts if c.kind == Kind.SCHEMA}
    for contract in contracts:
        if contract.folded_into in schemas:
            found = violated.get(contract.id, set())
            violated[contract.folded_into] = violated.get(contract.folded_into, set()) | found
    tallies: dict[str, _Tally] = {}
    for contract in contracts:
        if contract.kind == Kind.COMPLETENESS:
            continue  # the gate: neither selected nor priced, its gaps name no contract
        if contract.folded_into in schemas:
            continue  # priced and realized as its schema
        share = contract.evidence.fa_share if contract.evidence else None
        name = priced_family(contract) if share is not None else UNPRICED
        tally = tallies.setdefault(name, _Tally())
        own = calls.get(contract.tool, [])
        hit = violated.get(contract.id, set())
        broken = [(run_id, seq) in hit for run_id, seq, _ in own]
        tasks = {task for _, _, task in own}
        broken_tasks = {task for (_, _, task), b in zip(own, broken, strict=True) if b}
        tally.contracts += 1
        tally.price += (share or 0.0) * len(own)
        tally.shares += share or 0.0
        tally.calls[0] += sum(broken)
        tally.calls[1] += len(own)
        tally.tasks[0] += len(broken_tasks)
        tally.tasks[1] += len(tasks)
    rows = [t.row(name, name != UNPRICED) for name, t in sorted(tallies.items())]
    pooled = _Tally()
    for name, tally in tallies.items():
        if name != UNPRICED:
            pooled.add(tally)
    result = FamilyCalibration(families=rows, priced=pooled.row("all priced families", True))
    over = [row.family for row in rows if row.over_price]
    if over:
        refuted = [row.family for row in rows if row.beyond_chance]
        result.note = (f"{len(over)} families alarmed above their price: " + ", ".join(over)
                       + f"; beyond chance (p < {REFUTED}): "
                       + (", ".join(refuted) if refuted else "none"))  # fmt: skip
    return result
